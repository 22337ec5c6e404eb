"""Putting back what a guarded change removed: looking where it was, then one conditional write.

A server's undo journal (``approval_core.records.journal``) keeps an entry's
bytes as the server sent them before a DELETE, an overwrite or a MOVE. To put
them back, :func:`plan_restore` reads the places involved and decides one of
three writes, each conditional, never blind:

``create``
    The entry is gone from where the change left it (deleted, or deleted
    since): ``PUT`` at its old href with ``If-None-Match: *`` (RFC 9110
    §13.1.2), so nothing that came there meanwhile is overwritten.
``replace``
    It was overwritten, and is still at the version the change left: ``PUT``
    with ``If-Match`` on that ETag (RFC 9110 §13.1.1).
``move_back``
    It was moved, and is in the destination still as it was (the same bytes, line ends aside):
    ``MOVE`` back with ``Overwrite: F`` and ``If-Match`` on the ETag just read
    (RFC 4918 §9.9), so a change made there since, or an entry that came to the
    old place, stops it.

A change that also created an entry (``made``: a split series' new part, under
its own id) is not undone while that entry is there: putting the old one back
would leave both, so the restore is refused naming the new entry's id, and
goes ahead once it is gone.

Anything else is refused with the reason (someone changed it since, something
is at its old place now, it is already as it was), naming hrefs only, never
stored text. A 412 on the write means it changed between the look and the
write; it is reported, never retried.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from webdav_core.client import WebDavClient

__all__ = ["RestorePlan", "plan_restore", "put_back"]

Action = Literal["create", "replace", "move_back"]


@dataclass(frozen=True, slots=True)
class RestorePlan:
    """The one write that puts an entry back.

    Attributes:
        action: ``create``, ``replace`` or ``move_back`` (see the module docstring).
        href: Where the entry goes back to (its href before the change).
        source: ``move_back``: where it is now; else None.
        version: The ETag the write is conditional on (``If-Match``); None for ``create`` (``If-None-Match: *``).
    """

    action: Action
    href: str
    source: str | None
    version: str | None


def _same(stored: bytes, kept: bytes) -> bool:
    """Whether two versions are the same text: equal bytes once line ends are alike.

    An XML REPORT turns CRLF into LF (XML 1.0 §2.11), so an entry kept from a listing has LF where a GET
    answers with CRLF.
    """
    return stored.replace(b"\r\n", b"\n") == kept.replace(b"\r\n", b"\n")


async def _look(client: WebDavClient, href: str) -> tuple[bytes, str | None] | None:
    """``(bytes, ETag)`` at ``href``, or None when nothing is there."""
    try:
        answer = await client.fetch(href)
    except client.profile.errors.not_found:
        return None
    return answer.content, answer.headers.get("ETag")


async def plan_restore(
    client: WebDavClient,
    *,
    kind: str,
    href: str,
    after_href: str,
    after_etag: str | None,
    data: bytes,
    tool: str,
    made: Sequence[str] | None = None,
) -> RestorePlan:
    """Read where the entry was and where the change left it; decide the write (nothing is written here).

    Args:
        client: The server's WebDAV client (every href is confined by it).
        kind: What the change did: ``deleted``, ``overwritten`` or ``moved``.
        href: Where the entry was before the change.
        after_href: Where the change left it (a move's destination; else ``href``).
        after_etag: The ETag the change left, when known.
        data: The bytes kept before the change.
        tool: The tool whose change is undone (for messages).
        made: ``[href, id]`` of an entry the change created beside this one, or None.

    Raises:
        conflict: it cannot be put back without overwriting a change made since, or the entry the change
            created is still there (the message says which).
    """
    conflict = client.profile.errors.conflict
    item = client.profile.item
    if made is not None and await _look(client, made[0]) is not None:
        made_href, made_id = made
        raise conflict(
            f"{tool} also created the {item} {made_id} at {made_href} beside this one (a series split in two "
            "leaves its later part there), and it is still there: putting the earlier version back would leave "
            f"both, so what they share would show twice. Delete {made_id} first, then restore; nothing was "
            "written.",
            None,
        )
    here = await _look(client, href)
    if here is not None and _same(here[0], data):
        raise conflict(f"{href} is already as it was before {tool}: there is nothing to restore.", None)
    if kind == "moved":
        there = await _look(client, after_href)
        if there is not None and here is None:
            if not _same(there[0], data) or there[1] is None:
                raise conflict(
                    f"the {item} {tool} moved to {after_href} has changed there since, so it is not moved back; "
                    "nothing was written.",
                    None,
                )
            return RestorePlan("move_back", href, after_href, there[1])
        if there is not None:
            raise conflict(
                f"another {item} is at {href} now, so the one {tool} moved to {after_href} is not moved back over "
                "it; nothing was written.",
                None,
            )
    if here is None:
        return RestorePlan("create", href, None, None)
    if kind == "overwritten" and after_etag is not None and here[1] == after_etag:
        return RestorePlan("replace", href, None, after_etag)
    if kind == "overwritten" and after_etag is None:
        raise conflict(
            f"the {item} at {href} cannot be told apart from a later change (the server named no version after "
            f"{tool}), so it is not overwritten; nothing was written.",
            None,
        )
    changed = "has changed since" if kind == "overwritten" else "was written again since"
    raise conflict(
        f"the {item} at {href} {changed} {tool}, so the restore would overwrite that change and is refused; "
        "nothing was written.",
        None,
    )


async def put_back(client: WebDavClient, plan: RestorePlan, data: bytes, content_type: str) -> str | None:
    """Make the write :func:`plan_restore` decided; returns the new ETag when the server names one.

    Raises:
        precondition_failed: the place changed between the look and the write (412; not retried).
        conflict: a move back found its old place taken.
    """
    if plan.action == "move_back":
        assert plan.source is not None
        await client.move(plan.source, plan.href, plan.version)
        return plan.version
    return await client.store(plan.href, data, content_type, etag=plan.version)
