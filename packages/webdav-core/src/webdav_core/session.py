"""The confined session: every request of a DAV server goes through :class:`ConfinedSession`.

Its rules, each kept here and nowhere else:

* A request is sent only when its URL has the scheme, host and port of the
  configured URL (RFC 6454 §4); anything else raises the server's
  ``off_origin`` error before a byte is sent.
* The credentials (Basic, or header credentials) are attached by an auth flow
  only to requests for that origin (:class:`~webdav_core.origin.OriginAuth`),
  so even a direct request elsewhere carries none.
* Redirects are followed here, never by httpx: at most :data:`MAX_REDIRECTS`,
  each within the origin, never to a URL carrying user information; method
  and body are kept (RFC 9110 §15.4).
* A request of an idempotent method that a closed connection left without
  any answer is sent once more (:meth:`ConfinedSession._send_answered`).
* One exchange (request, redirects, the whole body) ends after ``timeout``
  seconds, however slowly the server drips its answer.
* A success is read as a stream and refused past ``max_bytes``; an error
  answer is cut at :data:`~webdav_core.errors.ERROR_BODY_BYTES`.
* A multistatus is parsed without DTDs or entities (:mod:`webdav_core.xml`).
* Every failure becomes one of the server's errors (:mod:`webdav_core.errors`).
"""

from __future__ import annotations

from collections.abc import Mapping

import anyio
import httpx2 as httpx

from webdav_core import xml
from webdav_core.answer import Answer
from webdav_core.errors import ERROR_BODY_BYTES
from webdav_core.origin import OriginAuth, origin_of, origin_text, shown
from webdav_core.profile import Profile
from webdav_core.statuses import raise_for_status

__all__ = ["MAX_REDIRECTS", "Answer", "ConfinedSession"]

MAX_REDIRECTS = 5
"""Same-origin redirects followed for one request before it counts as a loop."""
_REDIRECTS = {301, 302, 303, 307, 308}
RESENT_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "PROPFIND", "REPORT"})
"""Safe methods (RFC 9110 §9.2.1; WebDAV's PROPFIND and REPORT read only), sent once more when never answered.
A write is never sent twice: a connection closed before its answer may have carried it out, so the servers'
lost-reply rules read the entry back instead."""
_XML_BODY = "application/xml; charset=utf-8"


class ConfinedSession:
    """An async HTTP session confined to the origin of one URL (see the module docstring).

    Args:
        url: The configured URL (``CARDDAV_URL``); its origin is the only one used.
        profile: The server's names and exception classes.
        credentials: Headers attached to requests for the origin only.
        timeout: Seconds one whole exchange may take (redirects and body included).
        max_bytes: The largest successful answer read, in bytes.
        transport: An httpx transport (tests of fault handling only).
    """

    def __init__(
        self,
        url: str,
        profile: Profile,
        *,
        credentials: Mapping[str, str],
        timeout: float,
        max_bytes: int,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.base_url = url
        self.profile = profile
        base = httpx.URL(url)
        self.origin = origin_of(base)
        self._origin_url = f"{base.scheme}://{base.netloc.decode('ascii')}"
        self.timeout = timeout
        self.max_bytes = max_bytes
        self.http = httpx.AsyncClient(
            auth=OriginAuth(self.origin, credentials), timeout=timeout, transport=transport, follow_redirects=False
        )

    @property
    def origin_text(self) -> str:
        """``scheme://host:port`` of the configured URL (never with user information)."""
        return origin_text(self.origin)

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self.http.aclose()

    def url(self, path: str) -> httpx.URL:
        """The absolute URL of a server path (``/user/book/``) or of a URL on the configured origin.

        Raises:
            profile.errors.off_origin: ``path`` leads to another scheme, host or port
                (``//host/x``, ``http://other/``, a backslash, user information), or is not a URL at all.
        """
        if path.startswith("/") and not path.startswith("//"):
            candidate = self._origin_url + path
        elif path.lower().startswith(("http://", "https://")):
            candidate = path
        else:
            candidate = None
        url: httpx.URL | None = None
        if candidate is not None and "\\" not in candidate:
            try:
                url = httpx.URL(candidate)
            except (httpx.InvalidURL, ValueError):
                url = None
        if url is None or url.userinfo or origin_of(url) != self.origin:
            p = self.profile
            raise p.errors.off_origin(
                f"{shown(path)} is not a path on the configured {p.server} ({self.origin_text}); "
                f"{p.program} sends requests only to the server of {p.url_setting}."
            )
        return url

    async def send(
        self,
        method: str,
        path: str,
        *,
        body: str | bytes | None = None,
        headers: Mapping[str, str] | None = None,
        what: str,
    ) -> Answer:
        """Send one request and return its answer; an error status raises (see :func:`raise_for_status`).

        Args:
            method: The HTTP or WebDAV method (``PROPFIND``, ``MOVE``...).
            path: A server path, or a URL on the configured origin.
            body: The request body; an XML Content-Type is set unless ``headers`` name one.
            headers: Further headers (``Depth``, ``If-Match``, ``Destination``...).
            what: What is being done, the start of every error message.

        Raises:
            off_origin: the path (or a redirect) leads off the configured origin; nothing was sent there.
            unreachable: no connection, or no whole answer within ``timeout`` seconds.
            too_large: the answer is larger than ``max_bytes``.
            backend (or a kind of it): an error status, a redirect loop, an answer that could not be decoded.
        """
        answer = await self.exchange(method, path, body=body, headers=headers, what=what)
        if answer.status_code >= 300:
            raise_for_status(answer, what, self.profile)
        return answer

    async def exchange(
        self,
        method: str,
        path: str,
        *,
        body: str | bytes | None = None,
        headers: Mapping[str, str] | None = None,
        what: str,
    ) -> Answer:
        """As :meth:`send`, but an error status is returned, not raised (discovery probes read it)."""
        sent = dict(headers or {})
        if body is not None and "Content-Type" not in sent:
            sent["Content-Type"] = _XML_BODY
        url = self.url(path)
        p = self.profile
        if p.before_send is not None:
            await p.before_send(method, str(url), body, sent)
        try:
            with anyio.fail_after(self.timeout):
                return await self._follow(method, url, body, sent, what)
        except TimeoutError as exc:
            raise p.errors.unreachable(
                f"{what}: the {p.server} did not answer in full within {self.timeout:g} s ({p.timeout_setting}).",
                None,
            ) from exc
        except httpx.TimeoutException as exc:
            raise p.errors.unreachable(f"{what}: the {p.server} did not answer in time.", None) from exc
        except httpx.DecodingError as exc:
            raise p.errors.backend(
                f"{what}: the server's answer could not be decoded ({type(exc).__name__}).", None
            ) from exc
        except httpx.HTTPError as exc:
            raise p.errors.unreachable(f"{what}: could not reach the {p.server} ({type(exc).__name__}).", None) from exc

    async def _follow(
        self, method: str, url: httpx.URL, body: str | bytes | None, headers: dict[str, str], what: str
    ) -> Answer:
        """The request, its same-origin redirects (method and body kept), and the answer read within the limit."""
        for _ in range(MAX_REDIRECTS + 1):
            response = await self._send_answered(method, url, body, headers)
            try:
                location = response.headers.get("Location")
                if response.status_code in _REDIRECTS and location:
                    url = self._redirect_target(url, location, what)
                    if self.profile.before_send is not None:  # a redirected request is another request
                        await self.profile.before_send(method, str(url), body, headers)
                    continue
                limit = self.max_bytes if response.status_code < 300 else ERROR_BODY_BYTES
                content = await self._read(response, limit, what)
                return Answer(response.status_code, response.headers, content, str(url))
            finally:
                await response.aclose()
        p = self.profile
        raise p.errors.backend(
            f"{what}: the {p.server} redirected more than {MAX_REDIRECTS} times (a redirect loop); "
            f"check {p.url_setting}.",
            None,
        )

    async def _send_answered(
        self, method: str, url: httpx.URL, body: str | bytes | None, headers: dict[str, str]
    ) -> httpx.Response:
        """Send one request; when the connection it went on closed without any answer, send it once more.

        A server may close a kept-alive connection as the next request goes out on it (sogod after its
        answer, any server at its idle timeout): the request was never answered, and httpx drops that
        connection, so the second try goes on another. Only safe methods (:data:`RESENT_METHODS`) are sent
        again; a write fails as unreachable, since the server may have acted on it (it is then read back).
        """
        for attempt in (1, 2):
            request = self.http.build_request(method, url, content=body, headers=headers)
            try:
                return await self.http.send(request, stream=True)
            except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as exc:
                unanswered = not isinstance(exc, httpx.RemoteProtocolError) or "without sending" in str(exc)
                if attempt == 2 or not unanswered or method.upper() not in RESENT_METHODS:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    def _redirect_target(self, current: httpx.URL, location: str, what: str) -> httpx.URL:
        """Where a redirect leads, when it stays on the origin (RFC 9110 §10.2.2).

        Raises:
            backend: an unreadable Location, one with user information, or one on another origin.
        """
        p = self.profile
        try:
            target = current.join(location)
        except (httpx.InvalidURL, ValueError) as exc:
            raise p.errors.backend(f"{what}: the {p.server} redirected to an unreadable address.", None) from exc
        if target.userinfo:
            raise p.errors.backend(
                f"{what}: the {p.server} redirected to an address carrying a user name or password; "
                f"{p.program} does not follow such a redirect (it sends only the configured credentials), so the "
                "request was not repeated there.",
                None,
            )
        if origin_of(target) != self.origin:
            raise p.errors.backend(
                f"{what}: the {p.server} redirected to another server ({origin_text(origin_of(target))}). "
                f"{p.program} sends requests and credentials only to {self.origin_text}, so it did not follow; "
                f"if that address is the right one, set {p.url_setting} to it.",
                None,
            )
        return target

    async def _read(self, response: httpx.Response, limit: int, what: str) -> bytes:
        """The body, read as a stream; past ``limit`` bytes an error answer is cut, a success refused."""
        declared = response.headers.get("Content-Length", "")
        p = self.profile
        too_large = p.errors.too_large(
            f"{what}: the {p.server}'s answer is larger than {limit:,} bytes ({p.size_setting}); it was not read.",
            None,
        )
        if response.status_code < 300 and declared.isdigit() and int(declared) > limit:
            raise too_large
        chunks: list[bytes] = []
        size = 0
        async for chunk in response.aiter_bytes():
            size += len(chunk)
            if size > limit:
                if response.status_code >= 300:
                    chunks.append(chunk[: len(chunk) - (size - limit)])
                    break
                raise too_large
            chunks.append(chunk)
        return b"".join(chunks)

    async def multistatus(self, method: str, path: str, body: str, depth: str, what: str) -> xml.MultiStatus:
        """A PROPFIND or REPORT with ``Depth: depth``, its 207 answer parsed (RFC 4918 §9.1, §13).

        Raises:
            As :meth:`send`; backend: the answer is not a readable multistatus.
        """
        response = await self.send(method, path, body=body, headers={"Depth": depth}, what=what)
        return self.parsed(response, what)

    def parsed(self, response: Answer, what: str) -> xml.MultiStatus:
        """The multistatus of a 2xx answer.

        Raises:
            backend: not XML, or not a readable multistatus (a DTD is refused by the parser).
        """
        media = response.media_type
        p = self.profile
        if media and not (media.endswith("/xml") or media.endswith("+xml")):
            raise p.errors.backend(
                f"{what}: the server answered with {shown(media[:60])} instead of an XML multistatus.",
                response.status_code,
            )
        try:
            return xml.parse_multistatus(response.content)
        except ValueError as exc:
            raise p.errors.backend(
                f"{what}: the server's answer could not be read: {exc}.", response.status_code
            ) from exc
