"""One origin (RFC 6454): where requests may go, and the only place credentials are attached."""

from __future__ import annotations

import base64
from collections.abc import AsyncGenerator, Generator, Mapping

import httpx2 as httpx

__all__ = ["DEFAULT_PORTS", "Origin", "OriginAuth", "basic_credentials", "origin_of", "origin_text", "shown"]

DEFAULT_PORTS = {"http": 80, "https": 443}

Origin = tuple[str, str, int]
"""(scheme, host, port), lower case, the port explicit."""


def origin_of(url: httpx.URL) -> Origin:
    """(scheme, host, port) of ``url``, the port made explicit (RFC 6454 §4)."""
    scheme = url.scheme.lower()
    return scheme, url.host.lower(), url.port or DEFAULT_PORTS.get(scheme, 0)


def origin_text(origin: Origin) -> str:
    """``scheme://host:port`` (an IPv6 host in brackets), never with user information."""
    scheme, host, port = origin
    return f"{scheme}://{'[' + host + ']' if ':' in host else host}:{port}"


def shown(value: str) -> str:
    """A caller's or a server's value, quoted and cut to 80 characters, for an error text or a log line."""
    return repr(value if len(value) <= 80 else value[:77] + "...")


def basic_credentials(username: str | None, password: str | None) -> dict[str, str]:
    """The ``Authorization`` header of HTTP Basic (RFC 7617) for a username and password; empty without both."""
    if not (username and password):
        return {}
    token = base64.b64encode(f"{username}:{password}".encode()).decode("ascii")
    return {"Authorization": f"Basic {token}"}


class OriginAuth(httpx.Auth):
    """Attach the account's credentials (and header credentials) only to requests for one origin.

    Args:
        origin: The configured origin.
        credentials: Headers to attach there (``Authorization``, a trusted ``X-Remote-User``).
    """

    def __init__(self, origin: Origin, credentials: Mapping[str, str]) -> None:
        self._origin = origin
        self._credentials = dict(credentials)

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response]:
        """The request, with the credentials when it is for the configured origin."""
        if origin_of(request.url) == self._origin:
            request.headers.update(self._credentials)
        yield request

    async def async_auth_flow(self, request: httpx.Request) -> AsyncGenerator[httpx.Request, httpx.Response]:
        """As :meth:`auth_flow`, for the async client."""
        if origin_of(request.url) == self._origin:
            request.headers.update(self._credentials)
        yield request
