"""Lines a family server writes on stderr (never stdout, which a stdio server's protocol owns)."""

from __future__ import annotations

import sys
from typing import NoReturn, TextIO

__all__ = ["exit_on_bad_setting", "say"]


def say(server_name: str, line: str, stream: TextIO | None = None) -> None:
    """Write ``<server-name>: <line>`` to ``stream`` (default stderr), flushed at once."""
    print(f"{server_name}: {line}", file=sys.stderr if stream is None else stream, flush=True)


def exit_on_bad_setting(server_name: str, problem: object, stream: TextIO | None = None) -> NoReturn:
    """Stop a server that is starting: ``<server-name>: <problem>`` on stderr, then exit code 1.

    Raises:
        SystemExit: always, with code 1, before anything is served.
    """
    say(server_name, str(problem), stream)
    raise SystemExit(1)
