"""The transport settings of a family server (``MCP_*``), read strictly from the environment.

See :mod:`approval_core.serving.remote` for what each variable does; this module
only reads and checks them (:meth:`HttpSettings.from_env`).
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal
from urllib.parse import urlsplit

from approval_core.errors import SettingsError
from approval_core.settings import STORE_URL_ENV

__all__ = ["LOOPBACK_NAMES", "TRANSPORTS", "HttpSettings", "loopback"]

TRANSPORTS: Final = ("stdio", "streamable-http")
LOOPBACK_NAMES: Final = ("localhost",)


def loopback(host: str) -> bool:
    """Whether ``host`` names this machine only (``localhost``, 127.0.0.0/8, ``::1``)."""
    if host in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _comma_list(value: str | None) -> tuple[str, ...] | None:
    if value is None:
        return None
    return tuple(part.strip() for part in value.split(",") if part.strip())


@dataclass(frozen=True, slots=True)
class HttpSettings:
    """The transport settings of one server process, read by :meth:`from_env`.

    Attributes:
        transport: ``stdio`` or ``streamable-http``.
        host, port, path: Where HTTP listens (``path`` starts with ``/``).
        public_url: The canonical resource URL (RFC 8707 audience, RFC 9728 ``resource``).
        token_file: Path of the static bearer token, or None.
        issuer, jwks_url: The JWT issuer and its JWKS URL, or None.
        required_scopes: Scopes every JWT must carry (space list in the environment).
        allowed_hosts, allowed_origins: Host/Origin values accepted (``name:*`` = any port).
        workers: Worker processes (>= 1).
        store_url_set: Whether ``APPROVAL_STORE_URL`` is set (only its presence is read here).
    """

    transport: Literal["stdio", "streamable-http"] = "stdio"
    host: str = "127.0.0.1"
    port: int = 8000
    path: str = "/mcp"
    public_url: str = "http://127.0.0.1:8000/mcp"
    token_file: Path | None = None
    issuer: str | None = None
    jwks_url: str | None = None
    required_scopes: tuple[str, ...] = ()
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    workers: int = 1
    store_url_set: bool = False

    @property
    def auth(self) -> Literal["token-file", "jwt"] | None:
        """Which authentication is configured: ``token-file``, ``jwt`` or None."""
        if self.token_file is not None:
            return "token-file"
        if self.issuer is not None:
            return "jwt"
        return None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> HttpSettings:
        """Read and check the ``MCP_*`` settings (and the presence of ``APPROVAL_STORE_URL``).

        Raises:
            SettingsError: naming the variable and the rule, for a bad value, an
                incomplete or doubled authentication, a non-loopback ``MCP_HOST``
                without authentication, or ``MCP_WORKERS`` > 1 without
                ``APPROVAL_STORE_URL``. Nothing is checked beyond
                ``MCP_TRANSPORT`` when it is ``stdio``.
        """
        env = os.environ if environ is None else environ
        transport = env.get("MCP_TRANSPORT", "stdio")
        if transport not in TRANSPORTS:
            raise SettingsError(f"MCP_TRANSPORT must be 'stdio' or 'streamable-http', not {transport!r}")
        if transport == "stdio":
            return cls()
        host = env.get("MCP_HOST", "127.0.0.1").strip()
        if not host:
            raise SettingsError("MCP_HOST must not be empty (default 127.0.0.1)")
        port_text = env.get("MCP_PORT", "8000")
        if not port_text.isdigit() or not 0 < int(port_text) < 65536:
            raise SettingsError(f"MCP_PORT must be a whole number from 1 to 65535, not {port_text!r}")
        port = int(port_text)
        path = env.get("MCP_PATH", "/mcp")
        if not path.startswith("/") or any(c in path for c in "?# "):
            raise SettingsError(f"MCP_PATH must be a path starting with '/' (no query, no spaces), not {path!r}")
        bracketed = f"[{host}]" if ":" in host else host
        public_url = env.get("MCP_PUBLIC_URL", f"http://{bracketed}:{port}{path}")
        parts = urlsplit(public_url)
        if parts.scheme not in ("http", "https") or not parts.hostname or parts.query or parts.fragment:
            raise SettingsError(
                f"MCP_PUBLIC_URL must be an absolute http(s) URL without query or fragment, not {public_url!r}"
            )
        token_file = env.get("MCP_AUTH_TOKEN_FILE") or None
        issuer = env.get("MCP_AUTH_ISSUER") or None
        jwks_url = env.get("MCP_AUTH_JWKS_URL") or None
        if token_file and (issuer or jwks_url):
            raise SettingsError("MCP_AUTH_TOKEN_FILE and MCP_AUTH_ISSUER/MCP_AUTH_JWKS_URL exclude each other: set one")
        if bool(issuer) != bool(jwks_url):
            raise SettingsError("MCP_AUTH_ISSUER and MCP_AUTH_JWKS_URL go together: set both or neither")
        for name, url in (("MCP_AUTH_ISSUER", issuer), ("MCP_AUTH_JWKS_URL", jwks_url)):
            if url is not None and urlsplit(url).scheme not in ("http", "https"):
                raise SettingsError(f"{name} must be an http(s) URL, not {url!r}")
        scopes = tuple(env.get("MCP_AUTH_REQUIRED_SCOPES", "").split())
        if scopes and not issuer:
            raise SettingsError("MCP_AUTH_REQUIRED_SCOPES applies to JWTs: set MCP_AUTH_ISSUER and MCP_AUTH_JWKS_URL")
        if not loopback(host) and not (token_file or issuer):
            raise SettingsError(
                f"MCP_HOST={host} listens beyond loopback: set MCP_AUTH_TOKEN_FILE or "
                "MCP_AUTH_ISSUER + MCP_AUTH_JWKS_URL (or bind 127.0.0.1 behind a proxy that authenticates)"
            )
        workers_text = env.get("MCP_WORKERS", "1")
        if not workers_text.isdigit() or int(workers_text) < 1:
            raise SettingsError(f"MCP_WORKERS must be a whole number of at least 1, not {workers_text!r}")
        workers = int(workers_text)
        store_url_set = bool(env.get(STORE_URL_ENV))
        if workers > 1 and not store_url_set:
            raise SettingsError(
                f"MCP_WORKERS={workers} needs {STORE_URL_ENV}: "
                "worker processes must share the single-use approval records"
            )
        public_host = parts.netloc.rsplit("@", 1)[-1]
        default_hosts = (f"{bracketed}:{port}", f"{bracketed}:*", public_host)
        if loopback(host):
            default_hosts += ("127.0.0.1:*", "localhost:*", "[::1]:*")
        hosts = _comma_list(env.get("MCP_ALLOWED_HOSTS")) or tuple(dict.fromkeys(default_hosts))
        origin = f"{parts.scheme}://{public_host}"
        default_origins: tuple[str, ...] = (origin,)
        if loopback(host):
            default_origins += ("http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*")
        origins = _comma_list(env.get("MCP_ALLOWED_ORIGINS")) or tuple(dict.fromkeys(default_origins))
        return cls(
            transport="streamable-http",
            host=host,
            port=port,
            path=path,
            public_url=public_url,
            token_file=Path(token_file) if token_file else None,
            issuer=issuer,
            jwks_url=jwks_url,
            required_scopes=scopes,
            allowed_hosts=hosts,
            allowed_origins=origins,
            workers=workers,
            store_url_set=store_url_set,
        )
