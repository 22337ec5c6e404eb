"""The guard table of caldav-mcp: which tools ask a person, and when.

Seed 000: the five tools that destroy or send something that cannot be taken
back always ask; ``update_event`` asks only when the change reaches a whole
recurring series (the one edit that changes appointments the caller did not
look at), or when a scheduling server (RFC 6638) would send the change to the
event's attendees; ``create_event`` only in that last case, for the
invitations it makes the server send; ``complete_task`` likewise only when it marks a whole recurring task
done (every occurrence still to come leaves the open tasks); everything else
never asks. ``restore_entry`` (putting back what a guarded change removed,
from the undo journal) always asks too: it may write over the version that
change left, and on a scheduling server a restored entry with attendees makes
the server send iTIP messages again.
"""

from __future__ import annotations

from approval_core import Effect, Guard, GuardedCall, GuardTable, Mismatch, effects

__all__ = ["EFFECTS", "GUARDS", "OPEN_WORLD"]


def _reaches_a_series(call: GuardedCall) -> bool:
    return call.arguments.get("scope") in ("series", "following") and bool(call.facts.get("recurring"))


def _changes_a_series(call: GuardedCall) -> bool:
    return _reaches_a_series(call) or call.arguments.get("rrule") is not None


def _sends(call: GuardedCall) -> bool:
    """The server will send iTIP messages (RFC 6638) to people on the event because of this write."""
    return bool(call.facts.get("sends"))


def _changes_a_series_or_sends(call: GuardedCall) -> bool:
    return _changes_a_series(call) or _sends(call)


def _completes_a_series(call: GuardedCall) -> bool:
    return _reaches_a_series(call) and call.arguments.get("completed") is not False


_NEVER = [
    "list_calendars",
    "get_server_info",
    "list_events",
    "get_event",
    "search_events",
    "get_free_busy",
    "list_tasks",
    "get_task",
    "create_task",
    "update_task",
    "list_journals",
    "get_journal",
    "create_journal",
    "update_journal",
    "list_restorable",
]


GUARDS = GuardTable(
    {
        **{tool: Guard.never() for tool in _NEVER},
        "delete_event": Guard.always(),
        "delete_task": Guard.always(),
        "delete_journal": Guard.always(),
        "move_event": Guard.always(),
        "respond_to_event": Guard.always(),
        "restore_entry": Guard.always(),
        "create_event": Guard.when(
            _sends, "only when a scheduling server would send invitations to the attendees given"
        ),
        "update_event": Guard.when(
            _changes_a_series_or_sends,
            "only when changing a whole recurring series, giving a recurrence rule, or when a scheduling server "
            "would send the change to the event's attendees",
        ),
        "complete_task": Guard.when(_completes_a_series, "only when completing a whole recurring series"),
    },
    mismatches=[
        Mismatch(
            "create_event",
            "guarded-not-destructive",
            "it takes nothing away, but with attendees on a scheduling server the server mails each of them an "
            "invitation as soon as the event is stored, and mail that has left cannot be recalled",
        ),
        Mismatch(
            "respond_to_event",
            "changes-not-destructive",
            "it replaces only the caller's own PARTSTAT on the entry, which can be set again to anything it was",
        ),
        Mismatch(
            "respond_to_event",
            "guarded-not-destructive",
            "a participation status can be set again to anything it was, but on a scheduling server the "
            "change mails an iTIP REPLY to the organiser, and mail that has left cannot be recalled",
        ),
        Mismatch(
            "complete_task",
            "changes-not-destructive",
            "it replaces a task's STATUS, PERCENT-COMPLETE and COMPLETED, and nothing else; update_task sets the "
            "status back to what it was, so nothing is lost that cannot be restored",
        ),
        Mismatch(
            "complete_task",
            "guarded-not-destructive",
            "a whole series marked done can be reopened as it was, but it takes every occurrence still to come, "
            "occurrences the caller never looked at, out of the person's open tasks at once",
        ),
        Mismatch(
            "update_task",
            "destructive-not-guarded",
            "it replaces text with no history to restore from, but it changes one task the caller named and "
            "read, a task has no series behind it, and the ETag refuses the write if someone changed it meanwhile",
        ),
        Mismatch(
            "update_journal",
            "destructive-not-guarded",
            "it replaces a note's text with no history to restore from, but it changes one entry the caller "
            "named and read, and the ETag refuses the write if someone changed it meanwhile",
        ),
    ],
    unversioned={
        "create_event": "a new event has no version yet; its write carries If-None-Match: *, so it never "
        "replaces an entry, whatever was stored meanwhile",
    },
)

_SCHEDULED = (
    "on a server with RFC 6638 scheduling, changing or removing an entry that has attendees makes the server "
    "send iTIP messages (REQUEST, CANCEL or REPLY) to the other people on it"
)
# The tools whose openWorldHint is true, each with the reason (the family rule is in tests/test_guards.py).
OPEN_WORLD = {
    "create_event": "with attendees, a server with RFC 6638 scheduling sends each of them an iTIP invitation",
    "update_event": _SCHEDULED,
    "delete_event": _SCHEDULED,
    "respond_to_event": "on a scheduling server the answer is mailed to the organiser as an iTIP REPLY",
    "update_task": _SCHEDULED,
    "complete_task": _SCHEDULED,
    "delete_task": _SCHEDULED,
    "update_journal": _SCHEDULED,
    "delete_journal": _SCHEDULED,
    "restore_entry": "on a server with RFC 6638 scheduling, putting back an entry that has attendees makes the "
    "server send iTIP messages (REQUEST or CANCEL) to the other people on it",
}

_READS = effects(Effect.READS)
_SCHEDULING = (Effect.SENDS,)  # on an RFC 6638 scheduling server; what it sends is out of the backend's view
# What each call does to stored data (approval_core.Effect; the family tests derive the annotation rules
# from these and check them against the requests a call sends to Radicale).
EFFECTS = {
    **{tool: _READS for tool in _NEVER if tool.startswith(("list_", "get_", "search_"))},
    "create_event": effects(Effect.CREATES, *_SCHEDULING),
    "create_task": effects(Effect.CREATES),
    "create_journal": effects(Effect.CREATES),
    "update_event": effects(Effect.REPLACES, *_SCHEDULING),
    "update_task": effects(Effect.REPLACES, *_SCHEDULING),
    "update_journal": effects(Effect.REPLACES, *_SCHEDULING),
    "complete_task": effects(Effect.REPLACES, *_SCHEDULING),
    "respond_to_event": effects(Effect.REPLACES, *_SCHEDULING),
    "delete_event": effects(Effect.REMOVES, *_SCHEDULING),
    "delete_task": effects(Effect.REMOVES, *_SCHEDULING),
    "delete_journal": effects(Effect.REMOVES, *_SCHEDULING),
    "move_event": effects(Effect.CREATES, Effect.REMOVES),
    # Puts an entry back: a create where it is gone, a PUT over the version a change left, or a move back.
    "restore_entry": effects(Effect.CREATES, Effect.REPLACES, Effect.REMOVES, *_SCHEDULING),
}
