"""One stored card that makes the server fail a whole multiget does not fail the listing (issue: reads keep
their meaning): the cards are read one by one, and the one the server cannot send is left out, named in the
log. The failing server is a test double (a proxy in front of the real Radicale answering 500)."""

from __future__ import annotations

import logging
from urllib.parse import urlsplit

import pytest
from carddav_conftest import Dav, vcard
from fault_proxy import fault_proxy

from approval_core.testing import connect

pytestmark = pytest.mark.anyio


async def test_a_failed_multiget_is_read_card_by_card_leaving_out_the_one_that_fails(
    radicale: Dav, caplog: pytest.LogCaptureFixture
) -> None:
    for name in ("ada", "bad", "grace"):
        radicale.put(radicale.book, f"{name}.vcf", vcard(f"UID:{name}", f"FN:{name.title()}"))
    parts = urlsplit(radicale.settings.url)

    def failing(method: str, path: str) -> str:
        if method == "REPORT" or (method == "GET" and path.endswith("/bad.vcf")):
            return "fail"
        return "pass"

    with fault_proxy(f"{parts.scheme}://{parts.netloc}/", failing) as proxy, caplog.at_level(logging.WARNING):
        server = radicale.server(url=proxy.url.rstrip("/") + parts.path)
        async with connect(server, revision="2025-11-25") as client:
            listed = await client.call_tool("list_contacts", {"address_book": radicale.book})
    assert not listed.is_error, listed.content
    assert sorted(c["fn"] for c in listed.structured_content["contacts"]) == ["Ada", "Grace"]
    assert any("bad.vcf" in record.getMessage() for record in caplog.records)
    assert [s.method for s in proxy.seen].count("GET") == 3
