"""Lines that reach the person's terminal while pytest captures every test's output.

A session fixture that does slow work before the first test that needs it
(building ntfy takes minutes the first time) would otherwise run silently,
with the progress line stuck at some percentage. :func:`on_terminal` gives a
function that writes one line at once to pytest's terminal, capture or not.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable
from typing import Any

__all__ = ["on_terminal"]


def on_terminal(config: Any) -> Callable[[str], None]:
    """A function writing one line to the terminal now, past pytest's output capture.

    Args:
        config: The run's ``pytest.Config`` (the ``pytestconfig`` fixture).

    Returns:
        ``say(text)``: suspends capture, writes ``text`` on a line of its own through pytest's terminal
        reporter (on stderr when there is none, as under ``-p no:terminal``), and resumes capture.
    """
    capture = config.pluginmanager.getplugin("capturemanager")
    reporter = config.pluginmanager.getplugin("terminalreporter")

    def say(text: str) -> None:
        with capture.global_and_fixture_disabled() if capture is not None else contextlib.nullcontext():
            if reporter is not None:
                reporter.ensure_newline()
                reporter.write_line(text)
                reporter.flush()
            else:
                print(text, file=sys.stderr, flush=True)

    return say
