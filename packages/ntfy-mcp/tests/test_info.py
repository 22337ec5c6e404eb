"""get_server_info, get_account, check_topic_access against the real ntfy; the tool table."""

from __future__ import annotations

import httpx2
import pytest
from ntfy_conftest import real_server, standin_server
from ntfy_server import NtfyServer

from approval_core import ApprovalSettings
from approval_core.testing import connect
from ntfy_mcp import build_server
from ntfy_mcp.guards import GUARDS
from ntfy_mcp.settings import NtfySettings
from standin import NtfyStandIn

pytestmark = pytest.mark.anyio


async def test_server_info_as_admin(ntfy: NtfyServer, topic: str) -> None:
    async with connect(real_server(ntfy, topics=(topic,)), revision="2025-11-25") as client:
        await client.call_tool("publish_message", {"message": "count me"})
        result = await client.call_tool("get_server_info", {})
    info = result.structured_content
    assert info["healthy"] is True
    assert info["authenticated_as"] == ntfy.admin_user
    assert info["role"] == "admin"
    assert info["admin_tools"] is True
    assert info["messages"] >= 1
    assert info["topics"] == [topic]
    if ntfy.version >= (2, 17, 0):
        assert info["version"] == ".".join(map(str, ntfy.version))
    else:
        assert info["version"] is None  # no /v1/version before 2.17
    assert info["sequence_support"] == ("yes" if ntfy.version >= (2, 17, 0) else "unknown")


async def test_server_info_anonymous_says_the_admin_tools_will_not_work(ntfy: NtfyServer) -> None:
    server = build_server(ApprovalSettings(), NtfySettings(url=ntfy.url))
    async with connect(server, revision="2026-07-28") as client:
        result = await client.call_tool("get_server_info", {})
    assert result.structured_content["admin_tools"] is False
    assert result.structured_content["authenticated_as"] == "*"


async def test_server_info_reads_the_version_where_the_server_tells_it() -> None:
    async with connect(standin_server(NtfyStandIn(version="2.17.0")), revision="2025-11-25") as client:
        result = await client.call_tool("get_server_info", {})
    assert result.structured_content["version"] == "2.17.0"
    assert result.structured_content["sequence_support"] == "yes"


async def test_get_account_never_returns_tokens(ntfy: NtfyServer) -> None:
    made = httpx2.post(f"{ntfy.url}/v1/account/token", json={"label": "ci"}, headers=ntfy.admin_headers()).json()
    token = made["token"]
    with_token = build_server(ApprovalSettings(), NtfySettings(url=ntfy.url, token=token))
    async with connect(with_token, revision="2025-11-25") as client:
        result = await client.call_tool("get_account", {})
    account = result.structured_content
    assert account["username"] == ntfy.admin_user
    assert account["token_count"] >= 1
    assert token not in str(result.content)
    assert token not in str(account)
    assert "tk_" not in str(account)


async def test_check_topic_access_for_a_user_with_one_grant(ntfy: NtfyServer, topic: str) -> None:
    ntfy.add_user(topic, "reader-password")
    body = {"username": topic, "topic": topic, "permission": "read-only"}
    httpx2.put(f"{ntfy.url}/v1/users/access", json=body, headers=ntfy.admin_headers()).raise_for_status()
    server = real_server(ntfy, username=topic, password="reader-password", topics=(topic,))
    async with connect(server, revision="2025-11-25") as client:
        mine = await client.call_tool("check_topic_access", {"topic": topic})
        other = await client.call_tool("check_topic_access", {"topic": topic + "-other"})
        bad = await client.call_tool("check_topic_access", {"topic": "a*"})
    assert mine.structured_content == {"topic": topic, "read": True, "allowed_by_config": True, "untrusted": []}
    assert other.structured_content == {
        "topic": topic + "-other", "read": False, "allowed_by_config": False, "untrusted": []
    }  # fmt: skip
    assert bad.is_error


async def test_every_tool_declares_four_annotations_an_output_schema_and_its_guard() -> None:
    tools = await build_server(ApprovalSettings()).list_tools()
    assert len(tools) == 13
    for tool in tools:
        hints = tool.annotations
        assert hints is not None
        assert None not in (hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint, hints.open_world_hint)
        assert tool.output_schema is not None
        assert tool.description
        guarded = GUARDS[tool.name].kind == "always"
        assert ("confirm_token" in tool.input_schema["properties"]) == guarded, tool.name
        mismatch = GUARDS.mismatch(tool.name)
        if guarded and not hints.destructive_hint:
            assert mismatch is not None, tool.name
        if mismatch is not None:
            assert mismatch.kind == "guarded-not-destructive"
    always = sorted(name for name, guard in GUARDS.items() if guard.kind == "always")
    assert always == ["create_user", "delete_messages", "delete_user", "manage_user_access", "update_message"]
