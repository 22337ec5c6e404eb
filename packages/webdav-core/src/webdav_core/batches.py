"""Reading many members of a collection when the server cannot send them all at once.

One stored entry a server cannot serialise (or cannot parse to filter) can make
a REPORT that names it fail as a whole: a 5xx, or a 2xx whose body is not a
readable multistatus. :func:`read_in_batches` reads members a batch at a time
(a multiget REPORT, the server's own), and a batch that fails so is read again
one member at a time (GET): the rest are kept, and the member the server cannot
send is named with why, so a listing loses that one entry and no other.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from webdav_core.errors import Errors
from webdav_core.origin import shown

__all__ = ["Batched", "failed_whole", "read_in_batches"]

log = logging.getLogger("webdav_core")

T = TypeVar("T")


@dataclass(frozen=True)
class Batched(Generic[T]):
    """What :func:`read_in_batches` read: the members, and those the server cannot send.

    Attributes:
        found: What ``many`` or ``one`` returned, in the order of the hrefs' batches.
        failed: (href, why) of each member the server failed even alone.
    """

    found: list[T] = field(default_factory=lambda: [])
    failed: list[tuple[str, str]] = field(default_factory=lambda: [])


def failed_whole(exc: BaseException) -> bool:
    """Whether a server failed a request as a whole: a 5xx, or a 2xx whose answer could not be read.

    Not a 4xx (the request itself was refused: asking again member by member
    changes nothing), and not a request with no answer at all (the server or the
    network is down: reading more would only fail more slowly).
    """
    status: object = getattr(exc, "status", None)
    return isinstance(status, int) and (status >= 500 or 200 <= status < 300)


async def read_in_batches(
    hrefs: Sequence[str],
    many: Callable[[list[str]], Awaitable[list[T]]],
    one: Callable[[str], Awaitable[T]],
    *,
    errors: Errors,
    size: int,
    where: str,
    progress: Callable[[int, int], Awaitable[None]] | None = None,
) -> Batched[T]:
    """Read the members at ``hrefs``, ``size`` at a time with ``many``, one by one with ``one`` where that fails.

    Args:
        hrefs: The members' paths.
        many: Reads one batch (a multiget REPORT); members missing from its answer are simply absent.
        one: Reads one member (GET).
        errors: The server's exception classes (``Profile.errors``).
        size: Hrefs per batch.
        where: The collection, for the log.
        progress: Awaited after each batch with (members read, members asked), when more than one batch.

    Returns:
        Everything read; a member gone meanwhile (``not_found``) is left out silently, one
        the server fails alone (a status, or an answer that cannot be read) is in ``failed``.

    Raises:
        errors.backend: a batch failed other than as a whole (:func:`failed_whole`), or one
            member's read got no answer at all, or was refused for the account (``unauthenticated``).
    """
    out: Batched[T] = Batched()
    wanted = list(hrefs)
    for start in range(0, len(wanted), size):
        batch = wanted[start : start + size]
        try:
            out.found.extend(await many(batch))
        except errors.backend as exc:
            if not failed_whole(exc):
                raise
            log.warning("the server failed a read of %d members of %s (%s); reading them one by one",
                        len(batch), shown(where), exc)  # fmt: skip
            await _one_by_one(batch, one, errors, out)
        if progress is not None and len(wanted) > size:
            await progress(start + len(batch), len(wanted))
    return out


async def _one_by_one(batch: list[str], one: Callable[[str], Awaitable[T]], errors: Errors, out: Batched[T]) -> None:
    for href in batch:
        try:
            out.found.append(await one(href))
        except errors.not_found:
            continue  # deleted meanwhile
        except errors.unauthenticated:
            raise
        except errors.backend as exc:
            if getattr(exc, "status", None) is None and not isinstance(exc, errors.too_large):
                raise  # no answer at all: the server is not there, not this one member
            log.warning("left out %s: the server cannot send it (%s)", shown(href), exc)
            out.failed.append((href, str(exc)))
