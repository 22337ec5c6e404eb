"""A card as the tools use it: the server's resource and its parsed vCard, parsed off the event loop when large."""

from __future__ import annotations

import logging
from dataclasses import dataclass

import anyio

from carddav_mcp.client import CardData, CardDavClient
from carddav_mcp.vcard import Card

__all__ = ["PARSE_IN_THREAD_CHARS", "Entry", "cards_with_uid", "parse_card"]

log = logging.getLogger("carddav_mcp")


@dataclass(frozen=True)
class Entry:
    """A card with its parsed form: ``data.href`` is the contact id.

    ``partial`` is True when only some properties were asked for (a listing);
    a server may still have sent the whole card.
    """

    data: CardData
    card: Card
    partial: bool = False


PARSE_IN_THREAD_CHARS = 64_000
"""Cards longer than this (characters) are parsed in a worker thread, not on the event loop."""


async def parse_card(text: str) -> Card:
    """:meth:`Card.parse` of a card a server sent, off the event loop when it is large.

    Parsing is linear in the card's size, but a card near
    ``CARDDAV_MAX_RESPONSE_BYTES`` still takes a noticeable time; in a worker
    thread (``anyio.to_thread``) it does not hold up the server's other calls.

    Raises:
        ValueError: not a vCard (as :meth:`Card.parse`).
    """
    if len(text) <= PARSE_IN_THREAD_CHARS:
        return Card.parse(text)
    return await anyio.to_thread.run_sync(Card.parse, text)


async def cards_with_uid(client: CardDavClient, book: str, uid: str) -> list[str]:
    """Cards of ``book`` whose UID is exactly ``uid`` (addressbook-query); unreadable cards are left out, logged."""
    hrefs: list[str] = []
    for data in await client.query(book, [("UID", uid)]):
        try:
            card = await parse_card(data.text)
        except ValueError as exc:
            log.warning("skipping an unreadable card at %s: %s", data.href, exc)
            continue
        if card.uid == uid:
            hrefs.append(data.href)
    return hrefs
