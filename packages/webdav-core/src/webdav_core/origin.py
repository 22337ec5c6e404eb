"""One origin (RFC 6454): where requests may go, and the only place credentials are attached."""

from __future__ import annotations

from collections.abc import Generator, Mapping

import httpx2 as httpx

__all__ = ["DEFAULT_PORTS", "Origin", "OriginAuth", "origin_of", "origin_text", "shown"]

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


def cut(value: str) -> str:
    """``value`` cut to 80 characters (the last three ``...`` when it was longer)."""
    return value if len(value) <= 80 else value[:77] + "..."


def shown(value: str) -> str:
    """A caller's or a server's value, quoted and cut to 80 characters, for a log line (an error: ``Profile.quote``)."""
    return repr(cut(value))


class OriginAuth(httpx.Auth):
    """Attach the account's credentials only to requests for one origin, the password only when challenged.

    Header credentials (a trusted ``X-Remote-User``) go on every request for
    the origin. A username and password are never sent before the server asks
    for them: the first request goes without, and a 401 challenge
    (RFC 9110 §11.6.1) chooses the scheme, Digest (RFC 7616) when it is
    offered, else Basic (RFC 7617). Once chosen, the scheme is used up front on
    every later request for the origin. A request for another origin carries
    nothing, and a challenge from it is never answered.

    Args:
        origin: The configured origin.
        credentials: Headers to attach there (a trusted ``X-Remote-User``).
        username: The account's user name, or None (then no password is ever sent).
        password: Its password, or None.
    """

    def __init__(
        self,
        origin: Origin,
        credentials: Mapping[str, str] | None = None,
        username: str | None = None,
        password: str | None = None,
    ) -> None:
        self._origin = origin
        self._credentials = dict(credentials or {})
        self._login = (username, password) if username and password else None
        self._chosen: httpx.Auth | None = None

    @property
    def chosen(self) -> bool:
        """True once a 401 challenge has chosen the scheme: every later request carries the credentials."""
        return self._chosen is not None

    def _choose(self, response: httpx.Response, request: httpx.Request) -> httpx.Response | None:
        """Pick the scheme a 401 offers; returns the challenge the Digest flow must answer (None for Basic)."""
        assert self._login is not None
        offered = response.headers.get_list("WWW-Authenticate")
        digest = next((v[v.lower().index("digest") :] for v in offered if "digest" in v.lower()), None)
        if digest is not None:
            self._chosen = httpx.DigestAuth(*self._login)
            # Hand the Digest flow only its own challenge (a server may list several schemes in one header).
            return httpx.Response(401, headers={"WWW-Authenticate": digest}, request=request)
        if any("basic" in v.lower() for v in offered):
            self._chosen = httpx.BasicAuth(*self._login)
        return None

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response]:
        """The request with the header credentials; a password only as the origin's challenge asks."""
        if origin_of(request.url) != self._origin:
            yield request
            return
        request.headers.update(self._credentials)
        challenge: httpx.Response | None = None
        if self._chosen is None:
            response = yield request
            if response.status_code != 401 or self._login is None:
                return
            challenge = self._choose(response, request)
            if self._chosen is None:
                return  # a scheme not offered here: the 401 stands
        flow = self._chosen.auth_flow(request)
        try:
            outgoing = next(flow)
            if challenge is not None:
                outgoing = flow.send(challenge)
        except StopIteration:
            return  # a challenge the flow cannot answer: the 401 stands
        while True:
            response = yield outgoing
            try:
                outgoing = flow.send(response)
            except StopIteration:
                return
