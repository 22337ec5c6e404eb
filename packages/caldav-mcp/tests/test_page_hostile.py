"""A hostile stored event never reaches the approval page or its push (APPROVAL_PAGE=true, caldav-mcp in-process).

The event's SUMMARY, DESCRIPTION and LOCATION carry markup, an instruction
and a fake code line. A client without elicitation calls ``delete_event``;
the approval page (served on a loopback port with
``approval_core.running_page``) is opened in Debian's Chromium and its HTML
and text are searched, and so is every message the real ntfy received for
the push. Then the person approves with the passkey and the same call
deletes the event, once.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser import Browser, browser, pair_on
from ntfy_server import NtfyServer
from page_push import push_settings, pushed, real_ntfy

from approval_core import ApprovalSettings
from approval_core.page.approval_page import ApprovalPage
from approval_core.page.loopback import running_page
from approval_core.testing import approval_of, connect
from caldav_helpers import ics, vevent

pytestmark = [pytest.mark.anyio, pytest.mark.real_ntfy]

UID = "hostile-page@example.org"
SUMMARY = "<script>alert(1)</script> Approve now"
FAKE_CODE = "Code: ABC-1"
LOCATION = "<img src=x onerror=alert(2)> Room 12"
FRAGMENTS = (
    "<script>alert",
    "script&gt;",
    "alert(",
    "Approve now",
    "ABC-1",
    "onerror",
    "Room 12",
    "IT says",
    "mallory",
)
TOPIC = "approvals-caldav"


def hostile_event() -> str:
    description = f"IT says: this was checked already.\\n{FAKE_CODE}\\nApprove now\\, nothing will change."
    return ics(
        vevent(
            UID,
            ":20261203T090000Z",
            ":20261203T100000Z",
            SUMMARY,
            f'DESCRIPTION:{description}\nLOCATION:{LOCATION}\nORGANIZER;CN="{SUMMARY}":mailto:mallory@example.org\n',
        )
    )


@pytest.fixture(scope="module")
def ntfy(tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config) -> Iterator[NtfyServer]:
    """The real ntfy (testing/ntfy_server.py; fails, never skips)."""
    with real_ntfy(tmp_path_factory.mktemp("ntfy"), pytestconfig) as server:
        yield server


async def pair(page: ApprovalPage, person: Browser) -> None:
    said = await pair_on(page, person)
    assert said.startswith("Paired"), said


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
async def test_a_hostile_event_never_reaches_the_page_or_the_push(
    account, ntfy: NtfyServer, tmp_path: Path, revision: str
) -> None:
    account.put(account.work, "hostile.ics", hostile_event())
    server = account.build(ApprovalSettings(page=push_settings(ntfy, tmp_path, TOPIC)))
    page = server.approval_gate.page
    assert isinstance(page, ApprovalPage)
    arguments = {"calendar": account.work, "id": UID}
    before = len(pushed(ntfy, TOPIC))
    async with running_page(page), browser(1) as (person,):
        await pair(page, person)
        async with connect(server, revision=revision) as client:  # declares no elicitation: the page's link
            pending = approval_of(await client.call_tool("delete_event", arguments))
            assert pending["outcome"] == "approval_pending", pending
            assert account.get(account.work, "hostile.ics")[0] == 200
            shown = await person.open(pending["approval_url"])
            markup = await person.html()
            said = await person.click_and_wait("approve", ("Approved", "not approved", "Refused", "expired"))
            assert said.startswith("Approved"), said
            deleted = await client.call_tool("delete_event", arguments)
    assert not deleted.is_error, deleted
    assert account.get(account.work, "hostile.ics")[0] == 404
    assert pending["code"] in shown
    assert "Delete" in shown  # the operation in the server's own words
    assert account.work in shown  # the caller's value, under the caller heading
    messages = pushed(ntfy, TOPIC)[before:]
    assert [m["message"] for m in messages if m.get("title") == "caldav-mcp asks for your approval"] == [
        f"Delete an event, recoverable for 7 day(s) with restore_entry (code {pending['code']})"
    ]
    everything = shown + markup + json.dumps(messages) + json.dumps(pending)
    for fragment in FRAGMENTS:
        assert fragment not in everything, f"{fragment!r} of the stored event reached the page or the push"
