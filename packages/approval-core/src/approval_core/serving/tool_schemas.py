"""Tool schemas written out before a release, so that a server's start does not derive them again.

Registering a tool, the MCP SDK (``Tool.from_function``) derives two JSON Schemas with pydantic: the input
schema from the function's arguments model and the outputSchema from its result model. For caldav-mcp's 24
tools that is about half of building the server, and it gives the same answer at every start. So each
server keeps what the SDK derives in a file beside its ``server`` module (:data:`SCHEMAS_FILE`), and
:func:`install_tool_schemas` (called by :func:`~approval_core.serving.equip.equip`) registers each tool
with its entry from that file. The SDK still builds the arguments model a call is validated with, and
the result's validator at the first call; only the schemas' derivation is skipped.

An entry is used only where it cannot differ from what the SDK would derive:

- the file was written under the same ``mcp`` and ``pydantic`` versions as the ones installed (either
  one changes what a derivation gives); else no entry is used;
- the tool's function is annotated as the entry says (each argument's type and the return type, as
  written), its arguments model has exactly the properties of the entry's input schema, its result
  model exactly those of the entry's outputSchema, and its context parameter is the one the entry
  names; else that tool is derived as usual (a file left behind by a change to a tool's signature, or
  to the fields a model has, is caught here; a change inside a field, by the test below);
- the SDK's own options (``structured_output``) are not given for it.

``tests/test_tool_schemas.py`` builds every server both ways and fails when any tool differs in anything
it lists or validates with, so a file left behind by a change to a model fails there, and says to write it
again: ``uv run python -m approval_core tool-schemas`` (every server of the workspace, or the
packages named; ``--check`` only compares).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib
import importlib.metadata
import json
import sys
from collections.abc import Callable, Generator, Mapping
from contextvars import ContextVar
from pathlib import Path
from typing import Any, cast

import pydantic
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.tools.base import Tool
from mcp.server.mcpserver.utilities.func_metadata import FuncMetadata, func_metadata
from mcp.shared._callable_inspection import is_async_callable

__all__ = ["SCHEMAS_FILE", "derived_tool_schemas", "install_tool_schemas", "main", "read_tool_schemas"]

SCHEMAS_FILE = "tool_schemas.json"
"""The file name, beside a server's ``server`` module, of the schemas its tools are registered with."""

_DERIVING: ContextVar[bool] = ContextVar("approval_core_deriving_tool_schemas", default=False)


def _versions() -> dict[str, str]:
    return {"mcp": importlib.metadata.version("mcp"), "pydantic": pydantic.VERSION}


def read_tool_schemas(path: Path | None) -> dict[str, dict[str, Any]]:
    """The entries of the schemas file at ``path``, by tool name; empty when none may be used.

    Empty when ``path`` is None or holds no file, when it was written under other ``mcp`` or ``pydantic``
    versions than the installed ones, when it cannot be read as one, and while
    :func:`derived_tool_schemas` builds a server. Each entry: ``input`` (the input schema), ``output`` (the
    outputSchema or None), ``output_model`` (``module:qualified name`` of the result model, or None),
    ``context`` (the name of the tool's Context parameter, or None) and ``annotations`` (the function's
    annotations as written, each as text).
    """
    if path is None or _DERIVING.get():
        return {}
    try:
        document: object = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(document, dict):
        return {}
    written = cast(dict[str, Any], document)
    if written.get("versions") != _versions():
        return {}
    tools = written.get("tools")
    return cast(dict[str, dict[str, Any]], tools) if isinstance(tools, dict) else {}


def _named(reference: str) -> Any:
    module, _, qualified = reference.partition(":")
    found: Any = importlib.import_module(module)
    for part in qualified.split("."):
        found = getattr(found, part)
    return found


def _properties(model: Any) -> set[str] | None:
    fields: dict[str, Any] | None = getattr(model, "model_fields", None)
    if fields is None:
        return None
    return {field.serialization_alias or field.alias or name for name, field in fields.items()} | set(
        getattr(model, "model_computed_fields", {})
    )


def _annotations(fn: Callable[..., Any]) -> dict[str, str]:
    """The function's annotations as written (its arguments' types and its return type), each as text."""
    return {name: str(annotation) for name, annotation in getattr(fn, "__annotations__", {}).items()}


def _tool(fn: Callable[..., Any], name: str, entry: Mapping[str, Any], **options: Any) -> Tool | None:
    """``fn`` as the SDK's Tool with ``entry``'s schemas, or None where the entry may not be what it derives."""
    context: str | None = entry.get("context")
    if entry.get("annotations") != _annotations(fn) or (
        context is not None and context not in getattr(fn, "__annotations__", {})
    ):
        return None  # before the arguments model is built: the SDK builds it again for a tool left to it
    arguments = func_metadata(fn, skip_names=[context] if context else [], structured_output=False).arg_model
    declared = {field.alias or field_name for field_name, field in arguments.model_fields.items()}
    if declared != set(entry["input"].get("properties", {})):
        return None
    output: dict[str, Any] | None = entry.get("output")
    if output is None:
        metadata = FuncMetadata(arg_model=arguments)
    else:
        model = _named(entry["output_model"])
        if _properties(model) != set(output.get("properties", {})):
            return None
        metadata = FuncMetadata(arg_model=arguments, output_model=model, output_schema=output)
    return Tool(
        fn=fn,
        name=name,
        title=options.get("title"),
        description=options.get("description") or fn.__doc__ or "",
        parameters=entry["input"],
        fn_metadata=metadata,
        is_async=is_async_callable(fn),
        context_kwarg=context,
        annotations=options.get("annotations"),
        icons=options.get("icons"),
        meta=options.get("meta"),
    )


def install_tool_schemas(server: MCPServer[Any], path: Path | None) -> None:
    """Make ``server.add_tool`` register a tool with its entry in the schemas file at ``path`` (module docstring).

    A tool without a usable entry is registered by the SDK as before. Call it before the tools are
    registered and before anything else wraps ``add_tool``.
    """
    entries = read_tool_schemas(path)
    if not entries:
        return
    register: Callable[..., None] = server.add_tool
    tools: dict[str, Tool] = server._tool_manager._tools  # pyright: ignore[reportPrivateUsage] - no public way to add a built Tool

    def add_tool(fn: Callable[..., Any], name: str | None = None, *args: Any, **options: Any) -> None:
        tool_name = name or fn.__name__
        entry = entries.get(tool_name)
        built = None
        if entry is not None and not args and options.get("structured_output") is None and tool_name not in tools:
            built = _tool(fn, tool_name, entry, **options)
        if built is None:
            register(fn, name, *args, **options)
            return
        tools[tool_name] = built

    server.add_tool = add_tool  # type: ignore[method-assign]


def _reference(model: Any) -> str | None:
    module, qualified = getattr(model, "__module__", None), getattr(model, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(qualified, str) or "<" in qualified:
        return None
    try:
        return f"{module}:{qualified}" if _named(f"{module}:{qualified}") is model else None
    except (ImportError, AttributeError):
        return None


def derived_tool_schemas(build: Callable[[], MCPServer[Any]]) -> dict[str, Any]:
    """The schemas file's document for the server ``build()`` makes, every schema derived by the SDK.

    Only tools a file entry can rebuild exactly get one: no ``Resolve`` parameters, and structured output
    (if any) validated against a model importable by name and not wrapped (``wrap_output``).
    """
    token = _DERIVING.set(True)
    try:
        server = build()
    finally:
        _DERIVING.reset(token)
    tools: dict[str, Any] = {}
    for tool in server._tool_manager.list_tools():  # pyright: ignore[reportPrivateUsage]
        metadata = tool.fn_metadata
        reference = None if metadata.output_schema is None else _reference(metadata.output_model)
        if tool.resolved_params or metadata.wrap_output or (metadata.output_schema is not None and not reference):
            continue
        tools[tool.name] = {
            "input": tool.parameters,
            "output": metadata.output_schema,
            "output_model": reference,
            "context": tool.context_kwarg,
            "annotations": _annotations(tool.fn),
        }
    return {"versions": _versions(), "tools": dict(sorted(tools.items()))}


def _document_text(document: Mapping[str, Any]) -> str:
    return json.dumps(document, indent=1, sort_keys=False, ensure_ascii=False) + "\n"


@contextlib.contextmanager
def _quiet() -> Generator[None]:
    with contextlib.redirect_stdout(sys.stderr):
        yield


def main(argv: list[str] | None = None) -> int:
    """``python -m approval_core tool-schemas [--check] [PACKAGE...]``: write (or compare) schemas files.

    Each PACKAGE (default: every installed ``*_mcp`` package with a ``server.build_server``) is built with
    default approval settings and its file written beside its ``server`` module. Returns 0, or 1 under
    ``--check`` when a file differs from what the SDK derives now (each one named on stderr).
    """
    from approval_core.settings import ApprovalSettings

    parser = argparse.ArgumentParser(prog="python -m approval_core tool-schemas")
    parser.add_argument("--check", action="store_true", help="compare only; exit 1 when a file is out of date")
    parser.add_argument("packages", nargs="*", help="server packages (default: caldav_mcp, carddav_mcp, ntfy_mcp...)")
    options = parser.parse_args(argv)
    packages: list[str] = options.packages or sorted(
        name.replace("-", "_")
        for name in {d.metadata["Name"] for d in importlib.metadata.distributions()}
        if name.endswith("-mcp")
    )
    stale = 0
    for package in packages:
        module = importlib.import_module(f"{package}.server")
        with _quiet():
            text = _document_text(derived_tool_schemas(functools.partial(module.build_server, ApprovalSettings())))
        target = Path(module.__file__ or "").with_name(SCHEMAS_FILE)
        current = target.read_text(encoding="utf-8") if target.is_file() else None
        if current == text:
            continue
        if options.check:
            print(f"{target} is out of date: write it with python -m approval_core tool-schemas", file=sys.stderr)
            stale += 1
        else:
            target.write_text(text, encoding="utf-8")
            print(f"wrote {target}", file=sys.stderr)
    return 1 if stale else 0
