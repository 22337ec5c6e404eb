"""What caldav-mcp's dialogs say: its own words, its own counts, the caller's calendar and entry id.

Nothing read from a calendar (summary, description, location, organiser,
attendees) is ever passed in here: every function takes counts and the
caller's own argument values only. The entry is named by the id the caller
gave (``id`` of an event, ``uid`` of a task or journal entry), shown escaped
as an identifier under the caller heading, so the person sees which entry
is meant.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal, LiteralString

from approval_core import CallerValue, Dialog, operation, undoable

if TYPE_CHECKING:
    from caldav_mcp.rule_change import RuleChange

Count = int | None | Literal["uncountable"]
"""Occurrences of a series: a number, None for a series that never ends, or ``"uncountable"`` for a stored
rule this server will not expand (an invalid RRULE, or over an expansion bound)."""

__all__ = [
    "Count",
    "change_rule",
    "complete_series",
    "delete_entry",
    "delete_event",
    "delete_following",
    "move_event",
    "respond_to_event",
    "restore_entry",
    "update_following",
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
RULE_LOST = "A CalDAV server keeps no version history: the occurrences that go cannot be restored from it."
SPLIT = "A CalDAV server keeps no version history: the series as it is now cannot be restored from it."
SPLIT_KEPT = (
    "A CalDAV server keeps no version history, so this server keeps the series as it is now in its own undo "
    "journal (list_restorable shows it); restore_entry puts it back once the new series has been deleted."
)
KEPT_FOR: dict[str, LiteralString] = {
    NO_HISTORY: KEPT,
    REPLACED: KEPT,
    RULE_LOST: KEPT,
    MOVED: MOVE_KEPT,
    SPLIT: SPLIT_KEPT,
}
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


def complete_series(calendar: str, *, entry_id: str, counts: tuple[int, int] | Literal["uncountable"] | None) -> Dialog:
    """Marking a whole recurring task done.

    ``counts`` is (occurrences in all, of them still open), None for a series that never ends,
    ``"uncountable"`` for one whose stored rule this server will not expand.
    """
    if counts == "uncountable":
        op = operation("mark a recurring task done as a whole, although this server cannot expand its stored rule")
    elif counts is None:
        op = operation("mark a recurring task that never ends done as a whole, with every occurrence still to come")
    else:
        op = operation(
            "mark a recurring task done as a whole: all {occurrences} of its occurrences, {open} of them still open",
            occurrences=counts[0],
            open=counts[1],
        )
    return Dialog(
        op,
        "Every occurrence still to come leaves the open tasks at once, not only the current one, including "
        "occurrences nobody has looked at yet; complete_task with completed false and scope series brings them "
        "back.",
        [*_calendar(calendar), CallerValue("Task", entry_id, identifier=True)],
    )


def delete_following(calendar: str, *, entry_id: str, kept: int | None, dropped: Count) -> Dialog:
    """Deleting one occurrence and every later one: ``kept`` before it stay (None: not counted), ``dropped`` go.

    ``dropped`` is None for a series that never ends, ``"uncountable"`` for one this server will not expand.
    """
    if kept is None or dropped == "uncountable":
        op = operation(
            "delete one occurrence of a recurring event and every later one; the series, whose stored rule this "
            "server cannot expand, ends before it"
        )
    elif dropped is None:
        op = operation(
            "delete one occurrence of a recurring event that never ends and every later one; the {kept} before it stay",
            kept=kept,
        )
    else:
        op = operation(
            "delete one occurrence of a recurring event and the ones after it: {dropped} occurrences go, "
            "the {kept} before it stay",
            dropped=dropped,
            kept=kept,
        )
    return Dialog(op, NO_HISTORY, _event(calendar, entry_id))


def change_rule(calendar: str, *, entry_id: str, fields: list[str], rule: str, change: RuleChange) -> Dialog:
    """Replacing a series' recurrence rule (RRULE): how many occurrences stay, go and are added."""
    before, after = change.before, change.after
    if before == "uncountable" or after == "uncountable":
        op = operation("replace the recurrence rule of an event; this server cannot expand its stored or new rule")
    elif before is None and after is None:
        op = operation("replace the recurrence rule of an event that never ends with another that never ends")
    elif before is None:
        op = operation(
            "replace the recurrence rule of an event that never ends with one of {after} occurrence(s); "
            "every other occurrence goes",
            after=after if isinstance(after, int) else 0,
        )
    elif after is None:
        op = operation(
            "replace the recurrence rule of an event of {before} occurrence(s) with one that never ends",
            before=before,
        )
    else:
        op = operation(
            "replace the recurrence rule of an event: {kept} of its {before} occurrence(s) stay, {lost} go and "
            "{added} are added, {after} in all",
            kept=change.kept or 0,
            before=before,
            lost=change.lost or 0,
            added=change.added or 0,
            after=after,
        )
    return Dialog(
        op,
        RULE_LOST,
        [*_event(calendar, entry_id), CallerValue("Fields", ", ".join(fields)), CallerValue("New rule", rule)],
    )


def update_following(calendar: str, *, entry_id: str, fields: list[str], kept: int | None, moved: Count) -> Dialog:
    """Splitting a series at one occurrence: the part from it on becomes a new series with the changes."""
    if kept is None or moved == "uncountable":
        op = operation(
            "change {fields} field(s) of one occurrence of a recurring event and every later one, as a new series; "
            "this server cannot expand the stored rule to count them",
            fields=len(fields),
        )
    elif moved is None:
        op = operation(
            "change {fields} field(s) of one occurrence of a recurring event that never ends and every later one, "
            "as a new series; the {kept} before it stay as they are",
            fields=len(fields),
            kept=kept,
        )
    else:
        op = operation(
            "change {fields} field(s) of one occurrence of a recurring event and the ones after it: {moved} "
            "occurrence(s) become a new series with the change, the {kept} before it stay as they are",
            fields=len(fields),
            moved=moved,
            kept=kept,
        )
    return Dialog(
        op,
        SPLIT,
        [*_event(calendar, entry_id), CallerValue("Fields", ", ".join(fields))],
    )
