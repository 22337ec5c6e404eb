"""The error boundary: every tool failure reaches the caller as a clear tool error."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from mcp.server.mcpserver import MCPServer

from approval_core import install_error_boundary
from approval_core.testing import connect

pytestmark = pytest.mark.anyio


class OwnError(Exception):
    """A server's own error: its text is written for the model."""


class LibraryError(Exception):
    """What a library raises."""


def build() -> MCPServer[Any]:
    server: MCPServer[Any] = MCPServer("boundary-mcp")

    @server.tool()
    async def own() -> str:
        """Fails with the server's own error."""
        raise OwnError("calendar: no such calendar /cal/x/")

    @server.tool()
    async def library() -> str:
        """Fails inside a library the server knows."""
        raise LibraryError("parse failure at byte 7")

    @server.tool()
    async def crash() -> str:
        """Fails with a defect."""
        return {}["missing"]

    def translate(exc: Exception) -> Exception | None:
        return OwnError(f"the backend's answer could not be read ({exc})") if isinstance(exc, LibraryError) else None

    install_error_boundary(server, OwnError, translate)
    install_error_boundary(server, OwnError, translate)  # idempotent
    return server


async def test_own_errors_keep_their_text_and_log_no_traceback(caplog) -> None:
    caplog.set_level(logging.INFO)
    async with connect(build(), revision="2026-07-28") as client:
        result = await client.call_tool("own", {})
    assert result.is_error
    assert result.content[0].text == "calendar: no such calendar /cal/x/"
    assert not [r for r in caplog.records if r.exc_info]


async def test_a_known_library_error_is_translated() -> None:
    async with connect(build(), revision="2026-07-28") as client:
        result = await client.call_tool("library", {})
    assert result.is_error
    assert result.content[0].text == "the backend's answer could not be read (parse failure at byte 7)"


async def test_a_defect_names_the_tool_and_the_kind_and_logs_once(caplog) -> None:
    async with connect(build(), revision="2025-11-25") as client:
        result = await client.call_tool("crash", {})
    assert result.is_error
    text = result.content[0].text
    assert text.startswith("crash stopped on an unexpected internal error (KeyError)")
    assert "Whether anything was changed is not known" in text
    assert len([r for r in caplog.records if r.exc_info]) == 1


async def test_a_tool_error_goes_out_without_the_sdk_prefix() -> None:
    from mcp.server.mcpserver.exceptions import ToolError

    server = build()

    @server.tool()
    async def refuse(calendar: str) -> str:
        """Refuses with a ToolError of its own."""
        raise ToolError(f"calendar: {calendar} is not one of the allowed calendars")

    async with connect(server, revision="2026-07-28") as client:
        refused = await client.call_tool("refuse", {"calendar": "/x/"})
        invalid = await client.call_tool("refuse", {})
    assert refused.is_error
    assert refused.content[0].text == "calendar: /x/ is not one of the allowed calendars"
    assert invalid.is_error
    assert not invalid.content[0].text.startswith("Error executing tool")
    assert "calendar" in invalid.content[0].text
