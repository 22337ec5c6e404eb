"""update_message, delete_messages, mark_messages_read: the real ntfy where it can, the stand-in for 2.16+ routes.

The real server decides which branch its tests take: on ntfy >= 2.16 they
revise, clear and delete for real; on an older one they prove the refusal
(nothing sent, nobody asked). The approval paths of the two guarded tools
need a server that has the sequence routes on demand: the stand-in.
"""

from __future__ import annotations

import time

import httpx2
import pytest
from ntfy_conftest import HOSTILE, PATHS, Recording, call_guarded, real_server, standin_server
from ntfy_server import NtfyServer

from approval_core.testing import DialogLog, approval_of, connect, decline
from standin import NtfyStandIn

pytestmark = pytest.mark.anyio
TOPIC = "alerts"


def real_events(ntfy: NtfyServer, topic: str) -> list[dict]:
    response = httpx2.get(
        f"{ntfy.url}/{topic}/json", params={"poll": "1", "since": "all", "scheduled": "1"}, headers=ntfy.admin_headers()
    )
    return [httpx2.Response(200, content=line).json() for line in response.text.splitlines() if line]


# ---------------------------------------------------------------------------------------------- real ntfy


def publish_directly(ntfy: NtfyServer, topic: str, message: str) -> str:
    body = {"topic": topic, "message": message, "title": message}
    response = httpx2.post(ntfy.url, json=body, headers=ntfy.admin_headers())
    response.raise_for_status()
    return response.json()["id"]


REVISION_CALLS = {
    "update_message": lambda sid: {"sequence_id": sid, "message": "disk at 95%"},
    "mark_messages_read": lambda sid: {"sequence_ids": [sid]},
    "delete_messages": lambda sid: {"sequence_ids": [sid]},
}


@pytest.mark.parametrize("tool", sorted(REVISION_CALLS))
@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
async def test_the_real_server_revises_or_refuses_before_writing_or_asking(
    ntfy: NtfyServer, topic: str, tool: str, revision: str
) -> None:
    """On ntfy < 2.16 (the 2.13 the suite builds) a revision tool refuses after reads only, naming 2.16."""
    sid = publish_directly(ntfy, topic, HOSTILE)
    log = DialogLog()
    recording = Recording()
    async with connect(real_server(ntfy, transport=recording), revision=revision, answer=log) as client:
        result = await client.call_tool(tool, {"topic": topic, **REVISION_CALLS[tool](sid)})
    for text in log.messages:
        assert HOSTILE not in text
    events = real_events(ntfy, topic)
    if ntfy.supports_sequences:
        assert not result.is_error, result.content
        assert len(events) == 2
        return
    assert result.is_error
    text = result.content[0].text
    assert text.startswith(f"{tool} needs ntfy 2.16 or newer")
    assert "nothing was sent and nobody was asked" in text
    assert log.messages == []
    assert {method for method, _ in recording.sent} == {"GET"}
    assert ("GET", "/v1/version") in recording.sent
    assert [(e["id"], e["message"]) for e in events] == [(sid, HOSTILE)]  # no second notification


async def test_the_real_servers_version_probe_answers_404_on_2_13(ntfy: NtfyServer) -> None:
    """What the probe relies on: before 2.17 there is no /v1/version, whoever asks (the admin here)."""
    response = httpx2.get(f"{ntfy.url}/v1/version", headers=ntfy.admin_headers())
    if ntfy.version >= (2, 17, 0):
        assert response.json()["version"] == ".".join(map(str, ntfy.version))
    else:
        assert response.status_code == 404
        assert response.json()["code"] == 40401


async def test_a_sequence_id_sent_to_2_13_is_ignored_which_is_why_the_tools_refuse(
    ntfy: NtfyServer, topic: str
) -> None:
    """The fault the refusal prevents, shown on the real server: the 'revision' is a second notification."""
    first = publish_directly(ntfy, topic, "disk at 91%")
    body = {"topic": topic, "message": "disk at 95%", "sequence_id": first}
    second = httpx2.post(ntfy.url, json=body, headers={**ntfy.admin_headers(), "X-Sequence-ID": first})
    assert second.status_code == 200
    events = real_events(ntfy, topic)
    if ntfy.supports_sequences:
        assert events[-1]["sequence_id"] == first
    else:
        assert [e["message"] for e in events] == ["disk at 91%", "disk at 95%"]
        assert "sequence_id" not in second.json()
        for method, path in (("PUT", f"/{topic}/{first}/clear"), ("DELETE", f"/{topic}/{first}")):
            answer = httpx2.request(method, f"{ntfy.url}{path}", headers=ntfy.admin_headers())
            assert (answer.status_code, answer.json()["code"]) == (404, 40401)


# ---------------------------------------------------------------------------------------------- the stand-in


def standin_with(message: str = "m", **extra) -> tuple[NtfyStandIn, str]:
    standin = NtfyStandIn()
    sent = standin.publish(TOPIC, message, **extra)
    return standin, sent["sequence_id"]


@pytest.mark.parametrize("path", PATHS)
async def test_delete_messages_asks_with_topic_count_and_ids_only(path: str) -> None:
    standin, first = standin_with(HOSTILE, title=HOSTILE, tags=[HOSTILE])
    second = standin.publish(TOPIC, "later " + HOSTILE, time=int(time.time()) + 3600)["sequence_id"]
    server = standin_server(standin, elicitation=path != "token")
    args = {"topic": TOPIC, "sequence_ids": [first, second]}
    result, seen = await call_guarded(server, path, "delete_messages", args)
    assert not result.is_error, result.content
    assert result.structured_content["done"] == 2
    assert [e["event"] for e in standin.messages(TOPIC)] == ["message", "message_delete", "message_delete"]
    dialog = next(text for text in seen if "Delete 2 notification(s)" in text)
    assert "1 of them not yet delivered" in dialog
    assert f"Sequence ids: {', '.join(sorted([first, second]))}" in dialog  # sorted: the call binds a set
    for text in seen:
        assert HOSTILE not in text
        assert "later" not in text


async def test_the_delete_binding_is_the_exact_set_of_ids() -> None:
    standin = NtfyStandIn()
    a, b = (standin.publish(TOPIC, n)["sequence_id"] for n in ("one", "two"))
    server = standin_server(standin, elicitation=False)
    async with connect(server, revision="2025-11-25") as client:
        first = await client.call_tool("delete_messages", {"topic": TOPIC, "sequence_ids": [a]})
        token = approval_of(first)["confirm_token"]
        widened = await client.call_tool(
            "delete_messages", {"topic": TOPIC, "sequence_ids": [a, b], "confirm_token": token}
        )
        assert approval_of(widened)["outcome"] == "token_refused"
        pair = await client.call_tool("delete_messages", {"topic": TOPIC, "sequence_ids": [a, b]})
        token = approval_of(pair)["confirm_token"]
        reordered = await client.call_tool(
            "delete_messages", {"topic": TOPIC, "sequence_ids": [b, a], "confirm_token": token}
        )
    assert not reordered.is_error
    assert [r["sequence_id"] for r in reordered.structured_content["results"]] == [b, a]


async def test_delete_refuses_ids_not_on_the_topic_before_asking() -> None:
    standin, sid = standin_with()
    log = DialogLog()
    async with connect(standin_server(standin), revision="2025-11-25", answer=log) as client:
        unknown = await client.call_tool("delete_messages", {"topic": TOPIC, "sequence_ids": [sid, "nosuchid"]})
        repeated = await client.call_tool("delete_messages", {"topic": TOPIC, "sequence_ids": [sid, sid]})
        malformed = await client.call_tool("delete_messages", {"topic": TOPIC, "sequence_ids": ["a/b"]})
    assert "nosuchid" in unknown.content[0].text
    assert "twice" in repeated.content[0].text
    assert "sequence id" in malformed.content[0].text
    assert log.messages == []
    assert all(method != "DELETE" for method, _ in standin.requests)


async def test_declined_delete_deletes_nothing() -> None:
    standin, sid = standin_with()
    async with connect(standin_server(standin), revision="2026-07-28", answer=DialogLog(decline)) as client:
        result = await client.call_tool("delete_messages", {"topic": TOPIC, "sequence_ids": [sid]})
    assert result.is_error
    assert [e["event"] for e in standin.messages(TOPIC)] == ["message"]


@pytest.mark.parametrize("path", PATHS)
async def test_update_message_names_replaced_fields_without_quoting_text(path: str) -> None:
    standin, sid = standin_with("old " + HOSTILE, title="old title")
    server = standin_server(standin, elicitation=path != "token")
    new = {
        "topic": TOPIC,
        "sequence_id": sid,
        "message": "new " + HOSTILE,
        "title": "New title",
        "actions": [{"action": "http", "label": "Fire", "url": "https://example.org/hook", "body": "x"}],
    }
    result, seen = await call_guarded(server, path, "update_message", new)
    assert not result.is_error, result.content
    latest = standin.messages(TOPIC)[-1]
    assert latest["message"] == "new " + HOSTILE
    assert latest["sequence_id"] == sid
    dialog = next(text for text in seen if "Revise 1 notification in place" in text)
    assert "replacing 3 field(s) and dropping 0 the new version does not set" in dialog
    assert "1 http action button(s)" in dialog
    lines = dialog.splitlines()
    for name in ("message", "title", "actions"):
        assert f"  Field replaced: {name}" in lines
    for text in seen:
        assert HOSTILE not in text
        assert "New title" not in text
        assert "old title" not in text
        assert "example.org/hook" not in text


async def test_the_update_dialog_counts_fields_the_revision_drops() -> None:
    standin, sid = standin_with("old", title="old title", tags=["a"], click="https://example.org")
    log = DialogLog(decline)
    async with connect(standin_server(standin), revision="2025-11-25", answer=log) as client:
        await client.call_tool("update_message", {"topic": TOPIC, "sequence_id": sid, "message": "new"})
    assert "replacing 1 field(s) and dropping 3 the new version does not set" in log.messages[0]
    assert "  Field replaced: message" in log.messages[0].splitlines()


async def test_the_update_binding_covers_all_new_content_actions_included() -> None:
    standin, sid = standin_with("typo")
    server = standin_server(standin, elicitation=False)
    base = {"topic": TOPIC, "sequence_id": sid, "message": "fixed"}
    button = [{"action": "http", "label": "Go", "url": "https://example.org/x"}]
    async with connect(server, revision="2025-11-25") as client:
        first = await client.call_tool("update_message", base)
        token = approval_of(first)["confirm_token"]
        with_button = await client.call_tool("update_message", {**base, "actions": button, "confirm_token": token})
    assert approval_of(with_button)["outcome"] == "token_refused"
    assert [e["message"] for e in standin.messages(TOPIC)] == ["typo"]


@pytest.mark.parametrize("tool", ["update_message", "mark_messages_read", "delete_messages"])
async def test_servers_older_than_2_16_are_refused_before_anything_is_sent(tool: str) -> None:
    standin = NtfyStandIn(version="2.15.0")
    sid = standin.publish(TOPIC, "m")["id"]
    args = {"topic": TOPIC, "sequence_id": sid, "message": "new"} if tool == "update_message" else {
        "topic": TOPIC, "sequence_ids": [sid]}  # fmt: skip
    log = DialogLog()
    async with connect(standin_server(standin), revision="2025-11-25", answer=log) as client:
        result = await client.call_tool(tool, args)
    assert result.is_error
    assert f"{tool} needs ntfy 2.16 or newer" in result.content[0].text
    assert "this server is ntfy 2.15.0" in result.content[0].text
    assert log.messages == []
    assert [m for m, p in standin.requests if m != "GET"] == []


async def test_an_unknown_version_is_enough_when_the_topic_shows_sequence_ids() -> None:
    standin = NtfyStandIn(version="2.16.0")
    sid = standin.publish(TOPIC, "m")["sequence_id"]
    standin.version_visible = False
    async with connect(standin_server(standin), revision="2025-11-25") as client:
        result = await client.call_tool("mark_messages_read", {"topic": TOPIC, "sequence_ids": [sid]})
    assert not result.is_error, result.content
    assert standin.messages(TOPIC)[-1]["event"] == "message_clear"


async def test_an_unknown_version_with_no_sequence_ids_in_sight_is_refused() -> None:
    standin = NtfyStandIn(version="2.16.0", version_visible=False)
    async with connect(standin_server(standin), revision="2025-11-25") as client:
        result = await client.call_tool("mark_messages_read", {"topic": TOPIC, "sequence_ids": ["abc"]})
    assert result.is_error
    assert "does not show it is" in result.content[0].text


async def test_mark_messages_read_gives_a_result_per_id() -> None:
    standin = NtfyStandIn()
    a, b = (standin.publish(TOPIC, n)["sequence_id"] for n in ("one", "two"))
    async with connect(standin_server(standin), revision="2026-07-28") as client:
        result = await client.call_tool("mark_messages_read", {"topic": TOPIC, "sequence_ids": [a, b]})
    assert result.structured_content["results"] == [
        {"sequence_id": a, "ok": True, "error": None},
        {"sequence_id": b, "ok": True, "error": None},
    ]
    assert [e["event"] for e in standin.messages(TOPIC)][-2:] == ["message_clear", "message_clear"]


async def test_a_deleted_notification_is_neither_counted_nor_revised_again() -> None:
    """ntfy keeps a deleted sequence's message in its cache: the dialog said 2 notifications where 1 was left."""
    standin, first = standin_with("m")
    second = standin.publish(TOPIC, "n")["sequence_id"]
    server = standin_server(standin)
    done, _ = await call_guarded(server, "2026-07-28", "delete_messages", {"topic": TOPIC, "sequence_ids": [first]})
    assert not done.is_error, done.content
    log = DialogLog(decline)
    async with connect(server, revision="2026-07-28", answer=log) as client:
        both = await client.call_tool("delete_messages", {"topic": TOPIC, "sequence_ids": [first, second]})
        revised = await client.call_tool("update_message", {"topic": TOPIC, "sequence_id": first, "message": "back"})
    assert log.messages == []
    assert both.is_error
    assert f"already deleted on topic {TOPIC!r}" in both.content[0].text
    assert revised.is_error
    assert "was deleted; there is none to revise" in revised.content[0].text
    assert [e["event"] for e in standin.messages(TOPIC)] == ["message", "message", "message_delete"]


async def test_a_listing_names_a_sequence_id_only_where_it_is_not_the_id() -> None:
    """A revision's sequence id is the notification it revises; an ordinary one's is its own id, left out."""
    standin, first = standin_with("disk at 91%")
    plain = standin.publish(TOPIC, "backup done")["id"]
    done, _ = await call_guarded(
        standin_server(standin),
        "2026-07-28",
        "update_message",
        {"topic": TOPIC, "sequence_id": first, "message": "95%"},
    )
    assert not done.is_error, done.content
    async with connect(standin_server(standin), revision="2026-07-28") as client:
        listed = (await client.call_tool("list_messages", {"topics": [TOPIC]})).structured_content
    by_id = {m["id"]: m for m in listed["messages"]}
    [revision] = [m for m in listed["messages"] if m["id"] not in {first, plain}]
    assert revision["sequence_id"] == first
    assert "sequence_id" not in by_id[first]
    assert "sequence_id" not in by_id[plain]
    assert done.structured_content["sequence_id"] == first  # a publish result always names its sequence id
