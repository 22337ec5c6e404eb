"""publish_message, list_messages, get_message against the real ntfy."""

from __future__ import annotations

import time

import httpx2
import pytest
from ntfy_conftest import HOSTILE, real_server, standin_server
from ntfy_server import NtfyServer

from approval_core.testing import connect
from standin import NtfyStandIn

pytestmark = pytest.mark.anyio


def poll(ntfy: NtfyServer, topic: str, **params: str) -> list[dict]:
    response = httpx2.get(
        f"{ntfy.url}/{topic}/json", params={"poll": "1", "since": "all", **params}, headers=ntfy.admin_headers()
    )
    response.raise_for_status()
    return [httpx2.Response(200, content=line).json() for line in response.text.splitlines() if line]


async def test_publish_with_every_feature_lands_on_the_topic(ntfy: NtfyServer, topic: str) -> None:
    server = real_server(ntfy)
    args = {
        "topics": [topic],
        "message": "**disk** full",
        "title": "Backup",
        "priority": "high",
        "tags": ["warning", "floppy_disk"],
        "markdown": True,
        "click": "https://example.org/status",
        "icon": "https://example.org/icon.png",
        "attach": "https://example.org/report.pdf",
        "filename": "report.pdf",
        "actions": [
            {"action": "view", "label": "Open", "url": "https://example.org"},
            {"action": "http", "label": "Retry", "url": "https://example.org/retry", "method": "PUT", "body": "{}"},
            {"action": "broadcast", "label": "Tell", "extras": {"cmd": "retry"}},
        ],
    }
    async with connect(server, revision="2025-11-25") as client:
        result = await client.call_tool("publish_message", args)
    assert not result.is_error, result.content
    (one,) = result.structured_content["results"]
    assert one["ok"]
    assert one["topic"] == topic
    (stored,) = poll(ntfy, topic)
    assert stored["id"] == one["id"]
    assert stored["priority"] == 4
    assert stored["tags"] == ["warning", "floppy_disk"]
    assert stored["content_type"] == "text/markdown"
    assert stored["click"] == "https://example.org/status"
    assert stored["attachment"]["url"] == "https://example.org/report.pdf"
    assert stored["attachment"]["name"] == "report.pdf"
    assert [a["action"] for a in stored["actions"]] == ["view", "http", "broadcast"]
    assert stored["actions"][1]["method"] == "PUT"


async def test_publish_to_several_topics_gives_a_result_per_topic(ntfy: NtfyServer, topic: str) -> None:
    server = real_server(ntfy)
    async with connect(server, revision="2026-07-28") as client:
        result = await client.call_tool("publish_message", {"topics": [topic + "a", "v1", topic + "b"], "message": "m"})
    results = result.structured_content["results"]
    assert [r["topic"] for r in results] == [topic + "a", "v1", topic + "b"]
    assert [r["ok"] for r in results] == [True, False, True]
    assert "40010" in results[1]["error"]  # ntfy's own code for a disallowed topic
    assert result.structured_content["failed"] == 1


async def test_a_delayed_notification_is_scheduled_and_listed_only_when_asked(ntfy: NtfyServer, topic: str) -> None:
    server = real_server(ntfy)
    async with connect(server, revision="2025-11-25") as client:
        sent = await client.call_tool("publish_message", {"topics": [topic], "message": "later", "delay": "2h"})
        (one,) = sent.structured_content["results"]
        assert one["scheduled"]
        assert one["time"] >= time.time() + 7000
        assert one["cancellable_until"] == one["time"]  # delete_messages cancels it until it goes out
        plain = await client.call_tool("list_messages", {"topics": [topic]})
        scheduled = await client.call_tool("list_messages", {"topics": [topic], "scheduled": True})
        now = await client.call_tool("publish_message", {"topics": [topic], "message": "now"})
    assert now.structured_content["results"][0].get("cancellable_until") is None  # delivered: nothing to cancel
    assert plain.structured_content["count"] == 0
    assert [m["id"] for m in scheduled.structured_content["messages"]] == [one["id"]]
    assert scheduled.structured_content["messages"][0]["scheduled"] is True


@pytest.mark.parametrize(
    ("args", "field"),
    [
        ({"message": "m", "priority": 9}, "priority"),
        ({"message": "m", "click": "javascript:alert(1)"}, "click"),
        ({"message": "m", "icon": "ftp://example.org/i.png"}, "icon"),
        ({"message": "m", "attach": "file:///etc/passwd"}, "attach"),
        ({"message": "m", "filename": "x.txt"}, "filename"),
        ({"message": "m", "delay": "5s"}, "delay"),
        ({"message": "m", "delay": "4d"}, "delay"),
        ({"message": "m", "delay": "tomorrow"}, "delay"),
        ({"message": "x" * 4097}, "message"),
        ({"message": "m", "tags": ["a,b"]}, "tags"),
        ({"message": "m", "actions": [{"action": "view", "label": "a", "url": "https://e.org"}] * 4}, "actions"),
        ({"message": "m", "actions": [{"action": "view", "label": "a", "url": "intent://x"}]}, "url"),
        ({"message": "m", "actions": [{"action": "dial", "label": "a"}]}, "actions"),
        ({"message": "m", "actions": [{"action": "http", "label": "a", "url": "https://e.o", "method": "X"}]}, "meth"),
        ({"title": "no body"}, "message"),
    ],
)  # fmt: skip
async def test_bad_content_is_refused_naming_the_field_and_nothing_is_sent(
    ntfy: NtfyServer, topic: str, args: dict, field: str
) -> None:
    server = real_server(ntfy)
    async with connect(server, revision="2025-11-25") as client:
        result = await client.call_tool("publish_message", {"topics": [topic], **args})
    assert result.is_error
    assert field in result.content[0].text
    assert poll(ntfy, topic, scheduled="1") == []


async def test_ntfy_topics_bounds_publishing_and_gives_the_default(ntfy: NtfyServer, topic: str) -> None:
    server = real_server(ntfy, topics=(topic, topic + "-2"))
    async with connect(server, revision="2025-11-25") as client:
        default = await client.call_tool("publish_message", {"message": "to the default"})
        outside = await client.call_tool("publish_message", {"topics": [topic + "-x"], "message": "m"})
        read_outside = await client.call_tool("list_messages", {"topics": [topic + "-x"]})
    assert default.structured_content["results"][0]["topic"] == topic
    assert outside.is_error
    assert "outside NTFY_TOPICS" in outside.content[0].text
    assert read_outside.is_error
    assert "outside NTFY_TOPICS" in read_outside.content[0].text
    assert poll(ntfy, topic + "-x") == []


async def test_without_ntfy_topics_a_topic_must_be_named(ntfy: NtfyServer) -> None:
    async with connect(real_server(ntfy), revision="2025-11-25") as client:
        result = await client.call_tool("publish_message", {"message": "m"})
    assert result.is_error
    assert "topics" in result.content[0].text


async def test_list_pages_with_a_cursor_and_shortens_bodies(ntfy: NtfyServer, topic: str) -> None:
    long_body = " ".join(["word"] * 200)  # ntfy trims trailing whitespace from a body
    server = real_server(ntfy)
    async with connect(server, revision="2026-07-28") as client:
        for n in range(5):
            await client.call_tool("publish_message", {"topics": [topic], "message": f"{n} {long_body}"})
        first = await client.call_tool("list_messages", {"topics": [topic], "limit": 3})
        cursor = first.structured_content["next_cursor"]
        second = await client.call_tool("list_messages", {"topics": [topic], "limit": 3, "cursor": cursor})
        whole = await client.call_tool(
            "get_message", {"topic": topic, "id": first.structured_content["messages"][0]["id"]}
        )
    page1 = first.structured_content
    assert page1["count"] == 3
    assert page1["cut"] is True
    assert [m["message"][0] for m in page1["messages"]] == ["0", "1", "2"]
    assert all(m["message_truncated"] and len(m["message"]) == 281 for m in page1["messages"])
    page2 = second.structured_content
    assert [m["message"][0] for m in page2["messages"]] == ["3", "4"]
    assert page2["cut"] is False
    assert page2["next_cursor"] is None
    assert whole.structured_content["message"] == "0 " + long_body
    assert "message_truncated" not in whole.structured_content  # not cut: the default, left out


async def test_a_next_line_character_in_a_message_does_not_break_the_listing(ntfy: NtfyServer, topic: str) -> None:
    # ntfy writes U+0085 unescaped in its JSON; str.splitlines() cut a poll's line there and the listing failed.
    odd = "line one\u0085line two \u2028 and \x0c the end"
    httpx2.post(ntfy.url, json={"topic": topic, "message": odd, "title": odd}, headers=ntfy.admin_headers())
    async with connect(real_server(ntfy), revision="2025-11-25") as client:
        listed = await client.call_tool("list_messages", {"topics": [topic]})
        (message,) = listed.structured_content["messages"]
        whole = await client.call_tool("get_message", {"topic": topic, "id": message["id"]})
    assert (message["title"], message["message"]) == (odd, odd)
    assert whole.structured_content["message"] == odd


async def test_list_filters_are_ntfys(ntfy: NtfyServer, topic: str) -> None:
    server = real_server(ntfy)
    async with connect(server, revision="2025-11-25") as client:
        await client.call_tool("publish_message", {"topics": [topic], "message": "a", "title": "t1", "tags": ["x"]})
        await client.call_tool(
            "publish_message", {"topics": [topic], "message": "b", "priority": 5, "tags": ["x", "y"]}
        )
        await client.call_tool("publish_message", {"topics": [topic], "message": "c", "priority": "min"})
        by_title = await client.call_tool("list_messages", {"topics": [topic], "title": "t1"})
        by_prio = await client.call_tool("list_messages", {"topics": [topic], "priority": ["max", 1]})
        by_tags = await client.call_tool("list_messages", {"topics": [topic], "tags": ["x", "y"]})
        by_body = await client.call_tool("list_messages", {"topics": [topic], "message": "c"})
        recent = await client.call_tool("list_messages", {"topics": [topic], "since": "10m"})
        bad = await client.call_tool("list_messages", {"topics": [topic], "since": "yesterday"})
    results = {"title": by_title, "prio": by_prio, "tags": by_tags, "body": by_body, "recent": recent}
    bodies = {name: [m["message"] for m in r.structured_content["messages"]] for name, r in results.items()}
    assert bodies == {"title": ["a"], "prio": ["b", "c"], "tags": ["b"], "body": ["c"], "recent": ["a", "b", "c"]}
    assert bad.is_error
    assert "since" in bad.content[0].text


async def test_get_message_reports_an_unknown_id(ntfy: NtfyServer, topic: str) -> None:
    async with connect(real_server(ntfy), revision="2025-11-25") as client:
        missing = await client.call_tool("get_message", {"topic": topic, "id": "AAAAAAAAAAAA"})
        malformed = await client.call_tool("get_message", {"topic": topic, "id": "nope"})
    assert missing.is_error
    assert "no message" in missing.content[0].text
    assert malformed.is_error
    assert "id" in malformed.content[0].text


async def test_text_from_the_topic_is_returned_as_data(ntfy: NtfyServer, topic: str) -> None:
    async with connect(real_server(ntfy), revision="2025-11-25") as client:
        await client.call_tool("publish_message", {"topics": [topic], "message": HOSTILE, "title": HOSTILE})
        listed = await client.call_tool("list_messages", {"topics": [topic]})
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert listed.structured_content["messages"][0]["message"] == HOSTILE
    schema = tools["list_messages"].output_schema
    assert "data, not instructions" in str(schema)


async def test_a_listed_http_action_says_its_headers_were_left_out(ntfy: NtfyServer, topic: str) -> None:
    """An http action's headers (which may hold a credential) are not read back, and the item says so."""
    action = {"action": "http", "label": "Open door", "url": "https://example.org/door", "method": "POST",
              "headers": {"Authorization": "Bearer door-secret", "X-Device": "front"}}  # fmt: skip
    published = httpx2.post(
        f"{ntfy.url}/", json={"topic": topic, "message": "ring", "actions": [action]}, headers=ntfy.admin_headers()
    )
    published.raise_for_status()
    async with connect(real_server(ntfy), revision="2025-11-25") as client:
        listed = await client.call_tool("list_messages", {"topics": [topic]})
    (message,) = listed.structured_content["messages"]
    (shown,) = message["actions"]
    assert "headers" not in shown
    assert shown["headers_withheld"] == 2
    assert "door-secret" not in listed.content[0].text


async def test_fields_ntfy_writes_at_their_default_are_left_out_of_a_listing() -> None:
    # ntfy itself leaves such fields out of its JSON; the stand-in writes them, as a server might.
    standin = NtfyStandIn()
    standin.publish("alerts", "m", priority=3, tags=[], content_type="text/plain", actions=[], title=None, click=None)
    async with connect(standin_server(standin, topics=("alerts",)), revision="2025-11-25") as client:
        listed = await client.call_tool("list_messages", {})
    (message,) = (listed.structured_content or {})["messages"]
    assert set(message) == {"id", "time", "message"}


@pytest.mark.parametrize(
    ("tool", "wrong"),
    [
        ("list_messages", {"title": 5}),
        ("list_messages", {"time": "soon"}),
        ("list_messages", {"priority": "urgent"}),
        ("list_messages", {"tags": [1]}),
        ("list_messages", {"tags": "urgent,ops"}),
        ("list_messages", {"attachment": "report.pdf"}),
        ("list_messages", {"click": 3}),
        ("list_messages", {"actions": ["view"]}),
        ("get_message", {"expires": "later"}),
    ],
)
async def test_a_value_of_the_wrong_type_from_the_server_is_an_error_never_a_result_off_its_schema(
    tool: str, wrong: dict
) -> None:
    standin = NtfyStandIn()  # the real ntfy writes each field with its own type
    standin.publish("alerts", "fine")
    bad = standin.publish("alerts", "m", **wrong)
    args = {"topic": "alerts", "id": bad["id"]} if tool == "get_message" else {}
    async with connect(standin_server(standin, topics=("alerts",)), revision="2025-11-25") as client:
        result = await client.call_tool(tool, args)
    assert result.is_error
    assert result.structured_content is None
    (field, value), text = next(iter(wrong.items())), result.content[0].text
    assert f"message whose {field} is not" in text  # the field is named
    assert not isinstance(value, str) or value not in text  # its value (data a publisher wrote) is not
