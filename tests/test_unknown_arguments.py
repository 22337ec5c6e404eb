"""Every tool of every server refuses an argument it does not take, naming it and the arguments it takes.

The SDK would drop an unknown argument and run the tool without it (``calendar`` sent for ``calendars``
would search every calendar); approval-core's error boundary refuses the call before the tool runs
(:func:`approval_core.serving.boundary.unknown_arguments`). No backend is configured here: the refusal
comes before anything that would need one (a call that reached the tool would say what to set instead).
"""

from __future__ import annotations

import importlib

import pytest

from approval_core import ApprovalSettings
from approval_core.testing import connect
from servers import SERVERS, import_name

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
@pytest.mark.parametrize("name", SERVERS)
async def test_every_tool_refuses_an_unknown_argument_naming_it_and_the_arguments_it_takes(
    name: str, revision: str
) -> None:
    server = importlib.import_module(f"{import_name(name)}.server").build_server(ApprovalSettings())
    problems: list[str] = []
    async with connect(server, revision=revision) as client:
        tools = (await client.list_tools()).tools
        for tool in tools:
            result = await client.call_tool(tool.name, {"bogus_argument": 1})
            text = " ".join(getattr(block, "text", "") for block in result.content)
            takes = list(tool.input_schema.get("properties", {}))
            if not result.is_error:
                problems.append(f"{tool.name}: accepted")
            elif not text.startswith(f"{tool.name} was not run: it takes no argument named 'bogus_argument'"):
                problems.append(f"{tool.name}: {text[:160]!r}")
            elif takes and f"its arguments are {', '.join(takes)}." not in text:
                problems.append(f"{tool.name}: does not name its arguments: {text!r}")
            elif not takes and "it takes no arguments" not in text:
                problems.append(f"{tool.name}: does not say it takes none: {text!r}")
    assert len(tools) > 5
    assert not problems, "\n".join(problems)
