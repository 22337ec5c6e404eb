"""RFC 3744 §5.4: whether the account may write where it is about to, as the server publishes it."""

from __future__ import annotations

from webdav_core import xml
from webdav_core.session import ConfinedSession
from webdav_core.xml import DAV, DavResponse

__all__ = ["WRITE_PRIVILEGES", "allows_write", "can_write"]

WRITE_PRIVILEGES = frozenset({"write", "write-content", "bind", "all"})
"""The privileges (RFC 3744 §3.1, §3.3, §3.9, §3.12) any of which lets the account store a resource."""


def allows_write(response: DavResponse) -> bool | None:
    """Whether ``DAV:current-user-privilege-set`` (RFC 3744 §5.4) grants a write privilege; None when absent."""
    privileges = response.props.get(f"{{{DAV}}}current-user-privilege-set")
    if privileges is None:
        return None
    names = {el.tag.split("}")[-1] for el in privileges.iter() if el.tag != privileges.tag}
    return bool(names & WRITE_PRIVILEGES)


async def can_write(session: ConfinedSession, path: str) -> bool | None:
    """Whether the account may write at ``path``: one depth-0 PROPFIND of ``current-user-privilege-set``.

    Returns:
        True when it grants ``write``, ``write-content``, ``bind`` or ``all``;
        False when it grants none of them; None when the server does not publish
        the property (then only the write itself can tell).

    Raises:
        not_found: nothing at ``path``.  forbidden: not even reading it is allowed.
    """
    body = xml.propfind([(DAV, "current-user-privilege-set")])
    ms = await session.multistatus("PROPFIND", path, body, "0", f"read the privileges on {path}")
    for response in ms.responses:
        allowed = allows_write(response)
        if allowed is not None:
            return allowed
    return None
