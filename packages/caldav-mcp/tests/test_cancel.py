"""A cancelled call stops its backend work: no request goes out after the cancellation (MCP 2025-11-25
§Cancellation), seen by a recording proxy (a test double in front of the real Radicale), with the server
over real stdio, as clients run it."""

from __future__ import annotations

import os
import sys
import threading

import anyio
import pytest
from mcp.client.stdio import StdioServerParameters, stdio_client

from approval_core.testing import connect
from caldav_helpers import ics, vevent
from report_fault_proxy import report_fault_proxy

pytestmark = pytest.mark.anyio


async def test_a_cancelled_search_sends_no_request_after_the_cancellation(account) -> None:
    for calendar in (account.work, account.home):
        account.put(calendar, "e.ics", ics(vevent("e@x", ":20261203T090000Z", ":20261203T100000Z", "Planning")))
    reached, released = threading.Event(), threading.Event()

    def held(method: str, path: str, body: bytes) -> str:
        if method == "REPORT":
            # The first query is held until the server has taken in the cancellation, so the test does not
            # depend on how fast a loaded machine delivers it.
            reached.set()
            released.wait(30)
        return "pass"

    with report_fault_proxy(account.server.url, held) as proxy:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("CALDAV_", "ELICITATION"))}
        env |= {"CALDAV_URL": proxy.url, "CALDAV_USERNAME": "willi", "CALDAV_PASSWORD": "secret"}
        server = stdio_client(StdioServerParameters(command=sys.executable, args=["-m", "caldav_mcp"], env=env))
        async with connect(server, revision="2025-11-25") as client:
            search = {
                "query": "planning",
                "start": "2026-12-01",
                "end": "2027-01-01",
                "calendars": [account.work, account.home],
            }
            async with anyio.create_task_group() as calls:
                calls.start_soon(client.call_tool, "search_events", search)
                with anyio.fail_after(60):
                    while not reached.is_set():  # noqa: ASYNC110 - a thread's event, not an anyio one
                        await anyio.sleep(0.05)
                calls.cancel_scope.cancel()
            # The client sends its notifications/cancelled from a task of its own: let it go out first. The
            # server acts on messages in the order they arrive, so once tools/list is answered, the
            # cancellation sent before it has been acted on.
            await anyio.sleep(0.1)
            await client.list_tools()
            sent_before = len(proxy.seen)
            released.set()
            await anyio.sleep(1.0)  # long enough for the next query to be sent, had the work gone on
            after = len(proxy.seen)
            listed = await client.call_tool("list_calendars", {})  # the session still serves
    # The held query enters the record once released; it was sent before the cancellation.
    late = [f"{s.method} {s.path}" for s in proxy.seen[sent_before:after]]
    assert len(late) == 1, late
    assert late[0].startswith("REPORT "), late
    assert len([s for s in proxy.seen if s.method == "REPORT"]) == 1
    assert not listed.is_error
