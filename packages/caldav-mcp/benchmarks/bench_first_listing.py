"""A month of a year-long calendar: the first ``list_events`` of a fresh caldav-mcp, and the month again, against
the calendar-query REPORT a client sends for it.

Run by ``uv run nox -s bench`` (``nox -s bench -- bench_first_listing`` for this one), or directly with
``uv run python packages/caldav-mcp/benchmarks/bench_first_listing.py [ROUNDS]``.

The data (``calendar_data.year_calendar``): 2,000 one-hour events over 2027 and 70 weekly series (50 never
ending), in four time zones, written straight into a fresh Radicale's storage folder (no PUT) and read once
to warm Radicale's item cache. June 2027 holds 235 of those entries and 565 occurrences.

Each round starts caldav-mcp afresh as its own process over stdio (``python -m caldav_mcp``, MCP 2026-07-28)
and lists the calendars first (not timed), then times, as an MCP client sees them:

* ``first``: ``list_events`` of June 2027 at its default page size (200 occurrences);
* ``again at once``: the same call as soon as the first returned;
* ``again after 1 s``: the same call a second later.

The reference is the raw REPORT a client would send for the month (a plain calendar-query with
``calendar-data`` and no ``<C:expand>``, RFC 4791 §7.8), by httpx from this process, taken once before and
once after caldav-mcp's calls with Radicale idle (its CPU time no longer moving); a round's ratio is its time
over the mean of the two. Figures are medians of ROUNDS rounds (7 by default, at least 5), each round's ratio printed.
Then, on a second calendar of 2,000 events and 20 series (10 never ending), the unchanged month listed again a
second after its first listing.

Correctness is checked, not timed: every round pages through the whole month and compares each occurrence
(UID, start, end) with an independent expansion of the written files by recurring-ical-events.

Beside caldav-mcp, in each round: the same first call to a bare SDK server listing the month with icalendar and
recurring-ical-events alone (``listing_baseline.py``: no approval core, no version checks, no kept listings,
no bounds), also a fresh process over stdio after one untimed call, over the mean of the raw REPORT taken
after caldav-mcp's calls and one more after its own. Its page must be caldav-mcp's first page, in the same
order. It shows what the SDK and these libraries give without anything of caldav-mcp's: 1.54x, 1.59x and
1.58x in three runs, where caldav-mcp took 1.32x, 1.38x and 1.35x in the same rounds.

The Python SDK client checks each result against the tool's outputSchema (jsonschema); the timed calls include
that check, and its own time for the first page is printed beside.

Where the first listing's time goes is printed as processor time (steadier than wall time on a busy machine):
Radicale's for the raw REPORT and for the first listing, caldav-mcp's own process, and this client (its JSON
and schema check). On two cores, Radicale spent 0.45-0.5 s on the REPORT either way (its time hardly depends
on what the month holds: an empty day costs as much, since it reads every entry and expands the never-ending
series to answer), caldav-mcp 0.10-0.18 s and the client 22-38 ms, of which the outputSchema check is
12-20 ms. Of caldav-mcp's part, ``--profile`` (one first listing in process under cProfile, the expansion's
worker thread run inline so that it is seen) shows parsing the 235 entries with icalendar as the largest
(about half: it costs the same for each content line, so a listing parses only the lines of a VEVENT it
reads, ``caldav_mcp.components.listed_only``), then expanding the 70 series and building the 565 occurrences
(about a third), then reading the multistatus (the C XML parser, where the answer can hold no DTD); writing
the page of 200 is small. Three costs a process pays once are kept off the first listing: importing
icalendar, recurring-ical-events and dateutil, and one made-up expansion that reads the system's zone names
and fills the libraries' caches (about 40 ms), start in the background at the first tool call (here
``list_calendars``). ``list_calendars`` itself sends nothing after its answer: the one request that tells
whether Radicale keeps each calendar's last change (its sync-token, which Radicale computes from every entry)
goes out once the first listing's REPORT is answered, beside the expansion, and the page never waits for it.
The timed call follows ``list_calendars`` at once, as a client's program would send it; a request still out
then would be counted (an earlier version of caldav-mcp sent the sync-token after ``list_calendars``, which
made the first listing 1.7x the REPORT when it followed at once, 1.2x when it came a second later).

The machine may be shared: compare ratios taken in the same run, and read ``uptime`` printed at the start.
"""

from __future__ import annotations

import cProfile
import datetime as dt
import os
import pstats
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import anyio.to_thread
import httpx
import icalendar
import recurring_ical_events
from mcp.client import Client
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "testing"))
from bench_summary import MISSED, record
from calendar_data import CALENDAR, USER, calendar_query, scratch, seed, year_calendar
from dav_servers import DavServer, radicale

MONTH = (dt.datetime(2027, 6, 1, tzinfo=dt.UTC), dt.datetime(2027, 7, 1, tzinfo=dt.UTC))
ROUNDS = 7
FIRST_TARGET = 1.3
AGAIN_TARGET = 0.5

Occurrences = list[tuple[str, str, str]]


def expected(items: list[tuple[str, str]], lo: dt.datetime, hi: dt.datetime) -> Occurrences:
    """(uid, start, end) of every occurrence in ``[lo, hi)``, expanded straight from the written files."""
    found = []
    for _, text in items:
        for component in recurring_ical_events.of(icalendar.Calendar.from_ical(text)).between(lo, hi):
            start, end = component["DTSTART"].dt, component["DTEND"].dt
            found.append((str(component["UID"]), start.isoformat(), end.isoformat()))
    return sorted(found)


def radicale_pid(server: DavServer) -> int:
    """The process id of the Radicale serving ``server`` (found by its ``--server-hosts`` argument)."""
    port = server.url.rstrip("/").rsplit(":", 1)[1]
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"radicale" in argv and f"127.0.0.1:{port}".encode() in argv:
            return int(entry.name)
    raise RuntimeError(f"no Radicale process found for {server.url}")


def cpu_ticks(pid: int) -> int:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])  # utime + stime (proc(5)), in clock ticks


TICK = os.sysconf("SC_CLK_TCK")


def child_pid() -> int:
    """The process id of the caldav-mcp this process started over stdio."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if b"caldav_mcp" in argv and parent == os.getpid():
            return int(entry.name)
    raise RuntimeError("no caldav-mcp process found")


def idle(pid: int) -> None:
    """Wait until Radicale's CPU time has not moved for 0.2 s: no request of an earlier step is still running."""
    last, still = cpu_ticks(pid), 0
    while still < 4:
        time.sleep(0.05)
        now = cpu_ticks(pid)
        still = still + 1 if now == last else 0
        last = now


def raw_report(http: httpx.Client, server: DavServer) -> float:
    start = time.perf_counter()
    answer = http.request(
        "REPORT", f"{server.url.rstrip('/')}{CALENDAR}", content=calendar_query(*MONTH), headers={"Depth": "1"}
    )
    answer.raise_for_status()
    return time.perf_counter() - start


def params(server: DavServer) -> StdioServerParameters:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CALDAV_", "ELICITATION"))}
    env |= {"CALDAV_URL": server.url, "CALDAV_USERNAME": USER[0], "CALDAV_PASSWORD": USER[1], "TZ": "UTC"}
    return StdioServerParameters(command=sys.executable, args=["-m", "caldav_mcp"], env=env)


ARGS = {"calendar": CALENDAR, "start": "2027-06-01", "end": "2027-07-01"}


async def timed_call(client: Client, arguments: dict[str, Any]) -> tuple[float, dict[str, Any]]:
    start = time.perf_counter()
    result = await client.call_tool("list_events", arguments)
    elapsed = time.perf_counter() - start
    if result.is_error:
        raise RuntimeError(str(result.content))
    return elapsed, result.structured_content or {}


async def every_page(client: Client) -> Occurrences:
    found: Occurrences = []
    cursor = None
    while True:
        _, data = await timed_call(client, {**ARGS, **({"cursor": cursor} if cursor else {})})
        found.extend((e["id"].split("#")[0], e["start"], e["end"]) for e in data["events"])
        cursor = data["next_cursor"]
        if not cursor:
            return sorted(found)


async def schema_check_ms(client: Client) -> float:
    """The SDK client's own outputSchema check of one first-page result, alone."""
    result = await client.call_tool("list_events", ARGS)
    start = time.perf_counter()
    await ClientSession.validate_tool_result(client.session, "list_events", result)
    return (time.perf_counter() - start) * 1000


BASELINE = Path(__file__).resolve().parent / "listing_baseline.py"


async def baseline_call(server: DavServer) -> tuple[float, list[dict[str, Any]]]:
    """The same first call to a fresh bare SDK server listing with the libraries alone (``listing_baseline``)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("BASELINE_")} | {"TZ": "UTC"}
    env |= {"BASELINE_URL": f"{server.url.rstrip('/')}{CALENDAR}", "BASELINE_USER": USER[0],
            "BASELINE_PASSWORD": USER[1]}  # fmt: skip
    baseline = StdioServerParameters(command=sys.executable, args=[str(BASELINE)], env=env)
    async with Client(baseline, mode="2026-07-28") as client:
        await client.call_tool("ready", {})
        start = time.perf_counter()
        result = await client.call_tool("list_events", {"start": ARGS["start"], "end": ARGS["end"]})
        elapsed = time.perf_counter() - start
    if result.is_error:
        raise RuntimeError(str(result.content))
    return elapsed, (result.structured_content or {})["events"]


def shown(item: dict[str, Any]) -> tuple[str, str, str, str | None]:
    """What the baseline's page and caldav-mcp's first page must agree on, in order: id, start, end, SUMMARY."""
    return item["id"], item["start"], item["end"], item["summary"]


def one_round(server: DavServer, http: httpx.Client, pid: int, truth: Occurrences) -> dict[str, Any]:
    """One fresh caldav-mcp process: the three timings beside the raw REPORT before and after, and the check."""
    idle(pid)
    ticks = cpu_ticks(pid)
    before = raw_report(http, server)
    idle(pid)
    raw_cpu = (cpu_ticks(pid) - ticks) / TICK

    async def run() -> dict[str, Any]:
        async with Client(params(server), mode="2026-07-28") as client:
            await client.call_tool("list_calendars", {})
            ours = child_pid()
            ticks = (cpu_ticks(pid), cpu_ticks(ours), time.process_time())
            first, page = await timed_call(client, ARGS)
            cpu = (
                (cpu_ticks(pid) - ticks[0]) / TICK,
                (cpu_ticks(ours) - ticks[1]) / TICK,
                time.process_time() - ticks[2],
            )
            at_once, again = await timed_call(client, ARGS)
            await anyio.sleep(1.0)
            later, _ = await timed_call(client, ARGS)
            listed = await every_page(client)
            check = await schema_check_ms(client)
        return {"first": first, "at_once": at_once, "later": later, "page": page, "again": again,
                "listed": listed, "check": check, "cpu": cpu}  # fmt: skip

    out = anyio.run(run)
    idle(pid)
    middle = raw_report(http, server)
    out["baseline"], baseline_page = anyio.run(baseline_call, server)
    idle(pid)
    after = raw_report(http, server)
    out["raw"] = (before + middle) / 2
    out["baseline_raw"] = (middle + after) / 2
    out["baseline_right"] = [shown(e) for e in baseline_page] == [shown(e) for e in out["page"]["events"]]
    out["raw_cpu"] = raw_cpu
    out["right"] = out["listed"] == truth and out["page"]["events"] == out["again"]["events"]
    return out


def seeded(items: list[tuple[str, str]]) -> Path:
    work = scratch("caldav-first-")
    seed(work / "collections", items)
    return work


def unchanged_month(rounds: int) -> tuple[float, bool]:
    """The second calendar: the unchanged month again, a second after its first listing, over the raw REPORT."""
    items = year_calendar(2000, 20, 10)
    truth = expected(items, *MONTH)
    work = seeded(items)
    ratios: list[float] = []
    right = True
    try:
        with radicale(work, dict([USER])) as server, httpx.Client(auth=USER, timeout=600) as http:
            raw_report(http, server)  # Radicale reads every entry once: its item cache is warm
            pid = radicale_pid(server)
            for _ in range(rounds):
                out = one_round(server, http, pid, truth)
                ratios.append(out["later"] / out["raw"])
                right = right and out["right"]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return statistics.median(ratios), right


def row(
    name: str, value: float, target: float, spread: list[float] | None = None, beside: str = ""
) -> tuple[str, bool]:
    met = value <= target
    span = f" (rounds {min(spread):.2f}-{max(spread):.2f})" if spread else ""
    shape = "" if "2,000" in name else ", 2,000 events + 70 series (565 occurrences)"
    measured = f"{value:.2f}x{span}{beside}"
    record("bench_first_listing", f"{name}{shape}, over the raw REPORT", measured, f"<= {target}x", met)
    return f"| {name} | {value:.2f}x{span} | <= {target}x | {'pass' if met else 'FAIL'} |", met


def profile() -> None:
    """One first listing of the month in this process, under cProfile: where its time goes."""
    from approval_core import ApprovalSettings
    from approval_core.testing import connect
    from caldav_mcp.server import build_server
    from caldav_mcp.settings import CalDAVSettings

    work = seeded(year_calendar())
    try:
        with radicale(work, dict([USER])) as server, httpx.Client(auth=USER, timeout=600) as http:
            raw_report(http, server)
            settings = CalDAVSettings(server.url, *USER, timeout=600)

            async def inline(fn: Any, *args: Any, **_: Any) -> Any:
                return fn(*args)  # the expansion's worker thread, run here so that cProfile sees it

            anyio.to_thread.run_sync = inline  # type: ignore[assignment]

            async def run() -> None:
                async with connect(build_server(ApprovalSettings(), settings), revision="2026-07-28",
                                   check=False) as client:  # fmt: skip
                    await client.call_tool("list_calendars", {})
                    profiler = cProfile.Profile()
                    profiler.enable()
                    await client.call_tool("list_events", ARGS)
                    profiler.disable()
                    pstats.Stats(profiler).sort_stats("cumulative").print_stats(60)
                    pstats.Stats(profiler).sort_stats("tottime").print_stats(25)

            anyio.run(run)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def main() -> None:
    if "--profile" in sys.argv:
        profile()
        return
    rounds = max(int(next((a for a in sys.argv[1:] if a.isdigit()), ROUNDS)), 1)
    os.environ["TZ"] = "UTC"
    time.tzset()
    print(f"load: {os.getloadavg()[0]:.2f} {os.getloadavg()[1]:.2f} {os.getloadavg()[2]:.2f} (1, 5, 15 min)")
    items = year_calendar()
    truth = expected(items, *MONTH)
    work = seeded(items)
    rows: list[dict[str, Any]] = []
    try:
        with radicale(work, dict([USER])) as server, httpx.Client(auth=USER, timeout=600) as http:
            raw_report(http, server)  # Radicale reads every entry once: its item cache is warm
            pid = radicale_pid(server)
            rows = [one_round(server, http, pid, truth) for _ in range(rounds)]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    unchanged, unchanged_right = unchanged_month(rounds)

    def ratios(key: str) -> list[float]:
        return [r[key] / r["raw"] for r in rows]

    raw_ms = statistics.median(r["raw"] for r in rows) * 1000
    print(
        f"\nlist_events of June 2027, Radicale on 127.0.0.1; 2,000 one-hour events + 70 weekly series (50 without "
        f"end): {len(truth)} occurrences in the month; median of {rounds} rounds, each a fresh caldav-mcp process"
    )
    print(f"raw calendar-query REPORT of the month: {raw_ms:.0f} ms (median of the rounds' means)")
    print("| figure | measured | target | |")
    print("|---|---|---|---|")
    baselines = [r["baseline"] / r["baseline_raw"] for r in rows]
    baseline = f"{statistics.median(baselines):.2f}x"
    results = [
        row("first list_events of the month (after list_calendars)", statistics.median(ratios("first")), FIRST_TARGET,
            ratios("first"), f"; a bare SDK server with the libraries alone: {baseline}"),
        row("the same month again at once", statistics.median(ratios("at_once")), AGAIN_TARGET, ratios("at_once")),
        row("the same month again after 1 s", statistics.median(ratios("later")), AGAIN_TARGET, ratios("later")),
        row("an unchanged month again, 2,000 events + 20 series", unchanged, AGAIN_TARGET),
    ]  # fmt: skip
    for line, _ in results:
        print(line)
    print(
        f"| beside it: the same first call to a bare SDK server listing with icalendar and recurring-ical-events "
        f"alone (listing_baseline.py) | {baseline} (rounds {min(baselines):.2f}-{max(baselines):.2f}) | | |"
    )
    print("first listing, each round in order: " + " ".join(f"{x:.2f}x" for x in ratios("first"))
          + " (raw REPORT " + " ".join(f"{r['raw'] * 1000:.0f}" for r in rows) + " ms)")  # fmt: skip
    right = all(r["right"] and r["baseline_right"] for r in rows) and unchanged_right
    print(f"every occurrence against recurring-ical-events ({len(truth)} in the month, every round, both calendars): "
          f"{'right' if right else 'WRONG'}")  # fmt: skip
    times = {k: statistics.median(r[k] for r in rows) * 1000 for k in ("first", "at_once", "later")}
    print(f"medians: first {times['first']:.0f} ms, at once {times['at_once']:.0f} ms, after 1 s {times['later']:.0f} "
          f"ms; the SDK client's outputSchema check of a first page alone: "
          f"{statistics.median(r['check'] for r in rows):.0f} ms (included in the times)")  # fmt: skip
    radicale_ms, ours_ms, client_ms = (statistics.median(r["cpu"][i] for r in rows) * 1000 for i in range(3))
    print(f"processor time of a first listing (medians): Radicale {radicale_ms:.0f} ms (raw REPORT alone: "
          f"{statistics.median(r['raw_cpu'] for r in rows) * 1000:.0f} ms), caldav-mcp {ours_ms:.0f} ms, "
          f"this client {client_ms:.0f} ms (clock ticks of {1000 / TICK:.0f} ms)")  # fmt: skip
    print("\nre-run: uv run nox -s bench -- bench_first_listing")
    if not right:
        raise SystemExit(1)
    if not all(met for _, met in results):
        raise SystemExit(MISSED)


if __name__ == "__main__":
    main()
