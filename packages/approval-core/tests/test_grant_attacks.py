"""Attacks on standing grants that the terms alone did not stop (issue 32 §3).

A grant allows calls inside its terms without asking; it must never turn a
"no" the person gave into a yes. The passkey here is
``testing/soft_passkey.py`` where one is needed (a test double for an
authenticator); the record store is the real in-process one.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from approval_core import Dialog, operation
from approval_core.asking.binding import bind
from approval_core.asking.grant_book import GrantBook
from approval_core.page.approval_page import ApprovalPage
from approval_core.page.grants import GrantDesk
from approval_core.page.settings import PageSettings
from approval_core.records.store import MemoryStore
from test_grants import NOW, terms

pytestmark = pytest.mark.anyio


async def test_a_call_the_person_denied_is_declined_not_allowed_by_a_grant_made_later(tmp_path: Path) -> None:
    """The person denies deleting one event, then grants deletions in that calendar: the denied call stays denied."""
    store = MemoryStore(clock=lambda: NOW)
    page = ApprovalPage("caldav-mcp", PageSettings(passkeys_file=tmp_path / "passkeys.json"), store, clock=lambda: NOW)
    desk = GrantDesk(page, GrantBook(store, "caldav-mcp", clock=lambda: NOW), ("delete_event",))
    dialog = Dialog(operation("delete an event"), "No history is kept.")
    wrong = bind("caldav-mcp", "delete_event", {"calendar": "/willi/work/", "uid": "keep-me"}, shown=dialog.render())
    record = await page.book.open(wrong, dialog)
    await page.book.decide(record, "deny")
    await desk.book.make(terms(principal=None, uses=5))
    assert await desk.allow(wrong, "/willi/work/") is None, "the standing 'no' to this very call is its answer"
    other = bind("caldav-mcp", "delete_event", {"calendar": "/willi/work/", "uid": "dup"}, shown=dialog.render())
    assert await desk.allow(other, "/willi/work/") is not None, "a call the person did not answer is inside the grant"
