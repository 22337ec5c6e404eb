"""Round trips through the tools against the real Radicale, over generated entries (hypothesis).

Each example is an event as real exports write it: folded non-ASCII text with
escapes, parameters (LANGUAGE, ALTREP, X- parameters), X- properties,
CATEGORIES, times in one of several zones, in UTC, floating or all-day, and
optionally a series with an EXDATE and a changed occurrence. It is stored by
plain PUT, read back through get_event and list_events (every value returned
must equal what was stored), then written back through update_event, either
unchanged or with one field changed: every property the change does not name
must read back from the server exactly as before.

Profiles: ``default`` (15 examples, derandomized, for every run) and
``thorough`` (150 examples), chosen by ``HYPOTHESIS_PROFILE``.
"""

from __future__ import annotations

import datetime as dt
import itertools
import os
from dataclasses import dataclass, field
from zoneinfo import ZoneInfo

import icalendar
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from approval_core.testing import approval_of, connect
from caldav_helpers import structured

pytestmark = pytest.mark.anyio

settings.register_profile(
    "default",
    max_examples=15,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    database=None,
)
settings.register_profile("thorough", parent=settings.get_profile("default"), max_examples=150, derandomize=False)
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "default")

ZONES = ["Europe/Berlin", "America/New_York", "Asia/Kolkata", "Australia/Lord_Howe", "Pacific/Chatham"]
ALPHABET = list("aAzZ 09-.'!?éüßøÅçñ日本語✓€😀,;:\\\"/")
_uids = itertools.count()


def escape(text: str) -> str:
    """RFC 5545 §3.3.11 TEXT escaping."""
    return text.replace("\\", "\\\\").replace(";", "\\;").replace(",", "\\,").replace("\n", "\\n")


def fold(line: str) -> str:
    """Fold after 75 octets, never inside a character (RFC 5545 §3.1)."""
    out, current = [], ""
    for char in line:
        limit = 75 if not out else 74
        if len((current + char).encode()) > limit:
            out.append(current)
            current = char
        else:
            current += char
    out.append(current)
    return "\r\n ".join(out)


texts = st.text(alphabet=ALPHABET, min_size=1, max_size=100).map(str.strip).filter(bool)
words = st.text(alphabet=list("abcxyzéü日"), min_size=1, max_size=8)


@dataclass
class Spec:
    """One generated event: what is stored, and what the tools must return."""

    uid: str
    kind: str  # zoned, utc, floating, all-day
    zone: str | None
    start: dt.date | dt.datetime
    length: dt.timedelta
    summary: str
    description: str | None
    location: str | None
    categories: list[str]
    x_props: list[tuple[str, str, str]]
    language: str | None
    count: int | None = None
    exdate: int | None = None
    override: int | None = None
    override_summary: str = ""
    lines: list[str] = field(default_factory=lambda: [])

    def stamp(self, value: dt.date | dt.datetime, name: str) -> str:
        if self.kind == "all-day":
            return f"{name};VALUE=DATE:{value:%Y%m%d}"
        if self.kind == "zoned":
            return f"{name};TZID={self.zone}:{value:%Y%m%dT%H%M%S}"
        if self.kind == "utc":
            return f"{name}:{value:%Y%m%dT%H%M%S}Z"
        return f"{name}:{value:%Y%m%dT%H%M%S}"

    def iso(self, value: dt.date | dt.datetime) -> str:
        if self.kind == "all-day":
            return value.isoformat()
        assert isinstance(value, dt.datetime)
        if self.kind == "zoned":
            return value.replace(tzinfo=ZoneInfo(str(self.zone))).isoformat()
        if self.kind == "utc":
            return value.replace(tzinfo=dt.UTC).isoformat()
        return value.isoformat()

    def occurrence(self, n: int) -> dt.date | dt.datetime:
        return self.start + dt.timedelta(days=n)

    def text(self) -> str:
        body = [
            "BEGIN:VEVENT",
            f"UID:{self.uid}",
            "DTSTAMP:20260101T000000Z",
            self.stamp(self.start, "DTSTART"),
            self.stamp(self.start + self.length, "DTEND"),
            f"SUMMARY{f';LANGUAGE={self.language}' if self.language else ''}:{escape(self.summary)}",
        ]
        if self.description is not None:
            body.append(f"DESCRIPTION:{escape(self.description)}")
        if self.location is not None:
            body.append(f'LOCATION;ALTREP="https://example.org/rooms/1":{escape(self.location)}')
        if self.categories:
            body.append("CATEGORIES:" + ",".join(escape(c) for c in self.categories))
        body.extend(f"{name};X-PARAM={param}:{escape(value)}" for name, param, value in self.x_props)
        if self.count:
            body.append(f"RRULE:FREQ=DAILY;COUNT={self.count}")
            if self.exdate is not None:
                body.append(self.stamp(self.occurrence(self.exdate), "EXDATE"))
        body.append("END:VEVENT")
        if self.override is not None:
            moved = self.occurrence(self.override)
            shift = dt.timedelta(hours=1) if self.kind != "all-day" else dt.timedelta(0)
            body += [
                "BEGIN:VEVENT",
                f"UID:{self.uid}",
                "DTSTAMP:20260101T000000Z",
                self.stamp(moved, "RECURRENCE-ID"),
                self.stamp(moved + shift, "DTSTART"),
                self.stamp(moved + shift + self.length, "DTEND"),
                f"SUMMARY:{escape(self.override_summary)}",
                "END:VEVENT",
            ]
        lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//Example Corp//Export 1.0//EN", *body, "END:VCALENDAR"]
        return "".join(fold(line) + "\r\n" for line in lines)


@st.composite
def specs(draw: st.DrawFn) -> Spec:
    kind = draw(st.sampled_from(["zoned", "zoned", "utc", "floating", "all-day"]))
    day = dt.date(2026, 6, 1) + dt.timedelta(days=draw(st.integers(0, 200)))
    if kind == "all-day":
        start: dt.date | dt.datetime = day
        length = dt.timedelta(days=draw(st.integers(1, 3)))
    else:
        start = dt.datetime.combine(day, dt.time(draw(st.integers(0, 22)), draw(st.sampled_from([0, 15, 30, 45]))))
        length = dt.timedelta(minutes=draw(st.sampled_from([30, 60, 90, 120])))
    spec = Spec(
        uid=f"gen-{next(_uids)}-{draw(st.sampled_from(['x', 'ü', '@example.org']))}",
        kind=kind,
        zone=draw(st.sampled_from(ZONES)) if kind == "zoned" else None,
        start=start,
        length=length,
        summary=draw(texts),
        description=draw(st.none() | texts),
        location=draw(st.none() | texts),
        categories=draw(st.lists(words, max_size=3, unique=True)),
        x_props=draw(
            st.lists(
                st.tuples(
                    st.sampled_from(["X-MOZ-LASTACK", "X-APPLE-TRAVEL-ADVISORY", "X-EXAMPLE-NOTE"]),
                    st.sampled_from(["a", "b-c", '"quoted; value"']),
                    texts,
                ),
                max_size=2,
                unique_by=lambda t: t[0],
            )
        ),
        language=draw(st.none() | st.sampled_from(["de", "fr-CA"])),
    )
    if draw(st.booleans()):
        spec.count = draw(st.integers(3, 6))
        spec.exdate = draw(st.none() | st.integers(1, spec.count - 1))
        others = [n for n in range(1, spec.count) if n != spec.exdate]
        spec.override = draw(st.none() | st.sampled_from(others))
        spec.override_summary = draw(texts)
    return spec


CHANGES = st.sampled_from([None, "summary", "description", "location", "end"])
SKIP = {"SEQUENCE", "DTSTAMP", "LAST-MODIFIED"}


def vevents(text: str) -> dict[str, list[tuple[str, bytes, list[tuple[str, str]]]]]:
    """Each VEVENT's properties (value as icalendar writes it, with parameters), by RECURRENCE-ID."""
    found = {}
    for component in icalendar.Calendar.from_ical(text).walk("VEVENT"):
        rid = component.get("RECURRENCE-ID")
        items = []
        for name, value in component.property_items(recursive=False):
            if name in {"BEGIN", "END"}:
                continue
            params = sorted((k, str(v)) for k, v in getattr(value, "params", {}).items())
            items.append((name, value.to_ical() if hasattr(value, "to_ical") else str(value).encode(), params))
        found[rid.to_ical().decode() if rid is not None else ""] = sorted(items, key=repr)
    return found


def without(props: dict, skip: set[str]) -> dict:
    return {key: [p for p in items if p[0] not in skip] for key, items in props.items()}


@settings(settings.get_profile(PROFILE))
@given(spec=specs(), change=CHANGES)
async def test_an_entry_reads_back_as_stored_and_an_edit_touches_only_its_field(account, spec, change) -> None:
    name = f"{spec.uid.split('@')[0]}.ics".replace("ü", "u")
    account.put(account.work, name, spec.text())
    _, before = account.get(account.work, name)
    async with connect(account.build(), revision="2026-07-28") as client:
        got = structured(await client.call_tool("get_event", {"calendar": account.work, "id": spec.uid}))
        lo = (
            spec.start
            if isinstance(spec.start, dt.date) and not isinstance(spec.start, dt.datetime)
            else spec.start.date()
        )
        window = {"start": (lo - dt.timedelta(days=2)).isoformat(), "end": (lo + dt.timedelta(days=12)).isoformat()}
        listed = structured(await client.call_tool("list_events", {"calendar": account.work, **window}))
        args, expect = edit(spec, change)
        result = await client.call_tool("update_event", {"calendar": account.work, "id": spec.uid, **args})
        if result.is_error and spec.count:
            token = approval_of(result)["confirm_token"]
            result = await client.call_tool(
                "update_event", {"calendar": account.work, "id": spec.uid, **args, "confirm_token": token}
            )
        structured(result)
        after_read = structured(await client.call_tool("get_event", {"calendar": account.work, "id": spec.uid}))
    _, after = account.get(account.work, name)

    # What the tools return equals what was stored.
    assert got["summary"] == spec.summary
    assert got["description"] == spec.description
    assert got["location"] == spec.location
    assert got["categories"] == spec.categories
    assert got["start"] == spec.iso(spec.start)
    assert got["end"] == spec.iso(spec.start + spec.length)
    assert got["all_day"] is (spec.kind == "all-day")
    assert got["floating"] is (spec.kind == "floating")
    assert got["tzid"] == {"zoned": spec.zone, "utc": "UTC"}.get(spec.kind)
    mine = sorted((e for e in listed["events"] if e["uid"] == spec.uid), key=lambda e: e["id"])
    if spec.count:
        assert got["occurrences"] == spec.count - (spec.exdate is not None)
        assert got["changed_occurrences"] == (spec.override is not None)
        shift = dt.timedelta(hours=1) if spec.kind != "all-day" else dt.timedelta(0)
        expected = []
        for n in range(spec.count):
            if n == spec.exdate:
                continue
            begin = spec.occurrence(n) + (shift if n == spec.override else dt.timedelta(0))
            summary = spec.override_summary if n == spec.override else spec.summary
            expected.append((summary, spec.iso(begin), spec.iso(begin + spec.length)))
        assert sorted((e["summary"], e["start"], e["end"]) for e in mine) == sorted(expected)
    else:
        assert [(e["summary"], e["start"], e["end"]) for e in mine] == [
            (spec.summary, spec.iso(spec.start), spec.iso(spec.start + spec.length))
        ]

    # A write touches only what it names.
    touched = SKIP | expect.keys() | ({"DTEND", "DURATION"} if change == "end" else set())
    assert without(vevents(before), touched) == without(vevents(after), touched)
    for key, value in expect.items():
        assert after_read[key.lower()] == value


def edit(spec: Spec, change: str | None) -> tuple[dict, dict]:
    """update_event arguments for ``change`` (None: the same summary again), and the stored values expected."""
    scope = {"scope": "series", "confirm_token": None} if spec.count else {}
    if change is None:
        return {"summary": spec.summary, **scope}, {}
    if change == "end":
        if spec.count:
            return {"summary": spec.summary, **scope}, {}
        end = spec.start + spec.length + dt.timedelta(minutes=30 if spec.kind != "all-day" else 24 * 60)
        if spec.kind == "zoned":  # an instant in UTC: written back in the event's own zone
            given = end.replace(tzinfo=ZoneInfo(str(spec.zone))).astimezone(dt.UTC).isoformat()
        elif spec.kind == "utc":
            given = end.replace(tzinfo=dt.UTC).isoformat()
        else:
            given = end.isoformat()
        return {"end": given, **scope}, {"END": spec.iso(end)}
    value = "Geändert – ✓ " + change
    return {change: value, **scope}, {change.upper(): value}
