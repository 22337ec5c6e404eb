"""What a server prints about approval when it starts, on stderr only.

A stdio MCP server owns its stdout for the protocol, so everything here writes
to ``sys.stderr`` (or the stream given).
"""

from __future__ import annotations

import contextlib
import gc
import logging
import sys
from collections.abc import Callable, Generator, Mapping
from typing import TextIO, TypeVar

from approval_core.console import exit_on_bad_setting, say
from approval_core.errors import SettingsError
from approval_core.settings import GRANTS_ENV, PROFILE_ENV, TOOLS_ENV, ApprovalSettings

__all__ = [
    "announce",
    "backend_settings_or_exit",
    "collector_paused",
    "configure_logging",
    "exit_on_bad_setting",
    "load_settings_or_exit",
    "say",
    "startup_line",
]

T = TypeVar("T")


def startup_line(server_name: str, settings: ApprovalSettings) -> str | None:
    """The one line a server prints at startup about approval, or None.

    Under the default profile with every tool served, only a server started with ``ELICITATION=false`` has
    something to say: ``<server-name>: ELICITATION=false — guarded tools fall back to the two-call token``,
    or, with the approval page set up (``APPROVAL_PAGE=true``), ``... — guarded tools ask on the approval
    page``. Under ``APPROVAL_PROFILE=every-write`` the line always names the profile and where a person is
    asked (``<server-name>: APPROVAL_PROFILE=every-write — every tool that changes data asks first, ...``);
    under ``APPROVAL_PROFILE=read-only`` it names the profile and says that only reads are served. With
    ``TOOLS`` set, the line names the profile and ends with the preset as given (``; TOOLS=list_*,get_* —
    only these tools are served``). With ``APPROVAL_GRANTS=true`` (outside ``read-only``) it says so
    (``APPROVAL_GRANTS=true — a yes on the approval page may be widened into a standing grant``).
    """
    line = _approval_line(server_name, settings)
    if settings.grants and not settings.read_only:
        grants = f"{GRANTS_ENV}=true — a yes on the approval page may be widened into a standing grant"
        line = f"{server_name}: {grants}" if line is None else f"{line}; {grants}"
    if settings.tools is None:
        return line
    if line is None:
        line = f"{server_name}: {PROFILE_ENV}={settings.profile}"
    elif PROFILE_ENV not in line:
        line = f"{line}; {PROFILE_ENV}={settings.profile}"
    return f"{line}; {TOOLS_ENV}={settings.tools.text} — only these tools are served"


def _approval_line(server_name: str, settings: ApprovalSettings) -> str | None:
    if settings.read_only:
        return f"{server_name}: {PROFILE_ENV}=read-only — only the tools that read are served, nothing can be changed"
    if settings.every_write:
        head = f"{server_name}: APPROVAL_PROFILE=every-write — every tool that changes data asks first"
        if settings.page is not None:
            return f"{head}; without a form dialog, on the approval page"
        if not settings.elicitation:
            return f"{head}; ELICITATION=false, so every change is refused"
        return f"{head}; a client that cannot show a form is refused"
    if settings.elicitation:
        return None
    if settings.page is not None:
        return f"{server_name}: ELICITATION=false — guarded tools ask on the approval page"
    return f"{server_name}: ELICITATION=false — guarded tools fall back to the two-call token"


def announce(server_name: str, settings: ApprovalSettings, stream: TextIO | None = None) -> None:
    """Write :func:`startup_line` to ``stream`` (default stderr), if there is one."""
    line = startup_line(server_name, settings)
    if line is not None:
        out = sys.stderr if stream is None else stream
        print(line, file=out, flush=True)


def load_settings_or_exit(
    server_name: str,
    environ: Mapping[str, str] | None = None,
    stream: TextIO | None = None,
) -> ApprovalSettings:
    """Read the approval settings for a server that is starting, or stop it.

    On a bad value this writes ``<server-name>: <what is wrong>`` to ``stream``
    (default stderr) and raises ``SystemExit(1)`` before anything is served.
    The transport settings (``MCP_*``, :meth:`approval_core.serving.remote.HttpSettings.from_env`,
    and the token file they name) are checked here too, so that a server
    refused for them stops before it starts anything else (an embedded
    backend). On success it prints the startup line (see :func:`announce`)
    and returns the settings.

    Raises:
        SystemExit: with code 1, when :meth:`ApprovalSettings.from_env` or the
            transport settings raise :class:`SettingsError`.
    """
    from approval_core.serving.http_settings import HttpSettings
    from approval_core.serving.remote import verifier_for

    try:
        settings = ApprovalSettings.from_env(environ)
        transport = HttpSettings.from_env(environ)
        if transport.transport == "streamable-http":
            verifier_for(transport)
    except SettingsError as exc:
        exit_on_bad_setting(server_name, exc, stream)
    announce(server_name, settings, stream)
    return settings


def configure_logging(stream: TextIO | None = None) -> None:
    """One family-wide log format for a stdio server: ``<logger>: <message>`` lines on stderr.

    The root logger is set to WARNING, so libraries that log every request at
    INFO (httpx2, Radicale) stay quiet, while the audit logger
    (``approval_core.records.audit``) keeps its own INFO level and its lines appear.
    Call it first in a server's ``main()``: the MCP SDK sets up INFO logging
    when its server is built, but only where nothing is set up yet. A host
    that configured logging before (a root handler exists) keeps its own.

    Args:
        stream: Where the lines go; default ``sys.stderr`` (never stdout,
            which carries the protocol).
    """
    logging.basicConfig(level=logging.WARNING, format="%(name)s: %(message)s", stream=stream or sys.stderr)


def backend_settings_or_exit(
    server_name: str,
    read: Callable[[], T],
    errors: type[Exception] | tuple[type[Exception], ...],
    stream: TextIO | None = None,
) -> T:
    """The backend's settings for a server that is starting (``read()``), or stop it on a bad value.

    The step every ``main()`` repeats after :func:`load_settings_or_exit`::

        caldav = backend_settings_or_exit(SERVER_NAME, CalDAVSettings.from_env, SettingsError)

    Args:
        server_name: The server's name, the prefix of the line on stderr.
        read: Reads and checks the backend's settings (from the environment); raises one of ``errors``, whose
            text names the variable and the rule, on a bad value. A setting that is merely missing should not
            raise here: the server starts, and each tool says what to set.
        errors: The exception classes that mean "a bad setting".
        stream: Where the line goes (default stderr).

    Raises:
        SystemExit: with code 1 (after :func:`exit_on_bad_setting` wrote ``<server-name>: <problem>``), when
            ``read`` raises one of ``errors``. Any other exception propagates.
    """
    try:
        return read()
    except errors as exc:
        exit_on_bad_setting(server_name, exc, stream)


@contextlib.contextmanager
def collector_paused(*, freeze: bool = False) -> Generator[None]:
    """Pause Python's cyclic garbage collector (:mod:`gc`) for the block: a server's start-up.

    Loading the MCP SDK and a server of the family and registering its tools makes about 100,000 objects that
    live as long as the process, and almost no garbage; the collector, left on, walks them again and again
    while they are made (about 6% of caldav-mcp's and carddav-mcp's instructions to their first ``tools/list``,
    counted by ``benchmarks/bench_startup.py --instructions``). Each server's package pauses it while it
    imports, and :func:`~approval_core.serving.equip.run` while it builds the server.

    Args:
        freeze: When the block ends without an exception, move every object the collector tracks into its
            permanent generation first (:func:`gc.freeze`, the CPython documentation's recipe for long-lived
            start-up state): later collections never walk the start-up's objects again. The few reference
            cycles start-up left behind (a few thousand objects) are kept with them.

    The collector is resumed only if it was running when the block began, whatever happens in the block.
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
        if freeze:
            gc.freeze()
    finally:
        if collecting:
            gc.enable()
