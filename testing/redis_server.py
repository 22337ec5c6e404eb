"""A real Redis (Debian's ``redis-server``) on 127.0.0.1 for the tests, that can be stopped and started again.

The API, kept small for every test that needs one::

    from redis_server import RedisServer, RedisUnavailable, redis_server

    with redis_server() as redis:          # started on a free port, stopped at the end
        redis.url                          # "redis://127.0.0.1:<port>/0" (APPROVAL_STORE_URL)
        redis.port                         # int, fixed for the object's life
        redis.stop()                       # the process is gone; the port answers nothing
        redis.start()                      # again on the same port (waits until PING answers)
        redis.restart()                    # stop() then start()
        redis.pause()                      # SIGSTOP: connections stay open, nothing answers (a hung Redis)
        redis.resume()                     # SIGCONT
        redis.running                      # bool (a paused server is running)
        redis.crash()                      # SIGKILL: gone without saving (with snapshots=True, a start()
                                           # then loads the last snapshot, as after a power cut)

``RedisServer(port=None, workdir=None, snapshots=False)`` takes a fixed port
(default: a free one chosen once) and a folder for its log (default: a
temporary folder that :meth:`RedisServer.close` removes); ``with
RedisServer(...) as redis`` starts and stops it, like :func:`redis_server`.

By default the server keeps nothing on disk (``--save '' --appendonly no``):
a stop forgets every record, as a crashed Redis without persistence would.
``snapshots=True`` gives it Debian's default save points instead (``--save
"3600 1 300 100 60 10000"``, ``dump.rdb`` in ``workdir``): a start loads the
last snapshot, records spent since then included.
Everything that goes wrong raises :class:`RedisUnavailable` with the reason
and the step to take (``apt-get install redis-server``); tests fail with it,
they never skip.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType

from processes import free_port, spawn, stop_group

__all__ = ["RedisServer", "RedisUnavailable", "redis_server"]

START_SECONDS = 20.0


class RedisUnavailable(RuntimeError):
    """redis-server is missing, exited, or gave no answer; the message names the step to take."""


def _binary() -> str:
    found = shutil.which("redis-server") or (
        "/usr/bin/redis-server" if Path("/usr/bin/redis-server").exists() else None
    )
    if found is None:
        raise RedisUnavailable("redis-server is not installed: run `apt-get install redis-server` (Debian package)")
    return found


def _pong(port: int) -> bool:
    with socket.create_connection(("127.0.0.1", port), timeout=1.0) as sock:
        sock.sendall(b"PING\r\n")
        return sock.recv(64).startswith(b"+PONG")


class RedisServer:
    """One redis-server process on 127.0.0.1:``port`` (see the module docstring).

    Args:
        port: The TCP port, kept across :meth:`stop` / :meth:`start`; default a free one.
        workdir: Folder for the server's log and working directory; default a temporary one.
        snapshots: Save snapshots to ``workdir`` on Debian's default schedule and load the last one at start.
    """

    def __init__(self, port: int | None = None, workdir: Path | None = None, *, snapshots: bool = False) -> None:
        self.binary = _binary()
        self.snapshots = snapshots
        self.port = free_port() if port is None else port
        self._own_dir = workdir is None
        self.workdir = Path(tempfile.mkdtemp(prefix="redis-")) if workdir is None else workdir
        self.log = self.workdir / "redis.log"
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """``redis://127.0.0.1:<port>/0``."""
        return f"redis://127.0.0.1:{self.port}/0"

    @property
    def running(self) -> bool:
        """Whether the process started here is alive."""
        return self._process is not None and self._process.poll() is None

    def start(self) -> None:
        """Start the server (no-op when running) and wait until it answers PING.

        Raises:
            RedisUnavailable: the process exits or does not answer within 20 s (the log is in the message).
        """
        if self.running:
            return
        argv = [
            self.binary,
            "--port", str(self.port),
            "--bind", "127.0.0.1",
            "--save", "3600 1 300 100 60 10000" if self.snapshots else "",
            "--appendonly", "no",
            "--dir", str(self.workdir),
            "--daemonize", "no",
            "--protected-mode", "yes",
        ]  # fmt: skip
        with self.log.open("ab") as out:
            self._process = spawn(argv, stdout=out, stderr=subprocess.STDOUT, cwd=self.workdir)
        deadline = time.monotonic() + START_SECONDS
        while True:
            if self._process.poll() is not None:
                raise RedisUnavailable(
                    f"redis-server exited with {self._process.returncode} on port {self.port}:\n"
                    f"{self.log.read_text(errors='replace')}"
                )
            with contextlib.suppress(OSError):
                if _pong(self.port):
                    return
            if time.monotonic() >= deadline:
                self.stop()
                raise RedisUnavailable(
                    f"redis-server gave no PONG on port {self.port} within {START_SECONDS:g} s:\n"
                    f"{self.log.read_text(errors='replace')}"
                )
            time.sleep(0.05)

    def stop(self) -> None:
        """Stop the server (SIGTERM, then SIGKILL after 10 s) and wait for it; no-op when not running."""
        process, self._process = self._process, None
        if process is None:
            return
        stop_group(process)  # SIGCONT first: a paused server must be able to act on SIGTERM

    def crash(self) -> None:
        """Kill the server (SIGKILL): it saves nothing on the way out; no-op when not running."""
        process, self._process = self._process, None
        if process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()

    def pause(self) -> None:
        """Freeze the process (SIGSTOP): it keeps its port and connections but answers nothing.

        Raises:
            RedisUnavailable: the server is not running.
        """
        if self._process is None or not self.running:
            raise RedisUnavailable("pause(): redis-server is not running; start() it first")
        os.kill(self._process.pid, signal.SIGSTOP)

    def resume(self) -> None:
        """Let a paused process go on (SIGCONT); no-op when not running."""
        if self._process is not None and self.running:
            os.kill(self._process.pid, signal.SIGCONT)

    def restart(self) -> None:
        """:meth:`stop`, then :meth:`start` on the same port (every record is gone)."""
        self.stop()
        self.start()

    def close(self) -> None:
        """:meth:`stop`, and remove the temporary folder if this object made it."""
        self.stop()
        if self._own_dir:
            shutil.rmtree(self.workdir, ignore_errors=True)

    def __enter__(self) -> RedisServer:
        self.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()


@contextlib.contextmanager
def redis_server(port: int | None = None) -> Iterator[RedisServer]:
    """A started :class:`RedisServer` on ``port`` (default a free one), stopped and cleaned up at the end."""
    with RedisServer(port) as server:
        yield server
