"""The guard table of carddav-mcp: which tools ask a person, and when.

Five tools ask on every call, because what they overwrite or remove is gone:
a CardDAV server keeps no version history and has no trash. ``restore_card``
(putting a card back from the undo journal) asks too: it may write over the
version a change left. Everything else never asks. ``create_contact`` and ``create_group`` write a new card but take
nothing away (``destructiveHint: false``), so they agree with their row and
are not mismatches; ``get_contact_photo`` is read-only.

There are no mismatches to document: every tool that asks is annotated
``destructiveHint: true`` (``update_group`` too — it overwrites the membership
list, and the previous one is not kept anywhere, though every contact stays),
and no tool annotated destructive goes unasked.

Every tool that asks binds a version (``gate.check(version=...)``): the ETag
of the card its dialog was built from, or a digest of the ETags of every card
a multi-card change touches (:func:`carddav_mcp.writes.version_of`), and its
write carries that ETag as If-Match. So no tool is listed as unversioned.
"""

from approval_core import Effect, Guard, GuardTable, effects

__all__ = ["EFFECTS", "GUARDS", "OPEN_WORLD"]


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
        "list_restorable": Guard.never(),
        "restore_card": Guard.always(),
    },
    mismatches=[],
)

# No tool is open-world (openWorldHint: false everywhere; the family rule is in tests/test_guards.py):
# every call reads or changes the account's own address books, and a CardDAV server sends nothing to
# anyone as a result. A photo given by URI is reported, never fetched.
OPEN_WORLD: dict[str, str] = {}

_READS = effects(Effect.READS)
# What each call does to stored data (approval_core.Effect; the family tests derive the annotation rules
# from these and check them against the requests a call sends to Radicale). A move writes the card into
# the destination and removes it from the source.
EFFECTS = {
    **{tool: _READS for tool in GUARDS if tool.startswith(("list_", "get_", "search_", "export_"))},
    "create_contact": effects(Effect.CREATES),
    "create_group": effects(Effect.CREATES),
    "update_contact": effects(Effect.REPLACES),
    "update_group": effects(Effect.REPLACES),
    "delete_contact": effects(Effect.REMOVES),
    "delete_group": effects(Effect.REMOVES),
    "move_contact": effects(Effect.CREATES, Effect.REMOVES),
    # Puts a card back: a create where it is gone, a PUT over the version a change left, or a move back.
    "restore_card": effects(Effect.CREATES, Effect.REPLACES, Effect.REMOVES),
}
