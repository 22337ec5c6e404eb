"""What a person reads before a guarded ntfy-mcp call runs (seed 002, "What the dialog contains").

Topics, usernames and sequence ids (each as the caller gave it, escaped as an
identifier), counts, and the names of fields: never the content of
a notification (written by whoever could publish to the topic), and never
the password given to create_user. Every text here is a literal; the only
numbers are ones this server counted.
"""

from __future__ import annotations

from collections.abc import Sequence

from approval_core import CallerValue, Dialog, operation

__all__ = ["access_dialog", "create_user_dialog", "delete_messages_dialog", "delete_user_dialog", "update_dialog"]


def delete_messages_dialog(topic: str, sequence_ids: Sequence[str], scheduled: int) -> Dialog:
    """Deleting ``len(sequence_ids)`` notifications, ``scheduled`` of them not yet delivered.

    The ids are shown sorted, as the set the call binds: their order makes no other call.
    """
    return Dialog(
        operation(
            "delete {count} notification(s) from one topic, {scheduled} of them not yet delivered",
            count=len(sequence_ids),
            scheduled=scheduled,
        ),
        "Subscribers' devices remove a deleted notification, and a scheduled one is never delivered; "
        "ntfy keeps no copy to bring it back from.",
        [
            CallerValue("Topic", topic, identifier=True),
            CallerValue("Sequence ids", ", ".join(sorted(set(sequence_ids))), identifier=True),
        ],
    )


def update_dialog(topic: str, sequence_id: str, fields: Sequence[str], dropped: int, http_buttons: int) -> Dialog:
    """Revising one notification in place.

    ``fields`` are the names of the fields the new version sets; ``dropped``
    counts fields the current version has and the new one does not set.
    """
    values = [CallerValue("Topic", topic, identifier=True), CallerValue("Sequence id", sequence_id, identifier=True)]
    values.extend(CallerValue("Field replaced", name) for name in fields)
    return Dialog(
        operation(
            "revise 1 notification in place, replacing {fields} field(s) and dropping {dropped} "
            "the new version does not set; the new version carries {http} http action button(s)",
            fields=len(fields),
            dropped=dropped,
            http=http_buttons,
        ),
        "The text subscribers were shown is replaced on their devices and cannot be shown again; "
        "an http button sends a request from the recipient's device when tapped.",
        values,
    )


def create_user_dialog(username: str) -> Dialog:
    """Creating one account (the password is neither shown nor bound)."""
    return Dialog(
        operation("create 1 account on this ntfy server"),
        "It becomes an account on this instance. Nothing is reachable through it until manage_user_access "
        "grants a topic, but whoever has the password can then authenticate as it.",
        [CallerValue("Username", username, identifier=True)],
    )


def delete_user_dialog(username: str, grants: int) -> Dialog:
    """Deleting one account and its ``grants`` access rules."""
    return Dialog(
        operation("delete 1 account and its {grants} access rule(s)", grants=grants),
        "Whoever used this account loses access at once, and its rules and tokens are gone; "
        "it can be created again, but not restored.",
        [CallerValue("Username", username, identifier=True)],
    )


def access_dialog(username: str, topic: str, permission: str, replaces: int) -> Dialog:
    """Writing (or removing) one access rule; ``replaces`` is 1 when a rule for that topic exists."""
    if permission == "remove":
        op = operation("remove 1 access rule ({replaces} exists now)", replaces=replaces)
    else:
        op = operation("write 1 access rule, replacing {replaces} existing rule(s)", replaces=replaces)
    return Dialog(
        op,
        "It changes at once who may read or publish on the topic; live subscriptions that lose access are cut.",
        [
            CallerValue("Username", username, identifier=True),
            CallerValue("Topic", topic, identifier=True),
            CallerValue("Permission", permission),
        ],
    )
