"""The guard table of carddav-mcp: which tools ask a person, and when.

Five tools ask on every call, because what they overwrite or remove is gone:
a CardDAV server keeps no version history and has no trash. Everything else
never asks. ``create_contact`` and ``create_group`` write a new card but take
nothing away (``destructiveHint: false``), so they agree with their row and
are not mismatches; ``get_contact_photo`` is read-only.

There are no mismatches to document: every tool that asks is annotated
``destructiveHint: true`` (``update_group`` too — it overwrites the membership
list, and the previous one is not kept anywhere, though every contact stays),
and no tool annotated destructive goes unasked.
"""

from approval_core import Guard, GuardTable

__all__ = ["GUARDS", "OPEN_WORLD"]


# PENDING(issue 11 §2): each of these must bind its version (gate.check(version=...)) or give a real reason.
_PENDING = {
    tool: "PENDING: binds no version yet"
    for tool in ["update_contact", "delete_contact", "move_contact", "update_group", "delete_group"]
}

GUARDS = GuardTable(
    {
        "list_address_books": Guard.never(),
        "get_server_info": Guard.never(),
        "list_contacts": Guard.never(),
        "get_contact": Guard.never(),
        "search_contacts": Guard.never(),
        "get_contact_photo": Guard.never(),
        "export_contacts": Guard.never(),
        "list_changes": Guard.never(),
        "create_contact": Guard.never(),
        "update_contact": Guard.always(),
        "delete_contact": Guard.always(),
        "move_contact": Guard.always(),
        "list_groups": Guard.never(),
        "get_group": Guard.never(),
        "create_group": Guard.never(),
        "update_group": Guard.always(),
        "delete_group": Guard.always(),
    },
    mismatches=[],
    unversioned=_PENDING,
)

# No tool is open-world (openWorldHint: false everywhere; the family rule is in tests/test_guards.py):
# every call reads or changes the account's own address books, and a CardDAV server sends nothing to
# anyone as a result. A photo given by URI is reported, never fetched.
OPEN_WORLD: dict[str, str] = {}
