"""One passkey yes for a set of pending calls: what the set page's challenge binds, without a browser.

The example server runs in process with its approval page; a client that
declares no elicitation makes several guarded calls (``grant``, which binds
no version, so a repeat of an approved call would act again unless the
approval is single use). The page is driven over ASGI with the page's own
headers, and the passkey is a software passkey (``testing/soft_passkey.py``,
a test double for an authenticator: it signs real WebAuthn assertions,
verified by the page's py_webauthn). The browser test is
``test_changeset_browser.py``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import httpx
import mcp_types as mt
import pytest
from soft_passkey import SoftPasskey, b64url

from approval_core import ApprovalSettings, Dialog, approval_outcome, operation
from approval_core.asking.binding import PRINCIPAL_KEY, Binding, bind
from approval_core.page.approval_page import PREFIX, ApprovalPage
from approval_core.page.changeset import SET_LIMIT, SetRefused, set_challenge, set_digest
from approval_core.page.pending import PendingApproval
from approval_core.page.settings import PageSettings
from approval_core.testing import connect
from approval_core.testing.recorders import AuditRecorder
from example_server import Example

pytestmark = pytest.mark.anyio

ORIGIN = "http://localhost:8765"
USERS = ("ada", "grace", "linus", "mallory")


class Clock:
    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


class Person:
    """The example server with its page, a passkey paired with it, and a page client (over ASGI)."""

    def __init__(self, folder: Path, clock: Clock | None = None) -> None:
        self.key = SoftPasskey()
        passkeys = folder / "passkeys.json"
        body = {"version": 1, "user_id": b64url(b"u" * 16), "credentials": [self.key.entry()], "pairing": None}
        passkeys.write_text(json.dumps(body))
        passkeys.chmod(0o600)
        settings = ApprovalSettings(page=PageSettings(passkeys_file=passkeys))
        self.example = Example(settings) if clock is None else Example(settings, clock=clock)
        page = self.example.gate.page
        assert page is not None
        page.bind(ORIGIN)
        self.page: ApprovalPage = page
        self.http = httpx.AsyncClient(transport=httpx.ASGITransport(app=page.app()), base_url=ORIGIN)

    async def post(self, path: str, scope: str, body: dict[str, Any]) -> httpx.Response:
        headers = {"Origin": ORIGIN, "Content-Type": "application/json", "X-CSRF-Token": self.page.csrf(scope)}
        return await self.http.post(path, content=json.dumps(body), headers=headers)

    async def options(self, anchor: str, items: list[str]) -> bytes:
        """Ask the set page for a challenge over ``items``; return the challenge."""
        answer = await self.post(f"{PREFIX}/s/{anchor}/options", f"s:{anchor}", {"items": items})
        assert answer.status_code == 200, answer.text
        challenge = answer.json()["publicKey"]["challenge"]
        return _unb64url(challenge)

    def sign(self, challenge: bytes) -> dict[str, Any]:
        return self.key.assertion(challenge, ORIGIN)

    async def decide(self, anchor: str, body: dict[str, Any]) -> httpx.Response:
        return await self.post(f"{PREFIX}/s/{anchor}/decide", f"s:{anchor}", body)

    async def approve(self, anchor: str, items: list[str]) -> httpx.Response:
        """Options, the passkey's assertion over their challenge, and the decision: the whole press of Approve all."""
        credential = self.sign(await self.options(anchor, items))
        return await self.decide(anchor, {"choice": "approve", "items": items, "credential": credential})

    async def decision(self, record: PendingApproval) -> str | None:
        return await self.page.book.decision(record.id)


def _unb64url(text: str) -> bytes:
    import base64

    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _grant(user: str) -> dict[str, str]:
    return {"username": user, "topic": "deploy", "password": "pw"}


async def _pending(person: Person, result: mt.CallToolResult) -> PendingApproval:
    outcome = approval_outcome(result)
    assert outcome is not None, result
    assert outcome["outcome"] == "approval_pending", outcome
    record = await person.page.book.get(outcome["approval_url"].rsplit("/", 1)[1])
    assert record is not None
    return record


async def _ask(person: Person, client: Any, users: tuple[str, ...] = USERS[:3]) -> list[PendingApproval]:
    return [await _pending(person, await client.call_tool("grant", _grant(user))) for user in users]


@pytest.fixture
async def person(tmp_path: Path) -> Any:
    made = Person(tmp_path)
    async with made.http:
        yield made


# ------------------------------------------------------------------ one yes, each call once


async def test_one_assertion_approves_three_calls_each_acts_once_and_a_fourth_asks(person: Person) -> None:
    async with connect(person.example.server, revision="2026-07-28") as client:
        records = await _ask(person, client)
        single = (await person.http.get(f"{PREFIX}/a/{records[0].id}")).text
        assert "one of 3 calls of the same session" in single
        assert f'href="{PREFIX}/s/{records[0].id}"' in single
        listed = (await person.http.get(f"{PREFIX}/s/{records[0].id}")).text
        for record in records:
            assert record.code in listed
        assert "Approve all 3 with passkey" in listed
        assert person.example.grants == []

        with AuditRecorder() as audit:
            approved = await person.approve(records[0].id, [r.id for r in records])
        assert approved.status_code == 200, approved.text
        assert approved.json()["count"] == 3
        assert [e["event"] for e in audit.events] == ["set_approved"] * 3
        assert person.example.grants == [], "approving on the page acted by itself"

        for user in USERS[:3]:
            acted = await client.call_tool("grant", _grant(user))
            assert not acted.is_error, acted
        assert person.example.grants == [(user, "deploy") for user in USERS[:3]]

        again = await client.call_tool("grant", _grant(USERS[0]))
        assert (await _pending(person, again)).id not in {r.id for r in records}, "an approval acted twice"
        fourth = await client.call_tool("grant", _grant(USERS[3]))
        await _pending(person, fourth)
    assert len(person.example.grants) == 3


async def test_a_lone_call_has_no_set_link(person: Person) -> None:
    async with connect(person.example.server, revision="2026-07-28") as client:
        (record,) = await _ask(person, client, USERS[:1])
    shown = (await person.http.get(f"{PREFIX}/a/{record.id}")).text
    assert f"{PREFIX}/s/" not in shown
    script = await person.http.get(f"{PREFIX}/changeset.js")
    assert script.status_code == 200
    assert script.headers["content-type"].startswith("text/javascript")


# ------------------------------------------------------------------ what the challenge binds


async def test_a_set_changed_after_the_challenge_was_issued_is_refused_and_nothing_is_approved(
    person: Person,
) -> None:
    async with connect(person.example.server, revision="2026-07-28") as client:
        first, second, third = await _ask(person, client)
    items = [first.id, second.id, third.id]
    credential = person.sign(await person.options(first.id, items))
    denied = await person.post(f"{PREFIX}/a/{second.id}/decide", f"a:{second.id}", {"choice": "deny"})
    assert denied.status_code == 200
    refused = await person.decide(first.id, {"choice": "approve", "items": items, "credential": credential})
    assert refused.status_code == 409, refused.text
    assert second.code in refused.json()["message"]
    assert "answered already" in refused.json()["message"]
    assert "Nothing was approved" in refused.json()["message"]
    assert (await person.decision(first), await person.decision(third)) == (None, None)


async def test_an_assertion_for_one_set_does_not_approve_another(person: Person) -> None:
    async with connect(person.example.server, revision="2026-07-28") as client:
        first, second, third = await _ask(person, client)
    credential = person.sign(await person.options(first.id, [first.id, second.id]))
    body = {"choice": "approve", "items": [first.id, third.id], "credential": credential}
    other = await person.decide(first.id, body)
    assert other.status_code == 409, other.text
    assert "signed for other calls" in other.json()["message"]
    wider = await person.decide(
        first.id, {"choice": "approve", "items": [first.id, second.id, third.id], "credential": credential}
    )
    assert wider.status_code == 409, wider.text
    body = {"choice": "approve", "items": [first.id, second.id], "credential": credential}
    spent = await person.decide(first.id, body)
    assert spent.status_code == 409, "the challenge was spent by the refused try"
    assert "stale" in spent.json()["message"]
    assert [await person.decision(r) for r in (first, second, third)] == [None, None, None]


async def test_a_single_approvals_assertion_approves_no_set_and_a_sets_approves_no_single(person: Person) -> None:
    async with connect(person.example.server, revision="2026-07-28") as client:
        first, second = await _ask(person, client, USERS[:2])
    items = [first.id, second.id]
    single = await person.post(f"{PREFIX}/a/{first.id}/options", f"a:{first.id}", {})
    credential = person.sign(_unb64url(single.json()["publicKey"]["challenge"]))
    as_set = await person.decide(first.id, {"choice": "approve", "items": items, "credential": credential})
    assert as_set.status_code == 409, as_set.text

    credential = person.sign(await person.options(first.id, items))
    body = {"choice": "approve", "credential": credential}
    as_single = await person.post(f"{PREFIX}/a/{first.id}/decide", f"a:{first.id}", body)
    assert as_single.status_code == 403, as_single.text
    assert [await person.decision(r) for r in (first, second)] == [None, None]


async def test_the_challenge_is_the_digest_of_every_items_fingerprint(person: Person) -> None:
    async with connect(person.example.server, revision="2026-07-28") as client:
        first, second = await _ask(person, client, USERS[:2])
    digest = set_digest("example-mcp", [first, second])
    assert digest == set_digest("example-mcp", [second, first]), "a set, in any order"
    moved = PendingApproval(**{**_fields(second), "fingerprint": "0" * 64})
    assert set_digest("example-mcp", [first, moved]) != digest, "another fingerprint is another set"
    assert set_digest("other-mcp", [first, second]) != digest
    nonce = b"n" * 32
    assert set_challenge(nonce, digest) != set_challenge(nonce, set_digest("example-mcp", [first]))
    challenge = await person.options(first.id, [first.id, second.id])
    assert len(challenge) == 32
    assert not any(record.fingerprint.encode() in challenge for record in (first, second))


def _fields(record: PendingApproval) -> dict[str, Any]:
    return {name: getattr(record, name) for name in PendingApproval.__dataclass_fields__}


async def test_a_signature_with_another_passkey_or_without_user_verification_approves_nothing(person: Person) -> None:
    async with connect(person.example.server, revision="2026-07-28") as client:
        first, second = await _ask(person, client, USERS[:2])
    items = [first.id, second.id]
    stranger = SoftPasskey().assertion(await person.options(first.id, items), ORIGIN)
    refused = await person.decide(first.id, {"choice": "approve", "items": items, "credential": stranger})
    assert refused.status_code == 403, refused.text
    unverified = person.key.assertion(await person.options(first.id, items), ORIGIN, verified=False)
    refused = await person.decide(first.id, {"choice": "approve", "items": items, "credential": unverified})
    assert refused.status_code == 403, refused.text
    assert [await person.decision(r) for r in (first, second)] == [None, None]


async def test_an_expired_item_refuses_the_set(tmp_path: Path) -> None:
    clock = Clock()
    person = Person(tmp_path, clock)
    async with person.http, connect(person.example.server, revision="2026-07-28") as client:
        (old,) = await _ask(person, client, USERS[:1])
        clock.now += 200
        newer = await _ask(person, client, USERS[1:3])
        items = [old.id, *(r.id for r in newer)]
        credential = person.sign(await person.options(old.id, items))
        clock.now += 101  # the oldest expires (300 s), the others live on
        refused = await person.decide(old.id, {"choice": "approve", "items": items, "credential": credential})
        assert refused.status_code == 409, refused.text
        assert old.code in refused.json()["message"]
        assert "expired" in refused.json()["message"]
        listed = (await person.http.get(f"{PREFIX}/s/{old.id}")).text
        assert old.code not in listed
        assert all(r.code in listed for r in newer)
        assert [await person.decision(r) for r in newer] == [None, None]


async def test_an_item_asked_again_since_refuses_the_set(person: Person) -> None:
    async with connect(person.example.server, revision="2026-07-28") as client:
        first, second = await _ask(person, client, USERS[:2])
    items = [first.id, second.id]
    credential = person.sign(await person.options(first.id, items))
    # Its call now finds another pending approval (as when a replica opened a new one for the same call).
    await person.page.store.write("pending-of", second.fingerprint, "another-approval", 300, only_new=False)
    refused = await person.decide(first.id, {"choice": "approve", "items": items, "credential": credential})
    assert refused.status_code == 409, refused.text
    assert second.code in refused.json()["message"]
    assert "asked again" in refused.json()["message"]
    assert [await person.decision(r) for r in (first, second)] == [None, None]


async def test_a_call_of_another_caller_is_never_part_of_the_set(person: Person) -> None:
    async with connect(person.example.server, revision="2026-07-28") as client:
        first, _ = await _ask(person, client, USERS[:2])
    dialog = Dialog(operation("grant a user access to a topic"), "Access takes effect at once.")
    foreign = Binding("example-mcp", "grant", {"pair": ("eve", "deploy"), PRINCIPAL_KEY: ("client", "iss", "eve")})
    record = await person.page.book.open(foreign, dialog)
    await person.page.changesets.enlist(record, foreign)
    listed = (await person.http.get(f"{PREFIX}/s/{first.id}")).text
    assert record.code not in listed
    refused = await person.post(f"{PREFIX}/s/{first.id}/options", f"s:{first.id}", {"items": [first.id, record.id]})
    assert refused.status_code == 409
    assert record.code in refused.json()["message"]
    assert "not one of this session's calls" in refused.json()["message"]
    ignored = await person.decide(first.id, {"choice": "deny", "items": [record.id]})
    assert ignored.json()["count"] == 0
    assert await person.decision(record) is None, "a set page denied another caller's call"


def test_callers_are_scoped_by_principal_and_else_by_process(tmp_path: Path) -> None:
    person = Person(tmp_path)
    sets = person.page.changesets
    ada = Binding("example-mcp", "grant", {"a": 1, PRINCIPAL_KEY: ("c", "i", "ada")})
    ada_again = Binding("example-mcp", "grant", {"b": 2, PRINCIPAL_KEY: ("c", "i", "ada")})
    eve = Binding("example-mcp", "grant", {"a": 1, PRINCIPAL_KEY: ("c", "i", "eve")})
    local = bind("example-mcp", "grant", {"a": 1})
    assert sets.scope(ada) == sets.scope(ada_again)
    assert sets.scope(ada) != sets.scope(eve)
    assert sets.scope(local) not in (sets.scope(ada), sets.scope(eve))
    assert Person(tmp_path / "..").page.changesets.scope(local) != sets.scope(local), "another process"


# ------------------------------------------------------------------ deny, per item and all


async def test_deny_one_item_then_deny_all(person: Person) -> None:
    async with connect(person.example.server, revision="2026-07-28") as client:
        first, second, third = await _ask(person, client)
        one = await person.decide(first.id, {"choice": "deny", "items": [second.id]})
        assert one.status_code == 200
        assert one.json()["count"] == 1
        assert second.code in one.json()["message"]
        assert (await person.decision(first), await person.decision(third)) == (None, None)
        listed = (await person.http.get(f"{PREFIX}/s/{first.id}")).text
        assert second.code not in listed
        assert "Approve all 2 with passkey" in listed

        every = await person.decide(first.id, {"choice": "deny", "items": [first.id, third.id]})
        assert every.json()["count"] == 2
        for user, record in zip(USERS[:3], (first, second, third), strict=True):
            refused = approval_outcome(await client.call_tool("grant", _grant(user)))
            assert refused == {"outcome": "declined", "path": "page", "code": record.code, "changed": False}
        emptied = (await person.http.get(f"{PREFIX}/s/{first.id}")).text
        assert "No call of this session waits any more" in emptied
    assert person.example.grants == []


async def test_an_item_decided_while_the_set_is_written_releases_the_others(person: Person) -> None:
    async with connect(person.example.server, revision="2026-07-28") as client:
        first, second, third = await _ask(person, client)
    sets = person.page.changesets
    await person.page.book.decide(third, "deny")  # between the checks and the writes
    with pytest.raises(SetRefused, match=third.code):
        await sets.approve([first, second, third])
    assert [await person.decision(r) for r in (first, second)] == [None, None]
    assert await person.decision(third) == "deny"


@pytest.mark.parametrize(
    "items",
    [[], "one", [1], ["x"] * 2, [f"id{n}" for n in range(SET_LIMIT + 1)]],
)
async def test_a_malformed_list_of_items_is_refused(person: Person, items: object) -> None:
    async with connect(person.example.server, revision="2026-07-28") as client:
        (record,) = await _ask(person, client, USERS[:1])
    answer = await person.post(f"{PREFIX}/s/{record.id}/options", f"s:{record.id}", {"items": items})
    assert answer.status_code in (400, 409), answer.text
    assert await person.decision(record) is None


async def test_a_post_with_the_csrf_token_of_a_single_approval_is_refused(person: Person) -> None:
    async with connect(person.example.server, revision="2026-07-28") as client:
        first, _ = await _ask(person, client, USERS[:2])
    body = {"choice": "deny", "items": [first.id]}
    refused = await person.post(f"{PREFIX}/s/{first.id}/decide", f"a:{first.id}", body)
    assert refused.status_code == 403
    assert await person.decision(first) is None


async def test_a_deny_on_the_single_page_while_a_set_is_written_is_not_told_it_was_denied(person: Person) -> None:
    """A Deny tapped on one call's own page while the set holds that call must not answer "denied already"."""
    async with connect(person.example.server, revision="2026-07-28") as client:
        first, second = await _ask(person, client, USERS[:2])
    sets = person.page.changesets
    store, answers = sets.store, list[httpx.Response]()
    write = store.write

    async def tapping_deny_while_held(space: Any, key: str, value: str, ttl: float, *, only_new: bool) -> bool:
        written = await write(space, key, value, ttl, only_new=only_new)
        if value.startswith("held:") and key == first.id:
            path = f"{PREFIX}/a/{first.id}/decide"
            answers.append(await person.post(path, f"a:{first.id}", {"choice": "deny"}))
        return written

    store.write = tapping_deny_while_held  # type: ignore[method-assign]
    try:
        await sets.approve([first, second])
    finally:
        store.write = write  # type: ignore[method-assign]
    assert await person.decision(first) == "approve", "the set's passkey yes was written"
    (answer,) = answers
    assert answer.json().get("decided") != "deny", answer.text
    assert "denied" not in answer.json()["message"], answer.text
    assert answer.status_code == 409
