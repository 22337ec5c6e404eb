"""`python -m ntfy_mcp`: run the server (stdio, or Streamable HTTP with ``MCP_TRANSPORT=streamable-http``)."""

from ntfy_mcp.server import main

main()
