"""An unchanged month listed again by caldav-mcp, against one raw calendar-query REPORT of it, on each DAV server.

Issue 24 §2 asks for the figure "on the other DAV servers": a calendar of
EVENTS events spread over 2027 (one hour each, UTC), stored by PUTs straight
into the server; then for March 2027 (about 25 events):

- ``kept``: ``list_events`` through caldav-mcp (in process, MCP 2026-07-28)
  with the month's listing already kept: one version request (a PROPFIND of
  depth 0 for ``CS:getctag``, else ``DAV:sync-token``), nothing read again;
- ``version``: that PROPFIND alone, by plain httpx;
- ``report``: one calendar-query REPORT of the month (RFC 4791 §7.8, with
  ``calendar-data``) by plain httpx, what a client without the cache sends
  before it even parses and expands anything;
- ``first``: the first ``list_events`` of the month (REPORT, parse, expand).

Medians of ROUNDS calls, in milliseconds. Servers are started as the
integration suite starts them (``testing/dav_servers.py``, Debian packages
installed when missing). Not a test: figures vary with the machine.

    python benchmarks/bench_kept_month.py [radicale xandikos davical cyrus sogo]
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2 as httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "testing"))

import dav_servers
from other_client import OtherClient, event

from approval_core import ApprovalSettings
from approval_core.testing import connect
from caldav_mcp.server import build_server
from caldav_mcp.settings import CalDAVSettings

EVENTS = 300
ROUNDS = 20
MONTH = ("2027-03-01", "2027-04-01")
SERVERS = ["radicale", "xandikos", "davical", "cyrus", "sogo"]
REPORT = (
    '<?xml version="1.0" encoding="utf-8"?><c:calendar-query xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav">'
    '<d:prop><d:getetag/><c:calendar-data/></d:prop><c:filter><c:comp-filter name="VCALENDAR">'
    '<c:comp-filter name="VEVENT"><c:time-range start="20270301T000000Z" end="20270401T000000Z"/>'
    "</c:comp-filter></c:comp-filter></c:filter></c:calendar-query>"
)


@contextlib.contextmanager
def server(kind: str, workdir: Path) -> Iterator[tuple[str, str, dict[str, str]]]:
    """(root URL, calendar path, extra headers) of a fresh server of ``kind``."""
    users = {"willi": "secret"}
    if kind == "radicale":
        with dav_servers.radicale(workdir, users) as running:
            made = httpx.request("MKCALENDAR", f"{running.url}willi/bench/", auth=("willi", "secret"))
            assert made.status_code == 201, made.text
            yield running.url, "/willi/bench/", {}
    elif kind == "xandikos":
        with dav_servers.xandikos(workdir) as running:
            headers = running.headers_for("willi")
            httpx.request("PROPFIND", f"{running.url}willi/", headers={**headers, "Depth": "0"})
            yield running.url, "/willi/calendars/calendar/", headers
    elif kind == "davical":
        with dav_servers.davical(workdir, users) as running:
            yield running.url, "/davical/caldav.php/willi/calendar/", {}
    elif kind == "cyrus":
        with dav_servers.cyrus(workdir, users) as running:
            yield running.url, "/dav/calendars/user/willi/Default/", {}
    else:
        with dav_servers.sogo(workdir, users) as running:
            yield running.url, "/SOGo/dav/willi/Calendar/personal/", {}


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


async def measure(kind: str) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp, server(kind, Path(tmp)) as (url, cal, headers):
        auth = None if headers else ("willi", "secret")
        with OtherClient(url, auth, headers) as other:
            start = dt.datetime(2027, 1, 1, 10, tzinfo=dt.UTC)
            for i in range(EVENTS):
                day = start + dt.timedelta(days=i * 365 // EVENTS, hours=i % 3)
                stamp = day.strftime("%Y%m%dT%H%M%SZ")
                ends = (day + dt.timedelta(hours=1)).strftime("%Y%m%dT%H%M%SZ")
                other.create(f"{cal}e{i}.ics", event(f"e{i}", f"Event {i}", stamp, ends), "text/calendar")
            kinds = other.version_kinds(cal)
            await asyncio.sleep(1.5)  # SOGo's version names the second of the last change: let that second pass
            settings = CalDAVSettings(url, "willi", "secret")
            window = {"calendar": cal, "start": MONTH[0], "end": MONTH[1]}
            async with connect(
                build_server(ApprovalSettings(), settings, headers=headers), revision="2026-07-28", check=False
            ) as c:
                t0 = time.perf_counter()
                first = await c.call_tool("list_events", window)
                first_s = time.perf_counter() - t0
                assert not first.is_error, first.content
                count = len(first.structured_content["events"])
                kept: list[float] = []
                for _ in range(ROUNDS):
                    t0 = time.perf_counter()
                    again = await c.call_tool("list_events", window)
                    kept.append(time.perf_counter() - t0)
                    assert again.structured_content["events"] == first.structured_content["events"]
            version: list[float] = []
            report: list[float] = []
            for _ in range(ROUNDS):
                t0 = time.perf_counter()
                other.version_kinds(cal)
                version.append(time.perf_counter() - t0)
                t0 = time.perf_counter()
                answer = other.http.request(
                    "REPORT", cal, content=REPORT, headers={"Depth": "1", "Content-Type": "application/xml"}
                )
                report.append(time.perf_counter() - t0)
                assert answer.status_code == 207, answer.text
    return {
        "server": kind,
        "offers": "+".join(kinds) or "none",
        "events": count,
        "kept": median_ms(kept),
        "version": median_ms(version),
        "report": median_ms(report),
        "first": first_s * 1000,
    }


def main() -> None:
    rows = [asyncio.run(measure(kind)) for kind in (sys.argv[1:] or SERVERS)]
    print("| server | offers | events in March | list_events again (kept) | version PROPFIND | REPORT | first list |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['server']} | {r['offers']} | {r['events']} | {r['kept']:.1f} ms | {r['version']:.1f} ms "
            f"| {r['report']:.1f} ms | {r['first']:.0f} ms |"
        )


if __name__ == "__main__":
    main()
