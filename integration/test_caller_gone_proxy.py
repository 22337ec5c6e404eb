"""A 2025-11-25 dialog whose caller went away, with the documented HAProxy in front, acts on no later yes.

docs/security.md: a call whose request goes away while its dialog is open acts on no answer that comes
later. packages/approval-core/tests/test_caller_gone.py proves it with the client connected to the server
itself. Here the client talks to the deployment of docs/deploy.md (HAProxy, the replicas, Redis, Radicale):
it calls delete_event, reads the pushed dialog off the call's SSE stream, closes that connection, and 3 s
later POSTs a ticked box on the same session (the stick table sends it to the same replica); the event must
still be in Radicale. This holds only with ``option abortonclose`` in HAProxy's defaults: without it HAProxy
keeps its connection to the replica open after the client closed while the SSE response is idle, and the
replica never sees the disconnect that ``approval_core.asking.caller_gone`` listens for.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import httpx2
import pytest
from remote_stack import CALENDARS, Stack, remote_stack

pytestmark = pytest.mark.anyio

WORK = CALENDARS[0]
YES = {"action": "accept", "content": {"approve": True}}


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with remote_stack(tmp_path_factory.mktemp("remote-gone"), count=2, store="redis", auth="jwt") as running:
        yield running


def _ics(uid: str) -> bytes:
    return (
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//caller-gone//EN\r\nBEGIN:VEVENT\r\n"
        f"UID:{uid}\r\nDTSTAMP:20261201T090000Z\r\nDTSTART:20261207T120000Z\r\nDTEND:20261207T130000Z\r\n"
        "SUMMARY:Caller gone\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
    ).encode()


def _asked(call: Any) -> dict[str, Any]:
    for line in call.iter_lines():
        if line.startswith("data:") and line[5:].strip():
            message = json.loads(line[5:])
            if message.get("method") == "elicitation/create":
                return message
    raise AssertionError("the call's stream ended without a dialog")


def _run(stack: Stack, url: str, wait: float) -> None:
    uid = f"gone-{uuid.uuid4().hex}"
    href = f"{WORK}{uid}.ics"
    with stack.dav() as dav:
        made = dav.put(href, content=_ics(uid), headers={"Content-Type": "text/calendar", "If-None-Match": "*"})
        assert made.status_code == 201, made.text
    headers = {
        "Host": urlsplit(stack.url).netloc,
        "Authorization": f"Bearer {stack.token}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"elicitation": {"form": {}}},
            "clientInfo": {"name": "caller-gone", "version": "1"},
        },
    }
    with httpx2.Client(headers=headers, timeout=60) as http:
        opened = http.post(url, json=hello)
        assert opened.status_code == 200, opened.text
        headers["Mcp-Session-Id"] = opened.headers["mcp-session-id"]
        headers["MCP-Protocol-Version"] = "2025-11-25"
        assert (
            http.post(url, headers=headers, json={"jsonrpc": "2.0", "method": "notifications/initialized"}).status_code
            == 202
        )
        call = {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "delete_event", "arguments": {"calendar": WORK, "id": uid}},
        }
        # The call on its own connection, closed (by the client going away) once the dialog was pushed.
        with httpx2.Client(headers=headers, timeout=60) as caller, caller.stream("POST", url, json=call) as streamed:
            asked = _asked(streamed)
            backend = streamed.headers.get("X-Backend") or stack.replicas.names[0]
        time.sleep(wait)
        answered = http.post(url, headers=headers, json={"jsonrpc": "2.0", "id": asked["id"], "result": YES})
        assert answered.status_code == 202, answered.text
        assert answered.headers.get("X-Backend", backend) == backend, "the answer reached another replica"
        assert http.post(url, headers=headers, json={"jsonrpc": "2.0", "id": 9, "method": "ping"}).status_code == 200
        time.sleep(1.0)
    with stack.dav() as dav:
        still = dav.get(href).status_code
    log = stack.replicas[backend].log.read_text(errors="replace")
    events = [
        json.loads("{" + line.partition("approval {")[2])["event"] for line in log.splitlines() if "approval {" in line
    ]
    assert still == 200, f"a yes sent {wait} s after the caller left deleted the event; audit: {events[-4:]}"


def test_a_yes_after_the_caller_left_through_haproxy_deletes_nothing(stack: Stack) -> None:
    """Through the proxy of docs/deploy.md: the replica never learns that the caller left."""
    _run(stack, stack.url, 3.0)


def test_control_a_yes_after_the_caller_left_the_replica_itself_deletes_nothing(stack: Stack) -> None:
    """The same steps straight to one replica (no proxy): the gate notices and abandons the dialog."""
    replica = stack.replicas[stack.replicas.names[0]]
    _run(stack, replica.url, 3.0)
