"""What the real ntfy (the 2.13 the suite builds) answers, asserted through the tools: limits, refusals, features."""

from __future__ import annotations

import time
from collections.abc import Iterator

import anyio
import httpx2
import pytest
from ntfy_conftest import real_server
from ntfy_server import NtfyServer, ntfy_server

from approval_core import ApprovalSettings
from approval_core.testing import connect
from ntfy_mcp import build_server
from ntfy_mcp.settings import NtfySettings

pytestmark = pytest.mark.anyio


@pytest.fixture(scope="module")
def limited(ntfy: NtfyServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[NtfyServer]:
    """A second real ntfy whose per-visitor request limit applies to 127.0.0.1: a burst of 3, no refill."""
    extra = ["--visitor-request-limit-burst", "3", "--visitor-request-limit-replenish", "1h"]
    with ntfy_server(tmp_path_factory.mktemp("ntfy-limited"), ntfy.binary, exempt_loopback=False, extra=extra) as s:
        yield s


async def test_a_429_is_reported_as_a_rate_limit_and_not_retried(limited: NtfyServer) -> None:
    server = build_server(ApprovalSettings(), NtfySettings(url=limited.url))
    async with connect(server, revision="2025-11-25") as client:
        results = [await client.call_tool("check_topic_access", {"topic": "limited"}) for _ in range(6)]
    refused = [r for r in results if r.is_error]
    assert refused, [r.structured_content for r in results]
    text = refused[0].content[0].text
    assert "rate limit for this client was reached; nothing was retried" in text
    assert "(HTTP 429, code 42901)" in text


async def test_wrong_credentials_are_a_401_that_says_so(ntfy: NtfyServer) -> None:
    server = real_server(ntfy, username=ntfy.admin_user, password="not-the-password")
    async with connect(server, revision="2025-11-25") as client:
        result = await client.call_tool("publish_message", {"topics": ["somewhere"], "message": "m"})
    text = result.content[0].text
    assert "ntfy did not accept these credentials" in text
    assert "(HTTP 401, code 40101)" in text
    assert "not-the-password" not in text


async def test_a_topic_the_account_may_not_write_is_a_403_that_says_so(ntfy: NtfyServer, topic: str) -> None:
    ntfy.add_user(topic, "reader-password")
    body = {"username": topic, "topic": topic, "permission": "read-only"}
    httpx2.put(f"{ntfy.url}/v1/users/access", json=body, headers=ntfy.admin_headers()).raise_for_status()
    server = real_server(ntfy, username=topic, password="reader-password")
    async with connect(server, revision="2025-11-25") as client:
        read = await client.call_tool("list_messages", {"topics": [topic]})
        write = await client.call_tool("publish_message", {"topics": [topic], "message": "m"})
    assert not read.is_error, read.content
    assert "this account is not allowed to do that (ntfy's access rules) (HTTP 403, code 40301)" in (
        write.content[0].text
    )


async def test_a_copy_button_is_refused_by_2_13_in_that_topics_result(ntfy: NtfyServer, topic: str) -> None:
    copy = {"action": "copy", "label": "Copy code", "value": "123456"}
    async with connect(real_server(ntfy), revision="2025-11-25") as client:
        result = await client.call_tool("publish_message", {"topics": [topic], "message": "m", "actions": [copy]})
    if ntfy.version >= (2, 17, 0):
        assert not result.is_error, result.content
    else:
        assert result.is_error
        assert "(HTTP 400, code 40018)" in result.content[0].text


async def test_urgent_is_priority_5_and_a_token_of_the_account_publishes(ntfy: NtfyServer, topic: str) -> None:
    made = httpx2.post(f"{ntfy.url}/v1/account/token", json={"label": "t"}, headers=ntfy.admin_headers()).json()
    async with connect(real_server(ntfy, token=made["token"]), revision="2026-07-28") as client:
        sent = await client.call_tool(
            "publish_message", {"topics": [topic], "message": "now", "priority": "urgent", "tags": ["rotating_light"]}
        )
        listed = await client.call_tool("list_messages", {"topics": [topic]})
    assert not sent.is_error, sent.content
    (message,) = listed.structured_content["messages"]
    assert (message["priority"], message["tags"]) == (5, ["rotating_light"])


async def test_polling_since_a_unix_time_and_since_a_message_id(ntfy: NtfyServer, topic: str) -> None:
    async with connect(real_server(ntfy), revision="2025-11-25") as client:
        first = await client.call_tool("publish_message", {"topics": [topic], "message": "old"})
        first_id = first.structured_content["results"][0]["id"]
        await anyio.sleep(1.1)  # ntfy's times are whole seconds
        later = int(time.time())
        await client.call_tool("publish_message", {"topics": [topic], "message": "new"})
        by_time = await client.call_tool("list_messages", {"topics": [topic], "since": str(later)})
        by_id = await client.call_tool("list_messages", {"topics": [topic], "since": first_id})
    assert [m["message"] for m in by_time.structured_content["messages"]] == ["new"]
    assert [m["message"] for m in by_id.structured_content["messages"]] == ["new"]
