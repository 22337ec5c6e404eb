"""The guard table of ntfy-mcp: which tools ask a person, and when (seed 002, "What asks, and when").

Five tools always ask: they take notifications away from people who may not
have read them yet, or change who can reach this instance. The other eight
never ask. One row deliberately disagrees with ``destructiveHint``: create_user,
listed as a documented mismatch with its reason.
"""

from approval_core import Guard, GuardTable, Mismatch

__all__ = ["ALWAYS", "GUARDS", "NEVER"]

ALWAYS = ("delete_messages", "delete_user", "manage_user_access", "create_user", "update_message")
NEVER = (
    "list_messages",
    "get_message",
    "check_topic_access",
    "get_server_info",
    "get_account",
    "list_users",
    "publish_message",
    "mark_messages_read",
)

GUARDS = GuardTable(
    {**{name: Guard.always() for name in ALWAYS}, **{name: Guard.never() for name in NEVER}},
    mismatches=[
        Mismatch(
            "create_user",
            "guarded-not-destructive",
            "it takes nothing away, but a new account changes who can reach this instance, "
            "the mirror image of delete_user; no annotation carries that",
        ),
    ],
)
