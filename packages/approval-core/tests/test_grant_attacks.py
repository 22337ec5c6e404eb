"""Attacks on standing grants that the terms alone did not stop (issue 32 §3).

A grant allows calls inside its terms without asking; it must never turn a
"no" the person gave into a yes. The passkey here is
``testing/soft_passkey.py`` where one is needed (a test double for an
authenticator); the record store is the real in-process one.
"""

from __future__ import annotations

import time
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


async def test_a_grant_never_covers_the_same_calendar_path_on_another_backend(tmp_path: Path) -> None:
    """Two stdio configurations of one user (two DAV servers, one path) share the file store, never a grant.

    Without a key file both use the namespace ``caldav-mcp`` in the user's file store, and a collection is a
    path (``/remote.php/dav/calendars/willi/personal/`` on every Nextcloud): a grant made for one backend must
    not delete on the other.
    """
    from approval_core.asking.grants import GrantTerms
    from approval_core.records.file_store import FileStore

    dialog = Dialog(operation("delete an event"), "No history is kept.")
    path = "/remote.php/dav/calendars/willi/personal/"
    desks: list[GrantDesk] = []
    for origin in ("https://cloud.work.example", "https://cloud.home.example"):
        store = FileStore(tmp_path / "records", "caldav-mcp")
        page = ApprovalPage("caldav-mcp", PageSettings(passkeys_file=tmp_path / "passkeys.json"), store)
        desk = GrantDesk(page, GrantBook(store, "caldav-mcp"), ("delete_event",))
        desk.backend = lambda origin=origin: (origin, "willi")
        desks.append(desk)
    work, home = desks
    first = bind("caldav-mcp", "delete_event", {"calendar": path, "uid": "w1"}, shown=dialog.render())
    assert await work.allow(first, path) is None, "no grant yet: it asks and leaves what it named"
    offer = await work.book.offered(first.fingerprint)
    assert offer is not None
    await work.book.make(GrantTerms.widen(offer, ["delete_event"], 5, 30, time.time()))
    elsewhere = bind("caldav-mcp", "delete_event", {"calendar": path, "uid": "h1"}, shown=dialog.render())
    assert await home.allow(elsewhere, path) is None, "the other server's calendar at the same path asks"
    again = bind("caldav-mcp", "delete_event", {"calendar": path, "uid": "w2"}, shown=dialog.render())
    assert await work.allow(again, path) is not None, "the granted backend's calendar is inside the grant"
