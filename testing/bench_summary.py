"""The one table ``nox -s bench`` prints at its end: every benchmark's targets, each with its figure and verdict.

A benchmark calls :func:`record` for each figure it holds to a target. Run by
``nox -s bench``, which names a file in :data:`SUMMARY_ENV`, the rows go there
(one JSON object a line); run directly, nothing is written and the benchmark
prints its own table as before. :func:`table` reads the rows back for nox.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

MISSED = 3
"""A benchmark's exit status when its figures were taken and its results right, but a target was missed (1, an
exception or a wrong result, stays a failure that stops ``nox -s bench``)."""

SUMMARY_ENV = "BENCH_SUMMARY"
"""The environment variable naming the file the rows are appended to (set by ``nox -s bench``)."""


@dataclass(frozen=True)
class Row:
    """One figure against its target.

    Attributes:
        bench: The benchmark file's name (``bench_first_listing``).
        figure: What was measured, with the data shape (``first list_events of a month, 2,000 events + 70 series``).
        measured: The figure as printed (``1.27x (rounds 0.91-1.41)``, ``0.4 ms``).
        target: The target as printed (``<= 1.3x``).
        met: Whether the figure is at its target.
    """

    bench: str
    figure: str
    measured: str
    target: str
    met: bool


def record(bench: str, figure: str, measured: str, target: str, met: bool) -> None:
    """Add one row to the summary file named by :data:`SUMMARY_ENV`; nothing when it is not set."""
    path = os.environ.get(SUMMARY_ENV)
    if not path:
        return
    with Path(path).open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(asdict(Row(bench, figure, measured, target, met))) + "\n")


def table(path: Path) -> tuple[list[str], bool]:
    """The Markdown table of the rows in ``path`` (in the order written) and whether every target was met."""
    rows = [Row(**json.loads(line)) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    lines = ["| benchmark | figure | measured | target | verdict |", "|---|---|---|---|---|"]
    lines += [f"| {r.bench} | {r.figure} | {r.measured} | {r.target} | {'met' if r.met else 'MISSED'} |" for r in rows]
    return lines, all(r.met for r in rows)
