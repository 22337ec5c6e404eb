"""A cancelled call stops its backend work: no request goes out after the cancellation (MCP 2025-11-25
§Cancellation), seen by a recording proxy (a test double in front of the real Radicale), with the server
over real stdio, as clients run it."""

from __future__ import annotations

import os
import sys
from typing import Any

import pytest
from held_cancel import Hold, cancel_while_held
from mcp.client.stdio import StdioServerParameters, stdio_client

from approval_core.testing import connect
from caldav_helpers import ics, vevent
from report_fault_proxy import report_fault_proxy
from test_version_after_read import backdate

pytestmark = pytest.mark.anyio


def over_stdio(url: str) -> Any:
    """A caldav-mcp process over stdio, as clients run it, its backend at ``url`` (the proxy)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CALDAV_", "ELICITATION"))}
    env |= {"CALDAV_URL": url, "CALDAV_USERNAME": "willi", "CALDAV_PASSWORD": "secret"}
    return stdio_client(StdioServerParameters(command=sys.executable, args=["-m", "caldav_mcp"], env=env))


async def test_a_cancelled_search_sends_no_request_after_the_cancellation(account) -> None:
    for calendar in (account.work, account.home):
        account.put(calendar, "e.ics", ics(vevent("e@x", ":20261203T090000Z", ":20261203T100000Z", "Planning")))
    hold = Hold()

    with report_fault_proxy(account.server.url, hold.rule) as proxy:
        async with connect(over_stdio(proxy.url), revision="2025-11-25") as client:
            search = {
                "query": "planning",
                "start": "2026-12-01",
                "end": "2027-01-01",
                "calendars": [account.work, account.home],
            }
            sent_before, after = await cancel_while_held(client, "search_events", search, hold, lambda: len(proxy.seen))
            listed = await client.call_tool("list_calendars", {})  # the session still serves
    # The held query enters the record once released; it was sent before the cancellation.
    late = [f"{s.method} {s.path}" for s in proxy.seen[sent_before:after]]
    assert len(late) == 1, late
    assert late[0].startswith("REPORT "), late
    assert len([s for s in proxy.seen if s.method == "REPORT"]) == 1
    assert not listed.is_error


async def test_a_cancelled_first_listing_asks_nothing_after_its_read(account) -> None:
    # The calendar's last change is settled, so the listing would ask for it, and for the CTag in the
    # server's own task group, once its REPORT is answered: cancelled while the REPORT is held, it asks neither.
    for day in (3, 4):
        account.put(
            account.work,
            f"e{day}.ics",
            ics(vevent(f"e{day}@x", f":202612{day:02}T090000Z", f":202612{day:02}T100000Z")),
        )
    backdate(account)
    hold = Hold()

    with report_fault_proxy(account.server.url, hold.rule) as proxy:
        async with connect(over_stdio(proxy.url), revision="2025-11-25") as client:
            await client.call_tool("list_calendars", {})
            window = {"calendar": account.work, "start": "2026-12-01", "end": "2027-01-01"}
            sent_before, after = await cancel_while_held(client, "list_events", window, hold, lambda: len(proxy.seen))
    late = [f"{s.method} {s.path}" for s in proxy.seen[sent_before:after]]
    assert late == [f"REPORT {account.work}"], late  # the held one, sent before the cancellation
