"""What a write whose answer was lost did: read back and say "changed", "not changed" or "not known".

A write (PUT, DELETE, MOVE) can fail in two ways that differ in what they
tell: the server answered no (a status, refused credentials), or no usable
answer came back (the connection was refused, broke, or timed out). Only the
second needs a read-back. After a refused connection, or a connection the
server closed without answering, an entry found unchanged was not changed.
After a timeout the server may still be working on the request, so an entry
found unchanged is "not known", never "not changed" (a rule Radicale took
~50 s to store landed long after the create had timed out).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import httpx2 as httpx

from caldav_mcp.errors import BackendError, BadCredentials, NotAllowed
from caldav_mcp.own_zones import from_ical

if TYPE_CHECKING:  # icalendar is imported where a call needs it: listing the tools does not (startup time)
    import icalendar

__all__ = ["Loss", "fingerprint", "loss_of", "unsettled"]

Loss = Literal["not sent", "timed out", "no answer"]
"""How a write's answer was lost: the request never left (connection refused), it timed out, or the connection
broke / the answer was unreadable after the request left."""


def loss_of(failure: BackendError) -> Loss | None:
    """How the answer to a write was lost, from the failure's cause chain; None when the server answered.

    Args:
        failure: What the client raised for the write.

    Returns:
        ``"not sent"`` (httpx.ConnectError / ConnectTimeout: nothing reached the server), ``"timed out"``
        (any other httpx timeout, or CALDAV_TIMEOUT, the deadline of the whole exchange, passed), ``"no answer"`` (the
        connection broke or the answer could not be read), or None (an HTTP status answered the write).
    """
    if isinstance(failure, BadCredentials | NotAllowed):
        return None
    seen: list[BaseException] = []
    cause: BaseException | None = failure
    while cause is not None and cause not in seen and len(seen) < 20:
        seen.append(cause)
        cause = cause.__cause__ or cause.__context__
    names = {type(item).__name__ for item in seen}
    if any(isinstance(item, httpx.ConnectError | httpx.ConnectTimeout) for item in seen):
        return "not sent"
    if any(isinstance(item, httpx.TimeoutException | TimeoutError) for item in seen) or "TooSlow" in names:
        return "timed out"
    if any(isinstance(item, httpx.TransportError | OSError) for item in seen) or names & {"Unreachable", "BadAnswer"}:
        return "no answer"
    return None


def fingerprint(data: str | icalendar.Calendar) -> frozenset[tuple[str, ...]]:
    """What marks one written version of an entry (a set of tuples of text).

    Each component's UID, RECURRENCE-ID, SEQUENCE, DTSTAMP and LAST-MODIFIED
    (RFC 5545 §3.8.7), the properties every write here sets anew (``editing.bump``).

    Raises:
        ValueError: ``data`` is not iCalendar.
    """
    import icalendar

    cal = data if isinstance(data, icalendar.Calendar) else from_ical(data)
    marks: set[tuple[str, ...]] = set()
    for component in cal.subcomponents:
        if component.name not in {"VEVENT", "VTODO", "VJOURNAL"}:
            continue
        values: list[str] = [component.name]
        for name in ("UID", "RECURRENCE-ID", "SEQUENCE", "DTSTAMP", "LAST-MODIFIED"):
            raw: Any = component.get(name)
            values.append(raw.to_ical().decode() if hasattr(raw, "to_ical") else str(raw))
        marks.add(tuple(values))
    return frozenset(marks)


def unsettled(failure: BackendError, loss: Loss, found: str, check: str) -> BackendError:
    """The error for a lost answer whose read-back did not show the change.

    It says "NOT changed", or after a timeout "NOT KNOWN" with how to check.

    Args:
        failure: The write's failure.
        loss: How its answer was lost (:func:`loss_of`).
        found: What the read-back showed, e.g. "the entry still has the ETag it was read with".
        check: How the caller can check later, e.g. "read it again with get_event".
    """
    if loss == "not sent":
        return BackendError(
            f"{failure} The request never reached the server and {found}: NOT changed. Nothing was written; "
            "the call can be repeated once the server is reachable."
        )
    if loss == "no answer":
        return BackendError(f"{failure} Read back afterwards: {found}: NOT changed. Nothing was written.")
    return BackendError(
        f"{failure} Read back afterwards: {found}. Whether the change happened is NOT KNOWN: the server may still "
        f"be applying it. Before repeating the call, {check}."
    )
