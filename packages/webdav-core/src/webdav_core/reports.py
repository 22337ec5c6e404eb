"""What a DAV server's ``get_server_info`` says of discovery: one output shape for every DAV server.

A server extends :class:`DiscoveryOut` with its home field (caldav-mcp's
``home_sets``, carddav-mcp's ``home``); the fields shared are filled from a
:class:`~webdav_core.discovery.Discovery` by :meth:`DiscoveryOut.shared`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

if TYPE_CHECKING:
    from webdav_core.discovery import Discovery

__all__ = ["DiscoveryOut"]


class DiscoveryOut(BaseModel):
    """How the collections were found from the configured URL (RFC 6764 §6, RFC 5397)."""

    method: Literal["given URL", "principal", "well-known"] = Field(
        description="principal: the configured URL (CALDAV_URL, CARDDAV_URL) named the current-user-principal; "
        "well-known: it did not, the RFC 6764 well-known path (/.well-known/caldav, /.well-known/carddav) did; "
        "given URL: no principal anywhere, the configured URL is the collection or its home."
    )
    url: str = Field(description="The path of the configured URL.")
    well_known: str | None = Field(
        default=None, description="Where the well-known path led (same-origin redirects followed), when used."
    )
    principal: str | None = Field(default=None, description="The principal's path, when one was named.")

    @staticmethod
    def shared(found: Discovery) -> dict[str, Any]:
        """The shared fields of a :class:`~webdav_core.discovery.Discovery`, as keyword arguments."""
        return {"method": found.method, "url": found.url, "well_known": found.well_known, "principal": found.principal}
