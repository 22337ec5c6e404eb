"""Startup: from spawning each server over stdio to its first tools/list answer, and peak memory.

Each server of the family is started as a subprocess (``python -m <package>``)
with no backend configured, an MCP client connects over real stdio and lists
the tools; the same is done for a minimal server built with the same SDK (one
tool, nothing else). The starts are made in rounds, one start of every server
per round, so a change in the machine's load falls on all of them alike.
Reports, per server, the median wall time of :data:`RUNS` rounds, its ratio to
the minimal server's median, the median CPU time the child used (user +
system: steadier than wall time on a busy machine), and its peak resident
memory (``ru_maxrss`` of its own children only, measured in a process of its
own). Target: every server within :data:`TARGET` times the minimal server;
the script exits with status ``bench_summary.MISSED`` when one is not.

Then, for information (not part of the target: the option starts a second
server inside the first), caldav-mcp and carddav-mcp with their embedded
backend (``*_EMBEDDED=true``) on a data folder that is reused across the
starts, so the median is a returning user's start.

Every server is started once, untimed, before the rounds, with Python's
bytecode cache on (``PYTHONDONTWRITEBYTECODE`` dropped): the timed starts read
compiled modules, as a user's second start does.

``python benchmarks/bench_startup.py --importtime NAME`` prints, instead, what
``python -X importtime -m NAME`` spends on each top-level package beyond what
the minimal server imports (milliseconds of import time, largest first).
``--instructions`` prints, instead, the instructions each start executes up to
the first ``tools/list`` as callgrind counts them (needs valgrind; about 30 s a
start), a figure that stays put on a busy machine.
"""

from __future__ import annotations

import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import anyio
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "testing"))
from bench_summary import MISSED, record  # noqa: E402 - found on the path set just above

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


TARGET = 1.2
"""The largest allowed ratio of a server's median startup to the minimal SDK server's."""


def server_env(args: list[str], extra: dict[str, str]) -> dict[str, str]:
    """The environment a start of ``python *args`` gets: no backend settings, and Python's bytecode cache on.

    ``PYTHONDONTWRITEBYTECODE`` is dropped, so the modules' compiled bytecode (``__pycache__``) is written
    by the first start and read by the next ones, as on a user's machine.
    """
    skipped = ("CALDAV_", "CARDDAV_", "NTFY_", "ELICITATION", "PYTHONDONTWRITEBYTECODE")
    env = {k: v for k, v in os.environ.items() if not k.startswith(skipped)}
    env.update(STARTUP_ENV.get(args[-1], {}))
    env.update(extra)
    return env


async def start_and_list(args: list[str], extra: dict[str, str], wrapper: tuple[str, ...] = ()) -> tuple[float, int]:
    """Start ``python *args`` over stdio, list its tools; returns (seconds to the answer, number of tools).

    ``wrapper``: a command the interpreter is started under (``valgrind ...``), none by default.
    """
    command, *rest = (*wrapper, sys.executable, *args)
    params = StdioServerParameters(command=command, args=rest, env=server_env(args, extra))
    start = time.perf_counter()
    async with Client(params, mode="legacy") as client:
        tools = await client.list_tools()
        elapsed = time.perf_counter() - start
    return elapsed, len(tools.tools)


@dataclass
class Samples:
    """One server's starts: wall seconds, the child's CPU seconds (user + system), its tool count."""

    wall: list[float] = field(default_factory=list[float])
    cpu: list[float] = field(default_factory=list[float])
    tools: int = 0


def start_once(args: list[str], extra: dict[str, str], into: Samples) -> None:
    """One start of ``python *args``, added to ``into``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    elapsed, into.tools = anyio.run(start_and_list, args, extra)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    into.wall.append(elapsed)
    into.cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)


def peak_mib(args: list[str], extra: dict[str, str] | None = None) -> float:
    """Peak resident memory (MiB) of one start of ``python *args``, alone in a process of its own."""
    probe = (
        "import anyio, resource, sys; sys.path.insert(0, sys.argv[1]); import bench_startup as b; "
        "anyio.run(b.start_and_list, sys.argv[2:], {}); "
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)"
    )
    env = {**os.environ, **(extra or {})}
    out = subprocess.run(  # noqa: S603 - our own interpreter and script
        [sys.executable, "-c", probe, str(Path(__file__).parent), *args],
        capture_output=True, text=True, env=env, check=True, timeout=300,
    ).stdout  # fmt: skip
    return int(out.split()[-1]) / 1024


def warm_up(starts: dict[str, tuple[list[str], dict[str, str]]]) -> None:
    """One untimed start of each entry of ``starts``: it writes the bytecode cache the measured starts read."""
    for args, extra in starts.values():
        anyio.run(start_and_list, args, extra)


def rounds(starts: dict[str, tuple[list[str], dict[str, str]]]) -> dict[str, Samples]:
    """:data:`RUNS` rounds of one start of each entry of ``starts`` (label -> argv after python, extra env).

    :func:`warm_up` comes first.
    """
    samples = {label: Samples() for label in starts}
    warm_up(starts)
    for _ in range(RUNS):
        for label, (args, extra) in starts.items():
            start_once(args, extra, samples[label])
    return samples


def importtime(module: str) -> None:
    """Print the import time ``-m module`` spends per top-level package beyond the minimal server's imports."""

    env = {**os.environ, **STARTUP_ENV.get(module, {})}

    def packages(argv: list[str]) -> dict[str, int]:
        done = subprocess.run(  # noqa: S603 - our own interpreter
            [sys.executable, "-X", "importtime", *argv],
            stdin=subprocess.DEVNULL, capture_output=True, text=True, env=env, check=False, timeout=300,
        )  # fmt: skip
        spent: dict[str, int] = {}
        for line in done.stderr.splitlines():
            if line.startswith("import time:") and "self [us]" not in line:
                own, _, name = line.removeprefix("import time:").split("|")
                top = name.strip().split(".")[0]
                spent[top] = spent.get(top, 0) + int(own)
        return spent

    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as handle:
        handle.write(MINIMAL)
    try:
        base = packages([handle.name])
    finally:
        os.unlink(handle.name)
    extra = {name: us for name, us in packages(["-m", module]).items() if name not in base}
    print(f"import time of -m {module} beyond the minimal server's imports: {sum(extra.values()) / 1000:.0f} ms")
    for name, us in sorted(extra.items(), key=lambda item: -item[1])[:20]:
        print(f"  {us / 1000:7.1f} ms  {name}")


def instructions(starts: dict[str, tuple[list[str], dict[str, str]]]) -> None:
    """Print the machine instructions each start to the first tools/list executes, counted by callgrind.

    A count hardly moves with the machine's load, where wall and CPU time do; it leaves out the time
    spent waiting (the disk, the pipe). Needs valgrind (Debian: ``apt-get install valgrind``); each
    start takes about 30 s under it. Informational: the target is on wall time.
    """
    if shutil.which("valgrind") is None:
        sys.exit("--instructions needs valgrind on the PATH (Debian: apt-get install valgrind)")
    warm_up(starts)
    counts: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="bench-callgrind-") as folder:
        for n, (label, (args, extra)) in enumerate(starts.items()):
            out = f"{folder}/{n}.out"
            wrapper = ("valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "--log-file=/dev/null")
            anyio.run(start_and_list, args, extra, wrapper)
            summary = next(line for line in Path(out).read_text().splitlines() if line.startswith("summary:"))
            counts[label] = int(summary.split()[1])
    base = counts["minimal SDK server"]
    print("instructions to the first tools/list over stdio (callgrind, one start each)")
    for label, count in counts.items():
        print(f"  {label:<20} {count / 1e9:6.3f} G  {count / base:5.3f}")


def main() -> None:
    """Run the rounds, print the table; exit status ``MISSED`` when a server is over :data:`TARGET`."""
    if sys.argv[1:2] == ["--importtime"]:
        importtime(sys.argv[2])
        return
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as handle:
        handle.write(MINIMAL)
    starts = {"minimal SDK server": ([handle.name], {})}
    starts |= {name: (["-m", name.replace("-", "_")], {}) for name in SERVERS}
    try:
        if sys.argv[1:2] == ["--instructions"]:
            instructions(starts)
            return
        samples = rounds(starts)
        memory = {label: peak_mib(args) for label, (args, _) in starts.items()}
    finally:
        os.unlink(handle.name)
    base = statistics.median(samples["minimal SDK server"].wall)
    base_cpu = statistics.median(samples["minimal SDK server"].cpu)
    print(f"startup to first tools/list over stdio, median of {RUNS} interleaved rounds")
    print(f"  {'':<20} {'wall':>7}     {'ratio':>5}   {'CPU':>7}     {'ratio':>5}   tools  peak RSS")
    worst = 0.0
    for label, taken in samples.items():
        wall, cpu = statistics.median(taken.wall), statistics.median(taken.cpu)
        if label != "minimal SDK server":
            worst = max(worst, wall / base)
        if label != "minimal SDK server":
            record("bench_startup", f"{label}: start-up to the first tools/list over stdio ({taken.tools} tools), over "
                   "a minimal SDK server", f"{wall / base:.2f}x", f"<= {TARGET}x", wall / base <= TARGET)  # fmt: skip
        print(
            f"  {label:<20} {wall * 1000:7.0f} ms  {wall / base:5.2f}   {cpu * 1000:7.0f} ms  {cpu / base_cpu:5.2f}"
            f"   {taken.tools:5d}  {memory[label]:6.1f} MiB"
        )
    print(f"  worst ratio {worst:.2f} (target <= {TARGET})")
    print("with the embedded backend (informational)")
    with tempfile.TemporaryDirectory(prefix="bench-embedded-") as data:
        embedded = {
            name: (
                ["-m", name.replace("-", "_")],
                {f"{prefix}_EMBEDDED": "true", f"{prefix}_EMBEDDED_DIR": f"{data}/{name}"},
            )
            for name, prefix in (("caldav-mcp", "CALDAV"), ("carddav-mcp", "CARDDAV"))
        }
        for name, taken in rounds(embedded).items():
            wall = statistics.median(taken.wall)
            print(f"  {name:<20} {wall * 1000:7.0f} ms  {wall / base:5.2f}   {taken.tools:2d} tools")
    if worst > TARGET:
        print(
            f"FAILED: a server starts {worst:.2f}x the minimal SDK server, over the {TARGET}x target", file=sys.stderr
        )
        sys.exit(MISSED)


if __name__ == "__main__":
    main()
