"""Guarded round trips of caldav-mcp: over stdio, one replica over HTTP, three replicas behind HAProxy.

One guarded round trip is a ``delete_event`` answered by the dialog on MCP
2026-07-28: the call, the ``input_required`` question, the retry with the
ticked box and the sealed state, the single-use check in the store, the DELETE
on Radicale. The events are stored in Radicale before the clock starts.

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

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "testing"))

from mcp.client import Client  # noqa: E402
from mcp.client.stdio import StdioServerParameters  # noqa: E402
from remote_stack import CALENDARS, PASSWORD, USER, Stack, remote_stack  # noqa: E402
from replica_client import http_client  # noqa: E402
from replicas import base_env, script  # noqa: E402

from approval_core.testing import accept, connect  # noqa: E402

PAIRS = 2000
SEQUENTIAL = 40
CLIENTS = 6
EACH = 15
TARGET_MS = 2.0
WORK = CALENDARS[0]


def ics(uid: str) -> bytes:
    return (
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//bench//EN\r\nBEGIN:VEVENT\r\n"
        f"UID:{uid}\r\nDTSTAMP:20261201T090000Z\r\nDTSTART:20261207T120000Z\r\nDTEND:20261207T130000Z\r\n"
        "SUMMARY:Bench\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
    ).encode()


def store_events(stack: Stack, count: int) -> list[str]:
    """``count`` events in the work calendar (PUT straight into Radicale); their UIDs."""
    uids = [f"bench-{uuid.uuid4().hex}" for _ in range(count)]
    with stack.dav() as dav:
        for uid in uids:
            made = dav.put(f"{WORK}{uid}.ics", content=ics(uid), headers={"Content-Type": "text/calendar"})
            assert made.status_code == 201, made.text
    return uids


@dataclass
class Figures:
    """One set-up's figures."""

    name: str
    median_ms: float
    sequential_rate: float
    concurrent_rate: float


async def delete(client: Client, uid: str) -> None:
    result = await client.call_tool("delete_event", {"calendar": WORK, "id": uid})
    assert not result.is_error, result


async def run(name: str, stack: Stack, opened: Any) -> Figures:
    """Time the sequential and the concurrent runs on ``stack``; ``opened()`` gives one connected client."""
    uids = store_events(stack, SEQUENTIAL + 3 + CLIENTS * EACH)
    samples: list[float] = []
    async with opened() as client:
        for uid in uids[:3]:  # warm-up: connections, the first listing, the first discovery
            await delete(client, uid)
        for uid in uids[3 : 3 + SEQUENTIAL]:
            started = time.perf_counter()
            await delete(client, uid)
            samples.append(time.perf_counter() - started)
    rest = uids[3 + SEQUENTIAL :]

    async def worker(mine: list[str]) -> None:
        async with opened() as client:
            for uid in mine:
                await delete(client, uid)

    started = time.perf_counter()
    async with anyio.create_task_group() as group:
        for index in range(CLIENTS):
            group.start_soon(worker, rest[index * EACH : (index + 1) * EACH])
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
    from approval_core.store import MemoryStore, RedisStore  # noqa: PLC0415
    from redis_server import redis_server  # noqa: PLC0415

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
    print(f"    end to end, http 1 redis - http 1 memory: {end_to_end:+.1f} ms (backend noise included)")


if __name__ == "__main__":
    main()
