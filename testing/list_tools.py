"""Start an installed server's console script over stdio, list its tools with an MCP client, check the count.

Used by ``nox -s release`` on each freshly installed wheel::

    python testing/list_tools.py /path/to/venv/bin/caldav-mcp 22 [NAME=VALUE ...]

The server runs with a minimal environment (``PATH``, ``HOME`` and the given
``NAME=VALUE`` pairs), so no backend and no ``ELICITATION`` setting leaks in.
Exits 0 and prints ``<script>: <n> tools`` when the server lists exactly the
expected number of tools; exits 1 with the reason on stderr otherwise (the
server failed to start, spoke something other than the protocol on stdout, or
listed a different number of tools).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path
from typing import TextIO

import anyio
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

TIMEOUT = 60  # seconds for start-up and tools/list together


async def list_tools(script: str, env: dict[str, str], errlog: TextIO) -> list[str]:
    """The tool names the server at ``script`` lists; its stderr goes to ``errlog``."""
    params = StdioServerParameters(command=script, args=[], env=env)
    with anyio.fail_after(TIMEOUT):
        async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:
            listed = await client.list_tools()
    return [tool.name for tool in listed.tools]


def main(argv: list[str]) -> int:
    """Check one console script; see the module docstring for the arguments."""
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    script, expected, extra = argv[0], int(argv[1]), argv[2:]
    env = {"PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "/")}
    env.update(pair.split("=", 1) for pair in extra)
    name = Path(script).name
    with tempfile.TemporaryFile("w+") as errlog:
        try:
            tools = anyio.run(list_tools, script, env, errlog)
            failure = ""
            if len(tools) != expected:
                failure = f"listed {len(tools)} tools, expected {expected}: {sorted(tools)}"
        except Exception as exc:  # any failure to start or to answer is a failed release check
            failure = f"did not answer tools/list over stdio: {exc!r}"
        errlog.seek(0)
        stderr = errlog.read()
    if failure:
        print(f"{name}: {failure}", file=sys.stderr)
        if stderr:
            print(f"{name} wrote on stderr:\n{stderr}", file=sys.stderr)
        return 1
    print(f"{name}: {len(tools)} tools")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
