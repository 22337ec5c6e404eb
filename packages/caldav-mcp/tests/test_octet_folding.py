"""Bytes before text: lines folded inside a UTF-8 sequence (RFC 5545 §3.1) are read; writes never split one."""

from __future__ import annotations

import re

import pytest

from approval_core.testing import connect
from caldav_helpers import ics, structured, vevent
from caldav_mcp import ical
from caldav_mcp.editing import new_calendar, new_entry, serialise
from refolding_proxy import fold_octets, refolding_proxy

pytestmark = pytest.mark.anyio

LONG = "Grüße aus München: Überstunden-Übergabe für Jürgen und Françoise und Zoë – 日本語の会議 ✓"
WINDOW = {"start": "2026-06-01", "end": "2026-07-01"}


def _split_inside_a_character(raw: bytes) -> bool:
    """Whether some fold in ``raw`` falls inside a multi-byte UTF-8 sequence."""
    return any(0x80 <= raw[m.end()] < 0xC0 for m in re.finditer(rb"\r\n ", raw) if m.end() < len(raw))


def test_the_double_really_folds_inside_characters() -> None:
    raw = fold_octets(ics(vevent("a@x", ":20260610T090000Z", ":20260610T100000Z", LONG)).encode())
    assert _split_inside_a_character(raw)
    with pytest.raises(UnicodeDecodeError):
        raw.decode("utf-8")
    assert f"SUMMARY:{LONG}" in ical.decode_object(raw)


def test_decode_object_refuses_bytes_that_are_not_utf_8() -> None:
    with pytest.raises(UnicodeDecodeError):
        ical.decode_object(b"BEGIN:VCALENDAR\r\nSUMMARY:Caf\xe9\r\n \xe9\r\nEND:VCALENDAR\r\n")


def _seed(account) -> None:
    account.put(account.work, "long.ics", ics(vevent("long@x", ":20260610T090000Z", ":20260610T100000Z", LONG)))
    account.put(account.work, "plain.ics", ics(vevent("plain@x", ":20260611T090000Z", ":20260611T100000Z", "Plain")))


async def test_entries_folded_inside_a_character_are_read_by_every_tool(account) -> None:
    _seed(account)
    with refolding_proxy(account.server.url) as proxy:
        settings = {"calendar": account.work}
        server = build(account, proxy.url)
        async with connect(server, revision="2026-07-28") as client:
            got = structured(await client.call_tool("get_event", {**settings, "id": "long@x"}))
            listed = structured(await client.call_tool("list_events", {**settings, **WINDOW}))
            searched = {"calendars": [account.work], **WINDOW}  # search_events takes a list of calendars
            found = structured(await client.call_tool("search_events", {**searched, "query": "München"}))
            ascii_found = structured(await client.call_tool("search_events", {**searched, "query": "Jürgen"}))
    assert got["summary"] == LONG
    assert {e["uid"]: e["summary"] for e in listed["events"]} == {"long@x": LONG, "plain@x": "Plain"}
    assert listed["unreadable"] == []
    assert [e["summary"] for e in found["events"]] == [LONG]
    assert [e["summary"] for e in ascii_found["events"]] == [LONG]


async def test_an_entry_that_cannot_be_decoded_is_named_and_the_rest_is_listed(account) -> None:
    _seed(account)
    with refolding_proxy(account.server.url) as proxy:
        proxy.corrupt.add(f"{account.work}long.ics")
        server = build(account, proxy.url)
        async with connect(server, revision="2026-07-28") as client:
            listed = structured(await client.call_tool("list_events", {"calendar": account.work, **WINDOW}))
            got = await client.call_tool("get_event", {"calendar": account.work, "id": "long@x"})
    assert [e["uid"] for e in listed["events"]] == ["plain@x"]
    (bad,) = listed["unreadable"]
    assert bad["href"] == f"{account.work}long.ics"
    assert "not UTF-8" in bad["reason"]
    assert f"{account.work}long.ics" in bad["reason"]
    assert got.is_error
    text = got.content[0].text
    assert f"{account.work}long.ics" in text
    assert "not UTF-8" in text
    assert "unexpected internal error" not in text


async def test_every_line_written_is_at_most_75_octets_and_never_splits_a_character(account) -> None:
    with refolding_proxy(account.server.url) as proxy:
        server = build(account, proxy.url)
        async with connect(server, revision="2026-07-28") as client:
            structured(
                await client.call_tool(
                    "create_event",
                    {
                        "calendar": account.work,
                        "summary": LONG * 2,
                        "description": ("ÄÖÜ€😀 " * 40).strip(),
                        "location": "日本語" * 30,
                        "start": "2026-06-10T09:00:00",
                        "end": "2026-06-10T10:00:00",
                        "tzid": "Europe/Berlin",
                    },
                )
            )
    (body,) = proxy.puts
    assert_folded_by_octets(body)


def assert_folded_by_octets(body: bytes) -> None:
    """Every line ≤ 75 octets (CRLF excluded) and each one valid UTF-8 on its own (RFC 5545 §3.1)."""
    lines = body.split(b"\r\n")
    assert lines[-1] == b""
    for line in lines[:-1]:
        assert len(line) <= 75, line
        line.decode("utf-8")  # raises if a fold split a character


def test_serialise_folds_by_octets_without_splitting_a_character() -> None:
    import icalendar

    cal = new_calendar()
    event = new_entry(icalendar.Event())
    for width in range(1, 90):
        event.add("X-TEXT", "é" * width + "✓" * width + "😀" * width)
    cal.add_component(event)
    assert_folded_by_octets(serialise(cal).encode("utf-8"))


def build(account, url: str):
    from approval_core import ApprovalSettings
    from caldav_mcp.server import build_server
    from caldav_mcp.settings import CalDAVSettings

    return build_server(ApprovalSettings(), CalDAVSettings(url, "willi", "secret"))
