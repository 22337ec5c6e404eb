"""Tools that read contacts; none of them asks, nothing is changed.

list_contacts, get_contact, search_contacts, get_contact_photo, export_contacts, list_changes.
"""

from __future__ import annotations

import base64
import datetime as dt
import re
from typing import Annotated, Any

import mcp_types as mt
from mcp.server.mcpserver import MCPServer
from pydantic import BaseModel, Field

from approval_core import ApprovalGate, annotations, structured
from carddav_mcp.backend import Backend, Entry
from carddav_mcp.errors import CardRejected, Conflict, Forbidden, InvalidInput, NotAllowed, NotFound, PreconditionFailed
from carddav_mcp.fields import summary, to_contact
from carddav_mcp.models import Change, Changes, Contact, ContactList, Export, ExportedCard, SearchHit, SearchResult
from carddav_mcp.search import match_date, match_text
from carddav_mcp.tools import decode_cursor, encode_cursor

__all__ = ["PhotoResult", "register"]

READ = annotations(read_only=True, destructive=False, idempotent=True, open_world=False)
BookArg = Annotated[
    str, Field(min_length=1, max_length=1000, description="address book id (path) from list_address_books")
]
ContactArg = Annotated[
    str, Field(min_length=1, max_length=1000, description="contact id (card path) from list_contacts")
]
DEFAULT_PHOTO_CAP = 1_000_000
SUMMARY = ["VERSION", "UID", "FN", "N", "EMAIL", "TEL", "ORG", "KIND", "X-ADDRESSBOOKSERVER-KIND"]
"""The vCard properties a listing asks for (RFC 6352 §10.4.2); servers may send more."""

_MEDIA_TYPE = re.compile(r"[A-Za-z0-9][A-Za-z0-9!#$&_.+-]{0,126}/[A-Za-z0-9][A-Za-z0-9!#$&_.+-]{0,126}")
"""A media type as RFC 6838 §4.2 writes one (``type/subtype``, each a restricted-name; ``^`` left out), no parameters.

The ``mimeType`` of a photo's image content is its card's media type only when of this shape, else
``application/octet-stream``: the card's writer chose it (``MEDIATYPE``, a ``data:`` URI), and image content
is not fenced as the text is.
"""


class PhotoResult(BaseModel):
    """Where a contact's photo is, and whether it was returned as image content."""

    id: str
    kind: str = Field(description="inline, uri or none")
    media_type: str | None = None
    size_bytes: int | None = None
    uri: str | None = Field(default=None, description="for kind=uri: reported only, never fetched by this server")
    included: bool = Field(description="true when the image is in this result's content")
    reason: str | None = None


def contact_entry(entry: Entry, field: str) -> Entry:
    """``entry`` if it is a contact card; group cards are for the group tools.

    Raises:
        NotAllowed: it is a group card.
    """
    if entry.card.is_group:
        raise NotAllowed(f"{field}: {entry.data.href} is a group card; use get_group / update_group / delete_group.")
    return entry


MAX_READS_PER_PAGE = 4
"""Card reads (one addressbook-multiget each, up to ``limit`` cards) one list_contacts call sends at most.

A page normally needs one; more only when cards read turn out to be group
cards or missing. Past this many the page ends early, marked ``cut``, with a
cursor to go on, so one call's time stays bounded by a few ``CARDDAV_TIMEOUT``
whatever the backend lists.
"""


def register(server: MCPServer[Any], backend: Backend, gate: ApprovalGate) -> None:
    """Add the tools of this module to ``server``."""

    @server.tool(annotations=READ)
    async def list_contacts(
        address_book: BookArg,
        limit: Annotated[int, Field(ge=1, le=500, description="contacts per page")] = 50,
        cursor: Annotated[str | None, Field(max_length=2000, description="next_cursor of the previous page")] = None,
    ) -> Annotated[mt.CallToolResult, ContactList]:
        """List contacts of an address book, a page at a time, sorted by id (summary properties only; partial)."""
        book = (await backend.book("address_book", address_book)).path
        after = decode_cursor(cursor)
        rows = [row for row in await backend.rows(book) if after is None or row[0] > after]
        found: list[Entry] = []
        position = reads = 0
        cut = False
        while len(found) < limit and position < len(rows):
            if reads == MAX_READS_PER_PAGE:
                cut = True  # a backend answering with few or no contacts cannot stretch one call without end
                break
            chunk = rows[position : position + limit - len(found)]
            position += len(chunk)
            reads += 1
            found.extend(e for e in await backend.entries(book, chunk, SUMMARY) if not e.card.is_group)
        last = rows[position - 1][0] if cut else found[-1].data.href if found else None
        more = position < len(rows)
        return structured(
            ContactList(
                address_book=book,
                contacts=[summary(e.data.href, e.card) for e in found],
                next_cursor=encode_cursor(last) if more and last else None,
                cut=cut,
            )
        )

    @server.tool(annotations=READ)
    async def get_contact(contact_id: ContactArg) -> Annotated[mt.CallToolResult, Contact]:
        """Read one whole contact card, fresh from the server: every field, its ETag and vCard version."""
        href, book = await backend.card_id("contact_id", contact_id)
        entry = contact_entry(await backend.fresh("contact_id", href), "contact_id")
        return structured(to_contact(href, book, entry.data.etag, entry.card))

    @server.tool(annotations=READ)
    async def search_contacts(
        query: Annotated[
            str | None,
            Field(
                min_length=1,
                max_length=200,
                description=(
                    "text in FN, NICKNAME, EMAIL, TEL, ORG or a value's own label (X-ABLabel); phone numbers "
                    "match whatever their formatting"
                ),
            ),
        ] = None,
        birthdays_within_days: Annotated[
            int | None, Field(ge=0, le=366, description="also/only: birthday or anniversary in the next N days (UTC)")
        ] = None,
        address_book: Annotated[str | None, Field(max_length=1000, description="one book; default all")] = None,
        limit: Annotated[int, Field(ge=1, le=500, description="most hits returned")] = 50,
    ) -> Annotated[mt.CallToolResult, SearchResult]:
        """Find contacts by text (name, nickname, email, phone, organisation) and/or upcoming birthdays.

        A text query is narrowed on the server where it honours an
        addressbook-query ``text-match`` (RFC 6352 §10.5); every card it sends
        is matched again here, so the hits are those of a read of every card.
        """
        if query is None and birthdays_within_days is None:
            raise InvalidInput("query", "give a query, birthdays_within_days, or both")
        if address_book is not None:
            books = [(await backend.book("address_book", address_book)).path]
        else:
            books = [b.path for b in await backend.books()]
        today = dt.datetime.now(dt.UTC).date()
        hits: list[SearchHit] = []
        truncated = False
        for book in books:
            candidates = await backend.text_candidates(book, query) if query is not None else None
            for entry in candidates if candidates is not None else await backend.entries(book):
                if entry.card.is_group:
                    continue
                matched = match_text(entry.card, query) if query is not None else []
                dates = (
                    match_date(entry.card, birthdays_within_days, today) if birthdays_within_days is not None else []
                )
                if (query is not None and not matched) or (birthdays_within_days is not None and not dates):
                    continue
                if len(hits) >= limit:
                    truncated = True
                    break
                base = summary(entry.data.href, entry.card).model_dump()
                hits.append(SearchHit(**base, address_book=book, matched=matched + [d[0] for d in dates],
                                      days_until=min((d[1] for d in dates), default=None)))  # fmt: skip
        if birthdays_within_days is not None:
            hits.sort(key=lambda h: (h.days_until or 0, h.id))
        return structured(SearchResult(hits=hits, searched_books=books, truncated=truncated))

    @server.tool(annotations=READ)
    async def get_contact_photo(
        contact_id: ContactArg,
        max_bytes: Annotated[
            int, Field(ge=1_000, le=10_000_000, description="largest image returned")
        ] = DEFAULT_PHOTO_CAP,
    ) -> Annotated[mt.CallToolResult, PhotoResult]:
        """Return a contact's inline photo as image content, up to max_bytes; a URI photo is reported, never fetched."""
        href, _ = await backend.card_id("contact_id", contact_id)
        entry = contact_entry(await backend.fresh("contact_id", href), "contact_id")
        prop = entry.card.first("PHOTO")
        if prop is None:
            return structured(PhotoResult(id=href, kind="none", included=False, reason="the card has no photo"))
        data = prop.binary()
        if data is None:
            uri = prop.text().strip()
            return structured(PhotoResult(id=href, kind="uri", uri=uri, included=False,
                                          reason="the photo is a link; this server does not fetch links"))  # fmt: skip
        media = prop.media_type() or "application/octet-stream"
        if len(data) > max_bytes:
            result = PhotoResult(id=href, kind="inline", media_type=media, size_bytes=len(data), included=False,
                                 reason=f"the photo is {len(data):,} bytes, more than max_bytes")  # fmt: skip
            return structured(result)
        result = PhotoResult(id=href, kind="inline", media_type=media, size_bytes=len(data), included=True)
        plain = structured(result)
        shown = media if _MEDIA_TYPE.fullmatch(media) else "application/octet-stream"
        image = mt.ImageContent(type="image", data=base64.b64encode(data).decode(), mime_type=shown)
        return mt.CallToolResult(content=[image, *plain.content], structured_content=plain.structured_content)

    @server.tool(annotations=READ)
    async def export_contacts(
        address_book: BookArg,
        limit: Annotated[int, Field(ge=1, le=1000, description="cards per page")] = 100,
        cursor: Annotated[str | None, Field(max_length=2000, description="next_cursor of the previous page")] = None,
    ) -> Annotated[mt.CallToolResult, Export]:
        """Export raw vCards (contacts and group cards, as stored) of an address book, a page at a time."""
        book = (await backend.book("address_book", address_book)).path
        after = decode_cursor(cursor)
        rows = [row for row in await backend.rows(book) if after is None or row[0] > after]
        page = rows[:limit]
        cards = await backend.client().multiget(book, [href for href, _ in page])
        cards.sort(key=lambda c: c.href)
        more = len(rows) > limit
        return structured(
            Export(
                address_book=book,
                cards=[ExportedCard(id=c.href, etag=c.etag, vcard=c.text) for c in cards],
                next_cursor=encode_cursor(page[-1][0]) if more else None,
            )
        )

    @server.tool(annotations=READ)
    async def list_changes(
        address_book: BookArg,
        sync_token: Annotated[str | None, Field(max_length=2000, description="from the previous list_changes")] = None,
    ) -> Annotated[mt.CallToolResult, Changes]:
        """List cards added, changed or deleted since a sync token (RFC 6578); without one, every card."""
        book = (await backend.book("address_book", address_book)).path
        try:
            result = await backend.client().sync(book, sync_token)
        except (Forbidden, Conflict, CardRejected, PreconditionFailed, NotFound) as exc:
            if sync_token is None:
                raise
            raise InvalidInput(
                "sync_token",
                "the server does not accept this token (RFC 6578 valid-sync-token); call list_changes "
                "without one for a full listing",
            ) from exc
        return structured(
            Changes(
                address_book=book,
                sync_token=result.token,
                changed=[Change(id=href, etag=etag) for href, etag in result.changed],
                deleted=result.deleted,
                full=sync_token is None,
            )
        )

    _ = (list_contacts, get_contact, search_contacts, get_contact_photo, export_contacts, list_changes, gate)
