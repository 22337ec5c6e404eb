"""caldav-mcp's tools, one module per kind of thing."""
