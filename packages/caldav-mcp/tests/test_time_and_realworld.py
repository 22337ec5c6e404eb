"""Times under several host time zones, and events exported by common clients."""

from __future__ import annotations

import os
import time
from pathlib import Path

import icalendar
import pytest

from approval_core.testing import approval_of, connect
from caldav_helpers import ics, structured, vevent

pytestmark = pytest.mark.anyio

DATA = Path(__file__).with_name("data")
HOST_ZONES = ["UTC", "Pacific/Kiritimati", "America/Adak", "Asia/Kathmandu"]


@pytest.fixture(params=HOST_ZONES)
def host_zone(request, monkeypatch):
    monkeypatch.setenv("TZ", request.param)
    time.tzset()
    yield request.param
    monkeypatch.undo()
    time.tzset()


MIXED = (
    ics(
        vevent("allday@x", ";VALUE=DATE:20261205", ";VALUE=DATE:20261207", "Trip"),
        extra="",
    )
    + ""
)


async def test_times_never_depend_on_the_host_time_zone(account, host_zone) -> None:
    assert time.tzname[0] or os.environ["TZ"] == host_zone
    account.put(
        account.work, "allday.ics", ics(vevent("allday@x", ";VALUE=DATE:20261205", ";VALUE=DATE:20261207", "Trip"))
    )
    account.put(account.work, "float.ics", ics(vevent("float@x", ":20261205T080000", ":20261205T090000", "Breakfast")))
    account.put(
        account.work,
        "zoned.ics",
        ics(vevent("zoned@x", ";TZID=Asia/Tokyo:20261205T230000", ";TZID=Asia/Tokyo:20261206T003000", "Late call")),
    )
    account.put(account.work, "utc.ics", ics(vevent("utc@x", ":20261205T120000Z", ":20261205T130000Z", "Noon UTC")))
    async with connect(account.build(), revision="2026-07-28") as client:
        listed = structured(
            await client.call_tool(
                "list_events", {"calendar": account.work, "start": "2026-12-01", "end": "2026-12-31"}
            )
        )
        created = structured(
            await client.call_tool(
                "create_event", {"calendar": account.work, "summary": "Holiday", "start": "2026-12-24"}
            )
        )
        holiday = structured(await client.call_tool("get_event", {"calendar": account.work, "id": created["id"]}))
    by_uid = {e["uid"]: e for e in listed["events"]}
    assert {k: by_uid["allday@x"][k] for k in ("start", "end", "all_day", "floating")} == {
        "start": "2026-12-05",
        "end": "2026-12-07",
        "all_day": True,
        "floating": False,
    }
    assert {k: by_uid["float@x"][k] for k in ("start", "end", "floating", "tzid")} == {
        "start": "2026-12-05T08:00:00",
        "end": "2026-12-05T09:00:00",
        "floating": True,
        "tzid": None,
    }
    assert {k: by_uid["zoned@x"][k] for k in ("start", "end", "tzid")} == {
        "start": "2026-12-05T23:00:00+09:00",
        "end": "2026-12-06T00:30:00+09:00",
        "tzid": "Asia/Tokyo",
    }
    assert by_uid["utc@x"]["start"] == "2026-12-05T12:00:00+00:00"
    assert (holiday["start"], holiday["end"], holiday["all_day"]) == ("2026-12-24", "2026-12-25", True)


@pytest.mark.parametrize(
    ("name", "start", "tzid", "count"),
    [
        ("google.ics", "2026-12-07T09:30:00-05:00", "America/New_York", 4),
        ("outlook.ics", "2026-12-14T14:00:00+01:00", "W. Europe Standard Time", 1),
        ("apple.ics", "2026-12-24", None, 1),
        ("thunderbird.ics", "2026-12-08T08:00:00", None, 1),
    ],
)
async def test_exports_from_common_clients_parse(account, name, start, tzid, count) -> None:
    account.put(account.work, name, (DATA / name).read_text())
    async with connect(account.build(), revision="2026-07-28") as client:
        listed = structured(
            await client.call_tool(
                "list_events", {"calendar": account.work, "start": "2026-12-01", "end": "2027-01-01"}
            )
        )
    assert len(listed["events"]) == count
    first = listed["events"][0]
    assert first["start"] == start
    assert first["tzid"] == tzid


@pytest.mark.parametrize("name", ["google.ics", "outlook.ics", "apple.ics", "thunderbird.ics"])
async def test_an_edit_keeps_every_property_it_did_not_touch(account, name) -> None:
    account.put(account.work, name, (DATA / name).read_text())
    _, before = account.get(account.work, name)
    async with connect(account.build(), revision="2026-07-28") as client:
        listed = structured(
            await client.call_tool(
                "list_events", {"calendar": account.work, "start": "2026-12-01", "end": "2027-01-01"}
            )
        )
        event = listed["events"][0]
        args = {"calendar": account.work, "id": event["id"], "summary": "Renamed"}
        if event["recurring"]:
            args.update(id=event["uid"], scope="series")
        result = await client.call_tool("update_event", {**args, "confirm_token": None})
        if result.is_error:  # the series edit asks; this client has no dialog, so use the token
            token = approval_of(result)["confirm_token"]
            result = await client.call_tool("update_event", {**args, "confirm_token": token})
        structured(result)
    _, after = account.get(account.work, name)

    changed = {"SUMMARY", "SEQUENCE", "DTSTAMP", "LAST-MODIFIED"}
    assert properties(before, changed) == properties(after, changed)
    # The new text keeps the property's parameters (Outlook's LANGUAGE=en-US).
    assert [str(c["SUMMARY"]) for c in icalendar.Calendar.from_ical(after).walk("VEVENT")][:1] == ["Renamed"]


def properties(text: str, skip: set[str]) -> dict[tuple[str, str], list[tuple[str, bytes]]]:
    """Every component's properties (name, value as the library writes it), the skipped ones left out.

    Compares what the server stores before and after a write, value by value, so that a property the
    write did not touch must come back with the same value and parameters.
    """
    found: dict[tuple[str, str], list[tuple[str, bytes]]] = {}
    for component in icalendar.Calendar.from_ical(text).walk():
        key = (component.name, str(component.get("UID") or component.get("TZID") or component.get("TRIGGER")))
        items = []
        for name, value in component.property_items(recursive=False):
            if name in skip or name in {"BEGIN", "END"}:
                continue
            params = sorted(getattr(value, "params", {}).items())
            items.append((name, value.to_ical() if hasattr(value, "to_ical") else str(value).encode(), params))
        found[key] = sorted(items, key=repr)
    return found
