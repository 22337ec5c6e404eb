"""The WebDAV layer's trust rules (webdav_core.testing.TrustSuite) through caldav-mcp's own client.

Also what only CalDAV asks of the layer: the one REPORT that answers with
iCalendar (free-busy-query, RFC 4791 §7.10), against an in-memory HTTP double
(httpx MockTransport): neither Radicale nor Xandikos can be made to mislabel
every other REPORT.
"""

from __future__ import annotations

import datetime as dt

import httpx2 as httpx
import pytest

from caldav_mcp.errors import BackendError
from caldav_mcp.settings import CalDAVSettings
from caldav_mcp.wire import CalDAVWire, calendar_query
from webdav_core.testing import MakeClient, TrustSuite


def _wire(url: str, transport: httpx.AsyncBaseTransport | None = None, *, timeout: float = 5.0,
          max_bytes: int = 1_000_000) -> CalDAVWire:  # fmt: skip
    settings = CalDAVSettings(url, "willi", "secret", timeout=timeout, max_response_bytes=max_bytes)
    return CalDAVWire(settings, {}, transport)


class TestCalDav(TrustSuite):
    @pytest.fixture
    def make(self) -> MakeClient:
        return _wire


VFREEBUSY = b"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VFREEBUSY\r\nEND:VFREEBUSY\r\nEND:VCALENDAR\r\n"


@pytest.mark.parametrize("kind", ["text/calendar", "application/octet-stream"])
@pytest.mark.anyio
async def test_only_the_free_busy_report_may_answer_with_icalendar(kind: str) -> None:
    """RFC 4791 §7.10: free-busy-query answers 200 with iCalendar; every other REPORT must be a multistatus."""

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=VFREEBUSY, headers={"Content-Type": kind})

    wire = _wire("https://dav.example.org/dav/", httpx.MockTransport(handler))
    start = dt.datetime(2026, 12, 1, tzinfo=dt.UTC)
    assert await wire.freebusy("/dav/willi/cal/", start, start + dt.timedelta(days=1)) == VFREEBUSY.decode()
    with pytest.raises(BackendError, match="not a WebDAV XML answer"):
        await wire.report("/dav/willi/cal/", calendar_query("VEVENT", "", with_data=True), "REPORT /dav/willi/cal/")
    await wire.aclose()
