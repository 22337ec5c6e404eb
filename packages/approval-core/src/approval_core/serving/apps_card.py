"""The approval card: an MCP Apps view (``io.modelcontextprotocol/ui``) for hosts that show no dialog.

claude.ai and ChatGPT show neither form nor URL elicitation, but they render MCP Apps: a tool
whose definition carries ``_meta.ui.resourceUri`` gets its results drawn by the ``ui://``
resource it names, an HTML document the host runs in a sandboxed frame (MCP Apps, SEP-1865,
stable 2026-01-26; :mod:`mcp.server.apps`). Where the approval page is set up
(``APPROVAL_PAGE=true``), :func:`install_approval_card` gives every tool that may ask such a
view: the server's own card, :data:`CARD_URI`. When a call waits for the page, the refusal's
``_meta["approval-core/approval"]`` carries the operation (the server's own words, as in the
dialog), the page's URL and the code; the card shows the operation and the code, and a button
that asks the host to open the page in a new tab (``ui/open-link``). Any other result gets one
neutral line. The card reads nothing else and writes every value as text.

The card decides nothing. A view's requests cannot be told apart from the model's, so it has
no approve button and calls no tool: the person decides on the page, with the paired passkey.

Declared only to clients that declare the extension (SEP-2133): ``tools/list`` adds the
``_meta.ui`` entry, and ``resources/list`` the card, only for a client whose capabilities name
``io.modelcontextprotocol/ui`` with the ``text/html;profile=mcp-app`` MIME type
(:func:`mcp.server.apps.client_supports_apps`). The server's capabilities name the extension
whenever the card is installed. Every other client sees the tools and resources as before.
"""

from __future__ import annotations

from collections.abc import Iterable
from importlib import resources
from typing import Any

from mcp.server.apps import APP_MIME_TYPE, EXTENSION_ID, client_supports_apps
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.resources import TextResource
from mcp_types import ListResourcesResult, ListToolsResult, PaginatedRequestParams

__all__ = ["CARD_URI", "card_html", "install_approval_card"]

CARD_URI = "ui://approval-core/approval-card.html"
"""The card's resource URI (the same for every server: the card names no server)."""

_MARK = "_approval_core_card"


def card_html() -> str:
    """The card's HTML document (``approval_core/serving/approval_card.html``)."""
    return resources.files("approval_core").joinpath("serving", "approval_card.html").read_text(encoding="utf-8")


def install_approval_card(server: MCPServer[Any], tools: Iterable[str]) -> None:
    """Give each of ``tools`` the approval card, for clients that declare MCP Apps (idempotent).

    Registers the card as a ``ui://`` resource (``text/html;profile=mcp-app``), names the extension in
    the server's capabilities, and wraps ``tools/list`` and ``resources/list`` so that only a client
    declaring the extension sees ``_meta.ui.resourceUri`` on those tools and the card among the resources.

    Args:
        server: The family server (after its tools are registered).
        tools: The tools that may ask a person (the guard table's, and under every-write every tool that
            changes data).
    """
    if getattr(server, _MARK, False):
        return
    carded = frozenset(tools)
    server.add_resource(
        TextResource(
            uri=CARD_URI,
            name="approval-card",
            title="Approval card",
            description="Shows the operation and code of a call waiting on the approval page, and opens the page",
            mime_type=APP_MIME_TYPE,
            text=card_html(),
        )
    )
    low = server._lowlevel_server  # pyright: ignore[reportPrivateUsage]  # the SDK's handler registry
    low.extensions[EXTENSION_ID] = {}
    listed_tools, listed_resources = low.get_request_handler("tools/list"), low.get_request_handler("resources/list")
    if listed_tools is None or listed_resources is None:
        raise RuntimeError("the server has no tools/list or resources/list handler to wrap")
    tools_handler, resources_handler = listed_tools.handler, listed_resources.handler

    async def list_tools(ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams | None) -> Any:
        result = await tools_handler(ctx, params)
        if not isinstance(result, ListToolsResult) or not client_supports_apps(ctx):
            return result
        ui = {"ui": {"resourceUri": CARD_URI, "visibility": ["model", "app"]}}
        shown = [
            tool.model_copy(update={"meta": {**(tool.meta or {}), **ui}}) if tool.name in carded else tool
            for tool in result.tools
        ]
        return result.model_copy(update={"tools": shown})

    async def list_resources(ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams | None) -> Any:
        result = await resources_handler(ctx, params)
        if not isinstance(result, ListResourcesResult) or client_supports_apps(ctx):
            return result
        kept = [r for r in result.resources if str(r.uri) != CARD_URI]
        return result.model_copy(update={"resources": kept})

    low.add_request_handler("tools/list", PaginatedRequestParams, list_tools)
    low.add_request_handler("resources/list", PaginatedRequestParams, list_resources)
    setattr(server, _MARK, True)
