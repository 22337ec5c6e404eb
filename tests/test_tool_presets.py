"""Which tools a server serves: ``TOOLS`` presets and ``APPROVAL_PROFILE=read-only``, for every server.

* ``read-only`` serves exactly the tools whose declared effects change nothing, each marked read-only;
* a ``TOOLS`` preset serves the tools it names, each exactly as the full server lists it, and a guarded
  tool it serves keeps its guard (the same row of the guard table, the same gate);
* an entry that names no tool stops the console script with exit code 1, naming the entry;
* the startup line names the profile and the preset.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from typing import Any

import pytest

from approval_core import ApprovalSettings
from approval_core.gate import GATE_ATTRIBUTE
from approval_core.policy import CHANGES
from approval_core.presets import ToolSelection
from approval_core.serving.selection import check_tool_selection
from servers import SERVERS, import_name

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def build(name: str, **env: str) -> Any:
    return importlib.import_module(f"{import_name(name)}.server").build_server(ApprovalSettings.from_env(env))


def effects_of(name: str) -> dict[str, Any]:
    return importlib.import_module(f"{import_name(name)}.guards").EFFECTS


@pytest.mark.parametrize("name", SERVERS)
async def test_read_only_serves_exactly_the_tools_that_change_nothing(name: str) -> None:
    effects = effects_of(name)
    listed = {tool.name: tool for tool in await build(name, APPROVAL_PROFILE="read-only").list_tools()}
    assert set(listed) == {tool for tool, declared in effects.items() if not declared & CHANGES}
    assert listed, f"{name} has no tool that only reads"
    for tool in listed.values():
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint is True, tool.name


def presets(name: str, tools: list[str], guarded: list[str]) -> list[str]:
    """Presets worth trying on a server: each guarded tool alone, prefixes, leaving out, everything."""
    prefixes = sorted({tool.split("_")[0] + "_*" for tool in tools})
    return [*guarded, *prefixes, f"*,-{guarded[0]}", f"-{prefixes[0]}", "*", ",".join([*prefixes[:2], guarded[-1]])]


@pytest.mark.parametrize("name", SERVERS)
async def test_a_preset_serves_what_it_names_and_never_a_guarded_tool_without_its_guard(name: str) -> None:
    full_server = build(name)
    full = {tool.name: tool for tool in await full_server.list_tools()}
    guards = getattr(full_server, GATE_ATTRIBUTE).guards
    guarded = sorted(tool for tool in full if guards[tool].kind != "never")
    assert guarded, f"{name} has no guarded tool"
    for preset in presets(name, sorted(full), guarded):
        server = build(name, TOOLS=preset)
        check_tool_selection(server)  # every entry names a tool
        listed = {tool.name: tool for tool in await server.list_tools()}
        selection = ToolSelection.parse(preset)
        assert selection is not None
        assert set(listed) == {tool for tool in full if selection.admits(tool)}, preset
        gate = getattr(server, GATE_ATTRIBUTE)
        for tool, shown in listed.items():
            assert shown == full[tool], f"{preset}: {tool} is listed differently"
            assert gate.guards[tool] == guards[tool], f"{preset}: {tool} lost its guard"


@pytest.mark.parametrize("name", SERVERS)
async def test_a_tool_left_out_is_unknown_to_a_call(name: str) -> None:
    from mcp.client import Client

    full = sorted(tool.name for tool in await build(name).list_tools())
    async with Client(build(name, TOOLS=f"-{full[0]}"), mode="legacy") as client:
        result = await client.call_tool(full[0], {})
    assert result.is_error
    assert "Unknown tool" in result.content[0].text


def console(name: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("CALDAV_", "CARDDAV_", "NTFY_", "APPROVAL_"))}
    script = f"from {import_name(name)}.server import main\nmain()\n"
    return subprocess.run(  # noqa: S603 - our own interpreter
        [sys.executable, "-c", script], env={**base, **env}, stdin=subprocess.DEVNULL, capture_output=True,
        text=True, timeout=120, check=False,
    )  # fmt: skip


@pytest.mark.stdio
@pytest.mark.parametrize("name", SERVERS)
def test_an_entry_that_names_no_tool_stops_the_server_naming_it(name: str) -> None:
    done = console(name, TOOLS="list_*,no_such_tool,-nothing_*")
    assert done.returncode == 1, done.stderr
    last = done.stderr.strip().splitlines()[-1]
    assert last.startswith(f"{name}: TOOLS names 'no_such_tool', '-nothing_*', which matches no tool"), last
    assert done.stdout == ""


@pytest.mark.stdio
@pytest.mark.parametrize("name", SERVERS)
def test_read_only_refuses_a_changing_tool_named_outright(name: str) -> None:
    effects = effects_of(name)
    changing = sorted(tool for tool, declared in effects.items() if declared & CHANGES)[0]
    done = console(name, APPROVAL_PROFILE="read-only", TOOLS=changing)
    assert done.returncode == 1, done.stderr
    assert f"TOOLS names {changing}, which change data, while APPROVAL_PROFILE=read-only" in done.stderr


@pytest.mark.parametrize("raw", ["", " , ", "List_events", "list*_x", "a b", "delete_*,", "--x", "list_events;rm"])
def test_a_tools_value_that_is_no_list_of_entries_is_refused(raw: str) -> None:
    from approval_core.errors import SettingsError

    with pytest.raises(SettingsError, match="TOOLS"):
        ApprovalSettings.from_env({"TOOLS": raw})
