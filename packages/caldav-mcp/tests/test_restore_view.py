"""restore_entry's stored view: the entry as the undo journal kept it, for the approval page only."""

from __future__ import annotations

from caldav_mcp import stored
from caldav_mcp.dav import CalendarInfo

CAL = CalendarInfo(path="/cal/work/", name="Work", components=("VEVENT", "VTODO"))
KEPT = (
    b"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//t//EN\r\nBEGIN:VEVENT\r\nUID:u1\r\n"
    b"DTSTAMP:20261201T090000Z\r\nDTSTART:20261201T090000Z\r\nDTEND:20261201T100000Z\r\n"
    b"SUMMARY:Board meeting\r\nRRULE:FREQ=WEEKLY;COUNT=4\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
)


def test_the_kept_entry_is_shown_with_its_title_and_no_etag() -> None:
    view = stored.restore_view(CAL, "/cal/work/u1.ics", KEPT, "delete_event")
    assert view is not None
    (entry,) = view.entries
    assert entry.kind == "Recurring event (the whole series), as kept before delete_event"
    assert entry.etag is None  # the kept version is not on the server: nothing for the approval to bind
    assert entry.href == "/cal/work/u1.ics"
    assert [f.value for f in entry.fields if f.label == "Title"] == ["Board meeting"]
    assert view.etags() == frozenset()


def test_bytes_that_are_no_calendar_entry_give_no_view() -> None:
    assert stored.restore_view(CAL, "/cal/work/u1.ics", b"not ical", "delete_event") is None
