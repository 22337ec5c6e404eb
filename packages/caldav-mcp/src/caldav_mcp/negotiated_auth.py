"""HTTP authentication chosen from the server's challenge: Digest (RFC 7616) when offered, else Basic (RFC 7617)."""

from __future__ import annotations

from collections.abc import Generator

import httpx2 as httpx

__all__ = ["NegotiatedAuth"]


class NegotiatedAuth(httpx.Auth):
    """Sends the first request bare, then answers the server's challenge with Digest (preferred) or Basic.

    Once chosen, the scheme is used up front on every later request. Only
    ever attached to requests for the configured origin (the session refuses
    any other before sending).
    """

    def __init__(self, username: str, password: str) -> None:
        self._username = username
        self._password = password
        self._chosen: httpx.Auth | None = None

    @property
    def chosen(self) -> bool:
        """True once a challenge has named the scheme (Digest or Basic)."""
        return self._chosen is not None

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        """The request bare, then, on a 401, with the scheme its challenge names (RFC 9110 §11.6.1)."""
        challenge: httpx.Response | None = None
        if self._chosen is None:
            response = yield request
            offered = response.headers.get("WWW-Authenticate", "").lower()
            if response.status_code != 401:
                return
            if "digest" in offered:
                self._chosen = httpx.DigestAuth(self._username, self._password)
                # Hand the Digest flow only its own challenge (a server may list several schemes in one header).
                value = next(v for v in response.headers.get_list("WWW-Authenticate") if "digest" in v.lower())
                digest = value[value.lower().index("digest") :]
                challenge = httpx.Response(401, headers={"WWW-Authenticate": digest}, request=request)
            elif "basic" in offered:
                self._chosen = httpx.BasicAuth(self._username, self._password)
            else:
                return
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
