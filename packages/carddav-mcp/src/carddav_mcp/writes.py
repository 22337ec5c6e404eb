"""Writes that are bound to what was read, never doubled, and never left half-reported.

Three things every write tool of this server shares:

* :func:`version_of`: the version a guarded tool binds with
  ``gate.check(version=...)``: the ETag of the one card its dialog was built
  from, or a digest of the ETags of every card a multi-card write touches.
  Every write then carries that ETag (``If-Match``), so an approval given for
  one state of the address book never changes another (RFC 7232 §3.1).
* :func:`unchanged`: before the first write of a multi-card change, every
  touched card's ETag is read again and compared, so a card changed meanwhile
  stops the whole change before anything is written.
* :func:`write_each` runs the writes of a multi-card change one by one and, on
  a failure part-way, says exactly which cards were changed, which were not,
  and (after a lost reply) what a fresh read found.
* :func:`create_card` creates a card with ``If-None-Match: *`` under a UID the
  caller may give; a retry with the same UID answers ``already_exists`` instead
  of writing a second card, and a lost reply is followed by a read that settles
  whether the card was created.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from approval_core import plan_writes, report_progress
from approval_core.serving.stored_text import quoted_name
from carddav_mcp.backend import Backend, parse_card
from carddav_mcp.client import CardData
from carddav_mcp.errors import BackendError, Conflict, NotFound, PreconditionFailed, Unreachable

__all__ = [
    "Created",
    "Write",
    "create_card",
    "existing_card",
    "moved_since_listed",
    "still_as_asked",
    "unchanged",
    "version_of",
    "write_each",
]


def version_of(field: str, etags: Mapping[str, str | None]) -> str:
    """The version an approval binds: one card's ETag, or a digest of several cards' (href, ETag) pairs.

    Args:
        field: The argument the cards came from (named in the error).
        etags: Card path → the ETag it was read with.

    Returns:
        The ETag itself for one card; otherwise ``"<n> cards sha256:<hex>"``,
        the digest of the sorted (href, ETag) pairs as compact JSON.

    Raises:
        BackendError: a card was read without an ETag, so a write could not be
            made conditional on it (RFC 6352 §6.3.2.3 requires one).
    """
    missing = sorted(href for href, etag in etags.items() if not etag)
    if missing:
        raise BackendError(
            f"{field}: the server gave no ETag for {', '.join(missing)}, so a change could not be bound to what "
            "was read; nothing was changed."
        )
    if len(etags) == 1:
        (etag,) = etags.values()
        assert etag is not None
        return etag
    pairs = json.dumps(sorted(etags.items()), separators=(",", ":"))
    return f"{len(etags)} cards sha256:{hashlib.sha256(pairs.encode()).hexdigest()}"


def still_as_asked(what: str, asked: Mapping[str, object], now: Mapping[str, object]) -> None:
    """After a pushed dialog: the target read again must equal the one the person was asked about.

    A pushed dialog (MCP 2025-11-25 ``elicitation/create``) may wait a while
    for its answer; the cards are then read again, and what the write would do
    (the members of a group, the counts the dialog stated) must not have
    changed meanwhile. ETags are checked by the writes themselves (``If-Match``)
    and by :func:`unchanged`.

    Raises:
        PreconditionFailed: something differs; the message names which parts,
            and nothing was written.
    """
    differ = sorted(key for key in {*asked, *now} if asked.get(key) != now.get(key))
    if differ:
        raise PreconditionFailed(
            f"{what}: what the question described changed on the server while the person was deciding "
            f"({', '.join(differ)}), so nothing was changed. Call again to be asked about the address book as it "
            "is now."
        )


def moved_since_listed(listed: CardData, fresh: CardData) -> bool:
    """Whether a card read fresh differs from the card a listing gave.

    By ETag; by content when the listing carried none (some servers), the GET's ETag then binding the write.
    XML gives the listed card's line ends as LF, so those are compared alike.
    """
    if listed.etag is None:
        return fresh.text.replace("\r\n", "\n") != listed.text.replace("\r\n", "\n")
    return fresh.etag != listed.etag


async def unchanged(
    backend: Backend, what: str, book: str, etags: Mapping[str, str | None], *, gone_ok: bool = False
) -> list[str]:
    """Check, before the first write, that every card still has the ETag it was read with.

    One addressbook-multiget of the cards (RFC 6352 §8.7); where it lists a card without its ETag, a GET of
    that card gives it (issue 22 §3: every write binds a version).

    Args:
        backend: Where the cards are read.
        what: The tool's name, for the message.
        book: The address book holding the cards.
        etags: Card path -> the ETag it was read with.
        gone_ok: A card that is gone is not a difference (a delete: someone
            else already did what was asked); it is returned instead.

    Returns:
        The cards that are gone (always empty unless ``gone_ok``).

    Raises:
        PreconditionFailed: one or more cards changed (or, without ``gone_ok``,
            are gone); the message names them, and nothing was written.
    """
    if not etags:
        return []
    client = backend.client()
    now = {card.href: card.etag for card in await client.multiget(book, sorted(etags))}
    for href in [h for h, etag in now.items() if etag is None]:  # a listing without ETags: each one by GET
        try:
            now[href] = (await client.get(href)).etag
        except NotFound:
            del now[href]
    changed = sorted(href for href, etag in etags.items() if href in now and now[href] != etag)
    gone = sorted(href for href in etags if href not in now)
    if gone_ok and not changed:
        return gone
    if gone_ok:
        gone = []
    if changed or gone:
        parts = [f"changed: {', '.join(changed)}"] if changed else []
        parts += [f"gone: {', '.join(gone)}"] if gone else []
        raise PreconditionFailed(
            f"{what}: {len(changed) + len(gone)} of the {len(etags)} cards this change touches differ from when "
            f"they were read ({'; '.join(parts)}), so nothing was written. Read them again and repeat the change "
            "if it still applies."
        )
    return []


@dataclass(frozen=True)
class Write:
    """One write of a multi-card change.

    Attributes:
        href: The card's path.
        run: Does the write (a PUT or DELETE with ``If-Match``).
        landed: After a lost reply: reads the card and says whether the write
            took effect (True), did not (False); it may raise if the server
            still cannot be reached.
    """

    href: str
    run: Callable[[], Awaitable[object]]
    landed: Callable[[], Awaitable[bool]]


async def write_each(what: str, writes: Sequence[Write]) -> list[str]:
    """Run ``writes`` in order; on a failure, report exactly which cards were changed and which were not.

    Returns:
        The paths written, in order.

    Raises:
        BackendError: of the failing write's kind (its status kept), its text
            followed by "Changed (k of n): ... Not changed: ..." when there was
            more than one write. After a lost reply (:class:`Unreachable`), also
            of a single write, the failing card is read again and counted where
            it belongs, or named as not known when even that read fails: a
            write that landed is never reported as only "could not reach".
    """
    if len(writes) > 1:
        await plan_writes([write.run for write in writes])  # APPROVAL_PROFILE=every-write: one question for all
    done: list[str] = []
    for index, write in enumerate(writes):
        try:
            await write.run()
        except BackendError as exc:
            rest = [w.href for w in writes[index + 1 :]]
            unknown: list[str] = []
            if isinstance(exc, Unreachable):
                try:
                    (done if await write.landed() else rest).append(write.href)
                except BackendError:
                    unknown.append(write.href)
                rest.sort()
            else:
                rest.insert(0, write.href)
            if len(writes) == 1 and not isinstance(exc, Unreachable):
                raise
            report = "Read back afterwards: " if isinstance(exc, Unreachable) else ""
            report += f"Changed ({len(done)} of {len(writes)}): {', '.join(done) or 'none'}."
            report += f" Not changed: {', '.join(rest) or 'none'}."
            if unknown:
                report += f" Not known (the server could not be reached to check): {', '.join(unknown)}."
            raise type(exc)(f"{what}: {exc} {report}", exc.status) from exc
        done.append(write.href)
        if len(writes) > 1:
            await report_progress(len(done), len(writes), "cards changed")
    return done


@dataclass(frozen=True)
class Created:
    """What :func:`create_card` did.

    Attributes:
        outcome: ``created``, or ``already_exists`` (nothing was written).
        card: The card as written, or as found on the server.
    """

    outcome: Literal["created", "already_exists"]
    card: CardData


async def existing_card(backend: Backend, book: str, href: str, uid: str) -> CardData | None:
    """The card of ``book`` whose UID is ``uid``: the one at ``href``, else one found by addressbook-query; or None.

    Raises:
        Conflict: the card at ``href`` has another UID (its file name is taken).
    """
    client = backend.client()
    try:
        found = await client.get(href)
    except NotFound:
        pass
    else:
        if await _uid_of(found) != uid:
            raise Conflict(f"uid: {href} is taken by a card with another UID; nothing was written. Choose another uid.")
        return found
    for other in await backend.hrefs_with_uid(book, uid):
        try:
            return await client.get(other)
        except NotFound:
            continue
    return None


async def _uid_of(data: CardData) -> str | None:
    try:
        return (await parse_card(data.text)).uid
    except ValueError:
        return None


async def create_card(backend: Backend, what: str, book: str, uid: str, text: str) -> Created:
    """Create the card ``text`` (UID ``uid``) in ``book`` at ``<book><uid>.vcf``, never twice.

    A card with this UID already there (at that path, or anywhere in the book
    by an addressbook-query) is answered ``already_exists`` with nothing
    written. Otherwise the PUT carries ``If-None-Match: *`` (RFC 7232 §3.2), so
    a card made meanwhile by someone else is never overwritten. When the
    server's reply is lost (:class:`Unreachable`), the card is read back: found
    means ``created``, not found means not created.

    Raises:
        Unreachable: the card was not created (the text says so), or, when the
            read-back failed too, whether it was created is not known (the text
            says to call again with the same UID, which is safe).
        BackendError: any other refusal of the PUT (nothing was written).
    """
    href = f"{book}{uid}.vcf"
    found = await existing_card(backend, book, href, uid)
    if found is not None:
        return Created("already_exists", found)
    client = backend.client()
    try:
        etag = await client.put(href, text, etag=None)
    except (PreconditionFailed, Conflict):
        found = await existing_card(backend, book, href, uid)
        if found is None:
            raise
        return Created("already_exists", found)
    except Unreachable as exc:
        again = quoted_name(uid, '"')  # the uid to pass again: fenced when of words
        try:
            found = await client.get(href)
        except NotFound:
            raise Unreachable(
                f"{what}: {exc} Read back afterwards, the card is not on the server: it was not created. "
                f"Calling again with uid {again} is safe."
            ) from exc
        except BackendError:
            raise Unreachable(
                f"{what}: {exc} Whether the card was created is not known: the server could not be reached to "
                f"check. Call again with uid {again}: it creates the card, or answers already_exists with its id."
            ) from exc
        return Created("created", found)
    return Created("created", CardData(href, etag, text))
