"""Every server's schemas file is current, and a tool registered from it is the tool the SDK would derive.

A server registers its tools with the schemas written in its ``tool_schemas.json``
(:mod:`approval_core.serving.tool_schemas`) instead of deriving them at each start. That is only sound
while the file says exactly what the SDK derives from the code, so for every server this builds it twice,
with the file and with every schema derived, and compares each tool in all it lists (name, title,
description, input schema, outputSchema, annotations, icons, ``_meta``) and all it validates a call and a
result with (the arguments model, the result model, the Context parameter). A change to a tool or a model
without writing the file again fails here, with the command that writes it.
"""

from __future__ import annotations

import dataclasses
import importlib
import json
from pathlib import Path
from typing import Any

import pytest
from mcp.server.mcpserver.tools.base import Tool

from approval_core import ApprovalSettings, PageSettings
from approval_core.presets import ToolSelection
from approval_core.serving import tool_schemas
from servers import SERVERS, import_name

pytestmark = pytest.mark.anyio

WRITE = "uv run python -m approval_core tool-schemas"

SETTINGS = {
    "dialog": ApprovalSettings(),
    "two-call": ApprovalSettings(elicitation=False),
    "every-write": ApprovalSettings(profile="every-write"),
    "read-only": ApprovalSettings(profile="read-only"),
    "selection": ApprovalSettings(tools=ToolSelection(("list_*", "-list_users"))),
    "page": ApprovalSettings(page=PageSettings(passkeys_file=Path("/nonexistent/passkeys.json"))),
}
"""Approval settings that change how tools ask, which are listed and whether a page waits: none may change a schema."""


def _registered(server: Any) -> dict[str, Tool]:
    return {tool.name: tool for tool in server._tool_manager.list_tools()}


def _compared(tool: Tool) -> dict[str, Any]:
    metadata = tool.fn_metadata
    return {
        "listed": (tool.title, tool.description, tool.parameters, tool.output_schema, tool.annotations, tool.icons),
        "meta": tool.meta,
        "call": (tool.context_kwarg, tool.is_async, tool.resolved_params, metadata.wrap_output),
        "arguments": (metadata.arg_model.model_json_schema(by_alias=True), list(metadata.arg_model.model_fields)),
        "result": metadata.output_model,
    }


@pytest.mark.parametrize("setting", SETTINGS)
@pytest.mark.parametrize("name", SERVERS)
def test_a_tool_from_the_file_is_the_tool_the_sdk_derives(
    name: str, setting: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = importlib.import_module(f"{import_name(name)}.server")
    settings = SETTINGS[setting]
    derived = tool_schemas.derived_tool_schemas(lambda: module.build_server(settings))
    expected = {tool: _compared(built) for tool, built in _registered(_build_deriving(module, settings)).items()}

    def refuse(*args: Any, **kwargs: Any) -> Tool:
        raise AssertionError(f"{name} derived the schemas of {args[0].__name__} at start-up")

    monkeypatch.setattr(Tool, "from_function", refuse)
    from_file = _registered(module.build_server(settings))
    assert sorted(from_file) == sorted(expected) == sorted(derived["tools"])
    for tool, built in from_file.items():
        assert _compared(built) == expected[tool], f"{name}'s {tool} differs from what the SDK derives: {WRITE}"


def _build_deriving(module: Any, settings: ApprovalSettings) -> Any:
    token = tool_schemas._DERIVING.set(True)
    try:
        return module.build_server(settings)
    finally:
        tool_schemas._DERIVING.reset(token)


@pytest.mark.parametrize("name", SERVERS)
def test_every_server_has_a_current_schemas_file(name: str) -> None:
    module = importlib.import_module(f"{import_name(name)}.server")
    path = module.TOOL_SCHEMAS
    assert path.name == tool_schemas.SCHEMAS_FILE
    assert path.parent.name == import_name(name)
    assert path.is_file(), f"{name} has no {path.name}: {WRITE}"
    written = json.loads(path.read_text(encoding="utf-8"))
    derived = tool_schemas.derived_tool_schemas(lambda: module.build_server(ApprovalSettings()))
    assert written == derived, f"{path} is out of date: {WRITE}"


async def test_the_file_changes_nothing_a_client_lists() -> None:
    for name in SERVERS:
        module = importlib.import_module(f"{import_name(name)}.server")
        settings = dataclasses.replace(ApprovalSettings())
        listed = [tool.model_dump() for tool in await module.build_server(settings).list_tools()]
        derived = [tool.model_dump() for tool in await _build_deriving(module, settings).list_tools()]
        assert listed == derived, name
