"""publish_message and list_messages through ntfy-mcp vs the same HTTP requests made directly with httpx2.

Starts the real ntfy from testing/ntfy_server.py (the same server the tests
use: built from the source kit once, then taken from the cache), then times
N round-trips of each operation both ways, after a warm-up, alternating the
two ways round by round, on one asyncio loop and one keep-alive connection each, authenticated with an access token:

* MCP: an in-process MCP client (protocol 2025-11-25) calling the tool,
  through the SDK, argument validation, ntfy-mcp and its httpx2 client;
* direct: ``httpx2.AsyncClient`` sending the same request ntfy-mcp sends.

Prints per-call medians and means in milliseconds and the ratio MCP / direct.
The MCP figure includes the Python SDK client checking each result against
the tool's output schema (jsonschema). Both ways send the same poll; ntfy-mcp
stops reading its answer after the page it returns (21 lines), the direct
client reads all of it. Targets: median ratio <= 1.5x for publish_message and <= 2x for list_messages, and
at most 150 bytes of text per listed message.
Run with ``uv run nox -s bench -- ntfy`` or ``uv run python packages/ntfy-mcp/benchmarks/bench_ntfy.py``.
"""

from __future__ import annotations

import logging
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio
import httpx2

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "testing"))

from ntfy_server import NtfyServer, ntfy_server

from approval_core import ApprovalSettings
from approval_core.testing import connect
from ntfy_mcp import build_server
from ntfy_mcp.settings import NtfySettings

ROUNDS = 200
WARMUP = 20
TOPIC = "bench"


async def timed(
    mcp: Callable[[], Awaitable[object]], direct: Callable[[], Awaitable[object]], rounds: int
) -> tuple[list[float], list[float]]:
    """Alternate the two ways round by round, so a noisy neighbour slows both alike."""
    for _ in range(WARMUP):
        await mcp()
        await direct()
    samples: tuple[list[float], list[float]] = ([], [])
    for _ in range(rounds):
        for call, into in ((mcp, samples[0]), (direct, samples[1])):
            start = time.perf_counter()
            await call()
            into.append((time.perf_counter() - start) * 1000)
    return samples


def line(name: str, mcp: list[float], direct: list[float]) -> str:
    m_med, d_med = statistics.median(mcp), statistics.median(direct)
    m_avg, d_avg = statistics.fmean(mcp), statistics.fmean(direct)
    return (
        f"{name:16} MCP median {m_med:6.3f} ms mean {m_avg:6.3f} ms | direct median {d_med:6.3f} ms "
        f"mean {d_avg:6.3f} ms | ratio (median) {m_med / d_med:5.2f}x, (mean) {m_avg / d_avg:5.2f}x"
    )


async def bench(ntfy: NtfyServer) -> None:
    # A token, as a deployment would use: Basic auth makes ntfy check a bcrypt hash on every request
    # (about 0.1 s here), which would swamp what is being measured.
    made = httpx2.post(f"{ntfy.url}/v1/account/token", json={"label": "bench"}, headers=ntfy.admin_headers())
    token = made.raise_for_status().json()["token"]
    settings = NtfySettings(url=ntfy.url, token=token, topics=(TOPIC,))
    server = build_server(ApprovalSettings(), settings)
    body = {"topic": TOPIC, "message": "benchmark notification", "title": "bench", "priority": 2}
    listing = {"poll": "1", "since": "all"}
    async with (
        connect(server, revision="2025-11-25") as client,
        httpx2.AsyncClient(base_url=ntfy.url, headers={"Authorization": f"Bearer {token}"}) as http,
    ):

        async def mcp_publish() -> None:
            result = await client.call_tool(
                "publish_message", {"message": body["message"], "title": "bench", "priority": 2}
            )
            assert not result.is_error

        async def direct_publish() -> None:
            (await http.post("/", json=body)).raise_for_status()

        async def mcp_list() -> None:
            result = await client.call_tool("list_messages", {"limit": 20, "since": "all"})
            assert not result.is_error

        async def direct_list() -> None:
            (await http.get(f"/{TOPIC}/json", params=listing)).raise_for_status()

        publish = await timed(mcp_publish, direct_publish, ROUNDS)
        listed = await timed(mcp_list, direct_list, ROUNDS)
        page = await client.call_tool("list_messages", {"limit": 20, "since": "all"})
        text = "".join(getattr(block, "text", "") for block in page.content)
        per_message = len(text.encode()) / max(1, len(page.structured_content["messages"]))  # type: ignore[index]
    cached = 2 * (ROUNDS + WARMUP)
    print(f"ntfy {'.'.join(map(str, ntfy.version))} on 127.0.0.1, {ROUNDS} rounds after {WARMUP} warm-up, one loop")
    print(line("publish_message", *publish))
    print(line("list_messages", *listed) + f"  [same poll of {cached} cached messages; MCP returns a page of 20]")
    print(f"list_messages    {per_message:.0f} bytes of text per listed message (target <= 150)")


def main() -> None:
    logging.getLogger("httpx2").setLevel(logging.WARNING)
    with tempfile.TemporaryDirectory(prefix="bench-ntfy-") as tmp, ntfy_server(Path(tmp)) as ntfy:
        anyio.run(bench, ntfy)


if __name__ == "__main__":
    main()
