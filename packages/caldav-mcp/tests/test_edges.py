"""Trust at the edges: hostile backends, redirects, credentials in the URL, escapes in ids."""

from __future__ import annotations

import logging

import anyio
import httpx2 as httpx
import pytest

from approval_core import ApprovalSettings, SettingsError
from approval_core.testing import connect, escape_corpus, listening
from caldav_helpers import ics, vevent
from caldav_mcp.errors import BadCredentials, NotAllowed
from caldav_mcp.server import build_server
from caldav_mcp.settings import CalDAVSettings
from caldav_mcp.wire import PROFILE
from hostile_http import BOMB, hostile_server
from webdav_core import Answer, parse_multistatus, raise_for_status

pytestmark = pytest.mark.anyio

FAULTS = {
    "bomb": "declares a DTD",
    "announced-huge": "larger than CALDAV_MAX_RESPONSE_BYTES",
    "endless": "larger than CALDAV_MAX_RESPONSE_BYTES",
    "slow": "within CALDAV_TIMEOUT (1 s)",
    "header-drip": "within CALDAV_TIMEOUT (1 s)",
    "status-drip": "within CALDAV_TIMEOUT (1 s)",
    "continue-forever": "within CALDAV_TIMEOUT (1 s)",
    "html": "with text/html that is not a WebDAV XML answer",
    "json": "with application/json that is not a WebDAV XML answer",
    "malformed": "malformed XML",
    "loop": "more than 5 times (a redirect loop?)",
    "not-http": "is not valid HTTP",
}


@pytest.mark.parametrize("mode", sorted(FAULTS))
async def test_a_hostile_backend_gets_a_clear_error_and_no_traceback(mode: str, caplog) -> None:
    caplog.set_level(logging.INFO)
    with hostile_server(mode) as hostile:
        # Only the faults about the deadline run under 1 s; the others get one a loaded machine meets.
        timeout = 1.0 if "CALDAV_TIMEOUT" in FAULTS[mode] else 30.0
        settings = CalDAVSettings(hostile.url, "willi", "secret", timeout=timeout, max_response_bytes=1024 * 1024)
        async with connect(build_server(ApprovalSettings(), settings), revision="2026-07-28") as client:
            listed = await client.call_tool("list_calendars", {})
            info = await client.call_tool("get_server_info", {})
    text = listed.content[0].text
    assert listed.is_error
    assert FAULTS[mode] in text, text
    assert f"listing calendars at http://127.0.0.1:{hostile.port}" in text
    assert "unexpected internal error" not in text
    assert info.structured_content["reachable"] is False
    assert FAULTS[mode] in info.structured_content["error"]
    assert [r for r in caplog.records if r.exc_info] == []
    assert hostile.seen  # the double was asked


async def test_a_call_held_up_by_the_server_does_not_hold_up_another() -> None:
    """Two calls at once: the double answers neither until both requests have reached it."""
    with hostile_server("pair") as hostile:
        settings = CalDAVSettings(hostile.url, "willi", "secret", timeout=20.0)
        async with connect(build_server(ApprovalSettings(), settings), revision="2026-07-28") as client:
            results = []

            async def call() -> None:
                results.append(await client.call_tool("list_calendars", {}))

            async with anyio.create_task_group() as group:
                group.start_soon(call)
                group.start_soon(call)
    texts = [result.content[0].text for result in results]
    assert all("with text/html that is not a WebDAV XML answer" in text for text in texts), texts


async def test_a_redirect_to_another_origin_is_not_followed() -> None:
    with listening() as listener, hostile_server("away", target_port=listener.port) as hostile:
        settings = CalDAVSettings(hostile.url, "willi", "secret")
        async with connect(build_server(ApprovalSettings(), settings), revision="2026-07-28") as client:
            result = await client.call_tool("list_calendars", {})
    assert result.is_error
    assert f"redirected PROPFIND to another origin (http://127.0.0.1:{listener.port})" in result.content[0].text
    assert listener.received == []


async def test_a_same_origin_redirect_is_followed(account) -> None:
    settings = CalDAVSettings(account.server.url + ".well-known/caldav", "willi", "secret")
    async with connect(build_server(ApprovalSettings(), settings), revision="2026-07-28") as client:
        result = await client.call_tool("list_calendars", {})
    assert not result.is_error, result.content[0].text
    assert account.work in [c["id"] for c in result.structured_content["calendars"]]


def test_a_password_in_caldav_url_is_refused_at_startup_without_echoing_it() -> None:
    with pytest.raises(SettingsError) as raised:
        CalDAVSettings.from_env({"CALDAV_URL": "https://willi:hunter2-secret@dav.example.org/"})
    assert "hunter2" not in str(raised.value)
    assert "CALDAV_USERNAME and CALDAV_PASSWORD" in str(raised.value)


def test_settings_built_in_code_refuse_a_password_in_the_url_too() -> None:
    with pytest.raises(SettingsError) as raised:
        CalDAVSettings("http://willi:hunter2-secret@127.0.0.1:9/", "willi", "secret")
    assert "hunter2" not in str(raised.value)


@pytest.mark.parametrize(
    ("name", "value"),
    [("CALDAV_TIMEOUT", "0"), ("CALDAV_TIMEOUT", "2.5"), ("CALDAV_MAX_RESPONSE_BYTES", "1000"), ("CALDAV_TIMEOUT", "")],
)
def test_bounds_settings_are_checked(name: str, value: str) -> None:
    with pytest.raises(SettingsError, match=name):
        CalDAVSettings.from_env({name: value})


def test_bounds_settings_have_defaults_and_are_read() -> None:
    default = CalDAVSettings.from_env({})
    chosen = CalDAVSettings.from_env({"CALDAV_TIMEOUT": "5", "CALDAV_MAX_RESPONSE_BYTES": "65536"})
    assert (default.timeout, default.max_response_bytes) == (30.0, 32 * 1024 * 1024)
    assert (chosen.timeout, chosen.max_response_bytes) == (5.0, 65536)


def _id_fields(
    work: str, home: str, event: str, task: str, note: str
) -> dict[str, tuple[dict[str, object], list[str]]]:
    """Every id-taking tool: valid arguments, and the names of its id and path arguments."""
    window = {"start": "2026-12-01", "end": "2026-12-08"}
    return {
        "list_events": ({"calendar": work, **window}, ["calendar"]),
        "get_event": ({"calendar": work, "id": event}, ["calendar", "id"]),
        "search_events": ({"query": "x", "calendars": [work], **window}, ["calendars"]),
        "get_free_busy": ({"calendars": [work], **window}, ["calendars"]),
        "create_event": ({"calendar": work, "summary": "x", "start": "2026-12-01"}, ["calendar"]),
        "update_event": ({"calendar": work, "id": event, "summary": "y"}, ["calendar", "id"]),
        "delete_event": ({"calendar": work, "id": event}, ["calendar", "id"]),
        "move_event": ({"calendar": work, "id": event, "destination": home}, ["calendar", "id", "destination"]),
        "respond_to_event": ({"calendar": work, "id": event, "partstat": "ACCEPTED"}, ["calendar", "id"]),
        "list_tasks": ({"calendar": work}, ["calendar"]),
        "get_task": ({"calendar": work, "uid": task}, ["calendar", "uid"]),
        "create_task": ({"calendar": work, "summary": "x", "parent": task}, ["calendar", "parent"]),
        "update_task": ({"calendar": work, "uid": task, "summary": "y"}, ["calendar", "uid"]),
        "complete_task": ({"calendar": work, "uid": task}, ["calendar", "uid"]),
        "delete_task": ({"calendar": work, "uid": task}, ["calendar", "uid"]),
        "list_journals": ({"calendar": work}, ["calendar"]),
        "get_journal": ({"calendar": work, "uid": note}, ["calendar", "uid"]),
        "create_journal": ({"calendar": work, "summary": "x"}, ["calendar"]),
        "update_journal": ({"calendar": work, "uid": note, "summary": "y"}, ["calendar", "uid"]),
        "delete_journal": ({"calendar": work, "uid": note}, ["calendar", "uid"]),
        "list_restorable": ({"calendar": work}, ["calendar"]),
        "restore_entry": ({"calendar": work, "id": "0123456789abcdef"}, ["calendar", "id"]),
    }


async def test_no_id_of_any_tool_leads_a_request_off_the_configured_server(account) -> None:
    account.put(account.work, "e.ics", ics(vevent("known-event@x", ":20261201T090000Z", ":20261201T100000Z")))
    account.put(account.work, "t.ics", ics("BEGIN:VTODO\nUID:known-task@x\nDTSTAMP:20261101T000000Z\nEND:VTODO\n"))
    account.put(
        account.work, "n.ics", ics("BEGIN:VJOURNAL\nUID:known-note@x\nDTSTAMP:20261101T000000Z\nEND:VJOURNAL\n")
    )
    tools = _id_fields(account.work, account.home, "known-event@x", "known-task@x", "known-note@x")
    answers: list[tuple[str, str, str, str]] = []
    with listening() as listener:
        corpus = escape_corpus(listener.port, account.work.strip("/"))
        async with connect(account.build(), revision="2026-07-28") as client:
            listed = {tool.name for tool in (await client.list_tools()).tools}
            for tool, (valid, fields) in tools.items():
                for name in fields:
                    for hostile in corpus:
                        value: object = [hostile] if name == "calendars" else hostile
                        result = await client.call_tool(tool, {**valid, name: value})
                        text = result.content[0].text if result.content else ""
                        answers.append((tool, name, hostile, text if result.is_error else "NOT REFUSED"))
    assert listener.received == []
    id_taking = {tool for tool in listed if tool not in {"list_calendars", "get_server_info"}}
    assert set(tools) == id_taking
    for tool, name, hostile, text in answers:
        assert text != "NOT REFUSED", (tool, name, hostile)
        assert "unexpected internal error" not in text, (tool, name, hostile, text)
        assert name in text, (tool, name, hostile, text)


@pytest.mark.parametrize(
    "body",
    [
        BOMB,
        BOMB.decode().encode("utf-16"),  # another encoding hides no DTD
        b'<?xml version="1.0"?><!-- note --><!DOCTYPE d:multistatus SYSTEM "http://127.0.0.1:9/x.dtd"><d:multistatus/>',
        b"<!DOCTYPE html><html><body>Sign in</body></html>",
    ],
)
def test_any_dtd_is_refused_before_parsing(body: bytes) -> None:
    with pytest.raises(ValueError, match="declares a DTD"):
        parse_multistatus(body)


def test_a_multistatus_without_a_dtd_is_read() -> None:
    assert parse_multistatus(b'<d:multistatus xmlns:d="DAV:"/>').responses == []


@pytest.mark.parametrize(
    ("status", "kind", "said"),
    [
        (403, NotAllowed, "writing: the CalDAV server answered 403 Forbidden"),
        (401, BadCredentials, "reading: the CalDAV server refused these credentials (401)"),
    ],
)
def test_statuses_are_translated_into_caldav_errors(status: int, kind: type[Exception], said: str) -> None:
    what = "writing" if status == 403 else "reading"
    with pytest.raises(kind) as raised:
        raise_for_status(Answer(status, httpx.Headers(), b""), what, PROFILE)
    assert str(raised.value).startswith(said)
