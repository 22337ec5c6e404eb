"""A pushed dialog (2025-11-25) whose call went away acts on no later answer (issue 22, §5).

Two ways for the caller to go, each followed by a yes sent afterwards:

- over real stdio, the client cancels the ``tools/call`` (``notifications/cancelled``), then answers the
  dialog with a ticked box;
- over Streamable HTTP (uvicorn on 127.0.0.1 in this process), the client drops the call's SSE stream,
  then POSTs the ticked box on the same session. The SDK keeps the tool running after a dropped stream,
  so only the gate stands between that late yes and the change.

The example server keeps its items in memory: nothing deleted means nothing acted.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from anyio.abc import Process
from processes import free_port

from approval_core import APPROVE_FIELD, ApprovalSettings
from approval_core.page.settings import PageSettings
from approval_core.serving.remote import http_server
from approval_core.testing import AuditRecorder
from core_serving import running, settings
from example_server import Example
from test_approval_page import _paired_file

pytestmark = pytest.mark.anyio

SCRIPT = str(Path(__file__).with_name("example_server.py"))
ARGS = {"book": "/books/work/", "ids": ["a"]}
YES = {"action": "accept", "content": {APPROVE_FIELD: True}}
INITIALIZE = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"elicitation": {"form": {}}},
    "clientInfo": {"name": "late-yes", "version": "1"},
}
DEADLINE = 60  # a failure guard only: each wait below ends on an event the server sends


def _call(request_id: int, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    params = {"name": tool, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def _events(stderr: str) -> list[str]:
    """The audit events in a server's stderr, in order."""
    lines = [line.split("approval ", 1)[1] for line in stderr.splitlines() if "approval {" in line]
    return [json.loads(line)["event"] for line in lines]


class Pipe:
    """JSON-RPC over the example server's stdin and stdout, one message per line (MCP stdio transport)."""

    def __init__(self, process: Process) -> None:
        assert process.stdin is not None
        assert process.stdout is not None
        self.process, self.buffer = process, b""

    async def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        await self.process.stdin.send(json.dumps(message).encode() + b"\n")

    async def until(self, wanted: Any) -> dict[str, Any]:
        """The next message for which ``wanted(message)`` holds (others are skipped)."""
        assert self.process.stdout is not None
        while True:
            while b"\n" not in self.buffer:
                self.buffer += await self.process.stdout.receive()
            line, self.buffer = self.buffer.split(b"\n", 1)
            message = json.loads(line)
            if wanted(message):
                return message


async def test_over_stdio_a_yes_after_the_call_was_cancelled_changes_nothing() -> None:
    env = {k: v for k, v in os.environ.items() if k not in {"ELICITATION", "ELICITATION_TIMEOUT"}}
    async with await anyio.open_process([sys.executable, SCRIPT], env=env) as process:
        pipe = Pipe(process)
        with anyio.fail_after(DEADLINE):
            await pipe.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": INITIALIZE})
            await pipe.until(lambda m: m.get("id") == 1)
            await pipe.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            await pipe.send(_call(2, "delete_items", ARGS))
            asked = await pipe.until(lambda m: m.get("method") == "elicitation/create")
            await pipe.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}})
            await pipe.send({"jsonrpc": "2.0", "id": asked["id"], "result": YES})
            # Messages are read in order: by the time this call is answered, the yes above has been taken in.
            await pipe.send(_call(3, "list_items", {}))
            listed = await pipe.until(lambda m: m.get("id") in {2, 3})
        assert process.stdin is not None
        assert process.stderr is not None
        await process.stdin.aclose()
        stderr = b"".join([chunk async for chunk in process.stderr]).decode()
    assert listed["id"] == 3, "a cancelled call is never answered"
    assert listed["result"]["structuredContent"] == {"items": ["a", "b", "c"]}
    assert _events(stderr) == ["asked", "caller_gone"]


async def _asked(call: httpx2.Response) -> dict[str, Any]:
    """The ``elicitation/create`` request pushed on a call's SSE stream."""
    async for line in call.aiter_lines():
        if line.startswith("data:") and line[5:].strip():
            message = json.loads(line[5:])
            if message.get("method") == "elicitation/create":
                return message
    raise AssertionError("the call's stream ended without a dialog")


class HttpSession:
    """One 2025-11-25 session spoken by hand over Streamable HTTP, so that a call's stream can be dropped."""

    def __init__(self, http: httpx2.AsyncClient, url: str, **headers: str) -> None:
        self.http, self.url = http, url
        self.headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json", **headers}

    async def open(self, capabilities: dict[str, Any]) -> None:
        params = {**INITIALIZE, "capabilities": capabilities}
        opened = await self.post({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})
        self.headers["Mcp-Session-Id"] = opened.headers["mcp-session-id"]
        assert (await self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})).status_code == 202

    async def post(self, message: dict[str, Any]) -> httpx2.Response:
        return await self.http.post(self.url, headers=self.headers, json=message)

    async def answer(self, asked: dict[str, Any], result: dict[str, Any]) -> None:
        """Answer the pushed request, then a ping: messages are read in order, so the answer has been taken in."""
        assert (await self.post({"jsonrpc": "2.0", "id": asked["id"], "result": result})).status_code == 202
        assert (await self.post({"jsonrpc": "2.0", "id": 99, "method": "ping"})).status_code == 200

    @contextlib.asynccontextmanager
    async def dropped_call(self, tool: str, arguments: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
        """Call ``tool``, give the block its pushed request; the call's connection is closed when the block ends."""
        # Its own client, closed with the stream: the connection that carried the call goes with it.
        async with (
            httpx2.AsyncClient(timeout=DEADLINE) as caller,
            caller.stream("POST", self.url, headers=self.headers, json=_call(2, tool, arguments)) as call,
        ):
            yield await _asked(call)


async def test_over_http_a_yes_after_the_call_s_stream_dropped_changes_nothing() -> None:
    port = free_port()
    example = Example()
    app = http_server(example.server, settings(MCP_PORT=str(port)), None)
    with AuditRecorder() as audit:
        async with running(app, port) as url, httpx2.AsyncClient(timeout=DEADLINE) as http:
            session = HttpSession(http, url)
            await session.open({"elicitation": {"form": {}}})
            with anyio.fail_after(DEADLINE):
                async with session.dropped_call("delete_items", ARGS) as asked:
                    pass
                await audit.wait("delete_items", "caller_gone")
            await session.answer(asked, YES)
            listed = await session.post(_call(4, "list_items", {}))
            assert '"structuredContent":{"items":["a","b","c"]}' in listed.text
    assert example.items == {"a", "b", "c"}
    assert audit.of("delete_items") == ["asked", "caller_gone"]


async def test_over_http_a_page_decision_after_the_stream_dropped_waits_for_the_next_identical_call(
    tmp_path: Path,
) -> None:
    """URL mode (the approval page): the call that waited for the decision is gone, so it acts on none."""
    port = free_port()
    passkeys = tmp_path / "passkeys.json"
    _paired_file(passkeys)
    example = Example(ApprovalSettings(page=PageSettings(passkeys_file=passkeys)))
    public = f"http://localhost:{port}/mcp"
    app = http_server(example.server, settings(MCP_PORT=str(port), MCP_PUBLIC_URL=public), None)
    page = example.gate.page
    assert page is not None
    with AuditRecorder() as audit:
        async with running(app, port) as url, httpx2.AsyncClient(timeout=DEADLINE) as http:
            session = HttpSession(http, url, Host=f"localhost:{port}")
            await session.open({"elicitation": {"url": {}}})
            with anyio.fail_after(DEADLINE):
                async with session.dropped_call("delete_items", ARGS) as asked:
                    await session.answer(asked, {"action": "accept"})  # the person went to the page
                await audit.wait("delete_items", "caller_gone")
                record = await page.book.get(asked["params"]["url"].rsplit("/", 1)[1])
                assert record is not None
                await page.book.decide(record, "approve")
            assert example.items == {"a", "b", "c"}
            again = await session.post(_call(5, "delete_items", ARGS))  # the same call, told what it did
            assert '"structuredContent":{"items":["b","c"]}' in again.text
    assert example.items == {"b", "c"}
    assert audit.of("delete_items")[-1] == "approved"
