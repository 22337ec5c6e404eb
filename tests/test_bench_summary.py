"""The table of targets ``nox -s bench`` prints at its end (testing/bench_summary.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "testing"))
from bench_summary import MISSED, SUMMARY_ENV, record, table


def test_rows_recorded_under_nox_come_back_in_one_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    summary = tmp_path / "targets.jsonl"
    monkeypatch.setenv(SUMMARY_ENV, str(summary))
    record("bench_a", "first listing, 2,000 events", "1.21x (rounds 1.1-1.4)", "<= 1.3x", True)
    record("bench_b", "start-up", "1.33x", "<= 1.2x", False)
    lines, met = table(summary)
    assert lines[2:] == [
        "| bench_a | first listing, 2,000 events | 1.21x (rounds 1.1-1.4) | <= 1.3x | met |",
        "| bench_b | start-up | 1.33x | <= 1.2x | MISSED |",
    ]
    assert not met
    empty = tmp_path / "empty.jsonl"
    empty.touch()
    assert table(empty) == (lines[:2], True)  # no target recorded: nothing missed


def test_a_benchmark_run_alone_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SUMMARY_ENV, raising=False)
    monkeypatch.chdir(tmp_path)
    record("bench_a", "figure", "1x", "<= 2x", True)
    assert list(tmp_path.iterdir()) == []


def test_a_missed_target_is_told_apart_from_a_failure() -> None:
    assert MISSED not in (0, 1)  # 1 is what Python exits with on an exception: nox stops on it
