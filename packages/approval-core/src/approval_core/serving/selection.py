"""Which of a server's tools are served: ``TOOLS`` and ``APPROVAL_PROFILE=read-only``.

``TOOLS`` (unprefixed, like ``ELICITATION``) is a comma list of entries, each a tool name
(``create_event``), a prefix ending in ``*`` (``list_*``; ``*`` alone is every tool), or either of them
after ``-`` to leave tools out (``-delete_*``). A tool is served when an entry without ``-`` matches it
(or when every entry has a ``-``) and no ``-`` entry does. Spaces around an entry are ignored; anything
else (an empty entry, a ``*`` inside a name, upper case) is refused when the settings are read.

Under ``APPROVAL_PROFILE=read-only`` only the tools whose declared effects (``guards.EFFECTS``,
:class:`~approval_core.policy.Effect`) change nothing are served; ``TOOLS`` narrows that further.

Selection happens where tools are registered: :func:`install_tool_selection` (called by
:func:`~approval_core.serving.equip.equip`) makes ``server.add_tool`` register only the chosen tools and
remember every tool the server offered, so a tool left out is unknown to the client (absent from
``tools/list``, refused by ``tools/call``) and nothing about the tools that are served changes: each keeps
its own guard. :func:`check_tool_selection` (run by :func:`~approval_core.serve` before serving) refuses
an entry that matches none of the offered tools, and, under ``read-only``, a tool named outright that
changes data; the server then stops with exit code 1 and the names on stderr.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from mcp.server.mcpserver import MCPServer

from approval_core.errors import SettingsError
from approval_core.policy import CHANGES, Effect
from approval_core.presets import TOOLS_ENV, ToolSelection

__all__ = ["check_tool_selection", "install_tool_selection"]

_OFFERED = "_approval_core_offered_tools"
_CHOSEN = "_approval_core_tool_rule"


def _reads_only(effects: Mapping[str, frozenset[Effect]], name: str) -> bool:
    declared = effects.get(name)
    return declared is not None and not declared & CHANGES


def install_tool_selection(
    server: MCPServer[Any],
    selection: ToolSelection | None,
    read_only: bool,
    effects: Mapping[str, frozenset[Effect]],
) -> None:
    """Make ``server`` register only the chosen tools (see the module docstring); nothing when all are served.

    Args:
        server: The server, before its tools are registered.
        selection: ``TOOLS``, or None.
        read_only: True under ``APPROVAL_PROFILE=read-only``.
        effects: The server's declared effects per tool (``guards.EFFECTS``); a tool without a row counts as
            one that changes data.
    """
    offered: list[str] = []
    setattr(server, _OFFERED, offered)
    setattr(server, _CHOSEN, (selection, read_only, effects))
    if selection is None and not read_only:
        return
    register: Callable[..., None] = server.add_tool

    def add_tool(fn: Callable[..., Any], name: str | None = None, *args: Any, **kwargs: Any) -> None:
        tool_name = name or fn.__name__
        offered.append(tool_name)
        if read_only and not _reads_only(effects, tool_name):
            return
        if selection is not None and not selection.admits(tool_name):
            return
        register(fn, tool_name, *args, **kwargs)

    server.add_tool = add_tool  # type: ignore[method-assign]


def check_tool_selection(server: MCPServer[Any]) -> None:
    """Refuse a ``TOOLS`` entry that names no tool of ``server``, or a changing tool named under ``read-only``.

    Does nothing for a server without :func:`install_tool_selection`, or when every tool is served.

    Raises:
        SettingsError: naming every entry that matches no tool (and the tools there are), or every tool named
            outright that ``read-only`` does not serve.
    """
    rule: tuple[ToolSelection | None, bool, Mapping[str, frozenset[Effect]]] | None = getattr(server, _CHOSEN, None)
    offered: list[str] = getattr(server, _OFFERED, [])
    if rule is None:
        return
    selection, read_only, effects = rule
    if selection is None:
        return
    unknown = selection.unmatched(offered)
    if unknown:
        raise SettingsError(
            f"{TOOLS_ENV} names {', '.join(repr(entry) for entry in unknown)}, which matches no tool of this "
            f"server; its tools are {', '.join(sorted(offered))}"
        )
    if read_only:
        changing = [e for e in selection.entries if e in offered and not _reads_only(effects, e)]
        if changing:
            raise SettingsError(
                f"{TOOLS_ENV} names {', '.join(changing)}, which change data, while APPROVAL_PROFILE=read-only "
                "serves only tools that read: take them out of TOOLS, or use APPROVAL_PROFILE=guarded"
            )
