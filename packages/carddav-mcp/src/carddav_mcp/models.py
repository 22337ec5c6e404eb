"""Input and output models: the tools' JSON schemas and structured content.

Text fields of contacts and groups are *address-book data*: written by whoever edited the card, returned to the
model as data, never shown in an approval dialog. The output models say so in their descriptions.
"""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    model_validator,
)

from carddav_mcp.book_models import DATA_NOTE, AddressBook, AddressBooks, DiscoveryOut, ServerInfo
from carddav_mcp.card_values import (
    Name,
    PostalAddress,
    Short,
    StoredAddress,
    StoredName,
    StoredTyped,
    StrictModel,
    Typed,
)
from carddav_mcp.display_names import AddedName, DerivedName

__all__ = [
    "AddressBook",
    "AddressBooks",
    "Change",
    "Changes",
    "Contact",
    "ContactFields",
    "ContactList",
    "ContactSummary",
    "CreatedContact",
    "CreatedGroup",
    "Deleted",
    "DiscoveryOut",
    "Export",
    "ExportedCard",
    "Group",
    "GroupList",
    "GroupSummary",
    "Moved",
    "Name",
    "PartialDate",
    "PhotoInfo",
    "PostalAddress",
    "SearchHit",
    "SearchResult",
    "ServerInfo",
    "StoredAddress",
    "StoredName",
    "StoredTyped",
    "Typed",
    "Written",
]

UID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,199}$"
"""A caller-given UID: letters, digits and ``. _ @ -``, starting with a letter or digit, at most 200 characters.

It also names the new card's file (``<book><uid>.vcf``), so it stays within
the characters a path segment carries unencoded (RFC 3986 §3.3) that servers
take in a file name: Radicale answers 400 to any path with a colon, so a
``urn:uuid:`` UID is given as its bare UUID.
"""
UID_DESCRIPTION = (
    "optional UID for the new card (letters, digits and . _ @ -, starting with a letter or digit; at most 200 "
    "characters; for a urn:uuid: UID give the bare UUID). Give one to make a "
    "retry safe: a second call with the same uid answers already_exists with the card's id instead of writing a "
    "duplicate. Left out, a new random UUID is used"
)


class PartialDate(StrictModel):
    """A date whose year may be unknown (BDAY ``--0415`` has month and day only)."""

    year: int | None = Field(None, ge=1, le=9999, description="omitted or null when the card gives no year")
    month: int = Field(ge=1, le=12)
    day: int = Field(ge=1, le=31)

    @model_validator(mode="after")
    def _real_date(self) -> PartialDate:
        try:
            dt.date(self.year or 2000, self.month, self.day)  # 2000 is a leap year: 29 February is allowed
        except ValueError as exc:
            raise ValueError(f"{self.year or '--'}-{self.month:02d}-{self.day:02d} is not a calendar date") from exc
        return self


class ContactFields(StrictModel):
    """Fields of a contact to write.

    For ``update_contact``: a field left out is not touched; a field set to
    ``null`` is removed from the card; a field given a value replaces every
    property of that kind (``emails`` replaces all EMAIL lines).
    """

    fn: Short | None = Field(None, description="formatted name (FN); cannot be cleared")
    n: Name | None = None
    nickname: list[Short] | None = Field(None, max_length=20)
    emails: list[Typed] | None = Field(None, max_length=50)
    phones: list[Typed] | None = Field(None, max_length=50)
    addresses: list[PostalAddress] | None = Field(None, max_length=20)
    urls: list[Typed] | None = Field(None, max_length=50)
    org: list[Short] | None = Field(None, max_length=10, description="organisation name, then units")
    title: Short | None = None
    note: str | None = Field(None, max_length=20000)
    birthday: PartialDate | None = None
    anniversary: PartialDate | None = None
    categories: list[Short] | None = Field(None, max_length=50)


class PhotoInfo(BaseModel):
    """Where a contact's photo is: inline bytes (not included here) or a URI (never fetched)."""

    kind: Literal["inline", "uri"]
    media_type: str | None = None
    size_bytes: int | None = None
    uri: str | None = Field(default=None, description="for kind=uri: reported only, this server never fetches it")


class ContactSummary(DerivedName):
    """A contact as a listing shows it: summary properties only (partial)."""

    id: str = Field(description="the card's path; pass it to get_contact and the write tools")
    uid: str | None
    fn: str | None = Field(description=DATA_NOTE)
    emails: list[str] = Field(default_factory=lambda: [])
    phones: list[str] = Field(default_factory=lambda: [])
    org: str | None = None
    partial: Literal[True] = Field(default=True)


class Contact(DerivedName):
    """A whole contact card, read fresh from the server."""

    model_config = ConfigDict(json_schema_extra={"description": DATA_NOTE})

    id: str
    address_book: str
    etag: str | None
    uid: str | None
    version: str = Field(description="vCard version of the card: 2.1, 3.0 or 4.0")
    fn: str | None
    n: StoredName | None = None
    nickname: list[str] = Field(default_factory=lambda: [])
    emails: list[StoredTyped] = Field(default_factory=lambda: [])
    phones: list[StoredTyped] = Field(default_factory=lambda: [])
    addresses: list[StoredAddress] = Field(default_factory=lambda: [])
    urls: list[StoredTyped] = Field(default_factory=lambda: [])
    impp: list[StoredTyped] = Field(default_factory=lambda: [])
    org: list[str] = Field(default_factory=lambda: [])
    title: str | None = None
    note: str | None = None
    birthday: PartialDate | None = None
    anniversary: PartialDate | None = None
    categories: list[str] = Field(default_factory=lambda: [])
    related: list[str] = Field(default_factory=lambda: [])
    photo: PhotoInfo | None = None
    other_properties: list[str] = Field(
        default_factory=lambda: [], description="names of further properties on the card, kept unchanged by writes"
    )
    partial: Literal[False] = False


class ContactList(BaseModel):
    """One page of contacts (group cards left out)."""

    address_book: str
    contacts: list[ContactSummary]
    next_cursor: str | None = Field(description="pass as cursor for the next page; null on the last page")
    partial: Literal[True] = Field(
        default=True, description="summary properties only: use get_contact for a whole card"
    )
    cut: bool = Field(
        default=False,
        description="true when the page stopped early (fewer contacts than limit) after reading as many cards as "
        "one call may; more may follow: call again with next_cursor",
    )


class SearchHit(ContactSummary):
    """A search match, with why it matched."""

    address_book: str
    matched: list[str] = Field(
        description="which fields matched: fn, nickname, email, tel, org, label, birthday, anniversary"
    )
    days_until: int | None = Field(None, description="for a birthday/anniversary match: days from today (UTC)")


class SearchResult(BaseModel):
    """Contacts matching a search, in the searched address books."""

    hits: list[SearchHit]
    searched_books: list[str]
    truncated: bool = Field(description="true when more contacts matched than limit")
    partial: Literal[True] = True


class ExportedCard(BaseModel):
    """One raw vCard as stored on the server."""

    id: str
    etag: str | None
    vcard: str = Field(description=DATA_NOTE)


class Export(BaseModel):
    """Raw vCards of an address book, one page."""

    address_book: str
    cards: list[ExportedCard]
    next_cursor: str | None


class Change(BaseModel):
    """A card added or changed since the sync token."""

    id: str
    etag: str | None


class Changes(BaseModel):
    """RFC 6578 changes of one address book since a sync token."""

    address_book: str
    sync_token: str | None = Field(description="pass this next time to get only later changes")
    changed: list[Change]
    deleted: list[str]
    full: bool = Field(description="true when no token was given, so every card is listed as changed")


class Written(AddedName):
    """A card that was created or updated."""

    id: str
    etag: str | None
    uid: str | None
    fields_changed: list[str] = Field(default_factory=lambda: [])


class CreatedContact(Written):
    """What create_contact did: ``created``, or ``already_exists`` when a card with this UID was there already."""

    outcome: Literal["created", "already_exists"] = Field(
        description="created: the card was written; already_exists: a card with this uid is in the book (from an "
        "earlier call with the same uid, or made by someone else); nothing was written, and id names that card"
    )


class Deleted(BaseModel):
    """Cards that were deleted, and cards that were already gone when the delete reached them."""

    deleted: list[str]
    already_gone: list[str] = Field(
        default_factory=lambda: [],
        description="ids the server answered 404/410 for: someone else deleted them meanwhile; not an error",
    )


class Moved(BaseModel):
    """A card moved to another address book."""

    id: str = Field(description="the card's new path")
    previous_id: str
    address_book: str


class GroupSummary(BaseModel):
    """A group as a listing shows it."""

    id: str = Field(description="group card path, or <book path>#<label> for a CATEGORIES label")
    name: str = Field(description=DATA_NOTE)
    convention: Literal["kind", "apple", "categories"] = Field(
        description="kind: vCard 4 KIND:group/MEMBER; apple: X-ADDRESSBOOKSERVER-*; categories: a CATEGORIES label"
    )
    member_count: int


class GroupList(BaseModel):
    """The groups of an address book, in every convention found there."""

    address_book: str
    groups: list[GroupSummary]
    convention_for_new_groups: Literal["kind", "apple", "categories"]


class Group(GroupSummary):
    """A group and its members."""

    address_book: str
    members: list[str] = Field(description="contact ids")
    unresolved_members: list[str] = Field(
        default_factory=lambda: [], description="member references that match no card in this book (kept on writes)"
    )


class CreatedGroup(Group):
    """What create_group did: ``created``, or ``already_exists`` when a group card with this UID was there already."""

    outcome: Literal["created", "already_exists"] = Field(
        description="created: the group was written; already_exists: a group card with this uid is in the book; "
        "nothing was written, and the fields describe that group"
    )
