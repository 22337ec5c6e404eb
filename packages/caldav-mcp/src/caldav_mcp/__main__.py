"""`python -m caldav_mcp`: run the server (stdio, or Streamable HTTP with ``MCP_TRANSPORT=streamable-http``)."""

from caldav_mcp.server import main

main()
