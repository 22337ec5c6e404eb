"""The 13 tools, one module per kind of thing: messages, revisions, administration, the server."""
