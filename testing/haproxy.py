"""HAProxy in front of several replicas of one MCP server, started on 127.0.0.1 for the tests.

The real HAProxy from Debian's ``haproxy`` package, run in the foreground
(``-db``) as a subprocess with a configuration written by :func:`config_text`:

- one frontend on a free 127.0.0.1 port, one backend holding every replica;
- ``balance roundrobin``: each HTTP request, not each connection, goes to the
  next replica (HAProxy balances every request of a kept-alive connection), so
  on MCP 2026-07-28, where no request carries a session, consecutive requests
  land on different replicas;
- affinity for MCP 2025-11-25 sessions: a stick table keyed on the
  ``Mcp-Session-Id`` header. The replica that answers ``initialize`` names the
  session in its response (``stick store-response``); every later request that
  carries that header goes to the same replica (``stick match``). A request
  without the header (every 2026-07-28 request) matches nothing and stays round
  robin. (``balance hdr(Mcp-Session-Id)`` would not do: the session id is
  minted by the replica that answered ``initialize``, and a hash of it names
  some other replica);
- every response carries ``X-Backend: <replica name>``, so a test can see which
  replica answered each request;
- an admin socket (the runtime API), through which a test reads a replica's
  state and puts a replica into maintenance or back (to steer requests to one
  chosen replica, through the proxy, without changing the configuration).

A missing ``haproxy`` binary raises :class:`ProxyDidNotStart` naming the
package to install; nothing is skipped.
"""

from __future__ import annotations

import contextlib
import csv
import io
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from processes import free_port, started

__all__ = ["BACKEND", "BACKEND_HEADER", "Proxy", "ProxyDidNotStart", "binary", "config_text", "haproxy"]

BACKEND = "replicas"
BACKEND_HEADER = "X-Backend"
STARTUP_SECONDS = 20.0
# Long enough for a 2025-11-25 tools/call that waits on a pushed dialog (its SSE stream stays open while the
# person answers); the replicas' own limits end a call sooner.
STREAM_SECONDS = 300


class ProxyDidNotStart(RuntimeError):
    """HAProxy is missing, refused its configuration, or did not listen in time; the message says which."""


PER_SOURCE = 50
"""Connections one client address may hold open at once through the frontend."""


def config_text(
    replicas: Sequence[tuple[str, str, int]],
    *,
    bind: str,
    admin_socket: Path | None = None,
    health_check_path: str | None = None,
    affinity: bool = True,
) -> str:
    """The HAProxy configuration for ``replicas`` behind one frontend.

    Args:
        replicas: ``(name, host, port)`` of each replica, in round-robin order.
        bind: What follows ``bind``: the frontend's ``host:port``, and TLS options if any
            (``:443 ssl crt /etc/haproxy/certs/site.pem alpn h2,http/1.1``).
        admin_socket: Where the runtime API listens (``level admin``); None for none.
        health_check_path: A path answered without authentication (e.g. the RFC 9728 metadata,
            ``/.well-known/oauth-protected-resource/mcp``) for HTTP health checks; None checks only that
            the replica accepts TCP connections.
        affinity: False leaves out the stick table (to show what breaks without it).

    Returns:
        The configuration, the one ``docs/deploy.md`` shows (with TLS added there).
    """
    lines = ["global", "    maxconn 4096"]
    if admin_socket is not None:
        lines.append(f"    stats socket {admin_socket} mode 600 level admin")
    lines += [
        "",
        "defaults",
        "    mode http",
        "    option redispatch           # a replica that refuses the connection: try another",
        "    option abortonclose         # a client that leaves closes its replica connection: a dialog is abandoned",
        "    retries 3",
        "    timeout connect 5s",
        "    timeout client 300s         # a 2025-11-25 call's SSE stream stays open while the person answers",
        "    timeout server 300s",
        "    timeout http-keep-alive 30s",
        "",
        "frontend mcp",
        f"    bind {bind}",
        "    timeout http-request 10s    # a request's headers must arrive within 10 s (slow-header attacks)",
        "    stick-table type ip size 100k expire 60s store conn_cur",
        "    tcp-request connection track-sc0 src",
        f"    tcp-request connection reject if {{ sc_conn_cur(0) gt {PER_SOURCE} }}   # open connections per address",
        f"    default_backend {BACKEND}",
        "",
        f"backend {BACKEND}",
        "    balance roundrobin",
    ]
    if affinity:
        lines += [
            "    # 2025-11-25: every request of a session goes to the replica that created it.",
            "    # 2026-07-28 requests carry no session id: they match nothing and stay round robin.",
            "    stick-table type string len 128 size 100k expire 30m",
            "    stick match req.hdr(mcp-session-id)",
            "    stick store-response res.hdr(mcp-session-id)",
        ]
    lines += [
        f"    http-response set-header {BACKEND_HEADER} %s",
    ]
    if health_check_path is not None:
        lines.append(f"    option httpchk GET {health_check_path}")
    for name, host, port in replicas:
        lines.append(f"    server {name} {host}:{port} check inter 500ms fall 2 rise 1")
    return "\n".join(lines) + "\n"


@dataclass
class Proxy:
    """A running HAProxy.

    Attributes:
        url: The frontend's base URL, e.g. ``http://127.0.0.1:41234``.
        port: The frontend's port.
        config: The configuration file it runs with.
        admin_socket: Its runtime API socket.
    """

    url: str
    port: int
    config: Path
    admin_socket: Path

    def command(self, line: str) -> str:
        """Send one runtime API command (e.g. ``show stat``) and return its whole answer."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
            sock.settimeout(10)
            sock.connect(str(self.admin_socket))
            sock.sendall(line.encode() + b"\n")
            chunks: list[bytes] = []
            while chunk := sock.recv(65536):
                chunks.append(chunk)
        return b"".join(chunks).decode()

    def status(self, server: str) -> str:
        """The state HAProxy holds for replica ``server``: ``UP``, ``DOWN``, ``MAINT``, ``UP 1/2``..."""
        text = self.command("show stat -1 4 -1").lstrip("# ")
        for row in csv.DictReader(io.StringIO(text)):
            if row["pxname"] == BACKEND and row["svname"] == server:
                return row["status"]
        raise KeyError(f"no replica {server!r} in HAProxy's backend {BACKEND!r}")

    def wait_status(self, server: str, prefix: str, seconds: float = 30.0) -> None:
        """Wait until replica ``server``'s state starts with ``prefix`` (``UP``, ``DOWN``...).

        Raises:
            ProxyDidNotStart: not reached within ``seconds``.
        """
        deadline = time.monotonic() + seconds
        while not (status := self.status(server)).startswith(prefix):
            if time.monotonic() >= deadline:
                raise ProxyDidNotStart(f"replica {server} is {status!r} in HAProxy after {seconds:g} s, not {prefix}")
            time.sleep(0.1)

    def only(self, server: str, names: Sequence[str]) -> None:
        """Put every replica of ``names`` but ``server`` into maintenance: requests now go to ``server`` only."""
        for name in names:
            state = "ready" if name == server else "maint"
            answer = self.command(f"set server {BACKEND}/{name} state {state}")
            if answer.strip():
                raise ProxyDidNotStart(f"HAProxy refused 'set server {BACKEND}/{name} state {state}': {answer}")
        self.wait_status(server, "UP")

    def all(self, names: Sequence[str]) -> None:
        """Every replica of ``names`` back out of maintenance, and wait until each is up."""
        for name in names:
            answer = self.command(f"set server {BACKEND}/{name} state ready")
            if answer.strip():
                raise ProxyDidNotStart(f"HAProxy refused 'set server {BACKEND}/{name} state ready': {answer}")
        for name in names:
            self.wait_status(name, "UP")


def binary() -> str:
    """The haproxy executable.

    Raises:
        ProxyDidNotStart: none is installed (the message names ``apt-get install haproxy``).
    """
    found = shutil.which("haproxy") or next(
        (p for p in ("/usr/sbin/haproxy", "/usr/local/sbin/haproxy") if Path(p).is_file()), None
    )
    if found is None:
        raise ProxyDidNotStart("no haproxy binary: install Debian's package as root: apt-get install haproxy")
    return found


@contextlib.contextmanager
def haproxy(
    workdir: Path,
    replicas: Sequence[tuple[str, str, int]],
    *,
    port: int | None = None,
    health_check_path: str | None = None,
    affinity: bool = True,
) -> Iterator[Proxy]:
    """Run HAProxy on ``port`` (default: a free one) of 127.0.0.1 in front of ``replicas`` (``(name, host, port)``).

    Stops it on exit.

    Waits until every replica is ``UP`` in HAProxy's view, so the first request is balanced over all of them.

    Raises:
        ProxyDidNotStart: no haproxy binary (naming ``apt-get install haproxy``), a configuration HAProxy
            refuses (with its message), or no listener or no replica up within the start-up time.
    """
    executable = binary()
    workdir.mkdir(parents=True, exist_ok=True)
    port = port or free_port()
    config = workdir / "haproxy.cfg"
    admin = workdir / "admin.sock"
    config.write_text(
        config_text(
            replicas,
            bind=f"127.0.0.1:{port}",
            admin_socket=admin,
            health_check_path=health_check_path,
            affinity=affinity,
        )
    )
    checked = subprocess.run([executable, "-c", "-f", str(config)], capture_output=True, text=True, check=False)  # noqa: S603
    if checked.returncode != 0:
        raise ProxyDidNotStart(f"haproxy -c refused {config}:\n{checked.stdout}{checked.stderr}")

    def ready() -> bool:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            pass
        return admin.exists()

    with started(
        [executable, "-db", "-f", str(config)],
        name="haproxy",
        port=port,
        workdir=workdir,
        log=workdir / "haproxy.log",
        ready=ready,
        error=ProxyDidNotStart,
        seconds=STARTUP_SECONDS,
    ):
        proxy = Proxy(f"http://127.0.0.1:{port}", port, config, admin)
        for name, _, _ in replicas:
            proxy.wait_status(name, "UP", STARTUP_SECONDS)
        yield proxy
