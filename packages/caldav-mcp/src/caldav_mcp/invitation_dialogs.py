"""caldav-mcp's dialogs for writes a scheduling server turns into iTIP messages (RFC 6638 §3.2, RFC 5546).

Counts and the caller's own values only, as in :mod:`caldav_mcp.dialogs`: how many people are invited, told
of a change or sent a cancellation, and the other domains among the addresses the caller gave; never a name
or an address read from the calendar.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, LiteralString

from approval_core import CallerValue, Dialog, Operation, operation

if TYPE_CHECKING:
    from caldav_mcp.attendees import Invitations

__all__ = ["SCHEDULED", "cancelling", "invitations", "sending"]

Count = int | None | Literal["uncountable"]


SCHEDULED = (
    "This server does RFC 6638 scheduling: it sends these messages itself as soon as the event is saved, "
    "and a message that has left cannot be recalled."
)


def _series_of(occurrences: Count) -> tuple[LiteralString, dict[str, int]]:
    if occurrences == "uncountable":
        return "a series whose stored rule this server cannot expand", {}
    if occurrences is None:
        return "a series that never ends", {}
    if occurrences > 1:
        return "a series of {occurrences}", {"occurrences": occurrences}
    return "an event", {}


def invitations(
    calendar: str,
    *,
    entry_id: str | None,
    fields: list[str],
    sent: Invitations,
    occurrences: Count,
    occurrence: bool = False,
) -> Dialog:
    """A write that makes a scheduling server send iTIP messages (RFC 6638 §3.2): who gets what, counted.

    ``entry_id`` is None for a new event (``create_event``); ``fields`` the fields an update sets;
    ``sent`` the counts (:class:`caldav_mcp.attendees.Invitations`); ``occurrences`` the series' size;
    ``occurrence`` whether the change is to one occurrence. Only counts go into the operation; the other
    domains among the addresses the caller gave are shown as the caller's values.
    """
    what, counts = _series_of(occurrences)
    if occurrence:
        what, counts = "one occurrence of a recurring event", {}
    template: LiteralString
    if entry_id is None:
        template = "write " + what
        if sent.invited:
            template = "invite {invited} person(s), {outside} of them outside the organiser's domain, to " + what
            counts |= {"invited": sent.invited, "outside": sent.outside}
    else:
        template = "change {fields} field(s) of " + what
        counts["fields"] = len(fields)
        if sent.invited:
            template = template + "; invite {invited} new person(s), {outside} of them outside the organiser's domain"
            counts |= {"invited": sent.invited, "outside": sent.outside}
        if sent.kept:
            template = template + "; send the change to the {kept} person(s) already invited"
            counts["kept"] = sent.kept
    if sent.removed:
        template = template + "; send a cancellation to the {removed} person(s) taken off it"
        counts["removed"] = sent.removed
    values = [CallerValue("Calendar", calendar, identifier=True)]
    if entry_id is not None:
        values.append(CallerValue("Event", entry_id, identifier=True))
    if fields:
        values.append(CallerValue("Fields", ", ".join(fields)))
    if sent.domains:
        values.append(CallerValue("Other domains invited", ", ".join(sent.domains), identifier=True))
    return Dialog(operation(template, **counts), SCHEDULED, values)


def _told(dialog: Dialog, clause: LiteralString, name: str, people: int) -> Dialog:
    """``dialog`` with ``clause`` (naming ``{name}``) added to its operation, :data:`SCHEDULED` to its consequence."""
    if not people:
        return dialog
    op = Operation(dialog.operation.template + clause, {**dialog.operation.counts, name: people})
    return Dialog(op, dialog.consequence + " " + SCHEDULED, list(dialog.caller_values))


def cancelling(dialog: Dialog, people: int) -> Dialog:
    """A delete's dialog, saying that a scheduling server sends a cancellation (RFC 5546 CANCEL) to ``people``."""
    return _told(dialog, "; the server sends a cancellation to {cancelled} person(s)", "cancelled", people)


def sending(dialog: Dialog, people: int) -> Dialog:
    """A series change's dialog (a new rule, a split), saying that a scheduling server sends it to ``people``."""
    return _told(dialog, "; the server sends the change to the {told} person(s) on the event", "told", people)
