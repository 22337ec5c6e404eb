"""A long call says how far it has come (MCP notifications/progress), with real counts and the total."""

from __future__ import annotations

import pytest
from carddav_conftest import Dav, vcard

from approval_core.testing import connect
from carddav_mcp.client import MULTIGET_BATCH

pytestmark = pytest.mark.anyio


async def test_an_export_larger_than_one_multiget_reports_cards_read_with_the_total(radicale: Dav) -> None:
    count = MULTIGET_BATCH + 20
    for i in range(count):
        radicale.put(radicale.book, f"p{i:03d}.vcf", vcard(f"UID:p{i}", f"FN:Person {i}"))
    seen: list[tuple[float, float | None, str | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, total, message))

    async with connect(radicale.server(), revision="2025-11-25") as client:
        result = await client.call_tool(
            "export_contacts", {"address_book": radicale.book, "limit": 1000}, progress_callback=progress
        )
        quiet = await client.call_tool("export_contacts", {"address_book": radicale.book, "limit": 10})
    assert not result.is_error
    assert len(result.structured_content["cards"]) == count
    assert seen == [(MULTIGET_BATCH, count, "cards read"), (count, count, "cards read")]
    assert not quiet.is_error  # without a progress token nothing is sent, and nothing fails
