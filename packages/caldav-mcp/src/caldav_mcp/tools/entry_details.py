"""Tasks (VTODO, RFC 5545 §3.6.2) and journal entries (VJOURNAL, §3.6.3) as the tools return them."""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any

from caldav_mcp.alarms import alarms_of
from caldav_mcp.ical import times_of
from caldav_mcp.models import Attachment, JournalDetail, TaskDetail
from caldav_mcp.views import categories, text_of

if TYPE_CHECKING:  # imported where a call needs it: listing the tools does not (startup time)
    import icalendar

__all__ = ["all_values", "attachment", "journal_detail", "related", "stamp", "task_detail"]


def all_values(component: icalendar.Component, name: str) -> list[Any]:
    """Every value of a property that may occur more than once."""
    raw: Any = component.get(name)
    return raw if isinstance(raw, list) else [raw] if raw is not None else []  # pyright: ignore[reportUnknownVariableType]


def related(component: icalendar.Component, reltype: str) -> list[str]:
    """RELATED-TO values of one RELTYPE (PARENT is the default, RFC 5545 §3.2.15)."""
    return [
        str(rel)
        for rel in all_values(component, "RELATED-TO")
        if str(getattr(rel, "params", {}).get("RELTYPE", "PARENT")).upper() == reltype
    ]


def task_detail(calendar: str, component: icalendar.Component, etag: str | None, children: list[str]) -> TaskDetail:
    """A VTODO as ``TaskDetail``: its times, status, parents and children (RFC 5545 §3.6.2, §3.8.4.5)."""
    times = times_of(component, "DTSTART", "DUE")
    parents = related(component, "PARENT")
    parent = parents[-1] if parents else None
    children = sorted(set(children) | set(related(component, "CHILD")))
    completed = component.get("COMPLETED")
    return TaskDetail(
        calendar=calendar,
        uid=str(component.get("UID")),
        summary=text_of(component, "SUMMARY"),
        description=text_of(component, "DESCRIPTION"),
        status=text_of(component, "STATUS") or "NEEDS-ACTION",
        priority=int(str(component["PRIORITY"])) if "PRIORITY" in component else None,
        percent_complete=int(str(component["PERCENT-COMPLETE"])) if "PERCENT-COMPLETE" in component else None,
        start=times.start if "DTSTART" in component else None,
        due=times.end if "DUE" in component else None,
        completed=completed.dt.isoformat() if completed is not None else None,
        parent=parent,
        children=children,
        etag=etag,
        alarms=alarms_of(component),
    )


def attachment(value: Any) -> Attachment:
    """An ATTACH value (RFC 5545 §3.8.1.1) as ``Attachment``: a URI, or the size and type of inline data."""
    params: Any = getattr(value, "params", {})
    fmttype = params.get("FMTTYPE")
    if str(params.get("VALUE", "")).upper() == "BINARY" or str(params.get("ENCODING", "")).upper() == "BASE64":
        raw = getattr(value, "bytes", None)
        size = len(raw) if isinstance(raw, bytes) else len(base64.b64decode(str(value), validate=False))
        return Attachment(fmttype=fmttype, inline_bytes=size)
    return Attachment(uri=str(value), fmttype=fmttype)


def stamp(component: icalendar.Component, name: str) -> str | None:
    """A CREATED or LAST-MODIFIED value (RFC 5545 §3.8.7) as ISO 8601 text, or None when absent."""
    value: Any = component.get(name)
    return value.dt.isoformat() if value is not None else None


def journal_detail(calendar: str, component: icalendar.Component, etag: str | None) -> JournalDetail:
    """A VJOURNAL as ``JournalDetail`` (RFC 5545 §3.6.3): its descriptions, attachments and people."""
    times = times_of(component, "DTSTART", "DTEND")
    descriptions = [str(d) for d in all_values(component, "DESCRIPTION")]
    rrule: Any = component.get("RRULE")
    return JournalDetail(
        calendar=calendar,
        uid=str(component.get("UID")),
        summary=text_of(component, "SUMMARY"),
        description=descriptions[0] if descriptions else None,
        descriptions=descriptions,
        date=times.start,
        all_day=times.all_day,
        status=text_of(component, "STATUS"),
        classification=text_of(component, "CLASS"),
        url=text_of(component, "URL"),
        categories=categories(component),
        attachments=[attachment(a) for a in all_values(component, "ATTACH")],
        comments=[str(c) for c in all_values(component, "COMMENT")],
        contacts=[str(c) for c in all_values(component, "CONTACT")],
        related_to=[str(r) for r in all_values(component, "RELATED-TO")],
        organizer=text_of(component, "ORGANIZER"),
        attendees=[str(a) for a in all_values(component, "ATTENDEE")],
        rrule=rrule.to_ical().decode() if rrule is not None and hasattr(rrule, "to_ical") else None,
        sequence=int(str(component["SEQUENCE"])) if "SEQUENCE" in component else None,
        created=stamp(component, "CREATED"),
        last_modified=stamp(component, "LAST-MODIFIED"),
        etag=etag,
    )
