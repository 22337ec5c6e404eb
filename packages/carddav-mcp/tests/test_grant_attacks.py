"""A standing grant counts calls, so a call that deletes several contacts is never inside one (issue 32 §3).

The grant form offers "at most N calls" and the person reads N as N changes; ``delete_contact`` takes up to
100 ids in one call, so a grant for two calls would otherwise delete 200 cards. carddav-mcp runs in process
on the real Radicale with its approval page on a loopback port; the grant is kept in the page's record store
as the page keeps one once the passkey signed its terms (that ceremony is approval-core's
``test_grants.py`` and caldav-mcp's browser test).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from carddav_conftest import Dav, vcard
from soft_passkey import SoftPasskey, b64url

from approval_core import ApprovalSettings
from approval_core.asking.grants import GrantTerms
from approval_core.page.grants import GRANT_META_KEY
from approval_core.page.loopback import running_page
from approval_core.page.settings import PageSettings
from approval_core.testing import approval_of, connect

pytestmark = pytest.mark.anyio


def _passkeys(tmp_path: Path) -> Path:
    path = tmp_path / "passkeys.json"
    body = {"version": 1, "user_id": b64url(b"u" * 16), "credentials": [SoftPasskey().entry()], "pairing": None}
    path.write_text(json.dumps(body))
    path.chmod(0o600)
    return path


async def test_a_grant_of_calls_never_covers_one_call_deleting_several_contacts(radicale: Dav, tmp_path: Path) -> None:
    cards = [radicale.put(radicale.book, f"c{i}.vcf", vcard(f"UID:c{i}", f"FN:Card {i}")) for i in range(3)]
    settings = ApprovalSettings(page=PageSettings(passkeys_file=_passkeys(tmp_path)), grants=True)
    server = radicale.server(settings)
    page = server.approval_gate.page
    assert page is not None
    assert page.grant_desk is not None
    assert page.grant_desk.backend is not None, "equip names the configured backend to the grants"
    backend = page.grant_desk.backend()
    terms = GrantTerms("carddav-mcp", ("delete_contact",), radicale.book, (), None, 5, int(time.time()) + 600, backend)
    await page.grant_desk.book.make(terms)
    async with running_page(page), connect(server, revision="2026-07-28") as client:
        several = await client.call_tool("delete_contact", {"contact_ids": cards[:2]})
        one = await client.call_tool("delete_contact", {"contact_ids": [cards[2]]})
    assert approval_of(several)["outcome"] == "approval_pending", "two contacts in one call ask"
    assert all(radicale.exists(href) for href in cards[:2])
    assert not one.is_error, one
    assert (one.meta or {})[GRANT_META_KEY]["uses_left"] == 4
    assert not radicale.exists(cards[2])


async def test_under_every_write_a_grant_never_covers_one_call_sending_several_deletes(
    radicale: Dav, tmp_path: Path
) -> None:
    cards = [radicale.put(radicale.book, f"w{i}.vcf", vcard(f"UID:w{i}", f"FN:Card {i}")) for i in range(3)]
    page_settings = PageSettings(passkeys_file=_passkeys(tmp_path))
    settings = ApprovalSettings(profile="every-write", page=page_settings, grants=True)
    server = radicale.server(settings)
    page = server.approval_gate.page
    assert page is not None
    assert page.grant_desk is not None
    origin = radicale.settings.url.removesuffix("willi/").rstrip("/")
    shape = ("DELETE", origin + radicale.book)
    assert page.grant_desk.backend is not None
    backend = page.grant_desk.backend()
    terms = GrantTerms("carddav-mcp", ("delete_contact",), None, (shape,), None, 5, int(time.time()) + 600, backend)
    await page.grant_desk.book.make(terms)
    async with running_page(page), connect(server, revision="2026-07-28") as client:
        several = await client.call_tool("delete_contact", {"contact_ids": cards[:2]})
        one = await client.call_tool("delete_contact", {"contact_ids": [cards[2]]})
    assert approval_of(several)["outcome"] == "approval_pending", "two DELETEs in one call ask"
    assert all(radicale.exists(href) for href in cards[:2])
    assert not one.is_error, one
    assert (one.meta or {})[GRANT_META_KEY]["uses_left"] == 4
    assert not radicale.exists(cards[2])
