"""The fixed server-side cost of an unguarded call of caldav-mcp and carddav-mcp (issue 24 §5), on Radicale.

The same figure as ``packages/ntfy-mcp/benchmarks/bench_ntfy.py`` gives for
ntfy-mcp: a middleware put first (outermost) in the server's chain times each
``tools/call`` from the moment the server has the request to the moment it has
the result's wire form, and the time spent inside
``webdav_core.ConfinedSession._follow`` (where each request goes to the DAV
server and its answer is read, redirects included) during that call is
subtracted. Median over :data:`ROUNDS` calls, after :data:`WARMUP`, of one
cheap unguarded read per server on a Radicale started on 127.0.0.1 (from
``testing/dav_servers.py``) with one calendar and one address book:
``list_calendars`` (caldav-mcp) and ``list_address_books`` (carddav-mcp).
Also printed: this thread's CPU time over the same span (the client waits
while the server works; a busy machine does not inflate it), and the backend
requests each call sent with their own time. Target: <= 0.5 ms wall time each
(the exit status is ``bench_summary.MISSED`` when one is missed).

Run with ``uv run nox -s bench -- call_cost`` or ``uv run python benchmarks/bench_call_cost.py``.
"""

from __future__ import annotations

import logging
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import httpx2
from mcp.server.mcpserver import MCPServer

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "testing"))

import dav_servers
from bench_summary import MISSED, record

from approval_core import ApprovalSettings
from approval_core.testing import connect
from caldav_mcp.server import build_server as caldav_server
from caldav_mcp.settings import CalDAVSettings
from carddav_mcp import davxml
from carddav_mcp.server import build_server as carddav_server
from carddav_mcp.settings import CardDavSettings
from webdav_core import ConfinedSession

ROUNDS = 200
WARMUP = 20
FIXED_MS = 0.5
USER, PASSWORD = "willi", "bench"


class Stopwatch:
    """Server-side time of each ``tools/call``, less the time spent in the DAV session's exchanges."""

    def __init__(self) -> None:
        self.samples: list[float] = []
        self.cpu: list[float] = []
        self.backend: list[float] = []
        self.requests: list[int] = []
        self._spent = self._used = 0.0
        self._sent = 0
        original = ConfinedSession._follow  # pyright: ignore[reportPrivateUsage]

        async def follow(session: ConfinedSession, *args: Any, **kwargs: Any) -> Any:
            start, cpu = time.perf_counter(), time.thread_time()
            try:
                return await original(session, *args, **kwargs)
            finally:
                self._spent += time.perf_counter() - start
                self._used += time.thread_time() - cpu
                self._sent += 1

        ConfinedSession._follow = follow  # type: ignore[method-assign]

    async def middleware(self, ctx: Any, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
        if ctx.method != "tools/call":
            return await call_next(ctx)
        self._spent, self._used, self._sent = 0.0, 0.0, 0
        start, cpu = time.perf_counter(), time.thread_time()
        try:
            return await call_next(ctx)
        finally:
            self.samples.append((time.perf_counter() - start - self._spent) * 1000)
            self.cpu.append((time.thread_time() - cpu - self._used) * 1000)
            self.backend.append(self._spent * 1000)
            self.requests.append(self._sent)

    def clear(self) -> None:
        self.samples, self.cpu, self.backend, self.requests = [], [], [], []


async def measure(name: str, server: MCPServer[Any], tool: str, watch: Stopwatch) -> bool:
    server.middleware.insert(0, watch.middleware)
    async with connect(server, revision="2025-11-25", check=False) as client:
        for _ in range(WARMUP):
            assert not (await client.call_tool(tool, {})).is_error
        watch.clear()
        for _ in range(ROUNDS):
            result = await client.call_tool(tool, {})
            assert not result.is_error, result.content
    fixed = statistics.median(watch.samples)
    met = fixed <= FIXED_MS
    print(
        f"  {'met   ' if met else 'MISSED'} {name:12} {tool:19} fixed {fixed:6.3f} ms (CPU "
        f"{statistics.median(watch.cpu):6.3f} ms; target <= {FIXED_MS:g} ms); backend "
        f"{statistics.median(watch.backend):6.3f} ms in {statistics.median(watch.requests):g} request(s)"
    )
    record("bench_call_cost", f"{name} {tool}: fixed server-side cost of an unguarded call", f"{fixed:.3f} ms",
           f"<= {FIXED_MS:g} ms", met)  # fmt: skip
    return met


def collections(server: dav_servers.DavServer) -> None:
    with httpx2.Client(base_url=server.url, auth=(USER, PASSWORD)) as http:
        made = http.request("MKCALENDAR", f"/{USER}/calendar/")
        assert made.status_code == 201, made.text
        body = davxml.mkcol_addressbook("contacts").encode()
        made = http.request("MKCOL", f"/{USER}/contacts/", content=body, headers={"Content-Type": "application/xml"})
        assert made.status_code == 201, made.text


def main() -> None:
    logging.getLogger("httpx2").setLevel(logging.WARNING)
    watch = Stopwatch()
    with (
        tempfile.TemporaryDirectory(prefix="bench-cost-") as tmp,
        dav_servers.radicale(Path(tmp), {USER: PASSWORD}) as dav,
    ):
        collections(dav)
        cal = caldav_server(ApprovalSettings(), CalDAVSettings(dav.url, USER, PASSWORD))
        card = carddav_server(ApprovalSettings(), CardDavSettings(url=f"{dav.url}{USER}/", username=USER,
                                                                  password=PASSWORD))  # fmt: skip
        load = " ".join(f"{x:.2f}" for x in os.getloadavg())
        print(f"Radicale on 127.0.0.1, {ROUNDS} calls after {WARMUP} warm-up; load average {load}")
        print("fixed server-side cost of an unguarded call (median, less the DAV exchanges):")
        met = [
            anyio.run(measure, "caldav-mcp", cal, "list_calendars", watch),
            anyio.run(measure, "carddav-mcp", card, "list_address_books", watch),
        ]
    sys.exit(0 if all(met) else MISSED)


if __name__ == "__main__":
    main()
