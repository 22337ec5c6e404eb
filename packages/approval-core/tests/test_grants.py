"""Standing grants without a browser: each term on its own, the challenge that signs the terms, the count.

The passkey here is ``testing/soft_passkey.py`` (a test double for an
authenticator, signing real P-256 assertions that the page verifies with
py_webauthn); the browser test with Chromium's virtual authenticator is
caldav-mcp's ``test_page_grants.py``.
"""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from soft_passkey import SoftPasskey, b64url

from approval_core import ApprovalSettings, CallerValue, Dialog, operation
from approval_core.asking.binding import PRINCIPAL_KEY, bind
from approval_core.asking.grant_book import GrantBook, GrantsFull
from approval_core.asking.grants import (
    GrantCall,
    GrantTerms,
    grant_challenge,
    grants_from_env,
    request_shapes,
    shape_of,
    signs,
)
from approval_core.errors import SettingsError
from approval_core.page.approval_page import PREFIX, ApprovalPage
from approval_core.page.grants import GrantDesk
from approval_core.page.passkeys import unb64url
from approval_core.page.pending import PendingApproval
from approval_core.page.settings import PageSettings
from approval_core.records.file_store import FileStore
from approval_core.records.store import MemoryStore, RecordStore

pytestmark = pytest.mark.anyio

ORIGIN = "http://localhost:8765"
NOW = 1_800_000_000.0
CALL = GrantCall("caldav-mcp", "delete_event", "/willi/work/", (), ("client", "https://issuer", "alice"))


def terms(**changed: Any) -> GrantTerms:
    base: dict[str, Any] = {
        "server": "caldav-mcp",
        "tools": ("delete_event",),
        "collection": "/willi/work/",
        "shapes": (),
        "principal": ("client", "https://issuer", "alice"),
        "uses": 2,
        "expires": int(NOW) + 600,
    }
    return GrantTerms(**{**base, **changed})


# ------------------------------------------------------------------ the terms, each on its own


def test_a_call_inside_every_term_is_covered() -> None:
    assert terms().refuses(CALL, NOW) is None
    assert terms(tools=("delete_event", "delete_task")).refuses(CALL, NOW) is None


@pytest.mark.parametrize(
    ("call", "term"),
    [
        (GrantCall("carddav-mcp", "delete_event", "/willi/work/", (), CALL.principal), "server"),
        (GrantCall("caldav-mcp", "move_event", "/willi/work/", (), CALL.principal), "tool"),
        (GrantCall("caldav-mcp", "delete_event", "/willi/home/", (), CALL.principal), "target"),
        (GrantCall("caldav-mcp", "delete_event", None, (), CALL.principal), "target"),
        (GrantCall("caldav-mcp", "delete_event", "/willi/work/", (), ("client", "https://issuer", "bob")), "principal"),
        (GrantCall("caldav-mcp", "delete_event", "/willi/work/", (), None), "principal"),
    ],
)
def test_a_call_outside_one_term_is_refused_by_that_term(call: GrantCall, term: str) -> None:
    assert terms().refuses(call, NOW) == term


def test_a_call_after_the_time_is_refused() -> None:
    assert terms().refuses(CALL, NOW + 599) is None
    assert terms().refuses(CALL, NOW + 600) == "expired"


def test_under_every_write_a_grant_covers_exactly_the_request_shapes_it_names() -> None:
    named = (("DELETE", "https://dav.example.org/willi/work/"),)
    grant = terms(collection=None, shapes=named)
    inside = GrantCall("caldav-mcp", "delete_event", None, named, CALL.principal)
    other_method = GrantCall("caldav-mcp", "delete_event", None, (("PUT", named[0][1]),), CALL.principal)
    other_place = GrantCall("caldav-mcp", "delete_event", None, (("DELETE", "https://dav.example.org/x/"),), None)
    one_more = GrantCall("caldav-mcp", "delete_event", None, (*named, ("PUT", named[0][1])), CALL.principal)
    assert grant.refuses(inside, NOW) is None
    assert grant.refuses(other_method, NOW) == "target"
    assert grant.refuses(other_place, NOW) == "target"
    assert grant.refuses(one_more, NOW) == "target"
    assert grant.refuses(CALL, NOW) == "target", "a grant of shapes never covers a call that names a collection"
    assert terms().refuses(inside, NOW) == "target", "nor a grant of a collection a call of shapes"


def test_a_request_shape_is_its_method_and_collection() -> None:
    assert shape_of("delete", "https://d.example/willi/work/e1.ics?x=1") == ("DELETE", "https://d.example/willi/work/")
    assert shape_of("MOVE", "https://d.example/willi/work/") == ("MOVE", "https://d.example/willi/")
    lines = [["DELETE", "https://d.example/w/a.ics", [], 0, "d"], ["DELETE", "https://d.example/w/b.ics", [], 0, "d"]]
    assert request_shapes({"requests": lines}) == (("DELETE", "https://d.example/w/"),)


@pytest.mark.parametrize(
    ("uses", "minutes", "field"),
    [(0, 10, "uses"), (51, 10, "uses"), (2, 0, "minutes"), (2, 481, "minutes")],
)
def test_widening_refuses_a_count_or_a_time_out_of_range(uses: int, minutes: int, field: str) -> None:
    with pytest.raises(ValueError, match=f"^{field}: "):
        GrantTerms.widen(CALL, ["delete_event"], uses, minutes, NOW)


def test_eight_hours_is_the_longest_grant() -> None:
    longest = GrantTerms.widen(CALL, ["delete_event"], 50, 480, NOW)
    assert longest.expires == int(NOW) + 8 * 3600


def test_the_principal_of_a_call_comes_from_its_binding() -> None:
    binding = bind("caldav-mcp", "delete_event", {"calendar": "/w/", PRINCIPAL_KEY: ("c", "i", "s")})
    assert GrantCall.of(binding, "/w/").principal == ("c", "i", "s")
    assert GrantCall.of(bind("caldav-mcp", "delete_event", {}), "/w/").principal is None


# ------------------------------------------------------------------ the challenge holds the terms


@pytest.mark.parametrize(
    "widened",
    [
        {"uses": 3},
        {"tools": ("delete_event", "move_event")},
        {"collection": "/willi/home/"},
        {"expires": int(NOW) + 601},
        {"principal": None},
        {"shapes": (("DELETE", "https://x/"),)},
    ],
)
def test_a_challenge_signs_exactly_its_terms(widened: dict[str, Any]) -> None:
    challenge = grant_challenge(terms())
    assert signs(challenge, terms())
    assert not signs(challenge, terms(**widened))
    assert grant_challenge(terms()) != challenge, "each challenge is fresh"


def test_terms_round_trip_through_json_and_refuse_what_is_not_terms() -> None:
    assert GrantTerms.from_json(terms().to_json()) == terms()
    assert GrantTerms.from_dict({**terms().as_dict(), "uses": "2"}) is None
    assert GrantTerms.from_dict({**terms().as_dict(), "uses": True}) is None
    assert GrantTerms.from_dict(["not", "terms"]) is None


def test_the_setting_is_off_by_default_strict_and_needs_the_page() -> None:
    assert grants_from_env({}, page=True) is False
    assert grants_from_env({"APPROVAL_GRANTS": "false"}, page=False) is False
    assert grants_from_env({"APPROVAL_GRANTS": "true"}, page=True) is True
    with pytest.raises(SettingsError, match="APPROVAL_GRANTS='yes' is not a valid value"):
        grants_from_env({"APPROVAL_GRANTS": "yes"}, page=True)
    with pytest.raises(SettingsError, match="needs APPROVAL_PAGE=true"):
        grants_from_env({"APPROVAL_GRANTS": "true"}, page=False)


def test_the_settings_read_approval_grants(tmp_path: Path) -> None:
    env = {"APPROVAL_PAGE": "true", "APPROVAL_PASSKEYS_FILE": str(tmp_path / "p.json"), "APPROVAL_GRANTS": "true"}
    assert ApprovalSettings.from_env(env).grants is True
    assert ApprovalSettings.from_env({}).grants is False


# ------------------------------------------------------------------ the count, once


@pytest.fixture(params=["memory", "file"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> RecordStore:
    if request.param == "memory":
        return MemoryStore()
    return FileStore(tmp_path, "caldav-mcp")


async def _race(book: GrantBook, calls: int) -> list[bool]:
    results: list[bool] = []

    async def one() -> None:
        results.append(await book.use(CALL) is not None)

    async with anyio.create_task_group() as group:
        for _ in range(calls):
            group.start_soon(one)
    return results


async def test_of_two_uses_of_the_last_one_exactly_one_acts(store: RecordStore) -> None:
    book = GrantBook(store, "caldav-mcp", clock=lambda: NOW)
    await book.make(terms(uses=1))
    assert sorted(await _race(book, 2)) == [False, True]
    assert await book.use(CALL) is None


async def test_of_six_concurrent_uses_of_three_exactly_three_act_and_each_once(store: RecordStore) -> None:
    book = GrantBook(store, "caldav-mcp", clock=lambda: NOW)
    grant_id = await book.make(terms(uses=3))
    assert sorted(await _race(book, 6)) == [False] * 3 + [True] * 3
    state = await book.get(grant_id)
    assert state is not None
    assert (state.used, state.ended(NOW)) == (3, "used_up")


async def test_a_revoked_grant_allows_nothing_and_an_unknown_one_is_not_found(store: RecordStore) -> None:
    book = GrantBook(store, "caldav-mcp", clock=lambda: NOW)
    grant_id = await book.make(terms(uses=5))
    assert await book.use(CALL) is not None
    revoked = await book.revoke(grant_id)
    assert revoked is not None
    assert revoked.ended(NOW) == "revoked"
    assert await book.use(CALL) is None
    assert await book.revoke("g-0000000000") is None


async def test_the_number_of_grants_kept_is_bounded() -> None:
    book = GrantBook(MemoryStore(), "caldav-mcp", clock=lambda: NOW)
    for _ in range(32):
        await book.make(terms())
    with pytest.raises(GrantsFull, match="32 grants are kept already"):
        await book.make(terms())


# ------------------------------------------------------------------ the page: terms changed after the challenge


def _paired(tmp_path: Path, passkey: SoftPasskey) -> Path:
    path = tmp_path / "passkeys.json"
    body = {"version": 1, "user_id": b64url(b"u" * 16), "credentials": [passkey.entry()], "pairing": None}
    path.write_text(json.dumps(body))
    path.chmod(0o600)
    return path


async def _approved(tmp_path: Path, passkey: SoftPasskey) -> tuple[ApprovalPage, GrantDesk, PendingApproval]:
    store = MemoryStore()
    page = ApprovalPage("caldav-mcp", PageSettings(passkeys_file=_paired(tmp_path, passkey)), store)
    page.bind(ORIGIN)
    desk = page.grant_desk = GrantDesk(page, GrantBook(store, "caldav-mcp"), ("delete_event", "delete_task"))
    dialog = Dialog(operation("delete an event"), "No history is kept.", [CallerValue("Calendar", "/willi/work/")])
    binding = bind("caldav-mcp", "delete_event", {"calendar": "/willi/work/"}, shown=dialog.render())
    record = await page.book.open(binding, dialog)
    assert await desk.allow(binding, "/willi/work/") is None, "no grant yet: it asks, and leaves its target"
    await page.book.decide(record, "approve")
    return page, desk, record


def _headers(page: ApprovalPage, record: PendingApproval) -> dict[str, str]:
    return {"Origin": ORIGIN, "Content-Type": "application/json", "X-CSRF-Token": page.csrf(f"g:{record.id}")}


async def _options(http: httpx.AsyncClient, page: ApprovalPage, record: PendingApproval) -> dict[str, Any]:
    body = {"tools": ["delete_event"], "uses": 2, "minutes": 30}
    reply = await http.post(f"{PREFIX}/g/{record.id}/options", json=body, headers=_headers(page, record))
    assert reply.status_code == 200, reply.text
    return reply.json()


async def test_terms_changed_after_the_challenge_are_refused_and_grant_nothing(tmp_path: Path) -> None:
    passkey = SoftPasskey()
    page, desk, record = await _approved(tmp_path, passkey)
    transport = httpx.ASGITransport(app=page.app())
    async with httpx.AsyncClient(transport=transport, base_url=ORIGIN) as http:
        offered = await _options(http, page, record)
        challenge = unb64url(offered["publicKey"]["challenge"])
        assert signs(challenge, GrantTerms.from_dict(offered["terms"]))  # type: ignore[arg-type]
        assert offered["terms"]["collection"] == "/willi/work/"
        widened = {**offered["terms"], "uses": 50}
        make = f"{PREFIX}/g/{record.id}/make"
        body = {"terms": widened, "credential": passkey.assertion(challenge, ORIGIN)}
        refused = await http.post(make, content=json.dumps(body), headers=_headers(page, record))
        assert refused.status_code == 403
        assert "not the terms your passkey signed" in refused.json()["message"]
        assert await desk.book.all() == []
        body = {"terms": offered["terms"], "credential": passkey.assertion(challenge, ORIGIN)}
        spent = await http.post(make, content=json.dumps(body), headers=_headers(page, record))
        assert spent.status_code == 403, "the challenge was spent by the refused try"

        offered = await _options(http, page, record)
        challenge = unb64url(offered["publicKey"]["challenge"])
        stranger = SoftPasskey()
        body = {"terms": offered["terms"], "credential": stranger.assertion(challenge, ORIGIN)}
        unpaired = await http.post(make, content=json.dumps(body), headers=_headers(page, record))
        assert unpaired.status_code == 403
        assert await desk.book.all() == []

        offered = await _options(http, page, record)
        challenge = unb64url(offered["publicKey"]["challenge"])
        body = {"terms": offered["terms"], "credential": passkey.assertion(challenge, ORIGIN)}
        made = await http.post(make, content=json.dumps(body), headers=_headers(page, record))
        assert made.status_code == 200, made.text
    kept = await desk.book.all()
    assert [(s.id, s.terms.uses, s.terms.tools) for s in kept] == [(made.json()["grant"], 2, ("delete_event",))]
    assert kept[0].terms.expires <= math.ceil(time.time()) + 30 * 60


async def test_the_page_refuses_a_grant_for_a_request_not_approved_and_tools_it_does_not_know(tmp_path: Path) -> None:
    passkey = SoftPasskey()
    page, _, record = await _approved(tmp_path, passkey)
    dialog = Dialog(operation("delete an event"), "No history is kept.")
    other = await page.book.open(bind("caldav-mcp", "delete_event", {"calendar": "/x/"}), dialog)
    transport = httpx.ASGITransport(app=page.app())
    async with httpx.AsyncClient(transport=transport, base_url=ORIGIN) as http:
        form = await http.get(f"{PREFIX}/g/{other.id}")
        assert form.status_code == 409
        assert "only a request you approved" in form.text
        body = {"tools": ["delete_user"], "uses": 2, "minutes": 30}
        reply = await http.post(f"{PREFIX}/g/{record.id}/options", json=body, headers=_headers(page, record))
        assert reply.status_code == 400
        assert "tools:" in reply.json()["message"]
        body = {"tools": ["delete_event"], "uses": 2, "minutes": 481}
        reply = await http.post(f"{PREFIX}/g/{record.id}/options", json=body, headers=_headers(page, record))
        assert reply.status_code == 400
        assert reply.json()["message"].startswith("minutes: ")
        form = await http.get(f"{PREFIX}/g/{record.id}")
        assert form.status_code == 200
        assert 'id="tool-delete_event" checked' in form.text
        listed = await http.get(f"{PREFIX}/grants")
        assert "No grants are kept." in listed.text
        revoke = await http.post(
            f"{PREFIX}/grants/g-0000000000/revoke",
            json={},
            headers={"Origin": ORIGIN, "Content-Type": "application/json", "X-CSRF-Token": page.csrf("grants")},
        )
        assert revoke.status_code == 404


async def test_grants_off_means_no_grant_routes(tmp_path: Path) -> None:
    page = ApprovalPage("caldav-mcp", PageSettings(passkeys_file=_paired(tmp_path, SoftPasskey())), MemoryStore())
    page.bind(ORIGIN)
    transport = httpx.ASGITransport(app=page.app())
    async with httpx.AsyncClient(transport=transport, base_url=ORIGIN) as http:
        listed = await http.get(f"{PREFIX}/grants")
    assert listed.status_code == 404
    assert "APPROVAL_GRANTS" in listed.text


def test_the_startup_line_says_grants_are_on(tmp_path: Path) -> None:
    from approval_core import startup_line

    page = PageSettings(passkeys_file=tmp_path / "p.json")
    line = startup_line("caldav-mcp", ApprovalSettings(page=page, grants=True))
    assert line == (
        "caldav-mcp: APPROVAL_GRANTS=true — a yes on the approval page may be widened into a standing grant"
    )
    off = startup_line("caldav-mcp", ApprovalSettings(elicitation=False, page=page, grants=True))
    assert off is not None
    assert off.endswith("ask on the approval page; APPROVAL_GRANTS=true — a yes on the approval page may be widened "
                        "into a standing grant")  # fmt: skip
    assert startup_line("caldav-mcp", ApprovalSettings(page=page)) is None


async def test_an_expired_grant_allows_nothing_and_is_summed_once(tmp_path: Path) -> None:
    from approval_core.testing.recorders import AuditRecorder

    now = [NOW]
    store = MemoryStore(clock=lambda: now[0])
    page = ApprovalPage("caldav-mcp", PageSettings(passkeys_file=_paired(tmp_path, SoftPasskey())), store)
    desk = GrantDesk(page, GrantBook(store, "caldav-mcp", clock=lambda: now[0]), ("delete_event",))
    binding = bind("caldav-mcp", "delete_event", {"calendar": "/willi/work/"})
    grant_id = await desk.book.make(terms(principal=None))
    with AuditRecorder() as audit:
        assert await desk.allow(binding, "/willi/work/") is not None
        now[0] += 600
        assert await desk.allow(binding, "/willi/work/") is None
        assert await desk.allow(binding, "/willi/work/") is None
    assert [(e["event"], e["reason"]) for e in audit.events] == [
        ("grant_used", grant_id),
        ("grant_ended", f"{grant_id}:expired"),
    ]
