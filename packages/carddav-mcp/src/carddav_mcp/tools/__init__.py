"""The tools of carddav-mcp, one module per kind of thing.

* :mod:`.books`: ``list_address_books``, ``get_server_info``;
* :mod:`.reading`: ``list_contacts``, ``get_contact``, ``search_contacts``,
  ``get_contact_photo``, ``export_contacts``, ``list_changes``;
* :mod:`.writing`: ``create_contact``, ``update_contact``, ``delete_contact``, ``move_contact``;
* :mod:`.grouping`: ``list_groups``, ``get_group``, ``create_group``, ``update_group``, ``delete_group``;
* :mod:`.undo`: ``list_restorable``, ``restore_card`` (and the undo journal around the guarded writes).

Each module has ``register(server, backend, gate)``.
"""

from __future__ import annotations

import base64
import binascii
import json

from carddav_mcp.errors import InvalidInput

__all__ = ["decode_cursor", "encode_cursor"]


def encode_cursor(after: str) -> str:
    """An opaque cursor: the listing continues after the card path ``after``."""
    return base64.urlsafe_b64encode(json.dumps({"after": after}).encode()).decode()


def decode_cursor(cursor: str | None) -> str | None:
    """The card path a cursor continues after (None: from the start).

    Raises:
        InvalidInput: the cursor did not come from this server.
    """
    if cursor is None:
        return None
    try:
        data = json.loads(base64.urlsafe_b64decode(cursor.encode()))
        after = data["after"]
    except (binascii.Error, ValueError, KeyError, TypeError, RecursionError):  # RecursionError: json, deep nesting
        raise InvalidInput("cursor", "is not a cursor this server returned; pass next_cursor unchanged") from None
    if not isinstance(after, str):
        raise InvalidInput("cursor", "is not a cursor this server returned; pass next_cursor unchanged")
    return after
