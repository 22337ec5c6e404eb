"""Bounds on CPU-bound work in this thread: by time, or by a fixed number of Python calls.

Expanding a stored recurrence (RFC 5545 §3.3.10) can take unbounded time; the
recurrence libraries are pure Python, so a trace hook that counts calls or
reads the clock can stop them at a defined point (:class:`ExpansionTimeout`).
"""

from __future__ import annotations

import contextlib
import itertools
import sys
import time
from collections.abc import Callable, Iterator

__all__ = ["ExpansionTimeout", "call_limit", "time_limit", "watched"]


class ExpansionTimeout(Exception):
    """Raised by :func:`time_limit` when an expansion passes its time bound."""


@contextlib.contextmanager
def watched(spent: Callable[[], bool]) -> Iterator[None]:
    """Raise :class:`ExpansionTimeout` in this thread at the first Python call inside the block where ``spent()``.

    A trace function (``sys.settrace``, this thread only) asks ``spent`` each
    time a Python function is entered and raises there, so the interruption
    happens at a defined point of ordinary Python code: the recurrence
    libraries (dateutil's rrule, recurring-ical-events) are pure Python and
    call helpers on every period they search, even when none of them matches.
    Only ``call`` events are traced (lines are not), which keeps the cost to
    one small function call per Python call. The thread's previous trace
    function (a debugger, coverage) is restored on exit.
    """
    previous = sys.gettrace()

    def tracer(frame: object, event: str, arg: object) -> None:
        if spent():
            raise ExpansionTimeout
        return None

    sys.settrace(tracer)  # pyright: ignore[reportArgumentType]
    try:
        yield
    finally:
        sys.settrace(previous)


def time_limit(seconds: float) -> contextlib.AbstractContextManager[None]:
    """:func:`watched` until ``seconds`` have passed inside the block (monotonic clock)."""
    deadline = time.monotonic() + seconds
    return watched(lambda: time.monotonic() > deadline)


def call_limit(calls: int) -> contextlib.AbstractContextManager[None]:
    """:func:`watched` for at most ``calls`` Python calls inside the block.

    Counting function entries instead of reading the clock makes the bound a
    fixed amount of work, so the same rule is judged the same way on a busy
    machine and an idle one. Used where a verdict must not depend on load (a
    rule checked before it is written).
    """
    counter = itertools.count(1)
    return watched(lambda: next(counter) > calls)
