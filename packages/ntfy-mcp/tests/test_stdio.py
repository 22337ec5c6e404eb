"""End to end over real stdio: `python -m ntfy_mcp` spawned as an MCP client would, against the real ntfy."""

from __future__ import annotations

import os
import sys
import tempfile

import httpx2
import pytest
from mcp.client.stdio import StdioServerParameters, stdio_client
from ntfy_server import NtfyServer

from approval_core.testing import DialogLog, accept, connect

pytestmark = [pytest.mark.anyio, pytest.mark.stdio]
LINE = "ntfy-mcp: ELICITATION=false — guarded tools fall back to the two-call token"


def params(ntfy: NtfyServer, topic: str, **env: str) -> StdioServerParameters:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("NTFY_", "ELICITATION"))}
    env = {
        **base,
        "NTFY_URL": ntfy.url,
        "NTFY_USERNAME": ntfy.admin_user,
        "NTFY_PASSWORD": ntfy.admin_password,
        "NTFY_TOPICS": topic,
        **env,
    }
    return StdioServerParameters(command=sys.executable, args=["-m", "ntfy_mcp"], env=env)


async def test_publish_read_and_a_guarded_call_over_stdio(ntfy: NtfyServer, topic: str) -> None:
    log = DialogLog(accept)
    async with connect(params(ntfy, topic), revision="2025-11-25", answer=log) as client:
        tools = (await client.list_tools()).tools
        sent = await client.call_tool("publish_message", {"message": "over stdio", "priority": 2})
        listed = await client.call_tool("list_messages", {})
        created = await client.call_tool("create_user", {"username": topic, "password": "stdio-password"})
    assert len(tools) == 13
    assert sent.structured_content["results"][0]["topic"] == topic
    assert [m["message"] for m in listed.structured_content["messages"]] == ["over stdio"]
    assert not created.is_error
    assert log.messages[0].startswith("Create 1 account on this ntfy server")
    account = httpx2.get(f"{ntfy.url}/v1/account", auth=(topic, "stdio-password")).json()
    assert account["username"] == topic


async def test_switched_off_prints_one_line_and_takes_the_token_path(ntfy: NtfyServer, topic: str) -> None:
    with tempfile.TemporaryFile("w+") as errlog:
        async with connect(
            stdio_client(params(ntfy, topic, ELICITATION="false"), errlog=errlog), revision="2026-07-28"
        ) as client:
            first = await client.call_tool("create_user", {"username": topic, "password": "stdio-password"})
        errlog.seek(0)
        stderr = errlog.read()
    assert first.is_error
    assert "ntfy-mcp was started with the approval dialog switched off" in first.content[0].text
    assert "stdio-password" not in first.content[0].text
    assert stderr.splitlines()[0] == LINE
    assert stderr.count(LINE) == 1


async def test_without_ntfy_url_it_starts_lists_its_tools_and_each_call_says_what_to_set() -> None:
    """Family rule: an unconfigured server starts; nothing is sent anywhere (there is no default server)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NTFY_", "ELICITATION"))}
    server = StdioServerParameters(command=sys.executable, args=["-m", "ntfy_mcp"], env=env)
    with tempfile.TemporaryFile("w+") as errlog:
        async with connect(stdio_client(server, errlog=errlog), revision="2025-11-25") as client:
            tools = (await client.list_tools()).tools
            results = [await client.call_tool(name, {}) for name in ("get_server_info", "list_users", "get_account")]
        errlog.seek(0)
        stderr = errlog.read()
    assert len(tools) == 13
    for result in results:
        assert result.is_error
        assert result.content[0].text.startswith("NTFY_URL is not set")
    assert "ntfy-mcp: NTFY_URL is not set; the tools are listed and each call says what to set" in stderr
