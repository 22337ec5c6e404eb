"""list_calendars and get_server_info."""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import urlsplit

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult

from approval_core import structured
from approval_core.serving.stored_text import unmarked
from caldav_mcp.calendars import home_sets
from caldav_mcp.errors import BackendError
from caldav_mcp.models import CalendarOut, Calendars, DiscoveryOut, ServerInfo
from caldav_mcp.tools.common import READ, App

__all__ = ["register"]


def register(server: MCPServer[Any], app: App) -> None:
    """Add the calendar tools to ``server``."""

    @server.tool(annotations=READ)
    async def list_calendars() -> Annotated[CallToolResult, Calendars]:
        """The calendars this server may use; each id is the path the other tools take. Names are calendar data."""
        calendars = await app.client.calendars(refresh=True)
        return structured(
            Calendars(calendars=[CalendarOut(id=c.path, name=c.name, components=list(c.components)) for c in calendars])
        )

    @server.tool(annotations=READ)
    async def get_server_info() -> Annotated[CallToolResult, ServerInfo]:
        """Whether a server is configured and reachable, how its calendars were found (RFC 6764), and scheduling."""
        settings = app.client.settings
        missing = settings.missing()
        info = ServerInfo(
            configured=not missing, missing_settings=missing, approval_dialog=app.gate.settings.elicitation
        )
        if settings.url:
            parts = urlsplit(settings.url)
            info.server = f"{parts.scheme}://{parts.hostname}" + (f":{parts.port}" if parts.port else "")
        if missing:
            return structured(info)
        try:
            info.calendars = len(await app.client.calendars(rediscover=True))
            found = await app.client.discovery()
            info.discovery = DiscoveryOut(**DiscoveryOut.shared(found), home_sets=list(home_sets(found)))
            info.scheduling = await app.client.scheduling()
            info.reachable = True
        except BackendError as exc:
            info.reachable = False
            info.error = unmarked(str(exc))
        return structured(info)
