"""No process a test starts outlives the context that started it, and each runs in a group of its own.

Each launcher of ``testing/`` that the default test run uses (Radicale, Xandikos, the real ntfy, a family
server over HTTP, Chromium for the approval page; Redis, HAProxy and DAViCal are checked in
``integration/test_process_groups.py``) is entered and left. While it runs, the process it started leads
a process group of its own (so a signal for it never reaches pytest's group, and what it forks is stopped
with it); once it is left, no process descending from this one is left that was not there before. A build
script that leaves a ``go build`` behind, and a command stopped at its deadline, take their whole group
with them (``testing/processes.py``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import pytest
from browser import browser
from dav_servers import radicale, xandikos
from mcp_http import served_over_http
from ntfy_server import _run_showing, find_or_build_binary, ntfy_server
from processes import descendants, free_port, group_members, leads_its_group, nothing_left_behind, run_in_group, started

pytestmark = pytest.mark.anyio


def test_a_server_that_forks_is_stopped_with_what_it_forked(tmp_path: Path) -> None:
    port = free_port()
    script = f"sleep 600 & exec {sys.executable} -m http.server {port} --bind 127.0.0.1"
    with nothing_left_behind():
        with started(
            ["bash", "-c", script],
            name="forking server",
            port=port,
            workdir=tmp_path,
            log=tmp_path / "log",
            ready=lambda: Path(tmp_path / "log").exists() and _listening(port),
            error=RuntimeError,
            seconds=60,
        ) as process:
            leads_its_group(process.pid)
            assert len(group_members(process.pid)) == 2, "the server and the sleep it started"
        assert group_members(process.pid) == []


def _listening(port: int) -> bool:
    import socket

    with socket.create_connection(("127.0.0.1", port), timeout=1):
        return True


def test_a_build_script_that_leaves_a_child_behind_takes_it_along(tmp_path: Path) -> None:
    """As a build script killed or finished while its ``go build`` still runs: the child goes with it."""
    with nothing_left_behind():
        _run_showing(["bash", "-c", "sleep 600 & echo started"], cwd=tmp_path, what="build")


def test_a_command_stopped_at_its_deadline_takes_its_group_along(tmp_path: Path) -> None:
    with nothing_left_behind(), pytest.raises(subprocess.TimeoutExpired):
        run_in_group(["bash", "-c", "sleep 600 & sleep 600"], timeout=0.5, cwd=tmp_path)


@pytest.mark.parametrize("launcher", ["radicale", "xandikos", "ntfy", "server over http"])
def test_a_launcher_runs_its_server_in_a_group_of_its_own_and_leaves_nothing(
    launcher: str, tmp_path: Path, pytestconfig: pytest.Config
) -> None:
    with nothing_left_behind(), launched(launcher, tmp_path, pytestconfig) as pids:
        for pid in pids:
            leads_its_group(pid)


@contextmanager
def launched(launcher: str, tmp_path: Path, config: pytest.Config) -> Iterator[list[int]]:
    """Enter ``launcher``'s context; yield the pids of the group leaders it started."""
    before = descendants(os.getpid())

    def started_here() -> list[int]:
        return sorted(pid for pid in descendants(os.getpid()) - before if os.getpgid(pid) == pid)

    context: AbstractContextManager[Any]
    if launcher == "radicale":
        context = radicale(tmp_path / "radicale", {"willi": "secret"})
    elif launcher == "xandikos":
        context = xandikos(tmp_path / "xandikos")
    elif launcher == "ntfy":
        context = ntfy_server(tmp_path / "ntfy", find_or_build_binary())
    else:
        assert launcher == "server over http", launcher
        context = served_over_http("ntfy-mcp", {"NTFY_URL": "http://127.0.0.1:9/"}, tmp_path)
    for path in (tmp_path / "radicale", tmp_path / "xandikos", tmp_path / "ntfy"):
        path.mkdir(exist_ok=True)
    with context:
        yield started_here()


async def test_chromium_for_the_approval_page_is_gone_with_its_context() -> None:
    before = descendants(os.getpid())
    async with browser(1):
        assert descendants(os.getpid()) - before, "no browser process was started"
    left = descendants(os.getpid()) - before
    assert not left, f"browser processes outlived their context: {sorted(left)}"
