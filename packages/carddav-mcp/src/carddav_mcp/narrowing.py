"""Whether a server's ``text-match`` answer can be trusted (RFC 6352 §10.5 addressbook-query narrowing).

A server that honours the filter sends a superset of the matches; one that ignores it sends cards without
the text (found by :func:`holds`); one that misapplies it leaves matching cards out, which only a full read
shows (:func:`left_out_cards`, run once on the first answer). Either way the client then reads whole books.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from carddav_mcp.client import CardDavClient
from carddav_mcp.entries import Entry
from carddav_mcp.errors import ResponseTooLarge
from carddav_mcp.search import TEXT_PROPERTIES

__all__ = ["holds", "left_out_cards"]

log = logging.getLogger("carddav_mcp")


def holds(entry: Entry, needle: str) -> bool:
    """Whether a card holds ``needle`` (lower-case ASCII) in one of the properties a text search reads."""
    return any(needle in p.text().lower() for p in entry.card.all(*TEXT_PROPERTIES))


async def left_out_cards(
    client: CardDavClient, read_all: Callable[[], Awaitable[list[Entry]]], answered: list[Entry], needle: str
) -> bool:
    """Check a server's first text-match answer against a full read (``read_all``); True when it left a card out.

    The client then reads whole books for every later search (a server may match FN by the surname only, as
    SOGo does); a complete answer is noted, and later answers are taken as they come. When the book is too
    large to read whole now, nothing is noted and a later search checks.
    """
    sent = {e.data.href for e in answered}
    try:
        every = await read_all()
    except ResponseTooLarge:
        return False
    if any(holds(e, needle) and e.data.href not in sent for e in every):
        log.info("a server-side search left out cards holding the text; searches read every card")
        client.text_match_ignored()
        return True
    client.text_match_complete()
    return False
