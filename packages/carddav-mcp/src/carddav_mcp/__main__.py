"""`python -m carddav_mcp`: run the server (stdio, or Streamable HTTP with ``MCP_TRANSPORT=streamable-http``)."""

from carddav_mcp.server import main

main()
