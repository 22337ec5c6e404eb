"""A remote deployment of caldav-mcp, all on 127.0.0.1: replicas behind HAProxy, one Redis, one Radicale.

What ``docs/deploy.md`` describes, started by the tests and the benchmark:

- Radicale (``testing/dav_servers.py``) with the account ``willi`` and two
  calendars, ``/willi/work/`` and ``/willi/home/``;
- Redis (Debian's ``redis-server``, ``testing/redis_server.py``) as
  ``APPROVAL_STORE_URL``, unless the stack runs with the in-process store;
- one key file (``python -m approval_core keys new``), shared by every replica;
- N replicas of ``caldav-mcp`` over Streamable HTTP (``testing/replicas.py``),
  each with ``MCP_PUBLIC_URL`` set to the proxy's URL (the audience tokens
  must name);
- HAProxy in front (``testing/haproxy.py``): round robin, affinity on
  ``Mcp-Session-Id`` for 2025-11-25 sessions.

Authentication is either a static token file or JWTs from a local issuer
(``testing/token_issuer.py``, a double serving its JWKS on 127.0.0.1).
"""

from __future__ import annotations

import contextlib
import secrets
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import dav_servers
import haproxy
import httpx2
import redis_server
import replicas as replicas_module
import token_issuer
from processes import free_port

__all__ = ["CALENDARS", "Stack", "remote_stack"]

USER, PASSWORD = "willi", "secret"
CALENDARS = ("/willi/work/", "/willi/home/")
HEALTH_CHECK_PATH = "/.well-known/oauth-protected-resource/mcp"  # RFC 9728 metadata: answered without a token
Auth = Literal["token", "jwt"]
Store = Literal["redis", "memory"]


@dataclass
class Stack:
    """The running deployment.

    Attributes:
        url: The MCP endpoint clients use (the proxy's, or the one replica's when there is no proxy).
        radicale: The backend.
        replicas: The replicas.
        proxy: HAProxy, None for a stack without one.
        redis: The Redis server, None with the in-process store.
        key_file: The shared key file.
        token: A bearer token the replicas accept.
        issuer: The JWT issuer (auth ``jwt``), else None.
    """

    url: str
    radicale: dav_servers.DavServer
    replicas: replicas_module.Replicas
    proxy: haproxy.Proxy | None
    redis: redis_server.RedisServer | None
    key_file: Path
    token: str
    issuer: token_issuer.IssuerDouble | None

    def dav(self) -> httpx2.Client:
        """A plain HTTP client on Radicale, logged in as the account (to check what a call changed)."""
        return httpx2.Client(base_url=self.radicale.url, auth=(USER, PASSWORD), timeout=30)


def _calendars(url: str) -> None:
    with httpx2.Client(base_url=url, auth=(USER, PASSWORD), timeout=30) as http:
        for path in CALENDARS:
            made = http.request("MKCALENDAR", path)
            assert made.status_code == 201, f"MKCALENDAR {path}: {made.status_code} {made.text}"


def _key_file(workdir: Path) -> Path:
    path = workdir / "approval.keys"
    made = subprocess.run(  # noqa: S603 - the workspace's own module
        [sys.executable, "-m", "approval_core", "keys", "new", str(path)], capture_output=True, text=True, check=False
    )
    if made.returncode != 0:
        raise RuntimeError(f"python -m approval_core keys new {path} failed: {made.stderr}")
    return path


@contextlib.contextmanager
def remote_stack(
    workdir: Path,
    *,
    count: int = 3,
    proxy: bool = True,
    store: Store = "redis",
    auth: Auth = "jwt",
    extra: dict[str, str] | None = None,
    public_host: str = "127.0.0.1",
) -> Iterator[Stack]:
    """Start the deployment described in the module docstring in ``workdir``; stop everything after.

    Args:
        workdir: Where every part keeps its files and logs.
        count: How many replicas.
        proxy: False: no HAProxy (``count`` must be 1); clients talk to the replica itself.
        store: ``redis`` (``APPROVAL_STORE_URL``) or ``memory`` (the in-process store; only with one replica).
        auth: ``jwt`` (a local issuer, its JWKS over HTTP) or ``token`` (``MCP_AUTH_TOKEN_FILE``).
        extra: More settings for every replica.
        public_host: The host name of ``MCP_PUBLIC_URL`` (the proxy listens on 127.0.0.1 either way);
            ``localhost`` for the approval page, whose passkeys need a domain name, never an IP address.

    Raises:
        RuntimeError: (or the launcher's own error) a part did not start; the message says which and why.
    """
    assert proxy or count == 1, "without a proxy there is one replica"
    assert store == "redis" or count == 1, "replicas share approvals only through Redis"
    with contextlib.ExitStack() as stack:
        radicale = stack.enter_context(dav_servers.radicale(workdir / "radicale", {USER: PASSWORD}))
        _calendars(radicale.url)
        key_file = _key_file(workdir)
        front = free_port()
        ports = [free_port() for _ in range(count)]
        public_url = f"http://{public_host}:{front if proxy else ports[0]}/mcp"
        settings = {
            "CALDAV_URL": radicale.url,
            "CALDAV_USERNAME": USER,
            "CALDAV_PASSWORD": PASSWORD,
            "APPROVAL_KEY_FILE": str(key_file),
            **(extra or {}),
        }
        redis: redis_server.RedisServer | None = None
        if store == "redis":
            redis = stack.enter_context(redis_server.redis_server())
            settings["APPROVAL_STORE_URL"] = redis.url
        issuer: token_issuer.IssuerDouble | None = None
        if auth == "jwt":
            issuer = stack.enter_context(token_issuer.token_issuer())
            settings["MCP_AUTH_ISSUER"] = issuer.issuer
            settings["MCP_AUTH_JWKS_URL"] = issuer.jwks_url
            token = issuer.token(public_url, expires_in=6 * 3600)  # outlives a slow run
        else:
            token = secrets.token_urlsafe(32)
            token_file = workdir / "token"
            token_file.write_text(token + "\n")
            token_file.chmod(0o600)
            settings["MCP_AUTH_TOKEN_FILE"] = str(token_file)
        group = stack.enter_context(
            replicas_module.replicas(
                workdir / "replicas", "caldav-mcp", count, settings, public_url=public_url, ports=ports
            )
        )
        front_proxy = None
        if proxy:
            front_proxy = stack.enter_context(
                haproxy.haproxy(
                    workdir / "haproxy",
                    [(r.name, "127.0.0.1", r.port) for r in group.members],
                    port=front,
                    health_check_path=HEALTH_CHECK_PATH,
                )
            )
        yield Stack(public_url, radicale, group, front_proxy, redis, key_file, token, issuer)
