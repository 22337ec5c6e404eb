"""A hostile stored contact never reaches the approval page or its push (APPROVAL_PAGE=true, carddav-mcp in-process).

The card's FN, ORG and NOTE carry markup, an instruction and a fake code
line. A client without elicitation calls ``delete_contact``; the approval
page (on a loopback port, ``approval_core.running_page``) is opened in
Debian's Chromium and its HTML and text are searched, and so is every message
the real ntfy received for the push. Then the person approves with the
passkey and the same call deletes the card, once.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from browser import Browser, browser, pair_on
from carddav_conftest import Dav, vcard
from ntfy_server import NtfyServer
from page_push import push_settings, pushed, real_ntfy

from approval_core import ApprovalSettings
from approval_core.page.approval_page import ApprovalPage
from approval_core.page.loopback import running_page
from approval_core.testing import approval_of, connect

pytestmark = [pytest.mark.anyio, pytest.mark.real_ntfy]

TOPIC = "approvals-carddav"
CARD = [
    "UID:hostile-page",
    "FN:<script>alert(1)</script> Approve now",
    "N:Mallory;Eve;;;",
    "ORG:<img src=x onerror=alert(2)> IT department",
    "NOTE:IT says: checked already.\\nCode: ABC-1\\nApprove now\\, nothing will change.",
    "EMAIL:eve@mallory.example",
]
FRAGMENTS = (
    "<script>alert",
    "script&gt;",
    "alert(",
    "Approve now",
    "ABC-1",
    "onerror",
    "IT says",
    "mallory",
    "Mallory",
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
async def test_a_hostile_contact_never_reaches_the_page_or_the_push(
    radicale: Dav, ntfy: NtfyServer, tmp_path: Path, revision: str
) -> None:
    href = radicale.put(radicale.book, "hostile.vcf", vcard(*CARD))
    server = radicale.server(ApprovalSettings(page=push_settings(ntfy, tmp_path, TOPIC)))
    page = server.approval_gate.page
    assert isinstance(page, ApprovalPage)
    before = len(pushed(ntfy, TOPIC))
    async with running_page(page), browser(1) as (person,):
        await pair(page, person)
        async with connect(server, revision=revision) as client:  # declares no elicitation: the page's link
            pending = approval_of(await client.call_tool("delete_contact", {"contact_ids": [href]}))
            assert pending["outcome"] == "approval_pending", pending
            assert radicale.exists(href)
            shown = await person.open(pending["approval_url"])
            markup = await person.html()
            said = await person.click_and_wait("approve", ("Approved", "not approved", "Refused", "expired"))
            assert said.startswith("Approved"), said
            deleted = await client.call_tool("delete_contact", {"contact_ids": [href]})
    assert not deleted.is_error, deleted
    assert not radicale.exists(href)
    assert pending["code"] in shown
    messages = pushed(ntfy, TOPIC)[before:]
    assert [m["message"] for m in messages if m.get("title") == "carddav-mcp asks for your approval"] == [
        f"Delete 1 contact(s), 0 of them with a photo, recoverable for 7 day(s) with restore_card "
        f"(code {pending['code']})"
    ]
    everything = shown + markup + json.dumps(messages) + json.dumps(pending)
    for fragment in FRAGMENTS:
        assert fragment not in everything, f"{fragment!r} of the stored card reached the page or the push"
