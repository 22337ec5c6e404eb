"""Alarms: VALARM components (RFC 5545 §3.6.6) written from the caller's reminders and read back.

A reminder is given as minutes before, an ISO 8601 duration before
(``PT15M``, ``P1D``; RFC 5545 §3.3.6), or an absolute time (a date-time with
an offset). It is written as a DISPLAY alarm: ``ACTION:DISPLAY``, a TRIGGER
and the DESCRIPTION that RFC 5545 requires of a display alarm (this server's
own word, ``Reminder``). A relative trigger is before the event's start; for
a task it is before its due time (``RELATED=END``, §3.2.14), or before its
start when it has no due time.

Alarms not given are never touched: a write that changes other fields keeps
every VALARM as it was stored. Giving ``alarms`` replaces all of the
component's alarms with the ones given (an empty list removes them).
"""

from __future__ import annotations

import datetime as dt
import re
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from approval_core.serving.stored_text import quoted_name
from caldav_mcp.errors import InvalidInput
from caldav_mcp.models import Alarm

if TYPE_CHECKING:  # imported where a call needs it: listing the tools does not (startup time)
    import icalendar

__all__ = ["MAX_ALARMS", "AlarmIn", "alarms_of", "set_alarms"]

MAX_ALARMS = 20
"""The most alarms one call may write on one component."""

_DURATION = re.compile(r"^P(?!$)(\d+W|(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+S)?)?)$")
"""A positive ISO 8601 / RFC 5545 §3.3.6 duration: weeks alone, or days and a time part."""

_MAX_BEFORE = dt.timedelta(days=366)


class AlarmIn(BaseModel):
    """One reminder: exactly one of minutes_before, before and at."""

    minutes_before: int | None = Field(
        default=None, ge=0, le=527_040, description="Minutes before the start (a task: before its due time)."
    )
    before: str | None = Field(
        default=None,
        max_length=40,
        description="An ISO 8601 duration before the start (a task: its due time), e.g. PT15M, PT1H30M, P1D, P1W.",
    )
    at: str | None = Field(
        default=None, max_length=40, description="An absolute time, ISO 8601 with offset, e.g. 2026-12-01T08:00:00Z."
    )


def _trigger(alarm: AlarmIn, field: str) -> dt.timedelta | dt.datetime:
    given = [name for name in ("minutes_before", "before", "at") if getattr(alarm, name) is not None]
    if len(given) != 1:
        raise InvalidInput(f"{field}: give exactly one of minutes_before, before, at")
    if alarm.minutes_before is not None:
        return -dt.timedelta(minutes=alarm.minutes_before)
    if alarm.before is not None:
        text = alarm.before.strip().upper()
        if not _DURATION.match(text):
            raise InvalidInput(
                f"{field}.before: {quoted_name(alarm.before)} is not an ISO 8601 duration (RFC 5545 "
                "§3.3.6), e.g. PT15M or P1D"
            )
        import icalendar

        value: dt.timedelta = icalendar.vDuration.from_ical(text)
        if value > _MAX_BEFORE:
            raise InvalidInput(f"{field}.before: at most 366 days before")
        return -value
    assert alarm.at is not None
    try:
        when = dt.datetime.fromisoformat(alarm.at.strip())
    except ValueError:
        raise InvalidInput(f"{field}.at: {quoted_name(alarm.at)} is not an ISO 8601 date-time") from None
    if when.tzinfo is None:
        raise InvalidInput(f"{field}.at: give an offset (e.g. Z or +01:00); an absolute alarm is in UTC")
    return when.astimezone(dt.UTC)


def set_alarms(component: icalendar.Component, alarms: list[AlarmIn], field: str = "alarms") -> None:
    """Replace every VALARM of ``component`` with DISPLAY alarms for ``alarms`` (an empty list removes them).

    Raises:
        InvalidInput: an alarm gives not exactly one kind of time, a duration or time that does not parse, more
            than MAX_ALARMS, or a relative alarm on a task with neither due time nor start.
    """
    import icalendar

    if len(alarms) > MAX_ALARMS:
        raise InvalidInput(f"{field}: at most {MAX_ALARMS} alarms")
    made: list[icalendar.Alarm] = []
    for index, alarm in enumerate(alarms):
        trigger = _trigger(alarm, f"{field}[{index}]")
        valarm = icalendar.Alarm()
        valarm.add("ACTION", "DISPLAY")
        valarm.add("DESCRIPTION", "Reminder")
        if isinstance(trigger, dt.datetime):
            valarm.add("TRIGGER", trigger, parameters={"VALUE": "DATE-TIME"})
        elif component.name == "VTODO" and "DUE" in component:
            valarm.add("TRIGGER", trigger, parameters={"RELATED": "END"})
        elif component.name == "VTODO" and "DTSTART" not in component:
            raise InvalidInput(f"{field}[{index}]: this task has no due time or start to be reminded before; use at")
        else:
            valarm.add("TRIGGER", trigger)
        made.append(valarm)
    component.subcomponents = [sub for sub in component.subcomponents if sub.name != "VALARM"] + made


def _text(value: Any) -> str:
    return str(value) if value is not None else ""


def alarms_of(component: icalendar.Component) -> list[Alarm]:
    """The component's own VALARMs as :class:`caldav_mcp.models.Alarm` (ACTION, TRIGGER as written, RELATED)."""
    found: list[Alarm] = []
    for sub in component.subcomponents:
        if sub.name != "VALARM":
            continue
        trigger: Any = sub.get("TRIGGER")
        params: Any = getattr(trigger, "params", {})
        written = trigger.to_ical().decode() if trigger is not None and hasattr(trigger, "to_ical") else None
        value: Any = getattr(trigger, "dt", None)
        absolute = isinstance(value, dt.datetime)
        found.append(
            Alarm(
                action=_text(sub.get("ACTION")).upper() or None,
                trigger=written,
                related=None if absolute else str(params.get("RELATED", "START")).upper(),
                at=value.isoformat() if absolute else None,
                minutes_before=int(-value.total_seconds() // 60)
                if isinstance(value, dt.timedelta) and value <= dt.timedelta(0) and not value.seconds % 60
                else None,
            )
        )
    return found
