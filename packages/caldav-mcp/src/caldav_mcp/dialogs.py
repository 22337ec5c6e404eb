"""What caldav-mcp's dialogs say: its own words, its own counts, the caller's calendar and entry id.

Nothing read from a calendar (summary, description, location, organiser,
attendees) is ever passed in here: every function takes counts and the
caller's own argument values only. The entry is named by the id the caller
gave (``id`` of an event, ``uid`` of a task or journal entry), shown escaped
as an identifier under the caller heading, so the person sees which entry
is meant.
"""

from __future__ import annotations

from typing import Literal, LiteralString

from approval_core import CallerValue, Dialog, operation, undoable

Count = int | None | Literal["uncountable"]
"""Occurrences of a series: a number, None for a series that never ends, or ``"uncountable"`` for a stored
rule this server will not expand (an invalid RRULE, or over an expansion bound)."""

__all__ = [
    "Count",
    "delete_entry",
    "delete_event",
    "move_event",
    "respond_to_event",
    "restore_entry",
    "update_series",
    "with_undo",
]

NO_HISTORY = "A CalDAV server keeps no version history. Once it is gone there is nothing to restore it from."
REPLACED = "A CalDAV server keeps no version history: the values being replaced cannot be restored from it."
MOVED = "Whoever shares the source calendar stops seeing it there; a CalDAV server keeps no history of the move."
KEPT = (
    "A CalDAV server keeps no version history, so this server keeps the entry as it is now in its own undo "
    "journal (list_restorable shows it); after that it is gone."
)
MOVE_KEPT = (
    "Whoever shares the source calendar stops seeing it there; this server notes the move in its own undo "
    "journal (list_restorable shows it)."
)
KEPT_FOR: dict[str, LiteralString] = {NO_HISTORY: KEPT, REPLACED: KEPT, MOVED: MOVE_KEPT}
"""The consequence a dialog says instead where the undo journal keeps what the change removes."""
RESTORE: LiteralString = "restore_entry"
"""The tool a dialog names where the undo journal keeps what a change removes."""


def _calendar(calendar: str) -> list[CallerValue]:
    return [CallerValue("Calendar", calendar, identifier=True)]


def _event(calendar: str, entry_id: str) -> list[CallerValue]:
    return [*_calendar(calendar), CallerValue("Event", entry_id, identifier=True)]


def delete_event(calendar: str, *, entry_id: str, scope: str, occurrences: Count) -> Dialog:
    """Deleting a single event, one occurrence, or a whole series of ``occurrences`` (None: no end).

    ``entry_id`` is the event's id as the caller gave it (``uid`` or ``uid#recurrence-id``).
    """
    if scope == "occurrence":
        op = operation("delete one occurrence of a recurring event")
    elif scope == "series" and occurrences == "uncountable":
        op = operation("delete a recurring event whose stored rule this server cannot expand, with all its occurrences")
    elif scope == "series" and occurrences is None:
        op = operation("delete a recurring event that never ends, with every occurrence it would have")
    elif scope == "series":
        op = operation(
            "delete a recurring event and all {occurrences} of its occurrences",
            occurrences=occurrences if isinstance(occurrences, int) else 0,
        )
    else:
        op = operation("delete an event")
    return Dialog(op, NO_HISTORY, _event(calendar, entry_id))


def delete_entry(calendar: str, kind: str, *, entry_id: str) -> Dialog:
    """Deleting one task or journal entry, ``entry_id`` being its UID as the caller gave it."""
    if kind == "VTODO":
        task = CallerValue("Task", entry_id, identifier=True)
        return Dialog(operation("delete a task"), NO_HISTORY, [*_calendar(calendar), task])
    journal = CallerValue("Journal entry", entry_id, identifier=True)
    return Dialog(operation("delete a journal entry"), NO_HISTORY, [*_calendar(calendar), journal])


def update_series(
    calendar: str, *, entry_id: str, fields: list[str], occurrences: Count, own_changes: int = 0
) -> Dialog:
    """Changing a whole series: how many fields, and how many occurrences it reaches.

    ``own_changes`` counts the occurrences with changes of their own (overrides,
    RFC 5545 §3.8.4.4), which keep their values: the change reaches the others.
    For a series that never ends any number above 0 only says that there are such occurrences.
    """
    if occurrences == "uncountable":
        op = operation(
            "change {fields} field(s) of a recurring event whose stored rule this server cannot expand, "
            "in all its occurrences",
            fields=len(fields),
        )
    elif occurrences is None and own_changes:
        op = operation(
            "change {fields} field(s) of a recurring event that never ends, in every occurrence except those "
            "with changes of their own, which keep them",
            fields=len(fields),
        )
    elif occurrences is None:
        op = operation(
            "change {fields} field(s) of a recurring event that never ends, in every occurrence",
            fields=len(fields),
        )
    elif own_changes:
        op = operation(
            "change {fields} field(s) of a recurring event, in {reached} of its {occurrences} occurrences; "
            "{own} with changes of their own keep them",
            fields=len(fields),
            reached=occurrences - own_changes,
            occurrences=occurrences,
            own=own_changes,
        )
    else:
        op = operation(
            "change {fields} field(s) of a recurring event, in all {occurrences} of its occurrences",
            fields=len(fields),
            occurrences=occurrences,
        )
    return Dialog(op, REPLACED, [*_event(calendar, entry_id), CallerValue("Fields", ", ".join(fields))])


def move_event(calendar: str, destination: str, *, entry_id: str, occurrences: Count) -> Dialog:
    """Moving an event (and all of a series' occurrences) to another calendar."""
    if occurrences == "uncountable":
        op = operation("move a recurring event whose stored rule this server cannot expand to another calendar")
    elif occurrences is None:
        op = operation("move a recurring event that never ends to another calendar")
    elif occurrences > 1:
        op = operation(
            "move a recurring event with {occurrences} occurrences to another calendar", occurrences=occurrences
        )
    else:
        op = operation("move an event to another calendar")
    return Dialog(op, MOVED, [*_event(calendar, entry_id), CallerValue("Destination", destination, identifier=True)])


def respond_to_event(calendar: str, partstat: str, *, entry_id: str, scheduling: bool) -> Dialog:
    """Answering an invitation; the consequence depends on RFC 6638 scheduling."""
    if scheduling:
        consequence = (
            "This server does RFC 6638 scheduling: it emails an iTIP reply to the organiser as soon as the "
            "status is saved, and a reply that has been sent cannot be recalled."
        )
    else:
        consequence = (
            "This server does not do RFC 6638 scheduling: only the participation marker in this calendar "
            "changes, and nobody is notified by the server."
        )
    return Dialog(
        operation("answer an invitation"),
        consequence,
        [*_event(calendar, entry_id), CallerValue("Answer", partstat)],
    )


def with_undo(dialog: Dialog, days: int | None) -> Dialog:
    """``dialog`` saying that the change stays recoverable for ``days`` days with restore_entry.

    Only a dialog whose consequence says the change cannot be undone (:data:`KEPT_FOR`) is reworded, and
    only where the undo journal will keep what it removes (``days`` not None); any other comes back as it was.
    """
    kept = KEPT_FOR.get(dialog.consequence)
    if days is None or kept is None:
        return dialog
    return Dialog(undoable(dialog.operation, days, RESTORE), kept, dialog.caller_values, dialog.value_limit)


def restore_entry(how: str, calendar: str, *, restore_id: str, kept_at: str, undoes: str) -> Dialog:
    """Putting back an entry from the undo journal: ``how`` is the write (``create``, ``replace``, ``move_back``).

    The values are the caller's calendar and journal id, and what the journal says of the change (when it was
    kept, which tool made it); never the entry's text nor its name on the server, which others may choose.
    """
    if how == "move_back":
        op = operation("move an entry back into this calendar, out of the calendar it was moved to")
        consequence = "Whoever shares the calendar it is in now stops seeing it there; its text is as it was."
    elif how == "replace":
        op = operation("put back the earlier version of an entry, over the version a change left")
        consequence = "The version stored now is replaced, and this server keeps no copy of it: that cannot be undone."
    else:
        op = operation("put back an entry that is gone, where it was")
        consequence = "It comes back with the text it had before the change; nothing stored is replaced."
    return Dialog(
        op,
        consequence,
        [
            *_calendar(calendar),
            CallerValue("Restore id", restore_id, identifier=True),
            CallerValue("Kept at", kept_at),
            CallerValue("Undoes", undoes, identifier=True),
        ],
    )
