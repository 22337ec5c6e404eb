"""A collection's version naming the second of its last change (SOGo 5.8) is not trusted within that second."""

from __future__ import annotations

from email.utils import formatdate

import httpx2 as httpx
import pytest

from webdav_core import WebDavClient
from webdav_core.testing import BARE_PROFILE
from webdav_core.versions import NEAR_SECONDS, is_unsettled, settled_modified

pytestmark = pytest.mark.anyio

PROFILE = BARE_PROFILE

NOW = 1_796_188_651
"""2026-12-02 05:17:31 UTC, as SOGo's getctag gave it on a calendar written in that second."""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.parametrize(
    ("value", "date", "unsettled"),
    [
        (str(NOW), formatdate(NOW, usegmt=True), True),  # the server's clock is still in that second
        (str(NOW), formatdate(NOW + 1, usegmt=True), False),  # a change now would give another value
        (str(NOW + 5), formatdate(NOW, usegmt=True), True),  # ahead of the server's clock: not yet settled
        (str(NOW + NEAR_SECONDS + 1), formatdate(NOW, usegmt=True), False),  # not a time: a counter
        ("42", formatdate(NOW, usegmt=True), False),
        ('"3f2a-17"', formatdate(NOW, usegmt=True), False),  # an opaque CTag
        ("http://example.org/ns/sync/17", None, False),
        (str(NOW), None, True),  # no Date: the local clock stands in
        (str(NOW), "not a date", True),
    ],
)
def test_a_version_reading_as_the_servers_time_is_settled_once_its_clock_left_that_second(
    value: str, date: str | None, unsettled: bool
) -> None:
    assert is_unsettled(value, date, now=NOW) is unsettled


def _client(ctag: str, date: int) -> WebDavClient:
    def answer(request: httpx.Request) -> httpx.Response:
        body = (
            '<?xml version="1.0"?><d:multistatus xmlns:d="DAV:" xmlns:cs="http://calendarserver.org/ns/">'
            f"<d:response><d:href>/u/cal/</d:href><d:propstat><d:prop><cs:getctag>{ctag}</cs:getctag></d:prop>"
            "<d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response></d:multistatus>"
        )
        headers = {"Content-Type": "application/xml", "Date": formatdate(date, usegmt=True)}
        return httpx.Response(207, content=body.encode(), headers=headers)

    transport = httpx.MockTransport(answer)
    return WebDavClient("https://dav.example.org/", PROFILE, timeout=5.0, max_bytes=100_000, transport=transport)


async def test_a_version_in_its_own_second_never_equals_another() -> None:
    client = _client(str(NOW), NOW)
    first, second = await client.versions.of("/u/cal/"), await client.versions.of("/u/cal/")
    assert first != second
    assert first is not None
    assert first.startswith(f"getctag:{NOW}~")


async def test_a_version_from_an_earlier_second_is_compared_as_it_is() -> None:
    client = _client(str(NOW), NOW + 1)
    assert await client.versions.of("/u/cal/") == await client.versions.of("/u/cal/") == f"getctag:{NOW}"


@pytest.mark.parametrize(
    ("value", "date", "settled"),
    [
        (formatdate(NOW - 2, usegmt=True), formatdate(NOW, usegmt=True), True),  # the clock left the next second
        (formatdate(NOW - 1, usegmt=True), formatdate(NOW, usegmt=True), False),  # read just before dating: shared
        (formatdate(NOW, usegmt=True), formatdate(NOW, usegmt=True), False),  # another change may share it
        (formatdate(NOW + 5, usegmt=True), formatdate(NOW, usegmt=True), False),  # ahead of the clock
        ("Wed, 02 Dec 2026 05:17:29 +0000", formatdate(NOW, usegmt=True), True),  # SOGo's form of the date
        ("yesterday", formatdate(NOW, usegmt=True), False),
        (formatdate(NOW - 1, usegmt=True), None, False),  # no clock to compare with
        (None, formatdate(NOW, usegmt=True), False),
    ],
)
def test_a_last_change_is_noted_once_the_servers_clock_left_the_second_after_it(
    value: str | None, date: str | None, settled: bool
) -> None:
    assert settled_modified(value, date) == (value if settled else None)
