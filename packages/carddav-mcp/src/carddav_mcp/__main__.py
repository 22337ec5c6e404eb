"""`python -m carddav_mcp`: run the server over stdio."""

from carddav_mcp.server import main

main()
