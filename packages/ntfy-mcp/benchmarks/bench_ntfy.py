"""The fixed cost of an ntfy-mcp tool call (issue 24 §5), each target with its verdict.

Starts the real ntfy from testing/ntfy_server.py (the same server the tests
use: built from the source kit once, then taken from the cache) and
authenticates with an access token, as a deployment would (Basic auth makes
ntfy check a bcrypt hash on every request, about 0.1 s here, which would
swamp what is measured). After a warm-up, each operation runs N rounds both
ways, alternating round by round on one asyncio loop and one keep-alive
connection each, so a noisy neighbour slows both alike:

* MCP: an in-process MCP client (protocol 2025-11-25) calling the tool, through
  the SDK (argument validation, the result's serialisation), ntfy-mcp and its
  httpx2 client. The Python SDK client's own check of ``structuredContent``
  against the tool's ``outputSchema`` (jsonschema, in Python) is the client's
  cost, not the server's: as in ``bench_list_events``, the timed calls go
  without it, and it is timed on its own and printed beside, with the ratio it
  would give (for a 50-message page it costs about as much as the request to
  ntfy). The family's extra test-only result check
  (``approval_core.testing.check_result``) is off too;
* direct: ``httpx2.AsyncClient`` sending the same request ntfy-mcp sends.

The targets, each printed as met or MISSED (the exit status is 1 when one is missed):

1. ``publish_message`` (one topic): median MCP / median direct <= 1.5.
2. ``list_messages`` of 50: a topic holding exactly 50 cached notifications,
   listed with ``limit=50`` (ntfy-mcp reads all 50 and finds no 51st), against
   the same poll made directly, which reads the same 50 lines: median ratio <= 2.
3. Bytes per listed message: the UTF-8 length of that 50-message result's
   text block, divided by 50: <= 150. Each notification is an ordinary one
   (a 22-character body, a title, priority 2).
4. The fixed server-side cost of an unguarded call: the time ntfy-mcp spends
   on one ``tools/call`` that is not its exchange with ntfy. Measured in
   process: a middleware put first (outermost) in the server's chain times
   each ``tools/call`` from the moment the server has the request to the
   moment it has the result's wire form (parameter validation, the tool's
   lookup, the error boundary, the gate's wrappers, argument validation, the
   tool's own work, output conversion and serialisation), and the time spent
   inside ``NtfyClient._exchange`` (the one place a request goes to ntfy and
   its answer is read) during that call is subtracted. Median over the N
   calls of each unguarded tool timed above (``publish_message``, and
   ``list_messages`` with ``limit=1``), in wall time: <= 0.5 ms each. This
   thread's CPU time over the same span is printed beside it: the client
   waits while the server works, so it is the server's own work, and unlike
   wall time it is not inflated by a busy machine. The JSON-RPC framing of
   the in-memory transport (no bytes) is outside both. The per-message work
   of a 50-message page is reported beside them, not judged.

ntfy-mcp only: caldav-mcp and carddav-mcp are not measured here.
Run with ``uv run nox -s bench -- ntfy`` or ``uv run python packages/ntfy-mcp/benchmarks/bench_ntfy.py``.
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

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "testing"))

from bench_summary import MISSED, record
from mcp.client.session import ClientSession
from ntfy_server import NtfyServer, ntfy_server

from approval_core import ApprovalSettings
from approval_core.testing import connect
from ntfy_mcp import build_server
from ntfy_mcp.client import NtfyClient
from ntfy_mcp.settings import NtfySettings

ROUNDS = 200
WARMUP = 20

SDK_CHECK = ClientSession.validate_tool_result


async def _unchecked(self: ClientSession, name: str, result: Any) -> None:
    return None


ClientSession.validate_tool_result = _unchecked  # type: ignore[method-assign]
PUBLISH_TOPIC = "bench"
LIST_TOPIC = "benchlist"
LISTED = 50
NOTIFICATION = {"message": "benchmark notification", "title": "bench", "priority": 2}

PUBLISH_RATIO = 1.5
LIST_RATIO = 2.0
BYTES_PER_MESSAGE = 150
FIXED_MS = 0.5


class Stopwatch:
    """Server-side time of each ``tools/call``, less the time spent in ntfy-mcp's exchange with ntfy.

    Both wall time (``perf_counter``, the figure judged) and this thread's CPU time (``thread_time``, which a
    busy machine's other processes do not inflate; the client waits during the call, so it is the server's).
    """

    def __init__(self) -> None:
        self.samples: list[float] = []
        self.cpu: list[float] = []
        self.recording = False
        self._backend = (0.0, 0.0)

    async def middleware(self, ctx: Any, call_next: Callable[[Any], Awaitable[Any]]) -> Any:
        if ctx.method != "tools/call":
            return await call_next(ctx)
        self._backend = (0.0, 0.0)
        start, cpu = time.perf_counter(), time.thread_time()
        try:
            return await call_next(ctx)
        finally:
            if self.recording:
                self.samples.append((time.perf_counter() - start - self._backend[0]) * 1000)
                self.cpu.append((time.thread_time() - cpu - self._backend[1]) * 1000)

    def watch_exchange(self) -> None:
        original = NtfyClient._exchange  # pyright: ignore[reportPrivateUsage]

        async def exchange(client: NtfyClient, request: httpx2.Request, lines: int | None) -> tuple[int, bytes]:
            start, cpu = time.perf_counter(), time.thread_time()
            try:
                return await original(client, request, lines)
            finally:
                wall, used = self._backend
                self._backend = (wall + time.perf_counter() - start, used + time.thread_time() - cpu)

        NtfyClient._exchange = exchange  # type: ignore[method-assign]

    def take(self) -> tuple[list[float], list[float]]:
        taken, self.samples, self.cpu = (self.samples, self.cpu), [], []
        return taken


async def timed(
    mcp: Callable[[], Awaitable[object]],
    direct: Callable[[], Awaitable[object]],
    rounds: int,
    watch: Stopwatch,
) -> tuple[list[float], list[float], tuple[list[float], list[float]]]:
    """MCP and direct round-trips (ms), alternated round by round, and the server-side cost of each MCP call."""
    for _ in range(WARMUP):
        await mcp()
        await direct()
    samples: tuple[list[float], list[float]] = ([], [])
    watch.take()
    watch.recording = True
    for _ in range(rounds):
        for call, into in ((mcp, samples[0]), (direct, samples[1])):
            start = time.perf_counter()
            await call()
            into.append((time.perf_counter() - start) * 1000)
    watch.recording = False
    return samples[0], samples[1], watch.take()


def line(name: str, mcp: list[float], direct: list[float]) -> str:
    m_med, d_med = statistics.median(mcp), statistics.median(direct)
    m_avg, d_avg = statistics.fmean(mcp), statistics.fmean(direct)
    return (
        f"{name:22} MCP median {m_med:6.3f} ms mean {m_avg:6.3f} ms | direct median {d_med:6.3f} ms "
        f"mean {d_avg:6.3f} ms | ratio (median) {m_med / d_med:5.2f}x, (mean) {m_avg / d_avg:5.2f}x"
    )


def verdict(name: str, value: float, target: float, unit: str) -> bool:
    met = value <= target
    print(f"  {'met   ' if met else 'MISSED'} {name:44} {value:8.3f} {unit} (target <= {target:g} {unit})")
    record("bench_ntfy", f"ntfy-mcp {name}", f"{value:.3f} {unit}", f"<= {target:g} {unit}", met)
    return met


async def bench(ntfy: NtfyServer) -> bool:
    made = httpx2.post(f"{ntfy.url}/v1/account/token", json={"label": "bench"}, headers=ntfy.admin_headers())
    token = made.raise_for_status().json()["token"]
    settings = NtfySettings(url=ntfy.url, token=token, topics=(PUBLISH_TOPIC, LIST_TOPIC))
    server = build_server(ApprovalSettings(), settings)
    watch = Stopwatch()
    server.middleware.insert(0, watch.middleware)
    watch.watch_exchange()
    body = {"topic": PUBLISH_TOPIC, **NOTIFICATION}
    listing = {"poll": "1", "since": "all"}
    async with (
        connect(server, revision="2025-11-25", check=False) as client,
        httpx2.AsyncClient(base_url=ntfy.url, headers={"Authorization": f"Bearer {token}"}) as http,
    ):
        for _ in range(LISTED):
            (await http.post("/", json={**body, "topic": LIST_TOPIC})).raise_for_status()

        async def mcp_publish() -> None:
            result = await client.call_tool("publish_message", {"topics": [PUBLISH_TOPIC], **NOTIFICATION})
            assert not result.is_error, result

        async def direct_publish() -> None:
            (await http.post("/", json=body)).raise_for_status()

        def mcp_list(limit: int) -> Callable[[], Awaitable[None]]:
            async def call() -> None:
                result = await client.call_tool("list_messages", {"topics": [LIST_TOPIC], "limit": limit})
                assert not result.is_error, result

            return call

        async def direct_list() -> None:
            (await http.get(f"/{LIST_TOPIC}/json", params=listing)).raise_for_status()

        publish = await timed(mcp_publish, direct_publish, ROUNDS, watch)
        listed = await timed(mcp_list(LISTED), direct_list, ROUNDS, watch)
        one = await timed(mcp_list(1), direct_list, ROUNDS, watch)
        page = await client.call_tool("list_messages", {"topics": [LIST_TOPIC], "limit": LISTED})
        checks: list[float] = []
        for _ in range(ROUNDS):
            began = time.perf_counter()
            await SDK_CHECK(client.session, "list_messages", page)
            checks.append((time.perf_counter() - began) * 1000)
        text = "".join(getattr(block, "text", "") for block in page.content)
        listed_page: dict[str, Any] = page.structured_content or {}
        count = len(listed_page["messages"])
        assert count == LISTED, listed_page
        assert not listed_page["cut"], listed_page
    per_message = len(text.encode()) / count
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"ntfy {'.'.join(map(str, ntfy.version))} on 127.0.0.1, {ROUNDS} rounds after {WARMUP} warm-up, one loop")
    print(f"load average {load} ({os.cpu_count()} CPUs)")
    print(line("publish_message", *publish[:2]))
    print(line(f"list_messages of {LISTED}", *listed[:2]))
    check = statistics.median(checks)
    with_check = (statistics.median(listed[0]) + check) / statistics.median(listed[1])
    print(f"not counted above: the Python SDK client's own outputSchema check of the {LISTED}-message page, "
          f"{check:.3f} ms (median); with it, list_messages of {LISTED} / direct: {with_check:.2f}x")  # fmt: skip
    fixed = {name: statistics.median(s[2][0]) for name, s in (("publish_message", publish), ("list_messages", one))}
    print("server-side, less the exchange with ntfy (median wall ms / median CPU ms of this thread):")
    rows = (("publish_message", publish), ("list_messages(limit=1)", one), (f"list_messages of {LISTED}", listed))
    for name, figures in rows:
        wall, cpu = figures[2]
        print(f"  {name:22} {statistics.median(wall):6.3f} / {statistics.median(cpu):6.3f}")
    print("targets (issue 24 §5):")
    results = [
        verdict("publish_message / direct (median)", statistics.median(publish[0]) / statistics.median(publish[1]),
                PUBLISH_RATIO, "x"),
        verdict(f"list_messages of {LISTED} / direct (median)",
                statistics.median(listed[0]) / statistics.median(listed[1]), LIST_RATIO, "x"),
        verdict("text per listed message", per_message, BYTES_PER_MESSAGE, "B"),
        verdict("fixed server-side cost, publish_message", fixed["publish_message"], FIXED_MS, "ms"),
        verdict("fixed server-side cost, list_messages(limit=1)", fixed["list_messages"], FIXED_MS, "ms"),
    ]  # fmt: skip
    return all(results)


def main() -> None:
    logging.getLogger("httpx2").setLevel(logging.WARNING)
    with tempfile.TemporaryDirectory(prefix="bench-ntfy-") as tmp, ntfy_server(Path(tmp)) as ntfy:
        met = anyio.run(bench, ntfy)
    sys.exit(0 if met else MISSED)


if __name__ == "__main__":
    main()
