"""The example server over real stdio: the flag, the startup line, both revisions, a restart."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import mcp_types as mt
import pytest
from mcp.client.stdio import StdioServerParameters, stdio_client

from approval_core.testing import DialogLog, accept, approval_of, call_once, connect, ticked

pytestmark = [pytest.mark.anyio, pytest.mark.stdio]

SCRIPT = str(Path(__file__).with_name("example_server.py"))
LINE = "example-mcp: ELICITATION=false — guarded tools fall back to the two-call token"
ARGS = {"book": "/books/work/", "ids": ["a"]}


def params(**env: str) -> StdioServerParameters:
    base = {k: v for k, v in os.environ.items() if k not in {"ELICITATION", "ELICITATION_TIMEOUT"}}
    return StdioServerParameters(command=sys.executable, args=[SCRIPT], env={**base, **env})


@pytest.mark.parametrize("value", ["off", ""])
def test_a_bad_flag_stops_the_server_with_code_1(value: str) -> None:
    p = params(ELICITATION=value)
    run = subprocess.run(  # noqa: S603 - our own interpreter and script
        [p.command, *p.args], env=p.env, input="", capture_output=True, text=True, timeout=60, check=False
    )
    assert run.returncode == 1
    assert run.stdout == ""
    assert run.stderr.startswith(f"example-mcp: ELICITATION={value!r} is not a valid value")
    assert "'true'" in run.stderr
    assert "'false'" in run.stderr


async def test_switched_off_prints_one_line_and_falls_back_to_the_token() -> None:
    with tempfile.TemporaryFile("w+") as errlog:
        async with connect(
            stdio_client(params(ELICITATION="false"), errlog=errlog), revision="2025-11-25", answer=accept
        ) as client:
            first = await client.call_tool("delete_items", ARGS)
            token = approval_of(first)["confirm_token"]
            second = await client.call_tool("delete_items", {**ARGS, "confirm_token": token})
            listed = await client.call_tool("list_items", {})
        errlog.seek(0)
        stderr = errlog.read()
    assert first.is_error
    assert not second.is_error
    assert listed.structured_content == {"items": ["b", "c"]}
    assert stderr.count(LINE) == 1
    assert stderr.splitlines()[0] == LINE


async def test_the_pushed_dialog_over_stdio() -> None:
    log = DialogLog(accept)
    async with connect(params(), revision="2025-11-25", answer=log) as client:
        result = await client.call_tool("delete_items", ARGS)
    assert not result.is_error
    assert result.structured_content == {"items": ["b", "c"]}
    assert log.messages[0].startswith("Delete 1 item(s)")


async def test_a_state_from_before_a_restart_is_asked_again_not_an_error() -> None:
    async with connect(params(), revision="2026-07-28", answer=accept) as client:
        first = await call_once(client, "delete_items", ARGS)
    assert isinstance(first, mt.InputRequiredResult)
    async with connect(params(), revision="2026-07-28", answer=accept) as client:
        again = await call_once(client, "delete_items", ARGS, answer=ticked, request_state=first.request_state)
        assert isinstance(again, mt.InputRequiredResult)
        listed = await client.call_tool("list_items", {})
        assert listed.structured_content == {"items": ["a", "b", "c"]}
        done = await call_once(client, "delete_items", ARGS, answer=ticked, request_state=again.request_state)
        assert isinstance(done, mt.CallToolResult)
        assert done.structured_content == {"items": ["b", "c"]}
