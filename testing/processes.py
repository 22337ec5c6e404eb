"""Starting a test server process on 127.0.0.1 and stopping it again, with everything it started.

Shared by the launchers of every real server the tests run (Radicale,
Xandikos, DAViCal's Apache, Cyrus, SOGo, ntfy and its build, Redis, HAProxy,
the servers of the family over HTTP). A server that exits or never answers
raises the launcher's own error with the server's output, so a test fails
with the reason instead of being skipped.

Every process is started in a session, and so a process group, of its own
(:func:`spawn`), and stopped with its whole group (:func:`stop_group`): what
it forked (a build script's ``go build``, Apache's workers) never outlives
it, and a signal meant for it never reaches pytest's own group.
``tests/test_processes.py`` checks that no process of a launcher's group is
left once its context has ended.
"""

from __future__ import annotations

import contextlib
import http.client
import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = [
    "descendants",
    "free_port",
    "group_members",
    "leads_its_group",
    "nothing_left_behind",
    "run_in_group",
    "spawn",
    "started",
    "stop_group",
]

STOP_SECONDS = 10.0
"""How long a group has after SIGTERM before what is left of it is killed (SIGKILL)."""


def spawn(argv: Sequence[str], **popen: Any) -> subprocess.Popen[Any]:
    """``subprocess.Popen(argv, **popen)`` in a new session: the process leads a process group of its own.

    Its group id is its pid; everything it starts stays in that group unless it makes a session of its own.
    """
    return subprocess.Popen(list(argv), start_new_session=True, **popen)  # noqa: S603 - the callers' own argv


def group_members(group: int) -> list[int]:
    """The pids of the live (not zombie) processes whose process group is ``group`` (read from ``/proc``)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()  # after the command name, which may hold spaces
        state, pgrp = fields[0], int(fields[2])
        if pgrp == group and state != "Z":
            found.append(int(entry.name))
    return sorted(found)


def stop_group(process: subprocess.Popen[Any], seconds: float = STOP_SECONDS) -> None:
    """Stop ``process`` (started by :func:`spawn`) and every process left in its group.

    SIGCONT (a paused process must be able to act), SIGTERM to the whole group, a wait of up to ``seconds``
    for the leader, then SIGKILL to whatever of the group is still there; the leader is reaped.
    """
    group = process.pid
    for sent in (signal.SIGCONT, signal.SIGTERM):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(group, sent)
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=seconds)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, signal.SIGKILL)
    process.wait()
    deadline = time.monotonic() + seconds
    while group_members(group) and time.monotonic() < deadline:  # killed, not yet gone from /proc
        time.sleep(0.05)


def run_in_group(
    argv: Sequence[str], *, timeout: float | None, cwd: Path | None = None, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Like ``subprocess.run(argv, capture_output=True, text=True)``, the command in a group of its own.

    On ``timeout`` (seconds; None for none), or when this process is interrupted, the whole group is stopped,
    not only the command.

    Raises:
        subprocess.TimeoutExpired: the command ran longer than ``timeout``; its group has been stopped.
    """
    environment = None if env is None else dict(env)
    process = spawn(argv, cwd=cwd, env=environment, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = process.communicate(timeout=timeout)
    except BaseException:
        stop_group(process)
        process.communicate()  # what is left in the pipes; closes them
        raise
    return subprocess.CompletedProcess(list(argv), process.returncode, out, err)


def answers_http(port: int, method: str = "OPTIONS", path: str = "/") -> bool:
    """True once something on 127.0.0.1:``port`` answers ``method path`` with a status line (any status).

    Not an HTTP server yet (refused, reset, or not a status line) is False. Under
    ephemeral-port pressure a connect to a port nobody listens on can be given
    that same port as its source and reach itself (TCP simultaneous open): it
    then reads back its own request line, which is not a status line.
    """
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
    try:
        conn.request(method, path)
        conn.getresponse().read()
        return True
    except (OSError, http.client.HTTPException):
        return False
    finally:
        conn.close()


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def started(
    argv: list[str],
    *,
    name: str,
    port: int,
    workdir: Path,
    log: Path,
    ready: Callable[[], bool],
    error: Callable[[str], Exception],
    seconds: float,
    env: Mapping[str, str] | None = None,
) -> Iterator[subprocess.Popen[bytes]]:
    """Run ``argv`` (output into ``log``) until ``ready()`` is true, yield the process, then stop it.

    The process leads a process group of its own (:func:`spawn`), and is stopped with everything in it
    (:func:`stop_group`).

    ``ready`` may raise OSError while the server is still coming up. ``env``: the process's whole
    environment (default: this process's).

    Raises:
        Exception: ``error(message)`` when the process exits first or is not ready within ``seconds``.
    """
    with log.open("wb") as out:
        environment = None if env is None else dict(env)
        process = spawn(argv, stdout=out, stderr=subprocess.STDOUT, cwd=workdir, env=environment)
        try:
            deadline = time.monotonic() + seconds
            while True:
                if process.poll() is not None:
                    raise error(f"{name} exited with {process.returncode}:\n{log.read_text(errors='replace')}")
                try:
                    if ready():
                        break
                except OSError:
                    pass
                if time.monotonic() >= deadline:
                    raise error(
                        f"{name} gave no answer on port {port} within {seconds:g} s:\n{log.read_text(errors='replace')}"
                    )
                time.sleep(0.05)
            yield process
        finally:
            stop_group(process)


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
    described = {}
    for pid in sorted(left):
        with contextlib.suppress(OSError):
            described[pid] = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")[:120]
    assert not left, f"processes outlived their context: {described}"


def leads_its_group(pid: int) -> None:
    """Fails unless ``pid`` leads a process group of its own, apart from this process's."""
    assert os.getpgid(pid) == pid, f"{pid} is in group {os.getpgid(pid)}, not one of its own"
    assert os.getpgid(pid) != os.getpgid(0), "it shares pytest's process group"
