"""`python -m ntfy_mcp`: run the server over stdio."""

from ntfy_mcp.server import main

main()
