"""Building and running carddav-mcp.

`build_server(settings)` returns the MCP server with its approval gate;
`main()` reads the environment, prints the approval startup line on stderr
when there is one, and serves over stdio. Nothing is ever written to stdout
but the protocol.
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import MCPServer

from approval_core import ApprovalGate, ApprovalSettings, load_settings_or_exit
from carddav_mcp.guards import GUARDS

SERVER_NAME = "carddav-mcp"


def build_server(settings: ApprovalSettings) -> MCPServer[Any]:
    """The carddav-mcp server, its approval gate attached (no backend needed to list tools)."""
    server: MCPServer[Any] = MCPServer(SERVER_NAME)
    ApprovalGate.attach(server, GUARDS, settings)
    return server


def main() -> None:
    """Console script `carddav-mcp`: exit code 1 on a bad setting, else serve over stdio."""
    settings = load_settings_or_exit(SERVER_NAME)
    build_server(settings).run("stdio")
