"""Startup: from spawning each server over stdio to its first tools/list answer, and peak memory.

Each server of the family is started as a subprocess (``python -m <package>``)
with no backend configured, an MCP client connects over real stdio and lists
the tools; the same is done for a minimal server built with the same SDK (one
tool, nothing else). Reports the median of 5 starts, the ratio to the minimal
server, and the child's peak resident memory (``ru_maxrss`` of the finished
child). Target (issue 6): within 1.5x of the minimal server.

Then, for information (not part of the target: the option starts a second
server inside the first), caldav-mcp and carddav-mcp with their embedded
backend (``*_EMBEDDED=true``) on a data folder that is reused across the five
starts, so the median is a returning user's start.
"""

from __future__ import annotations

import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

ROOT = Path(__file__).resolve().parents[1]
SERVERS = sorted(p.name for p in (ROOT / "packages").glob("*-mcp") if (p / "pyproject.toml").is_file())
MINIMAL = '''
from mcp.server.mcpserver import MCPServer
server = MCPServer("minimal")

@server.tool()
def ping() -> str:
    """Answer pong."""
    return "pong"

server.run("stdio")
'''
RUNS = 5


# ntfy-mcp refuses to start without NTFY_URL (no default on purpose); listing tools contacts nothing.
STARTUP_ENV = {"ntfy_mcp": {"NTFY_URL": "http://127.0.0.1:9/"}}


async def start_and_list(args: list[str], extra: dict[str, str]) -> tuple[float, int]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CALDAV_", "CARDDAV_", "NTFY_", "ELICITATION"))}
    env.update(STARTUP_ENV.get(args[-1], {}))
    env.update(extra)
    params = StdioServerParameters(command=sys.executable, args=args, env=env)
    start = time.perf_counter()
    async with Client(params, mode="legacy") as client:
        tools = await client.list_tools()
        elapsed = time.perf_counter() - start
    return elapsed, len(tools.tools)


def measure(args: list[str], extra: dict[str, str] | None = None) -> tuple[float, int, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    samples, count = [], 0
    for _ in range(RUNS):
        elapsed, count = anyio.run(start_and_list, args, extra or {})
        samples.append(elapsed)
    peak_kib = max(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, before)
    return statistics.median(samples), count, peak_kib / 1024


def main() -> None:
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as handle:
        handle.write(MINIMAL)
    # The minimal server first, so its peak memory is not masked by a larger child's.
    base, _, base_mib = measure([handle.name])
    print("startup to first tools/list over stdio, median of 5 (peak RSS of any child so far)")
    print(f"  {'minimal SDK server':<20} {base * 1000:7.0f} ms   1 tool    {base_mib:6.1f} MiB")
    worst = 0.0
    for name in SERVERS:
        seconds, count, mib = measure(["-m", name.replace("-", "_")])
        worst = max(worst, seconds / base)
        print(f"  {name:<20} {seconds * 1000:7.0f} ms  {count:2d} tools   {mib:6.1f} MiB   ratio {seconds / base:.2f}")
    print(f"  worst ratio {worst:.2f} (target <= 1.5)")
    os.unlink(handle.name)
    print("with the embedded backend (informational)")
    with tempfile.TemporaryDirectory(prefix="bench-embedded-") as data:
        for name, prefix in (("caldav-mcp", "CALDAV"), ("carddav-mcp", "CARDDAV")):
            folder = Path(data) / name
            extra = {f"{prefix}_EMBEDDED": "true", f"{prefix}_EMBEDDED_DIR": str(folder)}
            seconds, count, mib = measure(["-m", name.replace("-", "_")], extra)
            ratio = seconds / base
            print(f"  {name:<20} {seconds * 1000:7.0f} ms  {count:2d} tools   {mib:6.1f} MiB   ratio {ratio:.2f}")


if __name__ == "__main__":
    main()
