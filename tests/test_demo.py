"""The newcomer's first run (demo/run.py): every server against its real backend, answered both ways.

caldav-mcp and carddav-mcp run on their embedded Radicale, ntfy-mcp against the real ntfy the tests use
(built once if no test has built it yet, hence the long timeout). The demo tells what it sees in its own
words: no raw JSON, no audit line as the server wrote it.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

DEMO = Path(__file__).resolve().parents[1] / "demo" / "run.py"
FIRST_BUILD_SECONDS = 1200  # a first ntfy build from nothing takes minutes (README, "The real ntfy in the tests")


def run_demo(*flags: str) -> str:
    done = subprocess.run(  # noqa: S603 - our own interpreter and script
        [sys.executable, str(DEMO), *flags],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=FIRST_BUILD_SECONDS,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    return done.stdout


def last_count(out: str, pattern: str) -> int:
    """The number at the start of the last line matching ``✓ <n> <pattern>``."""
    counts = re.findall(rf"✓ (\d+) {pattern}", out)
    assert counts, pattern
    return int(counts[-1])


def assert_told_in_words(out: str) -> None:
    assert '{"' not in out  # no JSON object, neither a result nor an audit line
    assert "approval_core.audit" not in out
    assert "partial" not in out
    assert "Traceback" not in out


@pytest.mark.parametrize(
    ("flag", "dialogs", "events_left", "contacts_left", "accounts"),
    [("--yes", 4, 0, 0, [["admin", "guest"], ["admin"]]), ("--no", 3, 4, 1, [["admin"]])],
)
def test_the_demo_walks_through_every_server_and_the_dialog_decides(
    flag: str, dialogs: int, events_left: int, contacts_left: int, accounts: list[list[str]]
) -> None:
    out = run_demo(flag)
    assert out.count("the server asks") == dialogs
    assert out.count(f"answered by {flag}") == dialogs
    assert "Delete a recurring event and all 8 of its occurrences" in out
    assert "Delete 1 contact(s), 0 of them with a photo" in out
    assert "Create 1 account on this ntfy server" in out
    assert ("Delete 1 account and its 0 access rule(s)" in out) == (flag == "--yes")
    assert re.search(r"A real ntfy 2\.\d+\.\d+ runs on http://127\.0\.0\.1:\d+", out)
    assert "Backup finished: All 3 disks copied." in out
    assert last_count(out, r"event\(s\) in December 2026") == events_left
    assert re.findall(r"✓ (\d+) event\(s\)", out)[0] == "4"
    # The long read says how far it has come, with real counts, up to the whole: the year's 1,200 entries,
    # and the weekly series too where the dialog kept it (it reaches into January 2027).
    whole = 1200 + (flag == "--no")
    assert f"… 0 of {whole} entries read; expanding them" in out
    assert f"… 250 of {whole} entries expanded" in out
    assert f"… {whole} of {whole} entries expanded" in out
    assert last_count(out, r"contact\(s\)") == contacts_left
    listed = [re.findall(r"(\w+) \((?:admin|user)\)", line) for line in out.splitlines() if "account(s):" in line]
    assert listed == accounts  # each listing of the ntfy accounts, by name
    if flag == "--no":
        assert out.count("Not done: you declined, so the server did not do it; nothing was changed.") == dialogs
    else:
        assert "Not done" not in out
        assert out.count("notes for") == 2 * dialogs  # asked, then approved, for each dialog
    assert_told_in_words(out)


def test_with_no_flag_and_no_terminal_every_dialog_counts_as_no() -> None:
    out = run_demo()
    assert out.count("no answer can be read from stdin: treated as no") == 3
    assert last_count(out, r"event\(s\) in December 2026") == 4
    assert_told_in_words(out)
