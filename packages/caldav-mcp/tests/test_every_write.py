"""caldav-mcp under APPROVAL_PROFILE=every-write (docs/approval.md, "Two profiles").

Every call of a tool whose declared effects change data asks before its first changing request, and a
client that shows no form is refused outright, with nothing sent.
"""

from __future__ import annotations

import pytest

from approval_core import ApprovalSettings
from approval_core.testing import DialogLog, accept, connect

pytestmark = pytest.mark.anyio


async def test_a_formless_client_creates_nothing_under_every_write(account) -> None:
    server = account.build(ApprovalSettings(profile="every-write"))
    async with connect(server, revision="2025-11-25", elicitation="none") as client:
        result = await client.call_tool(
            "create_event",
            {"calendar": account.work, "summary": "Unasked", "start": "2027-02-01T09:00:00Z", "uid": "unasked-1"},
        )
        listed = await client.call_tool(
            "list_events", {"calendar": account.work, "start": "2027-02-01", "end": "2027-02-02"}
        )
    assert result.is_error, "created with no person asked"
    assert listed.structured_content["events"] == []


async def test_every_write_asks_before_creating(account) -> None:
    log = DialogLog(accept)
    server = account.build(ApprovalSettings(profile="every-write"))
    async with connect(server, revision="2025-11-25", answer=log) as client:
        await client.call_tool(
            "create_event",
            {"calendar": account.work, "summary": "Asked", "start": "2027-02-01T09:00:00Z", "uid": "asked-1"},
        )
    assert len(log.messages) == 1, "the create went out without a dialog"
    assert "PUT " in log.messages[0], log.messages[0]
