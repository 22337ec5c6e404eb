"""`python -m caldav_mcp`: run the server over stdio."""

from caldav_mcp.server import main

main()
