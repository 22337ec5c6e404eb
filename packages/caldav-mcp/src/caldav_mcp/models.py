"""Output models: every tool's ``outputSchema`` and ``structuredContent``.

Text fields read from a calendar (summary, description, location, names) are
calendar data returned to the model as data; they are never put in an
approval dialog.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from webdav_core.reports import DiscoveryOut as SharedDiscoveryOut

__all__ = [
    "Alarm",
    "Attachment",
    "Attendee",
    "BusyInterval",
    "CalendarOut",
    "Calendars",
    "Deleted",
    "EventDetail",
    "EventList",
    "FreeBusy",
    "JournalDetail",
    "JournalList",
    "Moved",
    "Occurrence",
    "Responded",
    "ServerInfo",
    "TaskDetail",
    "TaskList",
    "Unreadable",
    "Written",
]

_UNREADABLE = (
    "Entries stored (by another client) in a form this server will not expand or parse, each with its id and "
    "why; the rest of the answer is complete without them."
)


class Unreadable(BaseModel):
    """A stored entry left out of an answer, and why (an invalid RRULE, or over an expansion bound)."""

    id: str = Field(description="The entry's UID, or its path on the server when it has no readable UID.")
    href: str = Field(description="Its path on the server.")
    reason: str


class CalendarOut(BaseModel):
    """One calendar: ``id`` is the collection path every other tool takes."""

    id: str
    name: str = Field(description="Display name, as stored on the server (calendar data).")
    components: list[str] = Field(description="Component types it accepts: VEVENT, VTODO, VJOURNAL.")


class Calendars(BaseModel):
    """The calendars this server may use."""

    calendars: list[CalendarOut]


class DiscoveryOut(SharedDiscoveryOut):
    """How the calendars were found from CALDAV_URL (RFC 6764 §6, RFC 5397, RFC 4791 §6.2.1)."""

    home_sets: list[str] = Field(description="The calendar-home-set paths whose calendars are listed.")


class ServerInfo(BaseModel):
    """What this server knows about its backend and its approval settings."""

    configured: bool
    missing_settings: list[str]
    server: str | None = Field(default=None, description="scheme://host[:port] of CALDAV_URL (no credentials).")
    scheduling: bool | None = Field(
        default=None, description="RFC 6638 calendar-auto-schedule: replies are sent by the server."
    )
    calendars: int | None = None
    discovery: DiscoveryOut | None = Field(default=None, description="How the calendars were found (when reachable).")
    reachable: bool | None = Field(default=None, description="Whether the server answered (null: not configured).")
    error: str | None = Field(default=None, description="Why it could not be used, when reachable is false.")
    approval_dialog: bool = Field(
        description="False when started with ELICITATION=false: guarded calls take the two-call token. True: they "
        "ask through a dialog wherever the client can show one (a client that cannot still gets the token)."
    )


class Occurrence(BaseModel):
    """One event, or one occurrence of a recurring event.

    ``start``/``end`` are ISO 8601: with an offset for zoned and UTC times, without
    one for floating times, plain dates (exclusive end) for all-day events.
    """

    id: str = Field(description="UID, plus '#' and the RECURRENCE-ID for an occurrence of a series.")
    uid: str
    recurrence_id: str | None = None
    summary: str | None = None
    start: str | None
    end: str | None
    all_day: bool
    tzid: str | None = None
    floating: bool = False
    recurring: bool = False
    status: str | None = Field(
        default=None,
        description="This occurrence's STATUS (RFC 5545 §3.8.1.11): TENTATIVE, CONFIRMED or CANCELLED; null when "
        "the entry sets none. A cancelled occurrence is still listed unless include_cancelled is false.",
    )


class EventList(BaseModel):
    """Occurrences in a window, in start order."""

    calendar: str
    start: str
    end: str
    events: list[Occurrence]
    truncated: bool = Field(description="True when more occurrences follow; pass next_cursor to continue.")
    next_cursor: str | None = None
    unreadable: list[Unreadable] = Field(default=[], description=_UNREADABLE)
    reread: str | None = Field(
        default=None,
        description="Set when a cursor's listing was read again from the server, saying why; when the calendar "
        "changed, this page starts again from the first occurrence of the window.",
    )


class Attendee(BaseModel):
    """An ATTENDEE (RFC 5545 §3.8.4.1)."""

    address: str
    name: str | None = None
    partstat: str | None = None
    role: str | None = None


class Alarm(BaseModel):
    """A VALARM (RFC 5545 §3.6.6) of an event or task."""

    action: str | None = Field(description="ACTION: DISPLAY, AUDIO, EMAIL or another value.")
    trigger: str | None = Field(description="The TRIGGER as stored: a duration (-PT15M) or a UTC date-time.")
    related: str | None = Field(
        default=None, description="For a duration: START or END (for a task END is its due time); null when absolute."
    )
    at: str | None = Field(default=None, description="For an absolute trigger: the instant, ISO 8601.")
    minutes_before: int | None = Field(
        default=None, description="For a trigger at or before its start/end in whole minutes: how many."
    )


class EventDetail(BaseModel):
    """An event as stored: the series (or single event) or one occurrence."""

    calendar: str
    id: str
    uid: str
    recurrence_id: str | None = None
    etag: str | None = None
    summary: str | None = None
    description: str | None = None
    location: str | None = None
    status: str | None = None
    transparent: bool = False
    categories: list[str] = []
    organizer: str | None = None
    attendees: list[Attendee] = []
    start: str | None
    end: str | None
    all_day: bool
    tzid: str | None = None
    floating: bool = False
    recurring: bool = False
    rrule: str | None = None
    occurrences: int | None = Field(
        default=None, description="Occurrences of the series in all; null if it never ends."
    )
    changed_occurrences: int = 0
    alarms: list[Alarm] = Field(default=[], description="Its VALARMs (the occurrence's own, for an occurrence).")
    unreadable: str | None = Field(
        default=None,
        description="Set when the series' recurrence cannot be expanded (an invalid stored RRULE, a stored time "
        "that does not parse, or over a bound): why. Its occurrences are then not counted or listed, and a time "
        "that does not parse is given as null.",
    )


class Written(BaseModel):
    """A created or changed entry."""

    calendar: str
    uid: str
    id: str
    etag: str | None = None
    action: Literal["created", "updated", "completed", "reopened"]
    note: str | None = Field(
        default=None, description="Set when the server's answer to the write was lost and the result was read back."
    )
    occurrence: str | None = Field(
        default=None,
        description="For a repeating task done or reopened one occurrence at a time: that occurrence's RECURRENCE-ID.",
    )
    next_occurrence: str | None = Field(
        default=None, description="Its next occurrence not yet done (RECURRENCE-ID); null when none is left."
    )
    next_due: str | None = Field(default=None, description="When that next occurrence is due.")
    split_from: str | None = Field(
        default=None,
        description="For update_event with scope following: the UID of the series that now ends before this new "
        "one (the new series names it in RELATED-TO).",
    )
    attendees_told: bool | None = Field(
        default=None,
        description="For an event with attendees that this account organises: true when the server does RFC 6638 "
        "scheduling and sends them the invitation, change or cancellation itself; false when it does not (the "
        "attendees are only written, nobody was told). Null when the event has no attendees.",
    )
    scheduling: str | None = Field(
        default=None, description="What the server does with the attendees, in words (see attendees_told)."
    )


class Deleted(BaseModel):
    """What a delete removed."""

    calendar: str
    uid: str
    scope: Literal["entry", "series", "occurrence", "following"]
    recurrence_id: str | None = None
    already_gone: bool = Field(
        default=False,
        description="True when the server answered 404: someone else had deleted it meanwhile, as asked.",
    )
    note: str | None = Field(
        default=None, description="Set when the server's answer to the write was lost and the result was read back."
    )
    cancellations: int | None = Field(
        default=None,
        description="On a server with RFC 6638 scheduling, for an event this account organises: how many attendees "
        "the server sends a cancellation (iTIP CANCEL). Null when nobody is told.",
    )


class Moved(BaseModel):
    """Where a moved event now lives."""

    uid: str
    source: str
    destination: str
    note: str | None = Field(
        default=None, description="Set when the server's answer to the write was lost and the result was read back."
    )


class Responded(BaseModel):
    """A participation status set on an invitation."""

    calendar: str
    uid: str
    partstat: str
    reply_sent_by_server: bool = Field(description="True on a scheduling server: the organiser was sent a REPLY.")
    note: str | None = Field(
        default=None, description="Set when the server's answer to the write was lost and the result was read back."
    )


class BusyInterval(BaseModel):
    """A busy (or free) interval, ISO 8601 instants."""

    start: str
    end: str


class FreeBusy(BaseModel):
    """Merged busy intervals and the free slots between them."""

    start: str
    end: str
    calendars: list[str]
    source: Literal["server", "events"]
    busy: list[BusyInterval]
    free: list[BusyInterval]
    unreadable: list[Unreadable] = Field(default=[], description=_UNREADABLE + " Their time is not counted as busy.")


class TaskDetail(BaseModel):
    """A VTODO (RFC 5545 §3.6.2)."""

    calendar: str
    uid: str
    summary: str | None = None
    description: str | None = None
    status: str | None = None
    priority: int | None = None
    percent_complete: int | None = None
    start: str | None = None
    due: str | None = None
    completed: str | None = None
    parent: str | None = Field(
        default=None, description="UID of the parent task (RELATED-TO with RELTYPE=PARENT, or with no RELTYPE)."
    )
    children: list[str] = Field(
        default=[],
        description="UIDs of its subtasks: tasks in the calendar naming it as parent, and its own "
        "RELATED-TO;RELTYPE=CHILD.",
    )
    etag: str | None = None
    recurring: bool = Field(default=False, description="True for a repeating task (RRULE or RDATE).")
    rrule: str | None = None
    current_occurrence: str | None = Field(
        default=None,
        description="For a repeating task: the RECURRENCE-ID of its first occurrence not yet done (the one "
        "complete_task completes); null when every occurrence is done.",
    )
    next_due: str | None = Field(
        default=None, description="For a repeating task: when that occurrence is due (its start if it has no due)."
    )
    completed_occurrences: int = Field(
        default=0, description="For a repeating task: occurrences marked done (or cancelled) one at a time."
    )
    alarms: list[Alarm] = Field(default=[], description="Its VALARMs.")


class TaskList(BaseModel):
    """Tasks in a calendar, undated ones included, due first."""

    calendar: str
    tasks: list[TaskDetail]
    truncated: bool
    next_cursor: str | None = None
    unreadable: list[Unreadable] = Field(default=[], description=_UNREADABLE)


class Attachment(BaseModel):
    """An ATTACH (RFC 5545 §3.8.1.1): a URI, or inline binary content (its size only)."""

    uri: str | None = Field(default=None, description="The attachment's URI; null for inline binary content.")
    fmttype: str | None = Field(default=None, description="Its FMTTYPE parameter (a media type), if given.")
    inline_bytes: int | None = Field(
        default=None, description="Size in bytes of inline (VALUE=BINARY) content, which is not returned."
    )


class JournalDetail(BaseModel):
    """A VJOURNAL (RFC 5545 §3.6.3), with every property the RFC allows it that carries meaning for a reader."""

    calendar: str
    uid: str
    summary: str | None = None
    description: str | None = Field(default=None, description="The first DESCRIPTION (see descriptions).")
    descriptions: list[str] = Field(
        default=[], description="Every DESCRIPTION, in order (a VJOURNAL may have several, RFC 5545 §3.6.3)."
    )
    date: str | None = None
    all_day: bool = True
    status: str | None = Field(default=None, description="STATUS: DRAFT, FINAL or CANCELLED (RFC 5545 §3.8.1.11).")
    classification: str | None = Field(default=None, description="CLASS: PUBLIC, PRIVATE, CONFIDENTIAL or other.")
    url: str | None = None
    categories: list[str] = []
    attachments: list[Attachment] = []
    comments: list[str] = []
    contacts: list[str] = []
    related_to: list[str] = Field(default=[], description="UIDs in RELATED-TO, any RELTYPE.")
    organizer: str | None = None
    attendees: list[str] = []
    rrule: str | None = None
    sequence: int | None = None
    created: str | None = None
    last_modified: str | None = None
    etag: str | None = None


class JournalList(BaseModel):
    """Journal entries in a calendar, newest first."""

    calendar: str
    journals: list[JournalDetail]
    truncated: bool
    next_cursor: str | None = None
    unreadable: list[Unreadable] = Field(default=[], description=_UNREADABLE)
