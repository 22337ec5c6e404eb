"""list_events against Radicale's own calendar-query REPORT for the same window, cold and warm, and at scale.

Run by ``uv run nox -s bench`` (``nox -s bench -- bench_list_events`` for this one), or directly with
``uv run python packages/caldav-mcp/benchmarks/bench_list_events.py``. Everything runs against real
Radicale processes on 127.0.0.1 whose storage folder is written directly (``calendar_data.py``): entries
as calendar clients store them, each zoned one with its VTIMEZONE, in a folder in memory (``/dev/shm``)
where there is one, so that a shared disk's fsyncs do not stand in for Radicale's own figures.

1. One month (December 2026) of a calendar of 2,000 entries (50 of them never-ending series), in one run:

   * cold: a Radicale just started on a storage folder with no cache, and a caldav-mcp just built:
     the first ``list_events`` (discovery included) beside the first raw REPORT on another Radicale
     just started on the same files;
   * warm: the same Radicale after that, median of 5 each, taken in turns: the raw REPORT, the
     first ``list_events`` of a caldav-mcp whose calendar list is read but whose listing cache is
     empty, and a ``list_events`` repeated on one caldav-mcp (a later page or the same window again);
   * the caldav library's ``search(expand=True)`` on the same window, for reference;
   * every occurrence checked against an expansion of the written files (recurring-ical-events
     directly), and the same answer under four host time zones.

   Targets: ``list_events`` at most 1.3x the raw REPORT; the unchanged month listed again (one request
   for the calendar's CTag, the listing kept) at most 0.5x; at most 150 bytes of text per occurrence.

2. Scale: a 366-day window (2026-12-01 to 2027-12-02) over calendars of 2,000 and 20,000 entries of the
   same shape, read as a client reads it: page by page with the cursor at the default page size (200).
   Reported: the calls it took, the time of all of them, beside the first call alone on another fresh
   caldav-mcp (it reads and expands the whole window: one listing of the year in a single call, whose
   later pages come from what it kept), one raw REPORT of the whole window (time, bytes), and the peak
   resident memory (RSS, ``VmHWM`` of the measuring process after resetting it through
   ``/proc/self/clear_refs``, minus the RSS before; client and server run in that process, Radicale does
   not). Each size runs in a fresh process so that memory freed by the other does not hide growth.
   Radicale reads a calendar it has not cached at several ms an entry (vobject): the 20,000-entry point
   takes minutes.

   Targets: all pages at most 1.3x the first call alone and at most 6x the raw REPORT, every occurrence
   right, at both sizes.

The month here is kinder than a real one (a third as many entries; Radicale's REPORT expands its never-ending
daily series, which slows the reference): ``bench_first_listing.py`` measures the first listing, and the month
again, on a calendar shaped like a real one, each round in a fresh caldav-mcp process.

The machine may be shared: figures are noisy; compare ratios taken in the same run.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import caldav
import httpx
import icalendar
import recurring_ical_events

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "testing"))
from bench_summary import MISSED, record
from calendar_data import CALENDAR, USER, calendar_query, dataset, scratch, seed
from dav_servers import DavServer, radicale
from mcp.client.session import ClientSession

from approval_core import ApprovalSettings
from approval_core.testing import connect
from caldav_mcp.server import build_server
from caldav_mcp.settings import CalDAVSettings

# The SDK's client checks every result against the tool's outputSchema with jsonschema, in Python: for a
# listing of 528 occurrences that takes longer than the server's own work. It is the client's cost, not the
# server's, so the timed calls go without it and the check is timed on its own (reported beside).
SDK_CHECK = ClientSession.validate_tool_result


async def _unchecked(self: ClientSession, name: str, result: Any) -> None:
    return None


ClientSession.validate_tool_result = _unchecked  # type: ignore[method-assign]

MONTH = (dt.datetime(2026, 12, 1, tzinfo=dt.UTC), dt.datetime(2027, 1, 1, tzinfo=dt.UTC))
YEAR = (dt.datetime(2026, 12, 1, tzinfo=dt.UTC), dt.datetime(2027, 12, 2, tzinfo=dt.UTC))
ZONES = ["UTC", "Pacific/Kiritimati", "America/Adak", "Asia/Tokyo"]
RUNS = 5
PAGE = 1000
TARGET = 1.3
AGAIN_TARGET = 0.5
PAGED_OVER_SINGLE = 1.3
PAGED_OVER_RAW = 6.0
MAX_BYTES = 150

Listing = list[tuple[str, str | None, str | None]]


def day(value: dt.datetime) -> str:
    return value.date().isoformat()


def expected(items: list[tuple[str, str]], lo: dt.datetime, hi: dt.datetime) -> set[tuple[str, str, str]]:
    """(uid, start, end) of every occurrence in ``[lo, hi)``, expanded straight from the written files."""
    found = set()
    for _, text in items:
        for component in recurring_ical_events.of(icalendar.Calendar.from_ical(text)).between(lo, hi):
            found.add((str(component["UID"]), component["DTSTART"].dt.isoformat(), component["DTEND"].dt.isoformat()))
    return found


def fresh_copy(template: Path) -> Path:
    """A copy of a seeded storage folder without Radicale's cache: what Radicale sees on a first start."""
    work = scratch("caldav-bench-")
    shutil.copytree(template, work / "collections")
    return work


def mcp_settings(server: DavServer) -> CalDAVSettings:
    return CalDAVSettings(server.url, *USER, timeout=600)


def raw_report(http: httpx.Client, server: DavServer, lo: dt.datetime, hi: dt.datetime) -> tuple[float, int]:
    start = time.perf_counter()
    answer = http.request("REPORT", f"{server.url}bench/bench/", content=calendar_query(lo, hi), headers={"Depth": "1"})
    answer.raise_for_status()
    return time.perf_counter() - start, len(answer.content)


async def call(
    client: Any, lo: dt.datetime, hi: dt.datetime, cursor: str | None = None, page: int | None = PAGE
) -> Any:
    args: dict[str, Any] = {"calendar": CALENDAR, "start": day(lo), "end": day(hi)}
    if page is not None:
        args["limit"] = page
    if cursor:
        args["cursor"] = cursor
    result = await client.call_tool("list_events", args)
    if result.is_error:
        raise RuntimeError(result.content[0].text)
    return result


async def listing(
    client: Any, lo: dt.datetime, hi: dt.datetime, cursor: str | None = None, page: int | None = PAGE
) -> dict[str, Any]:
    return (await call(client, lo, hi, cursor, page)).structured_content


def occurrences_of(data: dict[str, Any]) -> Listing:
    return [(e["id"], e["start"], e["end"]) for e in data["events"]]


async def timed(fn: Callable[[], Awaitable[Any]]) -> float:
    start = time.perf_counter()
    await fn()
    return time.perf_counter() - start


# ------------------------------------------------------------------------------------------------ part 1


def month(items: list[tuple[str, str]], template: Path) -> tuple[bool, bool]:
    """The month's figures, printed; returns (every occurrence right, every target met)."""
    lo, hi = MONTH
    truth = expected(items, lo, hi)

    # Cold, raw: a Radicale just started on the files, its first REPORT.
    work = fresh_copy(template)
    with radicale(work, dict([USER])) as server, httpx.Client(auth=USER, timeout=600) as http:
        raw_cold, size = raw_report(http, server, lo, hi)
    shutil.rmtree(work, ignore_errors=True)

    # Cold, ours: another Radicale just started on the same files, a caldav-mcp just built.
    work = fresh_copy(template)
    figures: dict[str, list[float]] = {"raw": [], "first": [], "again": [], "check": []}
    listed: Listing = []
    text = ""
    with radicale(work, dict([USER])) as server, httpx.Client(auth=USER, timeout=600) as http:

        async def cold_and_warm() -> float:
            nonlocal listed, text
            async with connect(build_server(ApprovalSettings(), mcp_settings(server)), revision="2026-07-28",
                               check=False) as repeated:  # fmt: skip
                cold = await timed(lambda: listing(repeated, lo, hi))
                answer = await call(repeated, lo, hi)
                listed, text = occurrences_of(answer.structured_content), answer.content[0].text
                for _ in range(RUNS):
                    figures["raw"].append(raw_report(http, server, lo, hi)[0])
                    async with connect(build_server(ApprovalSettings(), mcp_settings(server)), revision="2026-07-28",
                                       check=False) as fresh:  # fmt: skip
                        await fresh.call_tool("list_calendars", {})
                        figures["first"].append(await timed(lambda: listing(fresh, lo, hi)))
                        # Not timed: the same window again waits for the CTag asked after the first read (the
                        # page was served before it answered), so that Radicale is idle for the next timing.
                        await listing(fresh, lo, hi)
                    figures["again"].append(await timed(lambda: listing(repeated, lo, hi)))
                    result = await call(repeated, lo, hi)
                    started = time.perf_counter()
                    await SDK_CHECK(repeated.session, "list_events", result)
                    figures["check"].append(time.perf_counter() - started)
            return cold

        ours_cold = anyio.run(cold_and_warm)
        dav = caldav.DAVClient(url=server.url, username=USER[0], password=USER[1])
        calendar = dav.calendar(url=f"{server.url}bench/bench/")
        library_count = len(calendar.search(event=True, start=lo, end=hi, expand=True))
        library = []
        for _ in range(3):
            start = time.perf_counter()
            calendar.search(event=True, start=lo, end=hi, expand=True)
            library.append(time.perf_counter() - start)

        zones: dict[str, Listing] = {}
        for zone in ZONES:
            os.environ["TZ"] = zone
            time.tzset()

            async def in_zone() -> Listing:
                async with connect(build_server(ApprovalSettings(), mcp_settings(server)), revision="2026-07-28",
                                   check=False) as client:  # fmt: skip
                    return occurrences_of(await listing(client, lo, hi))

            zones[zone] = anyio.run(in_zone)
        os.environ["TZ"] = "UTC"
        time.tzset()
    shutil.rmtree(work, ignore_errors=True)

    by_uid = {(i.split("#")[0], s, e) for i, s, e in listed}
    right = len(by_uid & truth)
    same = all(zones[zone] == listed for zone in ZONES)
    raw_warm, first, again = (statistics.median(figures[k]) for k in ("raw", "first", "again"))
    print(
        f"list_events, {day(lo)} to {day(hi)}, {len(items):,} entries ({len(items) // 40} series), Radicale 127.0.0.1"
    )
    print(f"  occurrences: {len(listed)} listed, {right} of {len(truth)} right; caldav library {library_count}")
    print(f"  same occurrences under {', '.join(ZONES)}: {'yes' if same else 'NO'}")
    print(f"  raw REPORT answer: {size:,} bytes")
    lines = text.splitlines()
    per_occurrence = len("\n".join(lines[1:]).encode()) / len(listed)
    print(f"  text the model reads: {per_occurrence:.1f} bytes per occurrence (lines only); target <= {MAX_BYTES}")
    print("  | run | raw REPORT | list_events | ratio |")
    print("  |---|---|---|---|")
    print(f"  | cold (both servers just started; ours incl. discovery) | {raw_cold:.2f} s | {ours_cold:.2f} s "
          f"| {ours_cold / raw_cold:.2f} |")  # fmt: skip
    print(f"  | warm, first listing of a caldav-mcp (median of {RUNS}) | {raw_warm * 1000:.0f} ms | "
          f"{first * 1000:.0f} ms | {first / raw_warm:.2f} |")  # fmt: skip
    print(f"  | warm, listing repeated (median of {RUNS}) | {raw_warm * 1000:.0f} ms | {again * 1000:.0f} ms | "
          f"{again / raw_warm:.2f} |")  # fmt: skip
    print(f"  | warm, caldav library search(expand=True) (median of 3) | {raw_warm * 1000:.0f} ms | "
          f"{statistics.median(library) * 1000:.0f} ms | {statistics.median(library) / raw_warm:.2f} |")  # fmt: skip
    print(f"  not counted above: the Python SDK client's own outputSchema check (jsonschema) of that result, "
          f"{statistics.median(figures['check']) * 1000:.0f} ms (median of {RUNS})")  # fmt: skip
    met = first / raw_warm <= TARGET
    print(f"  target: list_events <= {TARGET}x the raw REPORT, warm, first listing: {'met' if met else 'MISSED'}")
    again_met = again / raw_warm <= AGAIN_TARGET
    print(f"  target: the unchanged month listed again <= {AGAIN_TARGET}x the raw REPORT: "
          f"{'met' if again_met else 'MISSED'}")  # fmt: skip
    shape = f"{day(lo)} to {day(hi)} of {len(items):,} entries"
    record("bench_list_events", f"first list_events, {shape}, warm, over the raw REPORT", f"{first / raw_warm:.2f}x",
           f"<= {TARGET}x", met)  # fmt: skip
    record("bench_list_events", f"the unchanged month listed again, {shape}, over the raw REPORT",
           f"{again / raw_warm:.2f}x", f"<= {AGAIN_TARGET}x", again_met)  # fmt: skip
    record("bench_list_events", "text the model reads per occurrence", f"{per_occurrence:.1f} bytes",
           f"<= {MAX_BYTES} bytes", per_occurrence <= MAX_BYTES)  # fmt: skip
    return same and right == len(truth) == len(listed), met and again_met and per_occurrence <= MAX_BYTES


# ------------------------------------------------------------------------------------------------ part 2


def reset_peak_rss() -> None:
    """Set this process's peak resident memory (VmHWM) to its current RSS (Linux 4.0+, proc(5) clear_refs)."""
    Path("/proc/self/clear_refs").write_text("5")


def rss_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def scale_point(count: int) -> dict[str, Any]:
    """One size, in this process: Radicale's first read, one raw REPORT warm, one first call, then every page."""
    items = dataset(count)
    work = scratch("caldav-bench-")
    seed(work / "collections", items)
    lo, hi = YEAR
    out: dict[str, Any] = {"entries": count}
    with radicale(work, dict([USER])) as server, httpx.Client(auth=USER, timeout=3000) as http:
        out["radicale_first_read"], _ = raw_report(http, server, lo, hi)
        out["raw_seconds"], out["raw_bytes"] = raw_report(http, server, lo, hi)

        async def single() -> float:
            async with connect(build_server(ApprovalSettings(), mcp_settings(server)), revision="2026-07-28",
                               check=False) as client:  # fmt: skip
                await client.call_tool("list_calendars", {})
                return await timed(lambda: listing(client, lo, hi, page=None))

        async def caller() -> dict[str, Any]:
            calls = 0
            got: Listing = []
            async with connect(build_server(ApprovalSettings(), mcp_settings(server)), revision="2026-07-28",
                               check=False) as client:  # fmt: skip
                await client.call_tool("list_calendars", {})
                before = rss_kib("VmRSS")
                reset_peak_rss()
                start = time.perf_counter()
                cursor: str | None = None
                while True:
                    calls += 1
                    data = await listing(client, lo, hi, cursor, page=None)
                    got.extend(occurrences_of(data))
                    cursor = data["next_cursor"]
                    if not cursor:
                        break
                seconds = time.perf_counter() - start
                peak = rss_kib("VmHWM")
            return {"calls": calls, "seconds": seconds, "rss_growth_kib": peak - before,
                    "occurrences": len(got), "distinct": len(set(got))}  # fmt: skip

        out |= anyio.run(caller)  # first, so that memory the other one freed does not hide the growth
        out["single_seconds"] = anyio.run(single)
    truth = expected(items, lo, hi)
    out["expected"] = len(truth)
    shutil.rmtree(work, ignore_errors=True)
    return out


def scale() -> tuple[bool, bool]:
    """The paged year at 2,000 and 20,000 entries, printed; returns (every occurrence right, every target met)."""
    rows = []
    for count in (2_000, 20_000):
        child = subprocess.run(  # noqa: S603 (this very file, run again for one size)
            [sys.executable, __file__, "--scale", str(count)],
            capture_output=True,
            text=True,
            check=False,
        )
        if child.returncode != 0:
            print(child.stdout, child.stderr[-4000:])
            return False, False
        rows.append(json.loads(child.stdout.strip().splitlines()[-1]))
    print(f"\nlist_events over {day(YEAR[0])} to {day(YEAR[1])} (366 days), page by page at the default page size")
    print("  | entries | occurrences (expected) | calls | all pages | first call alone | paged / first "
          "| raw REPORT (bytes) | paged / raw | peak RSS growth (MiB) | Radicale's first read |")  # fmt: skip
    print("  |---|---|---|---|---|---|---|---|---|---|")
    met = True
    for row in rows:
        over_single = row["seconds"] / row["single_seconds"]
        over_raw = row["seconds"] / row["raw_seconds"]
        met = met and over_single <= PAGED_OVER_SINGLE and over_raw <= PAGED_OVER_RAW
        record("bench_list_events", f"a whole year paged, {row['entries']:,} entries, over the first call alone / "
               "over the raw REPORT", f"{over_single:.2f}x / {over_raw:.1f}x",
               f"<= {PAGED_OVER_SINGLE}x / <= {PAGED_OVER_RAW}x",
               over_single <= PAGED_OVER_SINGLE and over_raw <= PAGED_OVER_RAW)  # fmt: skip
        print(f"  | {row['entries']:,} | {row['distinct']:,} ({row['expected']:,}) | {row['calls']} | "
              f"{row['seconds']:.2f} s | {row['single_seconds']:.2f} s | {over_single:.2f} | "
              f"{row['raw_seconds']:.2f} s ({row['raw_bytes']:,}) | {over_raw:.1f} | "
              f"{row['rss_growth_kib'] / 1024:.1f} | {row['radicale_first_read']:.1f} s |")  # fmt: skip
    small, big = rows
    grow = big["entries"] / small["entries"]
    print(f"  growth from {small['entries']:,} to {big['entries']:,} entries (x{grow:g}): time "
          f"x{big['seconds'] / small['seconds']:.1f}, peak RSS growth "
          f"x{big['rss_growth_kib'] / max(small['rss_growth_kib'], 1):.1f}, raw REPORT bytes "
          f"x{big['raw_bytes'] / small['raw_bytes']:.1f}")  # fmt: skip
    print(f"  targets: all pages <= {PAGED_OVER_SINGLE}x the first call alone and <= {PAGED_OVER_RAW}x the raw "
          f"REPORT: {'met' if met else 'MISSED'}")  # fmt: skip
    return all(row["distinct"] == row["expected"] == row["occurrences"] for row in rows), met


def main() -> None:
    if sys.argv[1:2] == ["--scale"]:
        print(json.dumps(scale_point(int(sys.argv[2]))))
        return
    os.environ["TZ"] = "UTC"
    time.tzset()
    items = dataset(2_000)
    template = scratch("caldav-bench-template-")
    seed(template, items)
    try:
        right, met = month(items, template)
    finally:
        shutil.rmtree(template, ignore_errors=True)
    year_right, year_met = scale()
    print("\nre-run: uv run nox -s bench -- bench_list_events")
    if not (right and year_right):
        raise SystemExit(1)
    if not (met and year_met):
        raise SystemExit(MISSED)


if __name__ == "__main__":
    main()
