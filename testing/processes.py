"""Starting a test server process on 127.0.0.1 and stopping it again.

Shared by the Radicale/Xandikos and ntfy launchers. A server that exits or
never answers raises the launcher's own error with the server's output, so a
test fails with the reason instead of being skipped.
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

__all__ = ["free_port", "started"]


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

    ``ready`` may raise OSError while the server is still coming up. ``env``: the process's whole
    environment (default: this process's).

    Raises:
        Exception: ``error(message)`` when the process exits first or is not ready within ``seconds``.
    """
    with log.open("wb") as out:
        environment = None if env is None else dict(env)
        process = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, cwd=workdir, env=environment)  # noqa: S603
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
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
