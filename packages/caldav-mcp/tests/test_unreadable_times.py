"""An entry whose DTEND does not parse as read: a change that needs it is refused clearly; one that replaces it goes.

Radicale refuses to store such an entry, so the test double is a proxy in front of it that breaks the DTEND in
every answer, as a server that keeps the bytes it was given would serve them.
"""

from __future__ import annotations

import pytest
from rewriting_proxy import rewriting_proxy

from approval_core import ApprovalSettings
from approval_core.testing import accept, connect
from caldav_helpers import ics, structured, vevent
from caldav_mcp.server import build_server
from caldav_mcp.settings import CalDAVSettings

pytestmark = pytest.mark.anyio


async def test_moving_only_the_start_of_an_entry_with_an_unreadable_end_is_refused_naming_dtend(account) -> None:
    account.put(account.work, "broken.ics", ics(vevent("broken@example.org", ":20261210T100000Z", ":20261210T110000Z")))
    arguments = {"calendar": account.work, "id": "broken@example.org", "start": "2026-12-11T10:00:00Z"}
    with rewriting_proxy(
        account.server.url, lambda body: body.replace(b"DTEND:20261210T", b"DTEND:20261210 T")
    ) as proxy:
        server = build_server(ApprovalSettings(), CalDAVSettings(proxy.url, "willi", "secret"))
        async with connect(server, revision="2026-07-28", answer=accept) as client:
            refused = await client.call_tool("update_event", arguments)
            moved = await client.call_tool("update_event", {**arguments, "end": "2026-12-11T11:30:00Z"})
            read = structured(
                await client.call_tool("get_event", {"calendar": account.work, "id": "broken@example.org"})
            )
    assert refused.is_error
    text = refused.content[0].text
    assert text.startswith("end: "), text
    assert "DTEND" in text
    assert "give end as well" in text
    assert "Nothing was written" in text
    assert "20261210 T" not in text  # the stored value is never quoted to the model
    assert not moved.is_error, moved.content[0].text
    assert read["end"] == "2026-12-11T11:30:00+00:00"
    status, stored = account.get(account.work, "broken.ics")
    assert status == 200
    assert "DTEND:20261211T113000Z" in stored


async def test_an_entry_with_an_unreadable_end_is_still_read_and_listed(account) -> None:
    account.put(account.work, "broken.ics", ics(vevent("broken@example.org", ":20261210T100000Z", ":20261210T110000Z")))
    with rewriting_proxy(
        account.server.url, lambda body: body.replace(b"DTEND:20261210T", b"DTEND:20261210 T")
    ) as proxy:
        server = build_server(ApprovalSettings(), CalDAVSettings(proxy.url, "willi", "secret"))
        async with connect(server, revision="2026-07-28", answer=accept) as client:
            read = await client.call_tool("get_event", {"calendar": account.work, "id": "broken@example.org"})
            listed = await client.call_tool(
                "list_events", {"calendar": account.work, "start": "2026-12-01", "end": "2027-01-01"}
            )
    assert not read.is_error, read.content[0].text
    assert not listed.is_error, listed.content[0].text
    detail = read.structured_content
    assert detail["start"] == "2026-12-10T10:00:00+00:00"
    assert detail["end"] is None
    assert detail["unreadable"] == "its DTEND is not a value RFC 5545 §3.3 can read"
    assert listed.structured_content["events"] == []
    (left_out,) = listed.structured_content["unreadable"]
    assert "its DTEND is not a value RFC 5545 §3.3 can read" in str(left_out)
    for text in (read.content[0].text, listed.content[0].text):
        assert "20261210 T" not in text
