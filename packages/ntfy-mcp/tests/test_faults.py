"""What the model reads when ntfy fails: ntfy's JSON errors (real), 5xx and timeouts (stand-in), no server."""

from __future__ import annotations

import socket

import pytest
from ntfy_conftest import real_server, standin_server
from ntfy_server import NtfyServer

from approval_core import ApprovalSettings
from approval_core.testing import connect
from ntfy_mcp import build_server
from ntfy_mcp.settings import NtfySettings
from standin import NtfyStandIn

pytestmark = pytest.mark.anyio


async def test_ntfys_json_errors_become_clear_tool_errors(ntfy: NtfyServer) -> None:
    server = real_server(ntfy, username="admin", password="wrong-password")
    async with connect(server, revision="2025-11-25") as client:
        result = await client.call_tool("get_account", {})
    assert result.is_error
    text = result.content[0].text
    assert "HTTP 401" in text
    assert "40101" in text
    assert "wrong-password" not in text


async def test_anonymous_access_to_a_deny_all_topic_is_a_403(ntfy: NtfyServer, topic: str) -> None:
    server = build_server(ApprovalSettings(), NtfySettings(url=ntfy.url))
    async with connect(server, revision="2025-11-25") as client:
        access = await client.call_tool("check_topic_access", {"topic": topic})
        publish = await client.call_tool("publish_message", {"topics": [topic], "message": "m"})
    assert access.structured_content == {"topic": topic, "read": False, "allowed_by_config": True, "untrusted": []}
    assert publish.is_error
    assert "40301" in publish.content[0].text


@pytest.mark.parametrize(("fault", "expected"), [("5xx", "HTTP 503"), ("timeout", "did not answer")])
async def test_a_failing_server_is_reported_not_retried(fault: str, expected: str) -> None:
    standin = NtfyStandIn(fault=fault)
    async with connect(standin_server(standin), revision="2025-11-25") as client:
        result = await client.call_tool("publish_message", {"topics": ["alerts"], "message": "m"})
        info = await client.call_tool("get_server_info", {})
    assert result.is_error
    assert expected in result.content[0].text
    assert info.is_error
    assert [m for m, _ in standin.requests].count("POST") == 1


async def test_no_server_at_the_url() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    server = build_server(ApprovalSettings(), NtfySettings(url=f"http://127.0.0.1:{port}", timeout=2))
    async with connect(server, revision="2025-11-25") as client:
        result = await client.call_tool("get_server_info", {})
    assert result.is_error
    assert "cannot reach ntfy" in result.content[0].text


async def test_a_server_without_ntfy_settings_lists_tools_and_each_call_names_the_variable(monkeypatch) -> None:
    monkeypatch.delenv("NTFY_URL", raising=False)
    server = build_server(ApprovalSettings())
    async with connect(server, revision="2025-11-25") as client:
        tools = (await client.list_tools()).tools
        result = await client.call_tool("get_account", {})
    assert len(tools) == 13
    assert result.is_error
    assert "NTFY_URL is not set" in result.content[0].text


async def test_a_library_failure_the_client_did_not_expect_is_still_a_clear_error(caplog) -> None:
    """The error boundary's translator: an httpx2 error outside the client's own handling names itself."""
    standin = NtfyStandIn(fault="stream")
    async with connect(standin_server(standin), revision="2025-11-25") as client:
        result = await client.call_tool("get_account", {})
    assert result.is_error
    assert result.content[0].text == (
        "the request to ntfy failed (StreamClosed); whether ntfy acted on it is not known"
    )
    assert "Traceback" not in caplog.text
