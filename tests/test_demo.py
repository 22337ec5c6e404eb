"""The newcomer's first run (demo/run.py) against a real Radicale, answered both ways."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

DEMO = Path(__file__).resolve().parents[1] / "demo" / "run.py"


def run_demo(*flags: str) -> str:
    env = {k: v for k, v in os.environ.items() if k != "NTFY_SERVER_BINARY"}
    done = subprocess.run(  # noqa: S603 - our own interpreter and script
        [sys.executable, str(DEMO), *flags],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@pytest.mark.parametrize(("flag", "events_left", "contacts_left"), [("--yes", 0, 0), ("--no", 4, 1)])
def test_the_demo_walks_through_both_servers_and_the_dialog_decides(flag, events_left, contacts_left) -> None:
    out = run_demo(flag)
    assert out.count("the server asks") == 2
    assert "Delete a recurring event and all 8 of its occurrences" in out
    assert f"answered by {flag}" in out
    listings = [line for line in out.splitlines() if "occurrence(s) in" in line]
    assert listings[0].strip().startswith("✓ 4 occurrence(s)")
    assert listings[-1].strip().startswith(f"✓ {events_left} occurrence(s)")
    last_contacts = [line for line in out.splitlines() if '"contacts":' in line][-1]
    assert last_contacts.count('"id":') == contacts_left


def test_with_no_flag_and_no_terminal_every_dialog_counts_as_no() -> None:
    out = run_demo()
    assert out.count("no answer can be read from stdin: treated as no") == 2
    assert "Traceback" not in out
    listings = [line for line in out.splitlines() if "occurrence(s) in" in line]
    assert listings[-1].strip().startswith("✓ 4 occurrence(s)")
