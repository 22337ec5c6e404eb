"""No process a test starts outlives the context that started it, and each runs in a group of its own.

Each launcher of ``testing/`` (Radicale, Xandikos, the real ntfy, Redis, HAProxy, a family server over
HTTP, Chromium for the approval page) is entered and left; while it runs, the process it started leads
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
from haproxy import haproxy
from mcp_http import served_over_http
from ntfy_server import _run_showing, find_or_build_binary, ntfy_server
from processes import free_port, group_members, run_in_group, started
from redis_server import redis_server

pytestmark = pytest.mark.anyio


def descendants(root: int) -> set[int]:
    """The live (not zombie) processes whose chain of parents leads to ``root`` (read from ``/proc``)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z":
            parents[int(entry.name)] = int(fields[1])
    found: set[int] = set()
    changed = True
    while changed:
        changed = False
        for pid, parent in parents.items():
            if pid not in found and (parent == root or parent in found):
                found.add(pid)
                changed = True
    return found


@contextmanager
def nothing_left_behind() -> Iterator[None]:
    """Fails when, after the block, a process descends from this one that did not before it."""
    before = descendants(os.getpid())
    yield
    left = descendants(os.getpid()) - before
    described = {pid: Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")[:120] for pid in left}
    assert not left, f"processes outlived their context: {described}"


def leads_its_group(pid: int) -> None:
    assert os.getpgid(pid) == pid, f"{pid} is in group {os.getpgid(pid)}, not one of its own"
    assert os.getpgid(pid) != os.getpgid(0), "it shares pytest's process group"


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


@pytest.mark.parametrize("launcher", ["radicale", "xandikos", "redis", "haproxy", "ntfy", "server over http"])
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
    elif launcher == "redis":
        context = redis_server()
    elif launcher == "ntfy":
        context = ntfy_server(tmp_path / "ntfy", find_or_build_binary())
    elif launcher == "server over http":
        context = served_over_http("ntfy-mcp", {"NTFY_URL": "http://127.0.0.1:9/"}, tmp_path)
    else:
        with radicale(tmp_path / "radicale", {"willi": "secret"}) as dav:
            port = int(dav.url.rstrip("/").rsplit(":", 1)[1])
            with haproxy(tmp_path / "haproxy", [("dav", "127.0.0.1", port)]):
                yield started_here()
        return
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
