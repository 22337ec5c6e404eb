"""langchain-mcp-adapters' default client over stdio: one server process per tool call.

Usage: ``client.py SERVER_JSON``, where SERVER_JSON is the stdio connection
(``{"command": ..., "args": [...], "env": {...}}``). It lists the tools with
``MultiServerMCPClient.get_tools()`` (no session kept, so every call starts the
server anew), calls ``delete_items`` (refused with a confirm token: this client
declares no elicitation), calls it again with the token, then ``list_items``,
and prints one JSON object: the texts of the first two calls and the listed items.
"""

import asyncio
import json
import re
import sys

from langchain_core.tools import ToolException
from langchain_mcp_adapters.client import MultiServerMCPClient

ARGS = {"book": "/books/work/", "ids": ["a"]}


async def main() -> None:
    """Run the three calls and print what the adapter returned."""
    connection = {**json.loads(sys.argv[1]), "transport": "stdio"}
    client = MultiServerMCPClient({"example": connection})
    tools = {tool.name: tool for tool in await client.get_tools()}
    try:
        first = str(await tools["delete_items"].ainvoke(ARGS))
    except ToolException as refused:
        first = str(refused)
    token = re.search(r'confirm_token="([^"]+)"', first)
    second = str(await tools["delete_items"].ainvoke({**ARGS, "confirm_token": token[1] if token else ""}))
    listed = await tools["list_items"].ainvoke({})
    print(json.dumps({"first": first, "second": second, "listed": str(listed)}))


asyncio.run(main())
