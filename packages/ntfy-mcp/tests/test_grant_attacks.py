"""A standing grant counts calls, so one delete_messages call naming several messages is never inside one.

ntfy-mcp runs against the in-process stand-in (``standin.py``, a test double: the message revision routes
need ntfy 2.16+, newer than the suite's real ntfy) with its approval page on a loopback port; the grant is
kept in the page's record store as the page keeps one once the passkey signed its terms (that ceremony is
approval-core's ``test_grants.py``).
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from soft_passkey import SoftPasskey, b64url

from approval_core import ApprovalSettings
from approval_core.asking.grants import GrantTerms
from approval_core.page.grants import GRANT_META_KEY
from approval_core.page.loopback import running_page
from approval_core.page.settings import PageSettings
from approval_core.testing import approval_of, connect
from ntfy_mcp.server import build_server
from ntfy_mcp.settings import NtfySettings
from standin import NtfyStandIn

pytestmark = pytest.mark.anyio

TOPIC = "alerts"


async def test_a_grant_of_calls_never_covers_one_call_deleting_several_messages(tmp_path: Path) -> None:
    standin = NtfyStandIn()
    sids = [standin.publish(TOPIC, f"note {n}")["sequence_id"] for n in range(3)]
    passkeys = tmp_path / "passkeys.json"
    body = {"version": 1, "user_id": b64url(b"u" * 16), "credentials": [SoftPasskey().entry()], "pairing": None}
    passkeys.write_text(json.dumps(body))
    passkeys.chmod(0o600)
    settings = NtfySettings(url="http://standin.invalid", token="tk_standin", topics=(), timeout=2)
    approval = ApprovalSettings(page=PageSettings(passkeys_file=passkeys), grants=True)
    server = build_server(approval, settings, transport=standin.transport)
    page = server.approval_gate.page
    assert page is not None
    assert page.grant_desk is not None
    async with running_page(page), connect(server, revision="2026-07-28") as client:
        backend = None if page.grant_desk.backend is None else page.grant_desk.backend()  # once connected
        terms = GrantTerms("ntfy-mcp", ("delete_messages",), TOPIC, (), None, 5, int(time.time()) + 600, backend)
        await page.grant_desk.book.make(terms)
        several = await client.call_tool("delete_messages", {"topic": TOPIC, "sequence_ids": sids[:2]})
        one = await client.call_tool("delete_messages", {"topic": TOPIC, "sequence_ids": [sids[2]]})
    assert approval_of(several)["outcome"] == "approval_pending", "two messages in one call ask"
    assert not one.is_error, one
    assert (one.meta or {})[GRANT_META_KEY]["uses_left"] == 4
    deleted = [e for e in standin.messages(TOPIC) if e["event"] == "message_delete"]
    assert len(deleted) == 1
