"""The guard table of ntfy-mcp: which tools ask a person, and when (seed 002, "What asks, and when").

Five tools always ask: they take notifications away from people who may not
have read them yet, or change who can reach this instance. The other eight
never ask. One row deliberately disagrees with ``destructiveHint``: create_user,
listed as a documented mismatch with its reason.
"""

from approval_core import Effect, Guard, GuardTable, Mismatch, effects

__all__ = ["ALWAYS", "EFFECTS", "GUARDS", "NEVER", "OPEN_WORLD", "UNVERSIONED"]

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

# What each guarded tool binds as its version (ntfy has no ETag and no conditional write; each tool also
# reads again right before writing and stops when it changed): update_message and delete_messages the id
# of each sequence's newest message as read; delete_user and manage_user_access the account's role and
# access rules as read. create_user has nothing to read:
UNVERSIONED = {
    "create_user": "nothing exists before a create, so there is no version to bind; ntfy refuses a second "
    "account of the same name (409), so the approval cannot be spent on an account that appeared meanwhile",
}

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
    unversioned=UNVERSIONED,
)

_TOPICS = "a topic is shared: whoever may publish to it writes what is read, and what is sent reaches every subscriber"
_ACCOUNTS = "the accounts and access rules of an instance decide who else can read and publish there"
# Every tool is open-world (the family rule is in tests/test_guards.py): an ntfy instance is a space
# shared with other people, its topics with publishers and subscribers, its accounts with their owners.
OPEN_WORLD = {
    "publish_message": _TOPICS,
    "update_message": _TOPICS,
    "delete_messages": _TOPICS,
    "list_messages": _TOPICS,
    "get_message": _TOPICS,
    "mark_messages_read": _TOPICS,
    "check_topic_access": _ACCOUNTS,
    "get_server_info": "it reports on an instance other people use, and what it says can change under them",
    "get_account": _ACCOUNTS,
    "list_users": _ACCOUNTS,
    "create_user": _ACCOUNTS,
    "delete_user": _ACCOUNTS,
    "manage_user_access": _ACCOUNTS,
}

_READS = effects(Effect.READS)
# What each call does to stored data (approval_core.Effect; the family tests derive the annotation rules
# from these and check them against the requests a call sends to the real ntfy). Everything written to a
# topic is sent to its subscribers as well; marking read stores nothing new and changes nothing stored
# (it publishes a "clear" event to the subscribers).
EFFECTS = {
    **{tool: _READS for tool in NEVER if tool.startswith(("list_", "get_", "check_"))},
    "publish_message": effects(Effect.CREATES, Effect.SENDS),
    "update_message": effects(Effect.REPLACES, Effect.SENDS),
    "delete_messages": effects(Effect.REMOVES, Effect.SENDS),
    "mark_messages_read": effects(Effect.SENDS),
    "create_user": effects(Effect.CREATES),
    "delete_user": effects(Effect.REMOVES),
    "manage_user_access": effects(Effect.CREATES, Effect.REPLACES, Effect.REMOVES),
}
