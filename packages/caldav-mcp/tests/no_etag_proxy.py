"""A test double: a proxy on 127.0.0.1 in front of the real Radicale that withholds ETags.

It strips ``getetag`` from every multistatus body (as some real servers list
entries without it), and, with ``headers=True``, the ``ETag`` header of every
answer too (a server that gives no ETag at all). It is the rewriting proxy of
``test_hrefs`` with those two rewrites; its ``heads`` hold every request's
method, path and headers, so a test can check the preconditions each write carried.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator

from test_hrefs import RewritingProxy, rewriting_proxy

__all__ = ["no_etag_proxy", "writes"]

_GETETAG = re.compile(rb"<(?:[A-Za-z0-9]+:)?getetag\b[^>]*?(?:/>|>.*?</(?:[A-Za-z0-9]+:)?getetag>)", re.S)


def writes(proxy: RewritingProxy) -> list[tuple[str, str, dict[str, str]]]:
    """The PUT, DELETE and MOVE requests the proxy relayed: (method, path, headers lower-cased)."""
    return [h for h in proxy.heads if h[0] in {"PUT", "DELETE", "MOVE"}]


@contextlib.contextmanager
def no_etag_proxy(target: str, *, headers: bool = False) -> Iterator[RewritingProxy]:
    """Run the double in front of ``target`` until the block ends (``headers``: strip ETag headers too)."""

    def strip_head(lines: list[bytes]) -> list[bytes]:
        return [line for line in lines if not (headers and line.lower().startswith(b"etag:"))]

    with rewriting_proxy(target, lambda body: _GETETAG.sub(b"", body), strip_head) as proxy:
        yield proxy
