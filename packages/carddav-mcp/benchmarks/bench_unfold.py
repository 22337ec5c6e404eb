"""Parsing cards made of many folded lines: the time grows linearly with the card's size.

Run by ``uv run nox -s bench`` (or directly). Prints, for a vCard 3.0 card
whose NOTE is folded into one-character continuation lines (RFC 6350 §3.2)
and a vCard 2.1 card whose quoted-printable NOTE is split by soft line breaks,
the time of ``Card.parse`` at four sizes up to 4 MB, and the time per MB.
"""

from __future__ import annotations

import time

from carddav_mcp.vcard import Card


def card(kind: str, lines: int) -> str:
    if kind == "folded":
        return "BEGIN:VCARD\r\nVERSION:3.0\r\nFN:x\r\nN:x;;;;\r\nNOTE:" + "\r\n x" * lines + "\r\nEND:VCARD\r\n"
    head = "BEGIN:VCARD\r\nVERSION:2.1\r\nFN:x\r\nN:x;;;;\r\nNOTE;ENCODING=QUOTED-PRINTABLE:"
    return head + "=\r\nx" * lines + "\r\nEND:VCARD\r\n"


def main() -> None:
    for kind in ("folded", "quoted-printable"):
        for lines in (125_000, 250_000, 500_000, 1_000_000):
            text = card(kind, lines)
            start = time.perf_counter()
            Card.parse(text)
            took = time.perf_counter() - start
            size = len(text) / 1e6
            print(f"{kind:17s} {lines:9,d} lines {size:5.2f} MB: parse {took:6.3f} s ({took / size:.3f} s/MB)")


if __name__ == "__main__":
    main()
