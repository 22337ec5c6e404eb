"""A new carddav-mcp's first list_contacts page on 5,000 cards, Radicale just restarted, beside the raw requests.

Run by ``uv run nox -s bench -- bench_first_page``, or directly with ``uv run python
packages/carddav-mcp/benchmarks/bench_first_page.py [--rounds 5] [--cards 5000]``.

The book is written as .vcf files straight into Radicale's storage folder (in memory, ``/dev/shm``, where the
machine has it), and read once by a Radicale that is then stopped, so its item cache is on disk. Each round then
times, every time on a Radicale process just started on that folder:

1. raw: the requests a client sends for the page (PROPFIND depth 1 for ``getetag``, then the
   ``addressbook-multiget`` of the first 50 hrefs with the same properties carddav-mcp asks for);
2. carddav-mcp: a new server (in process, MCP client on protocol 2026-07-28 with the SDK's own check of
   ``structuredContent`` against the outputSchema on) and its first ``list_contacts`` call (limit 50),
   discovery included; the client's connection is made before the timing starts;
3. raw again.

The round's ratio is carddav-mcp over the mean of the raw times before and after it; the figure is the median of
the rounds' ratios. Every contact of the page is checked against the raw multiget's card at the same href, parsed
on its own here (vobject's component layer, not carddav-mcp's parser): id, UID, FN, emails, phones and ORG.
The requests of the last carddav-mcp round are printed with their times, then where that call's time went.
Target: at most :data:`TARGET` times the raw requests. The machine may be shared: the load average is printed;
figures from a loaded machine are noisy.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx2 as httpx
import vobject

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "testing"))

import bench_summary
import dav_servers

from approval_core import ApprovalSettings
from approval_core.testing import connect
from carddav_mcp import davxml
from carddav_mcp.server import build_server
from carddav_mcp.settings import CardDavSettings
from carddav_mcp.tools.reading import SUMMARY
from webdav_core.session import ConfinedSession

CARDS = 5_000
ROUNDS = 5
PAGE = 50
TARGET = 2.0
USER, PASSWORD = "willi", "bench"
BOOK = f"/{USER}/bench/"


def card(i: int) -> str:
    return (
        "BEGIN:VCARD\r\nVERSION:3.0\r\n"
        f"UID:bench-{i:05d}\r\nFN:Person {i:05d}\r\nN:Person{i:05d};Given;;;\r\n"
        f"EMAIL;TYPE=WORK:person{i:05d}@example.org\r\nTEL;TYPE=CELL:+49 30 {i:07d}\r\n"
        f"ORG:Company {i % 97}\r\nBDAY:19{i % 90 + 10:02d}-{i % 12 + 1:02d}-{i % 28 + 1:02d}\r\n"
        f"NOTE:Card number {i} of the benchmark book\r\nEND:VCARD\r\n"
    )


def write_book(workdir: Path, cards: int) -> None:
    """The address book as Radicale's storage holds it (collection-root/<user>/<book>/), written directly."""
    folder = workdir / "collections" / "collection-root" / USER / "bench"
    folder.mkdir(parents=True)
    (folder / ".Radicale.props").write_text(json.dumps({"tag": "VADDRESSBOOK", "D:displayname": "bench"}))
    for i in range(cards):
        (folder / f"bench-{i:05d}.vcf").write_text(card(i), newline="")


Page = dict[str, dict[str, Any]]
"""href -> what the page shows of that card (fn, emails, phones, org)."""


def expected(address_data: dict[str, str]) -> Page:
    """What a page must show of each card the raw multiget returned, read with vobject's component layer."""
    page: Page = {}
    for href, text in address_data.items():
        parsed: Any = vobject.readOne(text)  # pyright: ignore[reportUnknownMemberType]
        contents: dict[str, list[Any]] = parsed.contents
        page[href] = {
            "fn": contents["fn"][0].value,
            "emails": sorted(e.value for e in contents.get("email", [])),
            "phones": sorted(t.value for t in contents.get("tel", [])),
            "uid": contents["uid"][0].value,
            "org": contents["org"][0].value[0] if "org" in contents else None,
        }
    return page


def shown(contacts: list[dict[str, Any]]) -> Page:
    """The same fields as the page of list_contacts gives them."""
    page: Page = {}
    for c in contacts:
        page[c["id"]] = {
            "fn": c["fn"],
            "emails": sorted(c["emails"]),
            "phones": sorted(c["phones"]),
            "uid": c["uid"],
            "org": c["org"],
        }
    return page


async def raw(server: dav_servers.DavServer) -> tuple[float, Page]:
    """The raw PROPFIND + multiget of the first page: (seconds, the page's cards)."""
    async with httpx.AsyncClient(base_url=server.url, auth=(USER, PASSWORD), timeout=600) as http:
        start = time.perf_counter()
        listing = await http.request(
            "PROPFIND", BOOK, headers={"Depth": "1"}, content=davxml.propfind([(davxml.DAV, "getetag")])
        )
        hrefs = sorted(r.href for r in davxml.parse_multistatus(listing.content).responses if r.href != BOOK)
        page = await http.request(
            "REPORT", BOOK, headers={"Depth": "1"}, content=davxml.multiget(hrefs[:PAGE], SUMMARY)
        )
        elapsed = time.perf_counter() - start
    assert listing.status_code == 207, listing.status_code
    assert page.status_code == 207, page.status_code
    cards = {
        r.href: r.props[f"{{{davxml.CARDDAV}}}address-data"].text or ""
        for r in davxml.parse_multistatus(page.content).responses
    }
    assert len(cards) == PAGE, len(cards)
    return elapsed, expected(cards)


Sent = list[tuple[str, str, str, float]]


def record(into: Sent) -> None:
    """Note every request carddav-mcp sends (method, path, depth, seconds) in ``into``."""
    original = ConfinedSession.exchange

    async def exchange(self: ConfinedSession, method: str, path: str, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            return await original(self, method, path, **kwargs)
        finally:
            body = kwargs.get("body") or ""
            what = body if isinstance(body, str) else body.decode(errors="replace")
            kind = next((k for k in ("getctag", "sync-token", "getlastmodified", "multiget") if k in what), "")
            depth = (kwargs.get("headers") or {}).get("Depth", "")
            into.append((method, f"{path} {kind}".strip(), depth, time.perf_counter() - start))

    ConfinedSession.exchange = exchange  # type: ignore[method-assign]


async def mcp(server: dav_servers.DavServer) -> tuple[float, Page]:
    """A new carddav-mcp's first list_contacts page: (seconds of the call, its contacts)."""
    settings = CardDavSettings(url=f"{server.url}{USER}/", username=USER, password=PASSWORD, timeout=600)
    async with connect(build_server(ApprovalSettings(), settings), revision="2026-07-28", check=False) as client:
        start = time.perf_counter()
        result = await client.call_tool("list_contacts", {"address_book": BOOK, "limit": PAGE})
        elapsed = time.perf_counter() - start
    assert not result.is_error, result.content
    contacts = (result.structured_content or {})["contacts"]
    assert len(contacts) == PAGE, len(contacts)
    return elapsed, shown(contacts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--cards", type=int, default=CARDS)
    args = parser.parse_args()
    logging.getLogger("httpx2").setLevel(logging.WARNING)
    sent: Sent = []
    record(sent)
    shm = Path("/dev/shm")  # noqa: S108 (a folder made by TemporaryDirectory inside it, private to this user)
    with tempfile.TemporaryDirectory(prefix="carddav-first-page-", dir=shm if shm.is_dir() else None) as tmp:
        workdir = Path(tmp)
        write_book(workdir, args.cards)
        with dav_servers.radicale(workdir, {USER: PASSWORD}) as server:  # builds the item cache on disk
            asyncio.run(raw(server))
        rows: list[tuple[float, float, float]] = []
        sent_last: Sent = []
        for _ in range(args.rounds):
            times: list[float] = []
            pages: list[Page] = []
            for step in (raw, mcp, raw):
                sent.clear()
                with dav_servers.radicale(workdir, {USER: PASSWORD}) as server:
                    elapsed, page = asyncio.run(step(server))
                times.append(elapsed)
                pages.append(page)
                if step is mcp:
                    sent_last = list(sent)
            assert pages[1] == pages[0] == pages[2], "a contact of the page differs from the raw multiget's card"
            rows.append((times[1], (times[0] + times[2]) / 2, times[1] / ((times[0] + times[2]) / 2)))
    ratios = [r[2] for r in rows]
    ratio = statistics.median(ratios)
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"\ncarddav-mcp's first list_contacts page ({PAGE}), {args.cards:,} cards, Radicale just restarted with its "
          f"item cache on disk; {args.rounds} rounds; load average {load} ({os.cpu_count()} CPUs)")  # fmt: skip
    print("  round  carddav-mcp      raw   ratio")
    for i, (m, r, q) in enumerate(rows, 1):
        print(f"  {i:5d} {m:10.3f} s {r:7.3f} s {q:6.2f}x")
    print(f"  every contact of every page equals the raw multiget's card ({PAGE} a page, {args.rounds} rounds)")
    print("  requests of the last carddav-mcp round (seconds, each as the server answered it):")
    for method, what, depth, seconds in sent_last:
        print(f"    {method:8} depth {depth or '-':2} {what:40} {seconds:7.3f}")
    print(f"  in those requests {sum(s[3] for s in sent_last):.3f} s of the call's {rows[-1][0]:.3f} s")
    met = ratio <= TARGET
    verdict = "met" if met else "MISSED"
    print("| figure | now | rounds | target | verdict |")
    print(f"| first list_contacts page, {args.cards:,} cards, Radicale restarted (cache on disk) | {ratio:.2f}x "
          f"| {min(ratios):.2f}-{max(ratios):.2f}x | <= {TARGET:g}x | {verdict} |")  # fmt: skip
    figure = f"carddav-mcp's first list_contacts page, {args.cards:,} cards, Radicale restarted, over the raw requests"
    spread = f"{min(ratios):.2f}-{max(ratios):.2f}"
    bench_summary.record("bench_first_page", figure, f"{ratio:.2f}x (rounds {spread})", f"<= {TARGET:g}x", met)
    sys.exit(0 if met else bench_summary.MISSED)


if __name__ == "__main__":
    main()
