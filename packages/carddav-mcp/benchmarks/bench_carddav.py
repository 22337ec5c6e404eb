"""list_contacts and search_contacts beside the raw requests they stand for, on a real Radicale on 127.0.0.1.

Run by ``uv run nox -s bench -- bench_carddav``, or directly with ``uv run python
packages/carddav-mcp/benchmarks/bench_carddav.py [--cards 5000 ...]`` for chosen sizes. For books of
2,000, 5,000 and 20,000 cards it prints, for the same data:

- the first ``list_contacts`` page (limit 50) beside the raw PROPFIND (depth 1, ``getetag``) plus the
  ``addressbook-multiget`` of that page's 50 hrefs;
- ``search_contacts`` for one person beside the raw ``addressbook-query`` REPORT with the ``text-match``
  the server is asked for;

each cold (a Radicale process just started on storage without its cache folder, and a new carddav-mcp:
the first call) and warm (the median of five later calls), their ratio, and the peak of the Python heap
(``tracemalloc``) in this process during one more warm call: the carddav-mcp server runs in process, so
that is the server side's memory (Radicale's own is not counted); for the raw requests it is what the
HTTP client held. Then how time and memory grow from 2,000 to 20,000 cards (10x the data).

The books are written as .vcf files straight into Radicale's storage folder before it starts (no PUTs).
Every cold figure has a Radicale of its own; the operating system's file cache is not dropped. The
machine may be shared: figures are noisy, ratios less so.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import shutil
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx2 as httpx

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "testing"))

import dav_servers
from bench_summary import record

from approval_core import ApprovalSettings
from approval_core.testing import connect
from carddav_mcp import davxml
from carddav_mcp.search import TEXT_PROPERTIES, server_needle
from carddav_mcp.server import build_server
from carddav_mcp.settings import CardDavSettings
from carddav_mcp.tools.reading import SUMMARY

SIZES = [2_000, 5_000, 20_000]
WARM_ROUNDS = 5
PAGE = 50
USER, PASSWORD = "willi", "bench"
BOOK = f"/{USER}/bench/"
QUERY = "Person 00421"
TARGETS = {("list", "cold"): 2.0, ("list", "warm"): 1.2, ("search", "warm"): 1.5}
"""Ratio targets, checked at 5,000 cards."""


def card(i: int) -> str:
    return (
        "BEGIN:VCARD\r\nVERSION:3.0\r\n"
        f"UID:bench-{i:05d}\r\nFN:Person {i:05d}\r\nN:Person{i:05d};Given;;;\r\n"
        f"EMAIL;TYPE=WORK:person{i:05d}@example.org\r\nTEL;TYPE=CELL:+49 30 {i:07d}\r\n"
        f"ORG:Company {i % 97}\r\nBDAY:19{i % 90 + 10:02d}-{i % 12 + 1:02d}-{i % 28 + 1:02d}\r\n"
        f"NOTE:Card number {i} of the benchmark book\r\nEND:VCARD\r\n"
    )


def write_book(workdir: Path, cards: int) -> Path:
    """The address book as Radicale's storage holds it (collection-root/<user>/<book>/), written directly."""
    folder = workdir / "collections" / "collection-root" / USER / "bench"
    folder.mkdir(parents=True)
    (folder / ".Radicale.props").write_text(json.dumps({"tag": "VADDRESSBOOK", "D:displayname": "bench"}))
    for i in range(cards):
        (folder / f"bench-{i:05d}.vcf").write_text(card(i), newline="")
    return folder


Figure = tuple[float, float, float]
"""(cold seconds, warm median seconds, warm peak bytes)."""


async def timed(step: Callable[[], Awaitable[Any]]) -> Figure:
    """Time the first ``step`` (cold), the median of the next rounds (warm), then one traced for memory."""
    start = time.perf_counter()
    await step()
    cold = time.perf_counter() - start
    warm: list[float] = []
    for _ in range(WARM_ROUNDS):
        start = time.perf_counter()
        await step()
        warm.append(time.perf_counter() - start)
    tracemalloc.start()
    try:
        await step()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return cold, statistics.median(warm), peak


def fresh(folder: Path) -> None:
    """Radicale's caches for the book gone (item cache, sync tokens, history): as written, never read."""
    shutil.rmtree(folder / ".Radicale.cache", ignore_errors=True)


async def raw_list(server: dav_servers.DavServer) -> Figure:
    async with httpx.AsyncClient(base_url=server.url, auth=(USER, PASSWORD), timeout=600) as http:

        async def step() -> None:
            listing = await http.request(
                "PROPFIND", BOOK, headers={"Depth": "1"}, content=davxml.propfind([(davxml.DAV, "getetag")])
            )
            assert listing.status_code == 207, listing.status_code
            hrefs = sorted(r.href for r in davxml.parse_multistatus(listing.content).responses if r.href != BOOK)
            page = await http.request(
                "REPORT", BOOK, headers={"Depth": "1"}, content=davxml.multiget(hrefs[:PAGE], SUMMARY)
            )
            assert page.status_code == 207
            assert page.content.count(b"BEGIN:VCARD") == PAGE

        return await timed(step)


async def raw_search(server: dav_servers.DavServer) -> Figure:
    needle = server_needle(QUERY)
    assert needle is not None
    body = davxml.addressbook_text_query(TEXT_PROPERTIES, needle)
    async with httpx.AsyncClient(base_url=server.url, auth=(USER, PASSWORD), timeout=600) as http:

        async def step() -> None:
            answer = await http.request("REPORT", BOOK, headers={"Depth": "1"}, content=body)
            assert answer.status_code == 207
            assert b"BEGIN:VCARD" in answer.content

        return await timed(step)


async def project(server: dav_servers.DavServer, tool: str, args: dict[str, Any], expect: int) -> Figure:
    settings = CardDavSettings(url=f"{server.url}{USER}/", username=USER, password=PASSWORD, timeout=600)
    async with connect(build_server(ApprovalSettings(), settings), revision="2026-07-28") as client:

        async def step() -> None:
            result = await client.call_tool(tool, args)
            assert not result.is_error, result.content
            data = result.structured_content or {}
            assert len(data.get("contacts") or data.get("hits") or []) == expect, data

        return await timed(step)


LIST = ("list_contacts", {"address_book": BOOK, "limit": PAGE}, PAGE)
SEARCH = ("search_contacts", {"query": QUERY, "address_book": BOOK}, 1)


def measure(cards: int) -> dict[tuple[str, str], Figure]:
    """Each of the four figures for a book of ``cards`` cards, every one on a Radicale just started."""
    figures: dict[tuple[str, str], Figure] = {}
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        folder = write_book(workdir, cards)
        runs: list[tuple[tuple[str, str], Callable[[dav_servers.DavServer], Awaitable[Figure]]]] = [
            (("list", "raw"), raw_list),
            (("list", "project"), lambda s: project(s, *LIST)),
            (("search", "raw"), raw_search),
            (("search", "project"), lambda s: project(s, *SEARCH)),
        ]
        for key, run in runs:
            fresh(folder)
            with dav_servers.radicale(workdir, {USER: PASSWORD}) as server:
                figures[key] = asyncio.run(run(server))
    return figures


def mb(n: float) -> str:
    return f"{n / 1e6:.1f} MB"


def report(results: dict[int, dict[tuple[str, str], Figure]], final: bool = False) -> None:
    print("\ncarddav-mcp beside the raw requests, Radicale on 127.0.0.1, in-process MCP client")
    print("(time: seconds; memory: tracemalloc peak of this process during one warm call)")
    print(f"{'cards':>7} {'work':7} {'state':5} {'carddav-mcp':>12} {'raw':>8} {'ratio':>6}", end=" ")
    print(f"{'mem mcp':>9} {'mem raw':>9}")
    misses: list[str] = []
    for cards, figures in results.items():
        for work in ("list", "search"):
            p, r = figures[(work, "project")], figures[(work, "raw")]
            for state, index in (("cold", 0), ("warm", 1)):
                ratio = p[index] / r[index]
                memory = f"{mb(p[2]):>9} {mb(r[2]):>9}" if state == "warm" else ""
                print(f"{cards:>7,} {work:7} {state:5} {p[index]:12.3f} {r[index]:8.3f} {ratio:6.2f} {memory}")
                target = TARGETS.get((work, state))
                if cards == 5_000 and target is not None and ratio > target:
                    misses.append(f"{work} {state} at 5,000: {ratio:.2f}x > {target}x")
                if final and cards == 5_000 and target is not None:
                    figure = f"carddav-mcp {work}, {state}, 5,000 cards, over the raw requests"
                    record("bench_carddav", figure, f"{ratio:.2f}x", f"<= {target}x", ratio <= target)
    if 2_000 in results and 20_000 in results:
        small, big = results[2_000], results[20_000]
        print("\ngrowth from 2,000 to 20,000 cards (the data grows 10x)")
        print(f"{'work':7} {'side':8} {'cold time':>10} {'warm time':>10} {'memory':>8}")
        for work in ("list", "search"):
            for side in ("project", "raw"):
                a, b = small[(work, side)], big[(work, side)]
                print(f"{work:7} {side:8} {b[0] / a[0]:9.1f}x {b[1] / a[1]:9.1f}x {b[2] / a[2]:7.1f}x")
    wanted = ", ".join(f"{w} {s} <= {t}x" for (w, s), t in TARGETS.items())
    print(f"\ntargets at 5,000 cards: {wanted}: " + ("all met" if not misses else "MISSED: " + "; ".join(misses)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--cards", type=int, action="append", help="book size (repeatable); default 2k, 5k, 20k")
    sizes = parser.parse_args().cards or SIZES
    logging.getLogger("httpx2").setLevel(logging.WARNING)
    results: dict[int, dict[tuple[str, str], Figure]] = {}
    for cards in sizes:
        start = time.perf_counter()
        results[cards] = measure(cards)
        print(f"measured {cards:,} cards in {time.perf_counter() - start:.0f} s", flush=True)
        if cards != sizes[-1]:
            report(results)  # so far (a run of every size takes a while)
    report(results, final=True)


if __name__ == "__main__":
    main()
