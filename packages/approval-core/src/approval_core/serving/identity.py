"""Who a family server is, as MCP tells a client: ``serverInfo`` and how long its tool list stays true.

MCP 2025-11-25 gives the ``Implementation`` a server introduces itself with a ``title`` (for people), a
``description``, a ``websiteUrl`` and ``icons``, besides ``name`` and ``version``. :func:`identity` gives
a server's ``MCPServer(...)`` those, from its distribution's metadata (``Summary``; a ``Project-URL``
named ``Homepage``, ``Documentation`` or ``Repository``, when the distribution declares one) and its own
title and icon.

It also sets the ``ttlMs`` of ``tools/list`` on 2026-07-28 (``CacheableResult``): a server of the family
registers its tools once, when it is built (``TOOLS`` and ``APPROVAL_PROFILE`` are read at start), and
never changes the list while the process runs, so a client may keep the list for
:data:`TOOL_LIST_TTL_MS`. A restart with other settings is the only change; an hour bounds how long a
client that keeps the list across it may show a stale one. The scope stays ``private``.
"""

from __future__ import annotations

import base64
import importlib.metadata
from typing import Any

from mcp.server.caching import CacheHint
from mcp_types import Icon

__all__ = ["TOOL_LIST_TTL_MS", "identity"]

TOOL_LIST_TTL_MS = 3_600_000
"""Milliseconds a client may keep a family server's tool list (one hour; the list never changes in a process)."""

_SITE_LABELS = ("homepage", "documentation", "repository", "source")


def _website(metadata: importlib.metadata.PackageMetadata) -> str | None:
    for entry in metadata.get_all("Project-URL") or []:
        label, _, url = entry.partition(",")
        if label.strip().lower() in _SITE_LABELS and url.strip().startswith("https://"):
            return url.strip()
    return None


_SVG = (
    '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24" fill="none" stroke="currentColor" '
    'stroke-width="2">{shapes}</svg>'
)


def identity(distribution: str, title: str, icon_shapes: str) -> dict[str, Any]:
    """The keyword arguments of ``MCPServer(...)`` that say who the server is.

    Args:
        distribution: The server's distribution name (``caldav-mcp``); its metadata gives the version, the
            description (``Summary``) and the website (a ``Project-URL``, or None when it declares none).
        title: A short title for people (``"CalDAV calendars"``).
        icon_shapes: The SVG shapes of the server's icon on a 24 x 24 grid, stroked in the text colour (no
            script); sent as an SVG document in a ``data:`` URI.

    Returns:
        ``version``, ``title``, ``description``, ``website_url``, ``icons`` and ``cache_hints`` (``tools/list``:
        :data:`TOOL_LIST_TTL_MS`, private).
    """
    metadata = importlib.metadata.metadata(distribution)
    svg = _SVG.format(shapes=icon_shapes).encode("utf-8")
    source = "data:image/svg+xml;base64," + base64.b64encode(svg).decode("ascii")
    return {
        "version": metadata["Version"],
        "title": title,
        "description": metadata["Summary"],
        "website_url": _website(metadata),
        "icons": [Icon(src=source, mime_type="image/svg+xml", sizes=["any"])],
        "cache_hints": {"tools/list": CacheHint(ttl_ms=TOOL_LIST_TTL_MS, scope="private")},
    }
