"""A publish whose answer was lost never says "nothing was published": the topic is read back, per topic."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest
from ntfy_conftest import real_server
from ntfy_server import NtfyServer

from approval_core.testing import connect

pytestmark = pytest.mark.anyio


class LosingPosts(httpx2.AsyncBaseTransport):
    """A test double: the real network transport to the real ntfy, except for the POSTs to ``topics``.

    ``lose="reply"`` forwards such a POST (ntfy stores and delivers it) and then raises the error httpx raises
    when the server closes the connection without answering; ``lose="request"`` raises the same without
    forwarding it (nothing reached ntfy); ``lose="connect"`` raises a ConnectError (no connection was made).
    """

    def __init__(self, lose: str, topics: set[str]) -> None:
        self.real = httpx2.AsyncHTTPTransport()
        self.lose = lose
        self.topics = topics
        self.posts = 0

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if request.method == "POST" and any(f'"topic": "{t}"'.encode() in request.content for t in self.topics):
            self.posts += 1
            if self.lose == "connect":
                raise httpx2.ConnectError("All connection attempts failed", request=request)
            if self.lose == "reply":
                response = await self.real.handle_async_request(request)
                await response.aread()
            raise httpx2.RemoteProtocolError("Server disconnected without sending a response.", request=request)
        return await self.real.handle_async_request(request)

    async def aclose(self) -> None:
        await self.real.aclose()


async def _stored(client: Any, topic: str, text: str) -> int:
    listed = await client.call_tool("list_messages", {"topics": [topic]})
    return sum(m["message"] == text for m in listed.structured_content["messages"])


async def test_a_delivered_publish_whose_answer_was_lost_is_reported_delivered(ntfy: NtfyServer, topic: str) -> None:
    """The review's reproduction: ntfy stored and delivered it; the tool said 'Nothing was published.'"""
    transport = LosingPosts("reply", {topic})
    async with connect(real_server(ntfy, topics=(topic,), transport=transport), revision="2025-11-25") as client:
        result = await client.call_tool("publish_message", {"topics": [topic], "message": "hello-lost"})
        copies = await _stored(client, topic, "hello-lost")
    assert not result.is_error
    [one] = result.structured_content["results"]
    assert one["ok"] is True
    assert one["id"]
    assert one["note"].startswith("ntfy's answer was lost (")
    assert f"found the message delivered (id {one['id']})" in one["note"]
    assert copies == 1


async def test_a_lost_request_is_not_known_per_topic_and_a_refused_connection_published_nothing(
    ntfy: NtfyServer, topic: str
) -> None:
    other = f"{topic}-b"
    transport = LosingPosts("request", {topic})
    server = real_server(ntfy, topics=(topic, other), transport=transport)
    async with connect(server, revision="2025-11-25") as client:
        mixed = await client.call_tool("publish_message", {"topics": [topic, other], "message": "two"})
        transport.topics = {topic, other}
        lost = await client.call_tool("publish_message", {"topics": [topic, other], "message": "three"})
        transport.lose = "connect"
        refused = await client.call_tool("publish_message", {"topics": [topic], "message": "four"})
    first, second = mixed.structured_content["results"]
    assert first["ok"] is False
    assert first["error"].startswith("not known whether it was delivered: ")
    assert f'check with list_messages(topics=["{topic}"], since="' in first["error"]
    assert "a second publish would deliver a second notification" in first["error"]
    assert second["ok"] is True
    assert lost.is_error
    text = lost.content[0].text
    assert text.startswith("Not known whether it was published on every topic.")
    assert "Nothing was published" not in text
    assert f"{other}: not known whether it was delivered" in text
    assert refused.is_error
    assert refused.content[0].text.startswith(f"Nothing was published. {topic}: not published: cannot reach ntfy")


async def test_a_lost_publish_is_not_taken_for_an_identical_earlier_message(ntfy: NtfyServer, topic: str) -> None:
    """A second identical publish that never reached ntfy must not be reported delivered with the first's id."""
    import anyio

    transport = LosingPosts("request", set())
    async with connect(real_server(ntfy, topics=(topic,), transport=transport), revision="2025-11-25") as client:
        first = await client.call_tool("publish_message", {"topics": [topic], "message": "server is down"})
        await anyio.sleep(1.1)  # ntfy's times are whole seconds: the first now lies in an earlier second
        transport.topics = {topic}
        second = await client.call_tool("publish_message", {"topics": [topic], "message": "server is down"})
        copies = await _stored(client, topic, "server is down")
    assert not first.is_error
    first_id = first.structured_content["results"][0]["id"]
    assert second.is_error
    text = second.content[0].text
    assert text.startswith("Not known whether it was published on every topic.")
    assert f"an identical message (id {first_id}" in text
    assert copies == 1
