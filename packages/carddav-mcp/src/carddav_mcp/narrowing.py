"""Whether a server's ``text-match`` answer can be trusted (RFC 6352 §10.5 addressbook-query narrowing).

A server that honours the filter sends a superset of the matches; one that ignores it sends cards without
the text (found by :func:`holds`); one that misapplies it leaves matching cards out, which only a full read
shows (:func:`left_out_cards`, run on the first answer, with one probe of how the server matches FN). Either
way the client then reads whole books.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from carddav_mcp.client import CardDavClient
from carddav_mcp.entries import Entry
from carddav_mcp.errors import AuthenticationFailed, BackendError, NotFound, ResponseTooLarge, Unreachable
from carddav_mcp.search import TEXT_PROPERTIES, server_needle

__all__ = ["fn_probe", "holds", "left_out_cards"]

log = logging.getLogger("carddav_mcp")


def holds(entry: Entry, needle: str) -> bool:
    """Whether a card holds ``needle`` (lower-case ASCII) in one of the properties a text search reads."""
    return any(needle in p.text().lower() for p in entry.card.all(*TEXT_PROPERTIES))


def fn_probe(every: list[Entry]) -> tuple[str, str] | None:
    """A contact (href) and a piece of its FN found nowhere in its family name (N's first part), or None.

    SOGo 5.8 matches a ``text-match`` on FN against the family name it keeps: a
    first search for a family name finds every card it should, and a later one
    for a given name misses them. Asking for such a piece of a card's FN, and
    looking for that card in the answer, shows it whatever the first query was.
    """
    for entry in every:
        fn = entry.card.text_of("FN")
        if entry.card.is_group or not fn:
            continue
        name = entry.card.first("N")
        family = (name.components()[0] if name is not None else "").casefold()
        for word in fn.split():
            needle = server_needle(word)
            if needle is not None and needle not in family:
                return entry.data.href, needle
    return None


async def left_out_cards(
    client: CardDavClient,
    book: str,
    read_all: Callable[[], Awaitable[list[Entry]]],
    answered: list[Entry],
    needle: str,
) -> bool:
    """Check a server's first text-match answer against a full read (``read_all``); True when it left a card out.

    The client then reads whole books for every later search. When none is left
    out, the server is asked once more, for a piece of a contact's FN outside its
    family name (:func:`fn_probe`), and must send that contact. A complete answer
    to both is noted, and later answers are taken as they come. When the book is
    too large to read whole now, or holds no contact to probe with, nothing is
    noted and a later search checks.
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
    probe = fn_probe(every)
    if probe is None:
        return False
    try:
        found = await client.text_query(book, TEXT_PROPERTIES, probe[1])
    except (Unreachable, AuthenticationFailed, NotFound):
        raise
    except ResponseTooLarge:
        return False
    except BackendError:
        client.text_match_ignored()
        return True
    if probe[0] not in {c.href for c in found}:
        log.info("a server-side search by a given name left out its card; searches read every card")
        client.text_match_ignored()
        return True
    client.text_match_complete()
    return False
