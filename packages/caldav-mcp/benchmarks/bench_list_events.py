"""list_events for one month on a calendar of 2,000 events with 50 recurring series.

Compares, in one process against one real Radicale on 127.0.0.1:

* caldav-mcp's ``list_events`` through the SDK's in-process MCP client;
* the caldav library doing the same query with expansion (``search(expand=True)``);
* Radicale's raw REPORT answer (calendar-query with a time-range, no expansion),
  fetched with httpx — the floor any client pays.

Reports time per call (median of 5), the ratios, the bytes per listed
occurrence in the text content the model reads, and checks that every
occurrence comes out the same under four host time zones.
Targets: no slower than the caldav library; at most 150 bytes per occurrence.
"""

from __future__ import annotations

import datetime as dt
import os
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

import anyio
import caldav
import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "testing"))
from dav_servers import radicale

from approval_core import ApprovalSettings
from approval_core.testing import connect
from caldav_mcp.server import build_server
from caldav_mcp.settings import CalDAVSettings

MONTH = ("2026-12-01", "2027-01-01")
ZONES = ["UTC", "Pacific/Kiritimati", "America/Adak", "Asia/Kathmandu"]
TZIDS = ["Europe/Berlin", "America/New_York", "Asia/Tokyo", "UTC"]


def event(uid: str, start: dt.datetime, minutes: int, summary: str, tzid: str, extra: str = "") -> str:
    stamp = "%Y%m%dT%H%M%S"
    end = start + dt.timedelta(minutes=minutes)
    when = (
        f"DTSTART:{start.strftime(stamp)}Z\r\nDTEND:{end.strftime(stamp)}Z"
        if tzid == "UTC"
        else f"DTSTART;TZID={tzid}:{start.strftime(stamp)}\r\nDTEND;TZID={tzid}:{end.strftime(stamp)}"
    )
    return (
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//bench//EN\r\nBEGIN:VEVENT\r\n"
        f"UID:{uid}\r\nDTSTAMP:20261101T000000Z\r\n{when}\r\nSUMMARY:{summary}\r\n{extra}END:VEVENT\r\nEND:VCALENDAR\r\n"
    )


def dataset() -> list[tuple[str, str]]:
    """1,950 single events over three years and 50 series (10 daily, 40 weekly): ~540 occurrences in December."""
    items = []
    base = dt.datetime(2025, 12, 1, 8, 0)
    for i in range(1950):
        start = base + dt.timedelta(hours=13 * i + (i % 7))
        items.append(
            (
                f"{uuid.UUID(int=i)}",
                event(str(uuid.UUID(int=i)), start, 30 + 15 * (i % 4), f"Meeting {i}", TZIDS[i % 4]),
            )
        )
    for j in range(50):
        uid = str(uuid.UUID(int=10_000 + j))
        rule = "RRULE:FREQ=DAILY\r\n" if j < 10 else "RRULE:FREQ=WEEKLY\r\n"
        start = dt.datetime(2026, 1, 5, 7 + j % 10, 0)
        items.append((uid, event(uid, start, 30, f"Series {j}", TZIDS[j % 4], rule)))
    return items


def median_seconds(fn, runs: int = 5) -> float:
    fn()
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


async def amedian_seconds(fn, runs: int = 5) -> float:
    await fn()
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        await fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def main() -> None:
    with radicale(Path(tempfile.mkdtemp()), {"bench": "bench"}) as server:
        dav = caldav.DAVClient(url=server.url, username="bench", password="bench")
        calendar = dav.principal().make_calendar(name="Bench", cal_id="bench")
        path = "/bench/bench/"
        with httpx.Client(auth=("bench", "bench")) as http:
            for uid, text in dataset():
                http.put(
                    f"{server.url}bench/bench/{uid}.ics", content=text, headers={"Content-Type": "text/calendar"}
                ).raise_for_status()
        lo = dt.datetime(2026, 12, 1, tzinfo=dt.UTC)
        hi = dt.datetime(2027, 1, 1, tzinfo=dt.UTC)

        report = (
            '<?xml version="1.0" encoding="utf-8"?><C:calendar-query xmlns:D="DAV:" '
            'xmlns:C="urn:ietf:params:xml:ns:caldav"><D:prop><D:getetag/><C:calendar-data/></D:prop><C:filter>'
            '<C:comp-filter name="VCALENDAR"><C:comp-filter name="VEVENT"><C:time-range start="20261201T000000Z" '
            'end="20270101T000000Z"/></C:comp-filter></C:comp-filter></C:filter></C:calendar-query>'
        )
        with httpx.Client(auth=("bench", "bench")) as http:
            raw = median_seconds(
                lambda: http.request(
                    "REPORT", f"{server.url}bench/bench/", content=report, headers={"Depth": "1"}
                ).raise_for_status()
            )
        library_count = len(calendar.search(event=True, start=lo, end=hi, expand=True))
        library = median_seconds(lambda: calendar.search(event=True, start=lo, end=hi, expand=True))

        mcp_server = build_server(ApprovalSettings(), CalDAVSettings(server.url, "bench", "bench"))
        results: dict[str, tuple[list[tuple[str, str | None, str | None]], str]] = {}

        async def run() -> float:
            async with connect(mcp_server, revision="2026-07-28") as client:
                args = {"calendar": path, "start": MONTH[0], "end": MONTH[1], "limit": 1000}

                async def once() -> None:
                    result = await client.call_tool("list_events", args)
                    assert not result.is_error, result.content[0].text
                    zone = os.environ.get("TZ", "UTC")
                    events = result.structured_content["events"]
                    results[zone] = ([(e["id"], e["start"], e["end"]) for e in events], result.content[0].text)

                return await amedian_seconds(once)

        ours = 0.0
        for zone in ZONES:
            os.environ["TZ"] = zone
            time.tzset()
            seconds = anyio.run(run)
            if zone == "UTC":
                ours = seconds
        os.environ["TZ"] = "UTC"
        time.tzset()

    listed, text = results["UTC"]
    same = all(results[zone][0] == listed for zone in ZONES)
    lines = text.splitlines()
    per_occurrence = len("\n".join(lines[1:]).encode()) / len(listed)
    whole = len(text.encode()) / len(listed)
    print("list_events, one month, 2,000 events incl. 50 series, Radicale on 127.0.0.1 (median of 5)")
    print(f"  occurrences listed           {len(listed)} (caldav library: {library_count})")
    print(f"  caldav-mcp list_events       {ours * 1000:8.1f} ms")
    print(f"  caldav library search+expand {library * 1000:8.1f} ms   ratio ours/library {ours / library:.2f}")
    print(f"  Radicale raw REPORT          {raw * 1000:8.1f} ms   ratio ours/raw     {ours / raw:.2f}")
    print(f"  text bytes per occurrence    {per_occurrence:.1f} (lines only), {whole:.1f} (with header); target <= 150")
    print(f"  same occurrences under {', '.join(ZONES)}: {'yes' if same else 'NO'}")
    if not same or per_occurrence > 150:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
