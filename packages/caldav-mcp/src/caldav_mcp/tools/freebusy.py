"""get_free_busy: merged busy time across calendars, and the free slots between."""

from __future__ import annotations

import datetime as dt
from typing import Annotated, Any, Literal

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult
from pydantic import Field

from approval_core import structured
from approval_core.serving.stored_text import quoted_name, unmarked
from caldav_mcp.client import Resource
from caldav_mcp.errors import BackendError, InvalidInput
from caldav_mcp.ical import Unreadable, calendar_of, occurrences, zone
from caldav_mcp.models import BusyInterval, FreeBusy
from caldav_mcp.models import Unreadable as UnreadableOut
from caldav_mcp.own_zones import from_ical
from caldav_mcp.tools.common import READ, App, window
from caldav_mcp.views import unreadable_entry

__all__ = ["free_slots", "merge", "register"]

Interval = tuple[dt.datetime, dt.datetime]
MAX_FREEBUSY_DAYS = 92


def merge(intervals: list[Interval]) -> list[Interval]:
    """Sort and merge overlapping or touching intervals."""
    merged: list[Interval] = []
    for start, end in sorted(intervals):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def free_slots(
    busy: list[Interval],
    lo: dt.datetime,
    hi: dt.datetime,
    minimum: dt.timedelta,
    hours: tuple[dt.time, dt.time] | None,
    tz: dt.tzinfo,
) -> list[Interval]:
    """Gaps of at least ``minimum`` between busy intervals, inside working ``hours`` (in ``tz``) if given."""
    spans: list[Interval] = []
    if hours is None:
        spans = [(lo, hi)]
    else:
        day = lo.astimezone(tz).date()
        while dt.datetime.combine(day, dt.time(), tzinfo=tz) < hi:
            begin = max(lo, dt.datetime.combine(day, hours[0], tzinfo=tz))
            finish = min(hi, dt.datetime.combine(day, hours[1], tzinfo=tz))
            if finish > begin:
                spans.append((begin, finish))
            day += dt.timedelta(days=1)
    free: list[Interval] = []
    for begin, finish in spans:
        cursor = begin
        for b_start, b_end in busy:
            if b_end <= cursor or b_start >= finish:
                continue
            if b_start - cursor >= minimum:
                free.append((cursor, b_start))
            cursor = max(cursor, b_end)
        if finish - cursor >= minimum:
            free.append((cursor, finish))
    return free


def _instant(value: dt.date | dt.datetime, tz: dt.tzinfo) -> dt.datetime:
    if isinstance(value, dt.datetime):
        return value if value.tzinfo is not None else value.replace(tzinfo=tz)
    return dt.datetime.combine(value, dt.time(), tzinfo=tz)


def busy_from_events(
    resources: list[Resource],
    lo: dt.datetime,
    hi: dt.datetime,
    tz: dt.tzinfo,
    unreadable: list[UnreadableOut],
) -> list[Interval]:
    """Busy intervals of every opaque, not cancelled occurrence (floating and all-day read in ``tz``).

    An entry that cannot be parsed or expanded within the bounds of
    :func:`caldav_mcp.ical.occurrences` is added to ``unreadable`` instead.
    """
    found: list[Interval] = []
    for resource in resources:
        occurrence: Any
        try:
            expanded = occurrences(calendar_of(resource), "VEVENT", lo, hi)
        except (Unreadable, BackendError) as exc:
            reason = exc.reason if isinstance(exc, Unreadable) else unmarked(str(exc))
            unreadable.append(unreadable_entry(resource.href, resource.data, reason))
            continue
        for occurrence in expanded:
            if str(occurrence.get("TRANSP", "OPAQUE")).upper() == "TRANSPARENT":
                continue
            if str(occurrence.get("STATUS", "")).upper() == "CANCELLED":
                continue
            start = _instant(occurrence["DTSTART"].dt, tz)
            end_prop = occurrence.get("DTEND")
            end = _instant(end_prop.dt, tz) if end_prop is not None else start
            if end_prop is None and "DURATION" in occurrence:
                end = start + occurrence["DURATION"].dt
            elif end_prop is None and not isinstance(occurrence["DTSTART"].dt, dt.datetime):
                end = start + dt.timedelta(days=1)
            found.append((max(start, lo), min(end, hi)))
    return [(s, e) for s, e in found if e > s]


def busy_from_report(text: str) -> list[Interval]:
    """BUSY periods of a VFREEBUSY (RFC 5545 §3.6.4); FREE periods are ignored."""
    found: list[Interval] = []
    for component in from_ical(text).walk("VFREEBUSY"):
        raw = component.get("FREEBUSY")
        for prop in raw if isinstance(raw, list) else [raw] if raw is not None else []:  # pyright: ignore[reportUnknownVariableType]
            if str(prop.params.get("FBTYPE", "BUSY")).upper() == "FREE":  # pyright: ignore[reportUnknownMemberType]
                continue
            for period in prop.dts if hasattr(prop, "dts") else [prop]:  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
                start, end = period.dt  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
                if isinstance(end, dt.timedelta):
                    end = start + end  # pyright: ignore[reportUnknownVariableType]
                found.append((start, end))  # pyright: ignore[reportUnknownArgumentType]
    return found


def register(server: MCPServer[Any], app: App) -> None:
    """Add get_free_busy to ``server``."""

    @server.tool(annotations=READ)
    async def get_free_busy(
        start: Annotated[str, Field(description="Window start, ISO 8601.")],
        end: Annotated[str, Field(description="Window end, at most 92 days after start.")],
        calendars: Annotated[
            list[str] | None, Field(description="Calendar ids; default: every event calendar.")
        ] = None,
        min_duration_minutes: Annotated[int, Field(description="Shortest free slot to report.", ge=1, le=1440)] = 30,
        working_hours: Annotated[
            str | None, Field(description="Only look for free slots between these times each day, e.g. 09:00-17:00.")
        ] = None,
        tzid: Annotated[str, Field(description="IANA zone for working hours, all-day and floating entries.")] = "UTC",
        method: Annotated[
            Literal["auto", "server", "events"],
            Field(
                description="auto and events: computed from the events (expanded here); server: the server's "
                "free-busy REPORT (RFC 4791 §7.10), an error where it fails."
            ),
        ] = "auto",
    ) -> Annotated[CallToolResult, FreeBusy]:
        """Busy intervals merged across calendars (transparent and cancelled entries ignored) and free slots."""
        lo, hi = window(start, end, max_days=MAX_FREEBUSY_DAYS)
        tz = zone(tzid, "tzid")
        hours = _hours(working_hours)
        chosen = (
            list({(cal := await app.client.calendar(c, field="calendars")).path: cal for c in calendars}.values())
            if calendars
            else [c for c in await app.client.calendars() if "VEVENT" in c.components]
        )
        busy: list[Interval] = []
        unreadable: list[UnreadableOut] = []
        # auto computes from the events, expanded here (bounded) with the TZID's zone. A server's own REPORT may
        # work from the VTIMEZONE it stored: Radicale 3.9 keeps only the first date of each RDATE list there, so
        # its REPORT puts 10:00 Europe/Berlin in summer 2026 at 09:00Z, an hour late.
        source: Literal["server", "events"] = "server" if method == "server" else "events"
        if method == "server":
            reports = [await app.client.freebusy(cal, lo, hi) for cal in chosen]
            if any(r is None for r in reports):
                raise InvalidInput("method: the server's free-busy REPORT did not work; use 'auto' or 'events'")
            busy = [iv for r in reports for iv in busy_from_report(r or "")]
        else:
            for cal in chosen:
                resources = await app.client.query(cal, "VEVENT", start=lo, end=hi)
                busy.extend(busy_from_events(resources, lo, hi, tz, unreadable))
        merged = merge([(max(s, lo), min(e, hi)) for s, e in busy if e > lo and s < hi])
        free = free_slots(merged, lo, hi, dt.timedelta(minutes=min_duration_minutes), hours, tz)
        return structured(
            FreeBusy(
                start=lo.isoformat(),
                end=hi.isoformat(),
                calendars=[c.path for c in chosen],
                source=source,
                busy=[BusyInterval(start=s.isoformat(), end=e.isoformat()) for s, e in merged],
                free=[
                    BusyInterval(start=s.astimezone(tz).isoformat(), end=e.astimezone(tz).isoformat()) for s, e in free
                ],
                unreadable=unreadable,
            )
        )


def _hours(text: str | None) -> tuple[dt.time, dt.time] | None:
    if text is None:
        return None
    try:
        first, second = (dt.time.fromisoformat(part.strip()) for part in text.split("-"))
    except ValueError:
        raise InvalidInput(f"working_hours: {quoted_name(text)} is not HH:MM-HH:MM (e.g. 09:00-17:00)") from None
    if second <= first:
        raise InvalidInput("working_hours: the end must be after the start")
    return first, second
