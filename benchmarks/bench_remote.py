"""Guarded round trips of caldav-mcp: over stdio, one replica over HTTP, three replicas behind HAProxy.

One guarded round trip is a ``delete_event`` answered by the dialog on MCP
2026-07-28: the call, the ``input_required`` question, the retry with the
ticked box and the sealed state, the single-use check in the store, the DELETE
on Radicale. Each client deletes from a calendar of its own that holds only
the event about to go (stored by a PUT straight into Radicale).

Set-ups (every part real, on 127.0.0.1, started here; see testing/remote_stack.py):

- ``stdio``: one process over stdio, the in-process store;
- ``http 1 memory``: one replica over Streamable HTTP (static bearer token),
  the in-process store;
- ``http 1 redis``: the same with ``APPROVAL_STORE_URL`` on Redis;
- ``haproxy 1 redis``: that replica behind HAProxy;
- ``haproxy 3 redis``: three replicas behind HAProxy, one Redis.

For each: one client in sequence (median milliseconds per round trip, and
round trips per second), then ``CLIENTS`` clients at once (round trips per
second over the whole run).

The added cost of the Redis store per guarded call (target: under 2 ms on
loopback) is measured where it arises: a guarded call makes one record when
it asks (``put``) and spends it when the answer comes (``take``), so the
figure is the median time of one ``put`` + ``take`` pair on approval-core's
``RedisStore`` (a real Redis on 127.0.0.1) minus the same pair on the
in-process ``MemoryStore``, over ``PAIRS`` pairs. The difference of the
end-to-end medians of ``http 1 redis`` and ``http 1 memory`` is printed too,
but on a shared machine the backend's own time varies by more than the
store costs.

    python benchmarks/bench_remote.py
"""

from __future__ import annotations

import contextlib
import os
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx2

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "testing"))

from bench_summary import record  # noqa: E402
from mcp.client import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402
from remote_stack import PASSWORD, USER, Stack, remote_stack  # noqa: E402
from replica_client import http_client  # noqa: E402
from replicas import base_env, script  # noqa: E402

from approval_core.testing import accept, connect  # noqa: E402

PAIRS = 2000
SEQUENTIAL = 40
CLIENTS = 6
EACH = 15
TARGET_MS = 2.0


def ics(uid: str) -> bytes:
    return (
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//bench//EN\r\nBEGIN:VEVENT\r\n"
        f"UID:{uid}\r\nDTSTAMP:20261201T090000Z\r\nDTSTART:20261207T120000Z\r\nDTEND:20261207T130000Z\r\n"
        "SUMMARY:Bench\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
    ).encode()


@dataclass
class Figures:
    """One set-up's figures."""

    name: str
    median_ms: float
    sequential_rate: float
    concurrent_rate: float


class Calendar:
    """A calendar of the bench's own in Radicale, holding at most the one event about to be deleted.

    The guarded call finds its event with a calendar query, whose cost grows with the calendar; one event at
    a time keeps every round trip the same size.
    """

    def __init__(self, stack: Stack) -> None:
        self.path = f"/{USER}/bench-{uuid.uuid4().hex[:12]}/"
        self.http = httpx2.AsyncClient(base_url=stack.radicale.url, auth=(USER, PASSWORD), timeout=30)

    async def __aenter__(self) -> Calendar:
        made = await self.http.request("MKCALENDAR", self.path)
        assert made.status_code == 201, made.text
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.http.aclose()

    async def event(self) -> dict[str, str]:
        """Store one event (PUT straight into Radicale); the delete_event arguments for it."""
        uid = f"bench-{uuid.uuid4().hex}"
        made = await self.http.put(f"{self.path}{uid}.ics", content=ics(uid), headers={"Content-Type": "text/calendar"})
        assert made.status_code == 201, made.text
        return {"calendar": self.path, "id": uid}


async def delete(client: Client, arguments: dict[str, str]) -> None:
    result = await client.call_tool("delete_event", arguments)
    assert not result.is_error, result


async def run(name: str, stack: Stack, opened: Any) -> Figures:
    """Time the sequential and the concurrent runs on ``stack``; ``opened()`` gives one connected client.

    Sequential: only the guarded call is timed. Concurrent: the wall time of ``CLIENTS`` clients doing
    ``EACH`` round trips each, every round trip preceded by the PUT of its event (a few ms on Radicale).
    """
    samples: list[float] = []
    async with opened() as client, Calendar(stack) as calendar:
        for _ in range(3):  # warm-up: connections, the first listing, the first discovery
            await delete(client, await calendar.event())
        for _ in range(SEQUENTIAL):
            arguments = await calendar.event()
            started = time.perf_counter()
            await delete(client, arguments)
            samples.append(time.perf_counter() - started)

    async def worker() -> None:
        async with opened() as client, Calendar(stack) as calendar:
            await ready.wait()
            for _ in range(EACH):
                await delete(client, await calendar.event())

    ready = anyio.Event()
    async with anyio.create_task_group() as group:
        for _ in range(CLIENTS):
            group.start_soon(worker)
        await anyio.sleep(2)  # every client connected and its calendar made before the clock starts
        started = time.perf_counter()
        ready.set()
    wall = time.perf_counter() - started
    median = statistics.median(samples)
    return Figures(name, median * 1000, 1 / median, CLIENTS * EACH / wall)


async def pair_ms(store: Any) -> float:
    """Median milliseconds of one ``put`` + ``take`` on ``store`` (what one guarded call adds)."""
    samples: list[float] = []
    for index in range(PAIRS):
        secret = f"bench-{index}-{uuid.uuid4().hex}"
        started = time.perf_counter()
        await store.put("state", secret, "f" * 64, 600)
        taken = await store.take("state", secret)
        samples.append(time.perf_counter() - started)
        assert taken is not None
    await store.aclose()
    return statistics.median(samples) * 1000


def store_cost() -> tuple[float, float]:
    """Median ms of a put + take pair on the in-process store and on Redis (started here)."""
    from redis_server import redis_server  # noqa: PLC0415

    from approval_core.records.redis_store import RedisStore  # noqa: PLC0415
    from approval_core.records.store import MemoryStore  # noqa: PLC0415

    memory = anyio.run(pair_ms, MemoryStore())
    with redis_server() as redis:
        shared = anyio.run(pair_ms, RedisStore(redis.url, "bench"))
    return memory, shared


def http_opener(stack: Stack) -> Any:
    @contextlib.asynccontextmanager
    async def opened() -> AsyncIterator[Client]:
        async with http_client(stack.url, stack.token, revision="2026-07-28", answer=accept, check=False) as (c, _):
            yield c

    return opened


def stdio_opener(stack: Stack) -> Any:
    env = base_env({"CALDAV_URL": stack.radicale.url, "CALDAV_USERNAME": USER, "CALDAV_PASSWORD": PASSWORD})
    params = StdioServerParameters(command=str(script("caldav-mcp")), args=[], env=env)

    @contextlib.asynccontextmanager
    async def opened() -> AsyncIterator[Client]:
        async with connect(params, revision="2026-07-28", answer=accept, check=False) as client:
            yield client

    return opened


@contextlib.contextmanager
def quiet_stack(workdir: Path, **options: Any) -> Iterator[Stack]:
    with remote_stack(workdir, auth="token", **options) as stack:
        yield stack


def main() -> None:
    rows: list[Figures] = []
    setups: list[tuple[str, dict[str, Any]]] = [
        ("http 1 memory", {"count": 1, "proxy": False, "store": "memory"}),
        ("http 1 redis", {"count": 1, "proxy": False, "store": "redis"}),
        ("haproxy 1 redis", {"count": 1, "proxy": True, "store": "redis"}),
        ("haproxy 3 redis", {"count": 3, "proxy": True, "store": "redis"}),
    ]
    with tempfile.TemporaryDirectory(prefix="bench-remote-") as tmp:
        for index, (name, options) in enumerate(setups):
            with quiet_stack(Path(tmp) / f"s{index}", **options) as stack:
                if index == 0:
                    rows.append(anyio.run(run, "stdio", stack, stdio_opener(stack)))
                rows.append(anyio.run(run, name, stack, http_opener(stack)))
    memory_ms, redis_ms = store_cost()
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"caldav-mcp guarded round trips (delete_event, dialog on 2026-07-28), {os.cpu_count()} cores, load {load}")
    print(f"  {'set-up':<18} {'median ms':>10} {'1 client /s':>12} {f'{CLIENTS} clients /s':>13}")
    for row in rows:
        print(f"  {row.name:<18} {row.median_ms:10.1f} {row.sequential_rate:12.1f} {row.concurrent_rate:13.1f}")
    by_name = {row.name: row for row in rows}
    end_to_end = by_name["http 1 redis"].median_ms - by_name["http 1 memory"].median_ms
    added = redis_ms - memory_ms
    verdict = "within" if added < TARGET_MS else "OVER"
    print(f"  record store, one put + take (median of {PAIRS}): in process {memory_ms:.3f} ms, Redis {redis_ms:.3f} ms")
    print(f"  Redis store per guarded call: {added:+.3f} ms (target < {TARGET_MS:g} ms: {verdict});")
    record("bench_remote", "the Redis record store's cost per guarded call, over the in-process store",
           f"{added:+.3f} ms", f"< {TARGET_MS:g} ms", added < TARGET_MS)  # fmt: skip
    print(f"    end to end, http 1 redis - http 1 memory: {end_to_end:+.1f} ms (backend noise included)")


if __name__ == "__main__":
    main()
