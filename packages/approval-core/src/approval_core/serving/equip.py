"""Everything approval-core puts on a family server (:func:`equip`), and the one way a server runs (:func:`run`).

:func:`equip` attaches the gate (:meth:`ApprovalGate.attach`), the error boundary
(:func:`~approval_core.install_error_boundary`), the portable input schemas
(:func:`~approval_core.serving.portable.install_portable_schemas`) and the every-write profile
(:func:`~approval_core.every_write.profile.install_every_write`, which does nothing under ``guarded``), in the order
they must wrap the server, chooses which tools are registered (``TOOLS``, ``APPROVAL_PROFILE=read-only``:
:func:`~approval_core.serving.selection.install_tool_selection`), and, where the approval page is set up, adds
the MCP Apps approval card (:func:`~approval_core.serving.apps_card.install_approval_card`) and the MCP
tasks that wait for the page (:func:`~approval_core.serving.tasks.install_page_tasks`). A server then says
only what is its own: its guard table, its errors, its declared effects and where its backend is.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from mcp.server.mcpserver import MCPServer

from approval_core.console import exit_on_bad_setting
from approval_core.errors import SettingsError
from approval_core.every_write.profile import install_every_write
from approval_core.gate import ApprovalGate
from approval_core.policy import CHANGES, Effect, GuardTable
from approval_core.serving.apps_card import install_approval_card
from approval_core.serving.boundary import Translator, install_error_boundary
from approval_core.serving.portable import install_portable_schemas
from approval_core.serving.selection import install_tool_selection
from approval_core.serving.stored_text import install_stored_text
from approval_core.serving.tasks import install_page_tasks
from approval_core.serving.tool_schemas import install_tool_schemas
from approval_core.settings import ApprovalSettings

__all__ = ["equip", "run"]

Prepared = tuple[Callable[[ApprovalSettings], "MCPServer[Any]"], Callable[[], None] | None]
"""What a server's ``prepare`` gives :func:`run`: how to build it from the approval settings, and what to
undo when it stops (an embedded backend to stop), or None."""


def equip(
    server: MCPServer[Any],
    guards: GuardTable,
    settings: ApprovalSettings,
    *,
    own_errors: type[Exception] | tuple[type[Exception], ...],
    effects: Mapping[str, frozenset[Effect]],
    backend: Callable[[], tuple[str, str | None]],
    translate: Translator | None = None,
    stored_text: frozenset[str] = frozenset(),
    names: frozenset[str] = frozenset(),
    tool_schemas: Path | None = None,
) -> ApprovalGate:
    """Put the gate, the error boundary, portable schemas and the every-write profile on ``server``.

    Call it before registering the tools: a tool that ``TOOLS`` or ``APPROVAL_PROFILE=read-only`` leaves out
    is then never registered (:func:`~approval_core.serving.selection.install_tool_selection`).

    Args:
        server: The family server being built.
        guards: Its guard table (``guards.GUARDS``).
        settings: The approval settings (:func:`approval_core.load_settings_or_exit`).
        own_errors: The base class(es) of its own errors, whose messages reach the caller as they are.
        effects: Its declared effects per tool (``guards.EFFECTS``): under ``APPROVAL_PROFILE=every-write``
            every tool declaring a change asks.
        backend: Gives ``(origin, account)`` when an every-write dialog is built: the configured backend's
            origin and the user name the server acts as (None when it has none).
        translate: Optional: turns a library exception into one of its own errors.
        stored_text: The keys of its results whose values are text stored on the backend: marked in
            ``structuredContent`` and fenced in the text
            (:func:`~approval_core.serving.stored_text.install_stored_text`).
        names: The keys of its results whose values are names a writer chose (a UID, a path, a TZID): shown
            as they are when of a plain identifier's shape, else handled as stored text.
        tool_schemas: Its schemas file (``Path(__file__).with_name(SCHEMAS_FILE)`` in its ``server`` module):
            its tools are registered with the schemas written there, not derived again
            (:func:`~approval_core.serving.tool_schemas.install_tool_schemas`).

    Returns:
        The gate the tools call (:meth:`ApprovalGate.check`).
    """
    install_tool_schemas(server, tool_schemas)  # first: the wrappers below register through it
    gate = ApprovalGate.attach(server, guards, settings)
    if gate.journal is not None:
        gate.journal.backend = backend  # an entry is restored only to the backend it was kept from
    if gate.page is not None and gate.page.grant_desk is not None:
        gate.page.grant_desk.backend = backend  # a grant covers its collection on this backend only
    install_error_boundary(server, own_errors, translate)
    install_portable_schemas(server)  # input schemas every model SDK accepts
    install_every_write(server, gate, backend=backend, effects=effects)
    if settings.page is not None:  # the MCP Apps card links the page: only where there is one
        asking = {tool for tool, guard in guards.items() if guard.may_ask}
        if settings.every_write:
            asking |= {tool for tool, declared in effects.items() if declared & CHANGES}
        install_approval_card(server, asking)
        install_page_tasks(server, gate, asking)  # a call waiting for the page as an MCP task, where declared
    install_tool_selection(server, settings.tools, settings.read_only, effects)
    install_stored_text(server, stored_text, names)
    return gate


def run(server_name: str, prepare: Callable[[], Prepared], refusals: tuple[type[Exception], ...] = ()) -> None:
    """A server's console script: log to stderr, read the settings, prepare the backend, serve, clean up.

    The approval and transport settings are read first (:func:`~approval_core.load_settings_or_exit`);
    then ``prepare()`` reads the server's own settings and starts what it needs (an embedded backend).
    A :class:`SettingsError`, or one of ``refusals``, raised there stops the server with exit code 1 and
    one line on stderr naming it (:func:`~approval_core.exit_on_bad_setting`). Then the server is built,
    the garbage collector paused meanwhile and what was built frozen
    (:func:`~approval_core.collector_paused`), and served on the transport the environment names
    (:func:`~approval_core.serve`: stdio or Streamable HTTP); whatever ``prepare`` said to undo is undone
    when it stops.

    Raises:
        SystemExit: with code 1 on a bad setting or a refusal.
    """
    from approval_core.serving.remote import serve
    from approval_core.serving.startup import collector_paused, configure_logging, load_settings_or_exit

    configure_logging()
    settings = load_settings_or_exit(server_name)
    try:
        build, cleanup = prepare()
    except (SettingsError, *refusals) as exc:
        exit_on_bad_setting(server_name, exc)
    try:
        with collector_paused(freeze=True):  # what is built lives as long as the process
            server = build(settings)
        serve(server, server_name)
    finally:
        if cleanup is not None:
            cleanup()
