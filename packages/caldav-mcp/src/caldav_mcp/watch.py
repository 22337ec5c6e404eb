"""Bounds on CPU-bound work in this thread, as a fixed number of steps (Python calls), never as time.

Expanding a stored recurrence (RFC 5545 §3.3.10) can take unbounded work; the
recurrence libraries are pure Python, so a trace hook that counts the Python
functions they enter can stop them at a defined point (:class:`StepLimitReached`).
A count, not a clock: the same work is stopped at the same step on a busy
machine as on an idle one, so whether an entry is readable never depends on load.
(The count may differ by a few dozen steps with the libraries' caches, filled by
the first expansion in a process; never with the machine's speed.)
"""

from __future__ import annotations

import sys
from types import FrameType
from typing import Any

__all__ = ["StepLimitReached", "step_limit"]


class StepLimitReached(Exception):
    """Raised by :func:`step_limit` when the work inside its block passes its number of steps."""


class step_limit:  # lower case, as contextlib's managers: ``with step_limit(n) as counted``
    """Raise :class:`StepLimitReached` in this thread at the first Python call past ``steps`` inside the block.

    One step is one Python function entered (a ``call`` event of
    ``sys.settrace``, this thread only): the recurrence libraries (dateutil's
    rrule, recurring-ical-events) are pure Python and call helpers on every
    period they search, even when none of them matches, so the count follows
    their work. Only ``call`` events are traced (lines are not), which keeps the
    cost to one small function call per Python call (the expansion runs about
    threefold slower). The interruption happens at a defined point of ordinary
    Python code, and the thread's previous trace function (a debugger,
    coverage) is restored on exit. ``taken`` is the number of steps counted
    (read it after the block; at most ``limit + 1``).
    """

    def __init__(self, steps: int) -> None:
        self.limit = steps
        self.taken = 0
        self._previous: Any = None

    def __enter__(self) -> step_limit:
        counted = self

        def tracer(frame: FrameType, event: str, arg: object) -> None:
            counted.taken += 1
            if counted.taken > counted.limit and frame.f_code is not _EXIT:
                raise StepLimitReached
            return None

        self._previous = sys.gettrace()
        sys.settrace(tracer)
        return self

    def __exit__(self, *exc: object) -> None:
        sys.settrace(self._previous)


_EXIT = step_limit.__exit__.__code__  # leaving the block is not a step of the work inside it
