"""caldav-mcp's use of the family's fault proxy (testing/fault_proxy.py, a test double in front of the real
Radicale): each request's fate decided by ``rule(method, path, body)``, since a calendar-query and a
calendar-multiget are both a REPORT on the calendar, and a body rewrite that sees the body alone."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

from fault_proxy import Action, FaultProxy, Seen, fault_proxy

__all__ = ["Action", "FaultProxy", "Seen", "report_fault_proxy"]


@contextmanager
def report_fault_proxy(
    upstream_url: str,
    rule: Callable[[str, str, bytes], Action],
    rewrite: Callable[[bytes], bytes] | None = None,
) -> Iterator[FaultProxy]:
    """The double in front of ``upstream_url``: ``rule(method, path, body)`` decides; ``rewrite`` changes bodies."""
    changed = (lambda method, body: rewrite(body)) if rewrite is not None else None
    with fault_proxy(upstream_url, rewrite=changed, by_body=rule) as proxy:
        yield proxy
