"""list_address_books names only paths an id may name, inside the account's home.

The dot segments come from a test double: a rewriting proxy in front of the real Radicale that turns the
href of one listed book into ``/willi/../etc/`` (or its percent-encoded form, or a path outside the home),
as a compromised or buggy server could answer. No real server here lists such an href.
"""

from __future__ import annotations

import pytest
from carddav_conftest import Dav
from rewriting_proxy import rewriting_proxy

from approval_core import ApprovalSettings
from approval_core.testing import connect

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize("limit", [frozenset(), frozenset({"etc", "book"})])  # the home, or books by name
@pytest.mark.parametrize("bad", ["/willi/../etc/", "/willi/%2e%2e/etc/", "/willi/./x/../../etc/", "/other/book/"])
async def test_a_listed_book_at_a_dot_segment_or_outside_the_home_is_left_out(
    radicale: Dav, bad: str, limit: frozenset[str]
) -> None:
    dav = radicale
    base = str(dav.http.base_url).rstrip("/")
    assert dav.settings.url is not None

    rewritten: list[bytes] = []

    def rewrite(body: bytes) -> bytes:
        new = body.replace(f"href>{dav.other}</".encode(), f"href>{bad}</".encode())
        if new != body:
            rewritten.append(new)
        return new

    with rewriting_proxy(base + "/", rewrite) as proxy:
        url = dav.settings.url.replace(base + "/", proxy.url)
        async with connect(
            dav.server(ApprovalSettings(), url=url, addressbooks=limit), revision="2025-11-25"
        ) as client:
            books = await client.call_tool("list_address_books", {})
    assert not books.is_error, books.content[0].text
    ids = [b["id"] for b in books.structured_content["address_books"]]
    assert dav.book in ids or limit
    assert bad not in ids
    assert not any(".." in i or "%2e" in i.lower() or not i.startswith("/willi/") for i in ids), ids
    assert rewritten, "the double never listed the bad href"
