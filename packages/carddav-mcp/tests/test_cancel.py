"""A cancelled call stops its backend work: no request goes out after the cancellation (MCP 2025-11-25
§Cancellation), seen by a recording proxy (a test double in front of the real Radicale), with the server
over real stdio, as clients run it."""

from __future__ import annotations

from urllib.parse import urlsplit

import pytest
from carddav_conftest import Dav, vcard
from fault_proxy import fault_proxy
from held_cancel import Hold, cancel_while_held
from mcp.client.stdio import stdio_client

from approval_core.testing import connect
from carddav_mcp.client import MULTIGET_BATCH
from carddav_stdio import params

pytestmark = pytest.mark.anyio


async def test_a_cancelled_export_sends_no_request_after_the_cancellation(radicale: Dav) -> None:
    count = MULTIGET_BATCH + 10  # two multiget batches
    for i in range(count):
        radicale.put(radicale.book, f"c{i:03d}.vcf", vcard(f"UID:c{i}", f"FN:Card {i}"))
    parts = urlsplit(radicale.settings.url)

    hold = Hold()

    with fault_proxy(f"{parts.scheme}://{parts.netloc}/", hold.rule) as proxy:
        through = radicale.settings.__class__(
            **{**radicale.settings.__dict__, "url": proxy.url.rstrip("/") + parts.path}
        )
        server = stdio_client(params(Dav(radicale.kind, through, radicale.book, radicale.other, radicale.http)))
        async with connect(server, revision="2025-11-25") as client:
            export = {"address_book": radicale.book, "limit": 1000}
            sent_before, after = await cancel_while_held(
                client, "export_contacts", export, hold, lambda: len(proxy.seen)
            )
            listed = await client.call_tool("list_address_books", {})  # the session still serves
    # The held batch enters the record once released; it was sent before the cancellation.
    late = [f"{s.method} {s.path}" for s in proxy.seen[sent_before:after]]
    assert len(late) == 1, late
    assert late[0].startswith("REPORT "), late
    assert len(proxy.requests("REPORT")) == 1
    assert not listed.is_error
