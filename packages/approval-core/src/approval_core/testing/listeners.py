"""A listener on 127.0.0.1 that records what reaches it, and the escape corpus of hostile ids.

Test helpers (re-exported by :mod:`approval_core.testing`): a server under
test is pointed at a :class:`Listener` beside its real backend, and every id
of :func:`escape_corpus` must be refused without a request reaching it.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass, field

__all__ = ["Listener", "escape_corpus", "listening"]


@dataclass
class Listener:
    """A TCP listener on 127.0.0.1 that records whatever reaches it and answers nothing useful.

    Attributes:
        port: The port it listens on.
        received: The first bytes (up to 64 KiB) of each connection, in order.
    """

    port: int
    received: list[bytes] = field(default_factory=lambda: [])


@contextmanager
def listening() -> Generator[Listener]:
    """A :class:`Listener` on a free 127.0.0.1 port, closed on exit.

    For confinement tests: point hostile ids at ``listener.port`` and assert
    ``listener.received == []`` afterwards (no request, no credential, left
    the configured server). Each connection is read for up to 2 seconds and
    answered with ``HTTP/1.1 200 OK`` and an empty body.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    sock.settimeout(0.2)
    listener = Listener(port=sock.getsockname()[1])
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = sock.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(2)
                data = b""
                try:
                    while len(data) < 65536 and b"\r\n\r\n" not in data:
                        chunk = conn.recv(4096)
                        if not chunk:
                            break
                        data += chunk
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                except OSError:
                    pass
                listener.received.append(data)

    thread = threading.Thread(target=serve, name="confinement-listener", daemon=True)
    thread.start()
    try:
        yield listener
    finally:
        stop.set()
        thread.join(timeout=5)
        sock.close()


def escape_corpus(port: int, inside: str = "book") -> list[str]:
    """Ids and paths that try to lead a request off the configured server to 127.0.0.1:``port``.

    Args:
        port: The port of a :class:`Listener` (or any other origin).
        inside: A collection name on the configured server, used where an
            escape needs a plausible path after it.

    Returns:
        Encoded slashes and dots, ``//host``, a UNC-style ``host`` after two
        backslashes, absolute URLs,
        userinfo (``a@host``), IPv6 literals, mixed and double encodings and an
        overlong path. Every one must be refused (or kept on the configured
        origin); none may reach the listener.
    """
    host = f"127.0.0.1:{port}"
    return [
        f"/%2F{host}/{inside}/a.vcf",
        f"/%2f{host}/{inside}/a.ics",
        f"//{host}/{inside}/a",
        f"///{host}/{inside}/a",
        f"\\\\{host}\\{inside}\\a",
        f"/\\{host}/{inside}/a",
        f"http://{host}/{inside}/a",
        f"HTTP://{host}/{inside}/a",
        f"https://{host}/{inside}/a",
        f"http:{host}/{inside}/a",
        f"http://user@{host}/{inside}/a",
        f"a@{host}/{inside}/a",
        f"http://[::ffff:127.0.0.1]:{port}/{inside}/a",
        f"//[::ffff:7f00:1]:{port}/{inside}/a",
        f"%2F%2F{host}%2F{inside}%2Fa",
        f"%252F%252F{host}/{inside}/a",
        f"/{inside}/..%2F..%2F%2F{host}/a",
        f"/{inside}/%2E%2E/%2E%2E//{host}/a",
        f"/{inside}/../../{host}/a",
        f"/{inside}/.%2e/other/a",
        f"{inside}/%2e%2e/%2e%2e/etc",
        f"/{inside}/%00/a",
        f"/{inside}/" + "a" * 10_000,
    ]


# ---------------------------------------------------------------- effects seen at the backend
