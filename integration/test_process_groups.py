"""The launchers of the integration suite's servers leave nothing behind (see ``tests/test_processes.py``).

Redis, HAProxy (in front of a Radicale) and DAViCal's Apache (with its PostgreSQL) each run in a process
group of their own while their context lasts; once it has ended, no process descending from this one is
left that was not there before.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from dav_servers import davical, radicale
from haproxy import haproxy
from processes import descendants, leads_its_group, nothing_left_behind
from redis_server import redis_server


@contextmanager
def launched(launcher: str, tmp_path: Path) -> Iterator[list[int]]:
    """Enter ``launcher``'s context; yield the pids of the group leaders it started."""
    before = descendants(os.getpid())

    def started_here() -> list[int]:
        return sorted(pid for pid in descendants(os.getpid()) - before if os.getpgid(pid) == pid)

    if launcher == "redis":
        with redis_server():
            yield started_here()
    elif launcher == "haproxy":
        (tmp_path / "radicale").mkdir()
        with radicale(tmp_path / "radicale", {"willi": "secret"}) as dav:
            port = int(dav.url.rstrip("/").rsplit(":", 1)[1])
            with haproxy(tmp_path / "haproxy", [("dav", "127.0.0.1", port)]):
                yield started_here()
    else:
        assert launcher == "davical", launcher
        with davical(tmp_path):
            yield started_here()


@pytest.mark.parametrize("launcher", ["redis", "haproxy", "davical"])
def test_a_launcher_runs_its_server_in_a_group_of_its_own_and_leaves_nothing(launcher: str, tmp_path: Path) -> None:
    with nothing_left_behind(), launched(launcher, tmp_path) as pids:
        assert pids, f"{launcher}: no process of its own"
        for pid in pids:
            leads_its_group(pid)
