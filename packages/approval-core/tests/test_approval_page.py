"""The approval page's gate paths and the page's own rules, without a browser.

Where a decision is needed here, it is written through the page's own
:class:`~approval_core.PendingBook` as the page writes it after a verified
passkey; the passkey ceremony itself runs in a real browser in
``test_page_browser.py``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import httpx
import mcp_types as mt
import pytest

from approval_core import ApprovalSettings, approval_outcome
from approval_core.errors import SettingsError
from approval_core.page.approval_page import PREFIX, SECURITY_HEADERS, ApprovalPage
from approval_core.page.passkeys import b64url
from approval_core.page.pending import CODE_ALPHABET, PendingApproval
from approval_core.page.settings import PageSettings
from approval_core.testing import answer_with, connect
from example_server import Example

pytestmark = pytest.mark.anyio

ORIGIN = "http://localhost:8765"
DELETE = {"book": "b", "ids": ["a"]}


class Clock:
    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


def _paired_file(path: Path, rp_id: str = "localhost") -> Path:
    """A passkey file holding one (public) key for ``rp_id``: the gate then counts the page as paired."""
    body = {
        "version": 1,
        "user_id": b64url(b"u" * 16),
        "credentials": [{"id": b64url(b"cred"), "public_key": b64url(b"key"), "rp_id": rp_id, "added": "x"}],
        "pairing": None,
    }
    path.write_text(json.dumps(body))
    path.chmod(0o600)
    return path


def _example(tmp_path: Path, *, paired: bool = True, elicitation: bool = True, **gate: Any) -> Example:
    passkeys = tmp_path / "passkeys.json"
    if paired:
        _paired_file(passkeys)
    settings = ApprovalSettings(elicitation=elicitation, page=PageSettings(passkeys_file=passkeys))
    example = Example(settings, **gate)
    page = example.gate.page
    assert page is not None
    page.bind(ORIGIN)
    return example


def _page(example: Example) -> ApprovalPage:
    assert example.gate.page is not None
    return example.gate.page


def _outcome(result: mt.CallToolResult) -> dict[str, Any]:
    found = approval_outcome(result)
    assert found is not None, result
    return found


async def _pending(example: Example, result: mt.CallToolResult) -> PendingApproval:
    outcome = _outcome(result)
    assert outcome["outcome"] == "approval_pending"
    pid = outcome["approval_url"].rsplit("/", 1)[1]
    record = await _page(example).book.get(pid)
    assert record is not None
    return record


# ------------------------------------------------------------------ the gate's path


async def test_a_client_without_elicitation_gets_the_link_and_the_next_call_acts_once(tmp_path: Path) -> None:
    example = _example(tmp_path)
    async with connect(example.server, revision="2026-07-28") as client:
        first = await client.call_tool("delete_items", DELETE)
        assert first.is_error
        assert example.items == {"a", "b", "c"}
        record = await _pending(example, first)
        outcome = _outcome(first)
        assert outcome["approval_url"] == f"{ORIGIN}{PREFIX}/a/{record.id}"
        assert outcome["code"] == record.code
        assert outcome["changed"] is False
        text = first.content[0].text  # type: ignore[union-attr]
        assert outcome["approval_url"] in text
        assert record.code in text
        assert "confirm_token" not in text
        again = await client.call_tool("delete_items", DELETE)
        assert (await _pending(example, again)).id == record.id, "the same call finds the same pending approval"
        assert example.items == {"a", "b", "c"}

        await _page(example).book.decide(record, "approve")
        acted = await client.call_tool("delete_items", DELETE)
        assert not acted.is_error
        assert example.items == {"b", "c"}

    example.items.add("a")
    example.version -= 1  # the same call as before, on the same version
    async with connect(example.server, revision="2026-07-28") as client:
        after = await client.call_tool("delete_items", DELETE)
        assert (await _pending(example, after)).id != record.id, "an approval acts once; the next call asks anew"
        assert example.items == {"a", "b", "c"}


async def test_a_denial_changes_nothing_and_the_next_call_asks_anew(tmp_path: Path) -> None:
    example = _example(tmp_path)
    async with connect(example.server, revision="2025-11-25") as client:
        record = await _pending(example, await client.call_tool("delete_items", DELETE))
        await _page(example).book.decide(record, "deny")
        denied = await client.call_tool("delete_items", DELETE)
        assert denied.is_error
        assert _outcome(denied)["outcome"] == "declined"
        assert record.code in denied.content[0].text
        assert example.items == {"a", "b", "c"}
        fresh = await _pending(example, await client.call_tool("delete_items", DELETE))
        assert fresh.id != record.id


async def test_an_expired_approval_changes_nothing_and_cannot_be_decided(tmp_path: Path) -> None:
    clock = Clock()
    example = _example(tmp_path, clock=clock)
    async with connect(example.server, revision="2026-07-28") as client:
        record = await _pending(example, await client.call_tool("delete_items", DELETE))
        clock.now += 301
        async with _page_client(example) as http:
            late = await _post(http, example, record, {"choice": "approve"})
            assert late.status_code == 410
            assert "expired" in late.json()["message"]
        await _page(example).book.decide(record, "approve")  # even a decision written late is never used
        fresh = await _pending(example, await client.call_tool("delete_items", DELETE))
        assert fresh.id != record.id
        assert example.items == {"a", "b", "c"}


async def test_an_entry_changed_between_question_and_answer_is_not_approved(tmp_path: Path) -> None:
    example = _example(tmp_path)
    async with connect(example.server, revision="2026-07-28") as client:
        record = await _pending(example, await client.call_tool("delete_items", DELETE))
        await _page(example).book.decide(record, "approve")
        example.version += 1  # another client changed the book: its ETag moved on
        result = await client.call_tool("delete_items", DELETE)
        assert (await _pending(example, result)).id != record.id
        assert example.items == {"a", "b", "c"}


async def test_an_approval_reaches_no_other_call(tmp_path: Path) -> None:
    example = _example(tmp_path)
    async with connect(example.server, revision="2026-07-28") as client:
        record = await _pending(example, await client.call_tool("delete_items", DELETE))
        await _page(example).book.decide(record, "approve")
        wider = await client.call_tool("delete_items", {"book": "b", "ids": ["a", "b"]})
        assert _outcome(wider)["outcome"] == "approval_pending"
        assert example.items == {"a", "b", "c"}


async def test_without_a_paired_passkey_nothing_can_be_approved_and_no_token_is_given(tmp_path: Path) -> None:
    example = _example(tmp_path, paired=False)
    async with connect(example.server, revision="2026-07-28") as client:
        result = await client.call_tool("delete_items", DELETE)
    outcome = _outcome(result)
    assert outcome["outcome"] == "not_paired"
    assert "confirm_token" not in outcome
    assert "python -m approval_core pair" in result.content[0].text  # type: ignore[union-attr]


@pytest.mark.parametrize("strict", [False, True])
async def test_with_the_dialog_switched_off_the_page_replaces_the_token(tmp_path: Path, strict: bool) -> None:
    example = _example(tmp_path, elicitation=False, strict=strict)
    asked: list[mt.ElicitRequestParams] = []

    async def answer(_: Any, params: mt.ElicitRequestParams) -> mt.ElicitResult:
        asked.append(params)
        return mt.ElicitResult(action="accept")

    async with connect(example.server, revision="2025-11-25", answer=answer) as client:
        result = await client.call_tool("delete_items", DELETE)
    assert _outcome(result)["outcome"] == "approval_pending"
    assert not asked, "ELICITATION=false: the link only"


async def test_a_form_capable_client_still_gets_the_form_dialog(tmp_path: Path) -> None:
    example = _example(tmp_path)
    async with connect(example.server, revision="2025-11-25", answer=answer_with(_ticked())) as client:
        result = await client.call_tool("delete_items", DELETE)
    assert not result.is_error
    assert example.items == {"b", "c"}


def _ticked() -> mt.ElicitResult:
    return mt.ElicitResult(action="accept", content={"approve": True})


async def test_2025_11_25_url_mode_waits_for_the_decision_and_acts(tmp_path: Path) -> None:
    example = _example(tmp_path)
    seen: list[mt.ElicitRequestURLParams] = []

    async def person(_: Any, params: mt.ElicitRequestParams) -> mt.ElicitResult:
        assert isinstance(params, mt.ElicitRequestURLParams)
        seen.append(params)
        record = await _page(example).book.get(params.url.rsplit("/", 1)[1])
        assert record is not None
        assert record.code in params.message
        await _page(example).book.decide(record, "approve")
        return mt.ElicitResult(action="accept")

    async with connect(example.server, revision="2025-11-25", answer=person, elicitation="url") as client:
        result = await client.call_tool("delete_items", DELETE)
    assert not result.is_error
    assert example.items == {"b", "c"}
    assert len(seen) == 1
    assert seen[0].url.startswith(f"{ORIGIN}{PREFIX}/a/")


async def test_2025_11_25_url_mode_declined_changes_nothing(tmp_path: Path) -> None:
    example = _example(tmp_path)
    async with connect(
        example.server, revision="2025-11-25", answer=answer_with(mt.ElicitResult(action="decline")), elicitation="url"
    ) as client:
        result = await client.call_tool("delete_items", DELETE)
    assert _outcome(result)["outcome"] == "declined"
    assert example.items == {"a", "b", "c"}


async def test_2026_07_28_url_mode_retry_finds_the_decision(tmp_path: Path) -> None:
    example = _example(tmp_path)
    requests: list[mt.ElicitRequestParams] = []

    async def person(_: Any, params: mt.ElicitRequestParams) -> mt.ElicitResult:
        requests.append(params)
        assert isinstance(params, mt.ElicitRequestURLParams)
        record = await _page(example).book.get(params.url.rsplit("/", 1)[1])
        assert record is not None
        await _page(example).book.decide(record, "approve")
        return mt.ElicitResult(action="accept")

    async with connect(example.server, revision="2026-07-28", answer=person, elicitation="url") as client:
        result = await client.call_tool("delete_items", DELETE)
    assert not result.is_error
    assert example.items == {"b", "c"}
    assert len(requests) == 1


async def test_2026_07_28_url_mode_while_pending_ends_in_the_link_not_a_loop(tmp_path: Path) -> None:
    example = _example(tmp_path)
    rounds = 0

    async def undecided(_: Any, params: mt.ElicitRequestParams) -> mt.ElicitResult:
        nonlocal rounds
        rounds += 1
        return mt.ElicitResult(action="accept")

    async with connect(example.server, revision="2026-07-28", answer=undecided, elicitation="url") as client:
        result = await client.call_tool("delete_items", DELETE)
    assert _outcome(result)["outcome"] == "approval_pending"
    assert rounds == 1
    assert example.items == {"a", "b", "c"}


# ------------------------------------------------------------------ the page's own rules


def _page_client(example: Example) -> httpx.AsyncClient:
    transport = httpx.ASGITransport(app=_page(example).app())
    return httpx.AsyncClient(transport=transport, base_url=ORIGIN)


async def _post(
    http: httpx.AsyncClient, example: Example, record: PendingApproval, body: dict[str, Any], **headers: str
) -> httpx.Response:
    sent = {"Origin": ORIGIN, "Content-Type": "application/json", "X-CSRF-Token": _page(example).csrf(f"a:{record.id}")}
    sent.update({name.replace("_", "-"): value for name, value in headers.items()})
    return await http.post(f"{PREFIX}/a/{record.id}/decide", content=json.dumps(body), headers=sent)


async def _one_pending(example: Example) -> PendingApproval:
    async with connect(example.server, revision="2026-07-28") as client:
        return await _pending(example, await client.call_tool("delete_items", DELETE))


async def test_a_get_shows_the_dialog_and_changes_nothing(tmp_path: Path) -> None:
    example = _example(tmp_path)
    record = await _one_pending(example)
    async with _page_client(example) as http:
        for _ in range(3):
            shown = await http.get(f"{PREFIX}/a/{record.id}")
            assert shown.status_code == 200
    assert record.code in shown.text
    assert "Delete 1 item(s)" in shown.text
    for name, value in SECURITY_HEADERS.items():
        assert shown.headers[name] == value
    assert "frame-ancestors 'none'" in shown.headers["content-security-policy"]
    assert "<script>" not in shown.text, "no inline script"
    assert "http://" not in shown.text.split("<body>")[1], "no external resource"
    assert await _page(example).book.decision(record.id) is None


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"Origin": "http://evil.example"}, 403),
        ({"Origin": "null"}, 403),
        ({"X_CSRF_Token": ""}, 403),
        ({"X_CSRF_Token": "forged"}, 403),
        ({"Content_Type": "text/plain"}, 403),
        ({"Sec_Fetch_Site": "cross-site"}, 403),
    ],
)
async def test_a_post_not_from_the_page_is_refused(tmp_path: Path, headers: dict[str, str], status: int) -> None:
    example = _example(tmp_path)
    record = await _one_pending(example)
    async with _page_client(example) as http:
        refused = await _post(http, example, record, {"choice": "deny"}, **headers)
    assert refused.status_code == status
    assert await _page(example).book.decision(record.id) is None


async def test_a_post_nested_deeper_than_json_reads_is_refused_as_not_json(tmp_path: Path) -> None:
    """Python's json raises RecursionError, not ValueError, for such a body: it is a 400 all the same, never a 500."""
    example = _example(tmp_path)
    record = await _one_pending(example)
    sent = {"Origin": ORIGIN, "Content-Type": "application/json", "X-CSRF-Token": _page(example).csrf(f"a:{record.id}")}
    async with _page_client(example) as http:
        refused = await http.post(f"{PREFIX}/a/{record.id}/decide", content=b"[" * 50_000, headers=sent)
    assert refused.status_code == 400
    assert "not JSON" in refused.text
    assert await _page(example).book.decision(record.id) is None


async def test_a_csrf_token_of_another_approval_is_refused(tmp_path: Path) -> None:
    example = _example(tmp_path)
    record = await _one_pending(example)
    async with _page_client(example) as http:
        refused = await _post(http, example, record, {"choice": "deny"}, X_CSRF_Token=_page(example).csrf("a:other"))
    assert refused.status_code == 403
    assert await _page(example).book.decision(record.id) is None


async def test_another_host_name_is_refused(tmp_path: Path) -> None:
    example = _example(tmp_path)
    record = await _one_pending(example)
    async with _page_client(example) as http:
        rebound = await http.get(f"{PREFIX}/a/{record.id}", headers={"Host": "attacker.example:8765"})
    assert rebound.status_code == 421


async def test_a_decision_is_final(tmp_path: Path) -> None:
    example = _example(tmp_path)
    record = await _one_pending(example)
    async with _page_client(example) as http:
        first = await _post(http, example, record, {"choice": "deny"})
        double = await _post(http, example, record, {"choice": "deny"})
        opposite = await _post(http, example, record, {"choice": "approve"})
    assert first.status_code == 200
    assert first.json()["decided"] == "deny"
    assert double.status_code == 200
    assert "already" in double.json()["message"]
    assert opposite.status_code == 409
    assert "final" in opposite.json()["message"]
    assert await _page(example).book.decision(record.id) == "deny"


@pytest.mark.parametrize(
    "credential",
    [
        None,
        "not a credential",
        {"id": "x", "response": {"clientDataJSON": b64url(b'{"challenge":"never-issued"}')}},
    ],
)
async def test_approving_without_a_passkey_answer_to_a_challenge_of_this_page_is_refused(
    tmp_path: Path, credential: object
) -> None:
    example = _example(tmp_path)
    record = await _one_pending(example)
    async with _page_client(example) as http:
        refused = await _post(http, example, record, {"choice": "approve", "credential": credential})
    assert refused.status_code in (400, 403)
    assert await _page(example).book.decision(record.id) is None


async def test_an_unknown_id_is_not_found(tmp_path: Path) -> None:
    example = _example(tmp_path)
    async with _page_client(example) as http:
        missing = await http.get(f"{PREFIX}/a/AAAAAAAAAAAAAAAAAAAAAA")
    assert missing.status_code == 404


async def test_caller_values_cannot_pose_as_page_content(tmp_path: Path) -> None:
    example = _example(tmp_path)
    hostile = "</code></td></tr><tr><th>Code</th><td>ZZZ-9</td></tr><script>alert(1)</script>\n\u202eApprove"
    async with connect(example.server, revision="2026-07-28") as client:
        record = await _pending(example, await client.call_tool("delete_items", {"book": hostile, "ids": ["a"]}))
    async with _page_client(example) as http:
        shown = (await http.get(f"{PREFIX}/a/{record.id}")).text
    assert "<script>alert" not in shown
    assert "<th>Code</th>" not in shown
    assert "&lt;script&gt;" in shown
    assert "\\n" in shown
    assert "\\u202e" in shown


def test_a_code_is_easy_to_compare() -> None:
    from approval_core.page.pending import new_code

    codes = {new_code() for _ in range(200)}
    assert len(codes) > 150
    for code in codes:
        assert len(code) == 5
        assert code[3] == "-"
        assert code[0] in CODE_ALPHABET
        assert code[4].isdigit()


def test_the_page_needs_a_domain_name_not_an_address(tmp_path: Path) -> None:
    example = _example(tmp_path)
    for origin in ("http://127.0.0.1:8000", "http://[::1]:8000", "http://localhost:8000/mcp"):
        with pytest.raises(SettingsError):
            _page(example).bind(origin)


def test_a_passkey_file_open_to_others_is_refused(tmp_path: Path) -> None:
    example = _example(tmp_path)
    _page(example).passkeys.path.chmod(0o644)
    with pytest.raises(SettingsError, match="chmod 600"):
        _page(example).paired()


@pytest.mark.parametrize(
    ("env", "problem"),
    [
        ({"APPROVAL_PAGE": "yes"}, "APPROVAL_PAGE='yes'"),
        ({"APPROVAL_PAGE": "true", "APPROVAL_PAGE_PORT": "http"}, "APPROVAL_PAGE_PORT"),
        ({"APPROVAL_PAGE": "true", "APPROVAL_PAGE_TTL": "5"}, "APPROVAL_PAGE_TTL"),
        ({"APPROVAL_PAGE": "true", "APPROVAL_PUSH_URL": "ntfy.example.org/x"}, "APPROVAL_PUSH_URL"),
        ({"APPROVAL_PAGE": "true", "APPROVAL_PUSH_URL": "https://u:p@ntfy.example.org/x"}, "credentials"),
        ({"APPROVAL_PAGE_PORT": "8123"}, "APPROVAL_PAGE is not 'true'"),
        ({"APPROVAL_PAGE": "true", "APPROVAL_PASSKEYS_FILE": ""}, "APPROVAL_PASSKEYS_FILE"),
    ],
)
def test_bad_page_settings_are_named(env: dict[str, str], problem: str) -> None:
    with pytest.raises(SettingsError, match=problem.replace("(", r"\(").replace("'", "'")):
        ApprovalSettings.from_env(env)


def test_page_settings_are_read(tmp_path: Path) -> None:
    env = {
        "APPROVAL_PAGE": "true",
        "APPROVAL_PAGE_PORT": "8123",
        "APPROVAL_PAGE_TTL": "120",
        "APPROVAL_PASSKEYS_FILE": str(tmp_path / "p.json"),
        "APPROVAL_PUSH_URL": "https://ntfy.example.org/my-approvals",
    }
    page = ApprovalSettings.from_env(env).page
    assert page is not None
    assert page.port == 8123
    assert page.ttl == 120.0
    assert page.push_topic == "my-approvals"
    assert ApprovalSettings.from_env({}).page is None
    assert ApprovalSettings.from_env({"APPROVAL_PAGE": "false"}).page is None


async def test_a_passkey_answer_made_inside_a_frame_of_another_site_is_refused(tmp_path: Path) -> None:
    example = _example(tmp_path)
    record = await _one_pending(example)
    framed = {"type": "webauthn.get", "challenge": "x", "origin": ORIGIN, "crossOrigin": True}
    credential = {"id": "x", "response": {"clientDataJSON": b64url(json.dumps(framed).encode())}}
    async with _page_client(example) as http:
        refused = await _post(http, example, record, {"choice": "approve", "credential": credential})
    assert refused.status_code == 403
    assert "frame" in refused.json()["message"]


async def test_every_answer_of_the_page_carries_its_security_headers(tmp_path: Path) -> None:
    example = _example(tmp_path)
    async with _page_client(example) as http:
        for path in (f"{PREFIX}/nowhere", f"{PREFIX}/a/x/y/z", f"{PREFIX}/approval.js"):
            answer = await http.get(path)
            assert answer.headers["x-frame-options"] == "DENY", path
            assert "frame-ancestors 'none'" in answer.headers["content-security-policy"], path


@pytest.mark.parametrize("problem", ["symlink", "folder open to others"])
def test_a_passkey_file_others_could_swap_is_refused(tmp_path: Path, problem: str) -> None:
    example = _example(tmp_path)
    real = _page(example).passkeys.path
    if problem == "symlink":
        link = tmp_path / "linked.json"
        link.symlink_to(real)
        _page(example).passkeys.path = link
    else:
        tmp_path.chmod(0o777)
    with pytest.raises(SettingsError):
        _page(example).paired()


def test_the_startup_line_says_the_page_asks_when_the_dialog_is_switched_off(tmp_path: Path) -> None:
    from approval_core import startup_line

    settings = ApprovalSettings(elicitation=False, page=PageSettings(passkeys_file=tmp_path / "p.json"))
    assert startup_line("caldav-mcp", settings) == (
        "caldav-mcp: ELICITATION=false — guarded tools ask on the approval page"
    )
