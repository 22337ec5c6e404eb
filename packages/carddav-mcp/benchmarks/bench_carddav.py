"""list_contacts and search_contacts on a book of 5,000 cards, against a real Radicale on 127.0.0.1.

Run by ``uv run nox -s bench`` (or directly). Prints, for each call, the time
of the first call of a fresh server process (cold: the full sync-collection
listing, and every card the call needs fetched by addressbook-multiget) and
the median of five later calls (warm: an incremental sync-collection, cards
from the per-process cache), and the JSON bytes per listed contact of the
result's text content. The cards are written straight into Radicale's
storage folder, and Radicale reads them once before anything is measured.
"""

from __future__ import annotations

import asyncio
import json
import logging
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx2 as httpx

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "testing"))

import dav_servers

from approval_core import ApprovalSettings
from approval_core.testing import connect
from carddav_mcp import davxml
from carddav_mcp.server import build_server
from carddav_mcp.settings import CardDavSettings

CARDS = 5_000
WARM_ROUNDS = 5


def card(i: int) -> str:
    return (
        "BEGIN:VCARD\r\nVERSION:3.0\r\n"
        f"UID:bench-{i:05d}\r\nFN:Person {i:05d}\r\nN:Person{i:05d};Given;;;\r\n"
        f"EMAIL;TYPE=WORK:person{i:05d}@example.org\r\nTEL;TYPE=CELL:+49 30 {i:07d}\r\n"
        f"ORG:Company {i % 97}\r\nBDAY:19{i % 90 + 10:02d}-{i % 12 + 1:02d}-{i % 28 + 1:02d}\r\n"
        f"NOTE:Card number {i} of the benchmark book\r\nEND:VCARD\r\n"
    )


async def measure(client: Any, tool: str, args: dict[str, Any]) -> tuple[float, float, int, int]:
    start = time.perf_counter()
    result = await client.call_tool(tool, args)
    cold = time.perf_counter() - start
    warm: list[float] = []
    for _ in range(WARM_ROUNDS):
        start = time.perf_counter()
        result = await client.call_tool(tool, args)
        warm.append(time.perf_counter() - start)
    assert not result.is_error, result.content
    data = result.structured_content
    listed = len(data.get("contacts") or data.get("hits") or [])
    size = len(result.content[0].text.encode())
    return cold, statistics.median(warm), listed, size


async def run(server: dav_servers.DavServer) -> None:
    with httpx.Client(base_url=server.url, auth=("willi", server.users["willi"])) as http:
        body = davxml.mkcol_addressbook("bench").encode()
        assert (
            http.request(
                "MKCOL", "/willi/bench/", content=body, headers={"Content-Type": "application/xml"}
            ).status_code
            == 201
        )
    folder = server.data_dir / "collection-root" / "willi" / "bench"
    for i in range(CARDS):
        (folder / f"bench-{i:05d}.vcf").write_text(card(i), newline="")
    start = time.perf_counter()
    with httpx.Client(base_url=server.url, auth=("willi", server.users["willi"]), timeout=600) as http:
        http.request(
            "PROPFIND", "/willi/bench/", headers={"Depth": "1"}, content=davxml.propfind([(davxml.DAV, "getetag")])
        )
    warmup = time.perf_counter() - start
    settings = CardDavSettings(url=f"{server.url}willi/", username="willi", password=server.users["willi"])
    mcp = build_server(ApprovalSettings(), settings)
    calls = [
        ("list_contacts", {"address_book": "/willi/bench/", "limit": 50}),
        ("list_contacts", {"address_book": "/willi/bench/", "limit": 500}),
        ("search_contacts", {"query": "Person 0421", "limit": 50}),
        ("search_contacts", {"query": "+49 30 0004211", "limit": 50}),
        ("search_contacts", {"query": "company 7", "limit": 500}),
        ("search_contacts", {"birthdays_within_days": 30, "limit": 500}),
    ]
    print(f"carddav-mcp benchmark: {CARDS:,} cards in one Radicale address book, in-process MCP client")
    print(f"(Radicale's own first read of the new files, before measuring: {warmup:.1f} s)")
    print(f"{'call':58} {'cold s':>8} {'warm s':>8} {'listed':>7} {'bytes/contact':>14}")
    async with connect(mcp, revision="2026-07-28") as client:
        for tool, args in calls:
            cold, warm, listed, size = await measure(client, tool, args)
            label = f"{tool} {json.dumps({k: v for k, v in args.items() if k != 'address_book'})}"
            per = f"{size / listed:,.0f}" if listed else "-"
            print(f"{label:58} {cold:8.3f} {warm:8.3f} {listed:7d} {per:>14}")


def main() -> None:
    logging.getLogger("httpx2").setLevel(logging.WARNING)
    with tempfile.TemporaryDirectory() as tmp, dav_servers.radicale(Path(tmp), {"willi": "bench"}) as server:
        asyncio.run(run(server))


if __name__ == "__main__":
    main()
