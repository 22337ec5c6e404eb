"""list_messages of 50 through the Python SDK client with its outputSchema check on, beside the direct poll.

Run by ``uv run nox -s bench -- bench_list_checked``, or directly with ``uv run python
packages/ntfy-mcp/benchmarks/bench_list_checked.py [--rounds 5] [--calls 30]``.

The real ntfy (testing/ntfy_server.py: built once from the source kit, then cached) holds a topic of exactly
50 ordinary notifications (a 22-character body, a title, priority 2). Each round builds a new ntfy-mcp (in
process) and a new SDK client (``mcp.client``, protocol 2025-11-25), which checks every result's
``structuredContent`` against the tool's outputSchema (jsonschema) as it always does; the family's extra
test-only check is off. After a few untimed calls, each timed ``list_messages`` (``limit=50``) is taken between
two direct polls (``GET /<topic>/json?poll=1&since=all`` on a keep-alive connection with the same token,
body read, not parsed), and its ratio is the call over the mean of those two. A round's figure is the median
of its calls' ratios; the result is the median of the rounds. Every message of the page is checked against the
direct poll's line with the same id (id, sequence id, time, title, body, priority). Printed beside: the SDK
check's own time on that page and the same ratio without it.

Beside it, in the same rounds and measured the same way, the floor any server built on the SDK has for this
call: a bare ``MCPServer`` (:func:`floor_server`) whose one tool sends the same poll with httpx2, keeps the
five fields the page shows, and returns them as a pydantic model, listed with the family's folded output schema
(``approval_core.serving.portable``). It has no approval core, no fences, no cut bodies and no cursor, so
the gap between the two rows is all that ntfy-mcp adds; the floor's own row is what the SDK's transport and
its outputSchema check cost over the poll.

Target: at most :data:`TARGET` times the direct poll, check counted. The machine may be shared: the load
average is printed, and figures from a loaded machine are noisy.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import httpx2

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "testing"))

from bench_summary import MISSED, record
from mcp.server.mcpserver import MCPServer
from ntfy_server import NtfyServer, ntfy_server
from pydantic import BaseModel

from approval_core import ApprovalSettings
from approval_core.serving.portable import install_portable_schemas
from approval_core.testing import connect
from ntfy_mcp import build_server
from ntfy_mcp.settings import NtfySettings

TOPIC = "benchchecked"
LISTED = 50
ROUNDS = 5
CALLS = 30
WARMUP = 5
TARGET = 2.0
NOTIFICATION = {"message": "benchmark notification", "title": "bench", "priority": 2}


class FloorMessage(BaseModel):
    """The fields of a listed message that the bench checks (the floor server's result item)."""

    id: str
    time: int
    title: str | None = None
    message: str | None = None
    priority: int = 3


class FloorPage(BaseModel):
    """The floor server's result: the messages of the poll, oldest first."""

    messages: list[FloorMessage]


def floor_server(http: httpx2.AsyncClient) -> MCPServer:
    """A bare SDK server whose one tool, ``list_messages``, sends the same poll and returns its messages."""
    server = MCPServer("floor")
    fields = set(FloorMessage.model_fields)

    @server.tool()
    async def list_messages(limit: int = LISTED) -> FloorPage:
        answer = await http.get(f"/{TOPIC}/json", params={"poll": "1", "since": "all"})
        answer.raise_for_status()
        lines = [json.loads(line) for line in answer.content.splitlines()[:limit]]
        return FloorPage(messages=[FloorMessage(**{k: v for k, v in m.items() if k in fields}) for m in lines])

    install_portable_schemas(server)
    return server


def same_as_direct(messages: list[dict[str, Any]], lines: bytes) -> None:
    """Every listed message equals the direct poll's line of the same id (the fields the listing shows)."""
    direct = {m["id"]: m for m in map(json.loads, lines.splitlines()) if m.get("event") == "message"}
    assert [m["id"] for m in messages] == list(direct), "the page does not hold the direct poll's messages in order"
    for listed in messages:
        raw = direct[listed["id"]]
        assert listed.get("sequence_id", listed["id"]) == raw.get("sequence_id", raw["id"]), listed
        assert listed["time"] == raw["time"], listed
        assert listed.get("title") == raw.get("title"), listed
        assert listed.get("message") == raw.get("message"), listed
        assert listed.get("priority", 3) == raw.get("priority", 3), listed


async def one_round(ntfy: NtfyServer, token: str, calls: int) -> tuple[float, float, float, float]:
    """(median ratio with the check, the check's median ms, median ratio without it, the floor's median ratio).

    A new ntfy-mcp, a new floor server and a new client for each; each timed call of either lies between two
    direct polls, the two servers taking turns.
    """
    settings = NtfySettings(url=ntfy.url, token=token, topics=(TOPIC,))
    args = {"topics": [TOPIC], "limit": LISTED}
    auth = {"Authorization": f"Bearer {token}"}
    async with (
        httpx2.AsyncClient(base_url=ntfy.url, headers=auth) as http,
        httpx2.AsyncClient(base_url=ntfy.url, headers=auth) as floor_http,
        connect(build_server(ApprovalSettings(), settings), revision="2025-11-25", check=False) as client,
        connect(floor_server(floor_http), revision="2025-11-25", check=False) as floor,
    ):

        async def direct() -> tuple[float, bytes]:
            start = time.perf_counter()
            answer = await http.get(f"/{TOPIC}/json", params={"poll": "1", "since": "all"})
            elapsed = time.perf_counter() - start
            answer.raise_for_status()
            return elapsed, answer.content

        for _ in range(WARMUP):
            await client.call_tool("list_messages", args)
            await floor.call_tool("list_messages", {"limit": LISTED})
            await direct()
        before, _ = await direct()
        ratios: list[float] = []
        unchecked: list[float] = []
        checks: list[float] = []
        floors: list[float] = []
        page: Any = None
        for _ in range(calls):
            start = time.perf_counter()
            page = await client.call_tool("list_messages", args)  # the SDK checks structuredContent in here
            elapsed = time.perf_counter() - start
            after, lines = await direct()
            assert not page.is_error, page.content
            began = time.perf_counter()
            await client.session.validate_tool_result("list_messages", page)  # the same check, timed alone
            checks.append(time.perf_counter() - began)
            ratios.append(elapsed / ((before + after) / 2))
            unchecked.append((elapsed - checks[-1]) / ((before + after) / 2))
            before = after
            start = time.perf_counter()
            floor_page = await floor.call_tool("list_messages", {"limit": LISTED})  # checked the same way
            elapsed = time.perf_counter() - start
            after, floor_lines = await direct()
            assert not floor_page.is_error, floor_page.content
            floors.append(elapsed / ((before + after) / 2))
            before = after
        data = page.structured_content or {}
        assert len(data["messages"]) == LISTED, data
        same_as_direct(data["messages"], lines)
        same_as_direct((floor_page.structured_content or {})["messages"], floor_lines)
    return (
        statistics.median(ratios),
        statistics.median(checks) * 1000,
        statistics.median(unchecked),
        statistics.median(floors),
    )


async def bench(ntfy: NtfyServer, rounds: int, calls: int) -> bool:
    made = httpx2.post(f"{ntfy.url}/v1/account/token", json={"label": "bench"}, headers=ntfy.admin_headers())
    token = made.raise_for_status().json()["token"]
    async with httpx2.AsyncClient(base_url=ntfy.url, headers={"Authorization": f"Bearer {token}"}) as http:
        for _ in range(LISTED):
            (await http.post("/", json={"topic": TOPIC, **NOTIFICATION})).raise_for_status()
    figures = [await one_round(ntfy, token, calls) for _ in range(rounds)]
    ratio = statistics.median(f[0] for f in figures)
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"\nntfy-mcp list_messages of {LISTED} through the Python SDK client (outputSchema check on), "
          f"{rounds} rounds of {calls} calls, a new server each round")  # fmt: skip
    print(f"load average {load} ({os.cpu_count()} CPUs)")
    print("  round  ratio  SDK check  ratio without it  floor (bare SDK server, same poll)")
    for i, (r, c, u, f) in enumerate(figures, 1):
        print(f"  {i:5d} {r:5.2f}x {c:7.3f} ms {u:9.2f}x {f:16.2f}x")
    print(f"  every message of every page equals the direct poll's line ({LISTED} a page)")
    met = ratio <= TARGET
    spread, floor_spread = (f"{min(f[i] for f in figures):.2f}-{max(f[i] for f in figures):.2f}" for i in (0, 3))
    print("| figure | now | rounds | target | verdict |")
    print(f"| list_messages of {LISTED}, SDK client checking the outputSchema | {ratio:.2f}x | {spread}x | "
          f"<= {TARGET:g}x | {'met' if met else 'MISSED'} |")  # fmt: skip
    floor = statistics.median(f[3] for f in figures)
    print(f"| the same call to a bare SDK server (the floor, see the module) | {floor:.2f}x | {floor_spread}x | | |")
    record("bench_list_checked", f"ntfy-mcp list_messages of {LISTED}, SDK client checking the outputSchema, over "
           "the direct poll", f"{ratio:.2f}x (rounds {spread}; a bare SDK server, same poll: {floor:.2f}x)",
           f"<= {TARGET:g}x", met)  # fmt: skip
    return met


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--calls", type=int, default=CALLS)
    args = parser.parse_args()
    logging.getLogger("httpx2").setLevel(logging.WARNING)
    with tempfile.TemporaryDirectory(prefix="bench-ntfy-checked-") as tmp, ntfy_server(Path(tmp)) as ntfy:
        met = anyio.run(bench, ntfy, args.rounds, args.calls)
    sys.exit(0 if met else MISSED)


if __name__ == "__main__":
    main()
