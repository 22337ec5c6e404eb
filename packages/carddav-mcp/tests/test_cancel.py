"""A cancelled call stops its backend work: no request goes out after the cancellation (MCP 2025-11-25
§Cancellation), seen by a recording proxy (a test double in front of the real Radicale), with the server
over real stdio, as clients run it."""

from __future__ import annotations

import threading
from urllib.parse import urlsplit

import anyio
import pytest
from carddav_conftest import Dav, vcard
from mcp.client.stdio import stdio_client

from approval_core.testing import connect
from carddav_mcp.client import MULTIGET_BATCH
from fault_proxy import fault_proxy
from test_stdio import params

pytestmark = pytest.mark.anyio


async def test_a_cancelled_export_sends_no_request_after_the_cancellation(radicale: Dav) -> None:
    count = MULTIGET_BATCH + 10  # two multiget batches
    for i in range(count):
        radicale.put(radicale.book, f"c{i:03d}.vcf", vcard(f"UID:c{i}", f"FN:Card {i}"))
    parts = urlsplit(radicale.settings.url)

    reached, released = threading.Event(), threading.Event()

    def held(method: str, path: str) -> str:
        if method == "REPORT":
            # The first batch is held until the server has taken in the cancellation, so the
            # test does not depend on how fast a loaded machine delivers it.
            reached.set()
            released.wait(30)
        return "pass"

    with fault_proxy(f"{parts.scheme}://{parts.netloc}/", held) as proxy:
        through = radicale.settings.__class__(
            **{**radicale.settings.__dict__, "url": proxy.url.rstrip("/") + parts.path}
        )
        server = stdio_client(params(Dav(radicale.kind, through, radicale.book, radicale.other, radicale.http)))
        async with connect(server, revision="2025-11-25") as client:
            async with anyio.create_task_group() as calls:
                calls.start_soon(client.call_tool, "export_contacts", {"address_book": radicale.book, "limit": 1000})
                with anyio.fail_after(30):
                    while not reached.is_set():  # noqa: ASYNC110 - a thread's event, not an anyio one
                        await anyio.sleep(0.05)
                calls.cancel_scope.cancel()
            # The client sends its notifications/cancelled from a task of its own: let it go out
            # first. The server acts on messages in the order they arrive, so once tools/list is
            # answered, the cancellation sent before it has been acted on.
            await anyio.sleep(0.1)
            await client.list_tools()
            sent_before = len(proxy.seen)
            released.set()
            await anyio.sleep(1.0)  # long enough for the second batch to be sent, had the work gone on
            after = len(proxy.seen)
            listed = await client.call_tool("list_address_books", {})  # the session still serves
    # The held batch enters the record once released; it was sent before the cancellation.
    late = [f"{s.method} {s.path}" for s in proxy.seen[sent_before:after]]
    assert len(late) == 1, late
    assert late[0].startswith("REPORT "), late
    assert len(proxy.requests("REPORT")) == 1
    assert not listed.is_error
