"""The arguments the event and task tools share: ids, scopes, text, times, zones, alarms, tokens."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from caldav_mcp.alarms import AlarmIn

__all__ = ["AlarmsArg", "DeleteScopeArg", "IdArg", "ScopeArg", "TextArg", "TimeArg", "TokenArg", "TzidArg"]

IdArg = Annotated[str, Field(description="Event id from list_events: a UID, or UID#RECURRENCE-ID.", min_length=1)]
ScopeArg = Annotated[
    Literal["occurrence", "following", "series"] | None,
    Field(
        description="For a recurring event: 'occurrence' (the one in the id), 'following' (that occurrence and "
        "every later one, split off as a new series) or 'series' (all of them). Required then."
    ),
]
DeleteScopeArg = Annotated[
    Literal["occurrence", "following", "series"] | None,
    Field(
        description="For a recurring event: 'occurrence' (the one in the id), 'following' (that occurrence and "
        "every later one: the series ends before it) or 'series' (all of them). Required then."
    ),
]
TokenArg = Annotated[
    str | None, Field(description="Only where a dialog cannot be shown: the token from the first call.")
]
TextArg = Annotated[
    str | None, Field(description="New value; an empty string removes it; omit to keep.", max_length=20_000)
]
TimeArg = Annotated[
    str | None, Field(description="ISO 8601: a date (all-day) or a date-time with offset or with tzid.")
]
TzidArg = Annotated[str | None, Field(description="IANA zone for date-times given without offset, e.g. Europe/Berlin.")]
AlarmsArg = Annotated[
    list[AlarmIn] | None,
    Field(
        description="Reminders, each DISPLAY (VALARM, RFC 5545 §3.6.6): minutes_before, before (an ISO 8601 "
        "duration) or at (an absolute time). On an update they replace the entry's alarms ([] removes them); "
        "omit to keep the stored ones exactly as they are.",
        max_length=20,
    ),
]
