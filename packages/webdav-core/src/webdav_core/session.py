"""The confined session: every request of a DAV server goes through :class:`ConfinedSession`.

Its rules, each kept here and nowhere else:

* A request is sent only when its URL has the scheme, host and port of the
  configured URL (RFC 6454 §4); anything else raises the server's
  ``off_origin`` error before a byte is sent.
* The credentials are attached by an auth flow only to requests for that
  origin (:class:`~webdav_core.origin.OriginAuth`), so even a direct request
  elsewhere carries none; a password only once the origin's 401 challenge
  asks for it, by Digest when offered, else Basic.
* Redirects are followed here, never by httpx: at most :data:`MAX_REDIRECTS`,
  each within the origin, never to a URL carrying user information; method
  and body are kept, except that a 303 is followed with a GET without a body
  (RFC 9110 §15.4.4).
* A request of a safe method that a closed connection left without any
  answer is sent once more (:func:`send_answered`).
* One exchange (request, redirects, the whole body) ends after ``timeout``
  seconds, however slowly the server drips its answer.
* A success is read as a stream and refused past ``max_bytes``; an error
  answer is cut at :data:`~webdav_core.errors.ERROR_BODY_BYTES`.
* A 2xx answer to PROPFIND, REPORT or PROPPATCH must be XML (RFC 4918 §13);
  a multistatus is parsed without DTDs or entities (:mod:`webdav_core.xml`).
* An answer that is not HTTP, or a connection closed before the answer, is
  said so; nothing of httpx reaches a tool.
* Every failure becomes one of the server's errors (:mod:`webdav_core.errors`).
"""

from __future__ import annotations

from collections.abc import Mapping

import anyio
import httpx2 as httpx

from webdav_core import xml
from webdav_core.answer import Answer
from webdav_core.errors import ERROR_BODY_BYTES
from webdav_core.origin import OriginAuth, cut, origin_of, origin_text
from webdav_core.profile import Profile
from webdav_core.statuses import raise_for_status

__all__ = ["MAX_REDIRECTS", "RESENT_METHODS", "Answer", "ConfinedSession", "send_answered"]

MAX_REDIRECTS = 5
"""Same-origin redirects followed for one request before it counts as a loop."""
_REDIRECTS = {301, 302, 303, 307, 308}
RESENT_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "PROPFIND", "REPORT"})
"""Safe methods (RFC 9110 §9.2.1; WebDAV's PROPFIND and REPORT read only), sent once more when never answered.
A write is never sent twice: a connection closed before its answer may have carried it out, so the servers'
lost-reply rules read the entry back instead."""
_XML_BODY = "application/xml; charset=utf-8"
_XML_METHODS = {"PROPFIND", "REPORT", "PROPPATCH"}
"""Methods whose 2xx answer is a WebDAV XML body (RFC 4918 §9.1, §9.2; RFC 3253 §3.6)."""


class ConfinedSession:
    """An async HTTP session confined to the origin of one URL (see the module docstring).

    Args:
        url: The configured URL (``CALDAV_URL``, ``CARDDAV_URL``); its origin is the only one used.
        profile: The server's names and exception classes.
        credentials: Headers attached to requests for the origin only (a trusted ``X-Remote-User``).
        username: The account, or None.
        password: Its password, or None; sent only when challenged.
        timeout: Seconds one whole exchange may take (redirects, authentication and body included).
        max_bytes: The largest successful answer read, in bytes.
        transport: An httpx transport (tests of fault handling only).

    The connection pool is made at the first request, so building a session
    costs nothing at a server's start.
    """

    def __init__(
        self,
        url: str,
        profile: Profile,
        *,
        credentials: Mapping[str, str] | None = None,
        username: str | None = None,
        password: str | None = None,
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
        self.auth = OriginAuth(self.origin, credentials, username, password)
        self._transport = transport
        self._http: httpx.AsyncClient | None = None

    @property
    def http(self) -> httpx.AsyncClient:
        """The httpx client (made at first use; credentials attached for the configured origin only)."""
        if self._http is None:
            self._http = httpx.AsyncClient(
                auth=self.auth, timeout=self.timeout, transport=self._transport, follow_redirects=False
            )
        return self._http

    @property
    def origin_text(self) -> str:
        """``scheme://host:port`` of the configured URL (never with user information)."""
        return origin_text(self.origin)

    async def aclose(self) -> None:
        """Close the connection pool (a later request opens a new one)."""
        if self._http is not None:
            http, self._http = self._http, None
            await http.aclose()

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
                f"{p.quote(cut(path))} is not a path on the configured {p.server} ({self.origin_text}); "
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
        xml_answer: bool | None = None,
    ) -> Answer:
        """Send one request and return its answer; an error status raises (see :func:`raise_for_status`).

        Args:
            method: The HTTP or WebDAV method (``PROPFIND``, ``MOVE``...).
            path: A server path, or a URL on the configured origin.
            body: The request body; an XML Content-Type is set unless ``headers`` name one.
            headers: Further headers (``Depth``, ``If-Match``, ``Destination``...).
            what: What is being done, the start of every error message.
            xml_answer: Whether a 2xx answer must be XML; None: for PROPFIND, REPORT and PROPPATCH
                (False for the one REPORT answered with iCalendar, RFC 4791 §7.10 free-busy-query).

        Raises:
            off_origin: the path (or a redirect) leads off the configured origin; nothing was sent there.
            unreachable: no connection, or no whole answer within ``timeout`` seconds.
            too_large: the answer is larger than ``max_bytes``.
            backend (or a kind of it): an error status, a redirect loop, an answer that could not be decoded,
                is not HTTP, or is not the XML asked for.
        """
        answer = await self.exchange(method, path, body=body, headers=headers, what=what, xml_answer=xml_answer)
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
        xml_answer: bool | None = None,
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
                answer = await self._follow(method, url, body, sent, what)
        except TimeoutError as exc:
            raise p.errors.unreachable(
                f"{what}: the {p.server} did not answer in full within {p.timeout_setting} ({self.timeout:g} s).",
                None,
            ) from exc
        except httpx.TimeoutException as exc:
            raise p.errors.unreachable(
                f"{what}: the {p.server} did not answer within {p.timeout_setting} ({self.timeout:g} s).", None
            ) from exc
        except httpx.DecodingError as exc:
            raise p.errors.backend(
                f"{what}: the server's answer could not be decoded ({type(exc).__name__}).", None
            ) from exc
        except (httpx.RemoteProtocolError, httpx.LocalProtocolError) as exc:
            if isinstance(exc, httpx.RemoteProtocolError) and "disconnected" in str(exc).lower():
                raise p.errors.unreachable(
                    f"{what}: could not reach the {p.server}: the server at {self.origin_text} closed the connection "
                    "without answering.",
                    None,
                ) from exc
            raise p.errors.backend(
                f"{what}: the {p.server}'s answer is not valid HTTP ({type(exc).__name__}).", None
            ) from exc
        except httpx.HTTPError as exc:
            raise p.errors.unreachable(
                f"{what}: could not reach the {p.server}: the server at {self.origin_text} could not be reached "
                f"({type(exc).__name__}).",
                None,
            ) from exc
        expects_xml = method.upper() in _XML_METHODS if xml_answer is None else xml_answer
        if expects_xml and 200 <= answer.status_code < 300 and answer.status_code != 204:
            self._screen_xml(answer, method, what)
        return answer

    def _screen_xml(self, answer: Answer, method: str, what: str) -> None:
        """Refuse a 2xx answer to PROPFIND, REPORT or PROPPATCH that is not XML (a login page, a proxy)."""
        media = answer.media_type
        if not media or media.endswith(("/xml", "+xml")):
            return  # XML, or unlabelled: the parser decides
        p = self.profile
        raise p.errors.backend(
            f"{what}: the {p.server} answered {method} with {p.name(media[:60])} "
            f"that is not a WebDAV XML answer (a login page, a proxy, or not a {p.server} at {p.url_setting}?).",
            answer.status_code,
        )

    async def _follow(
        self, method: str, url: httpx.URL, body: str | bytes | None, headers: dict[str, str], what: str
    ) -> Answer:
        """The request, its same-origin redirects (method and body kept), and the answer read within the limit."""
        for _ in range(MAX_REDIRECTS + 1):
            response = await send_answered(self.http, method, url, body, headers)
            try:
                location = response.headers.get("Location")
                if response.status_code in _REDIRECTS and location:
                    url = self._redirect_target(url, location, what, method)
                    if response.status_code == 303 and method != "HEAD":
                        method, body = "GET", None  # RFC 9110 §15.4.4: see other, by GET
                        headers = {k: v for k, v in headers.items() if k.lower() != "content-type"}
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
            f"{what}: the {p.server} redirected {method} more than {MAX_REDIRECTS} times (a redirect loop?); "
            f"check {p.url_setting}.",
            None,
        )

    def _redirect_target(self, current: httpx.URL, location: str, what: str, method: str) -> httpx.URL:
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
            elsewhere = origin_text(origin_of(target))
            raise p.errors.backend(
                f"{what}: the {p.server} redirected {method} to another origin ({elsewhere}). {p.program} sends "
                f"requests and credentials only to {self.origin_text} ({p.url_setting}), so it did not follow; if "
                f"the server moved, set {p.url_setting} to its new address.",
                None,
            )
        return target

    async def _read(self, response: httpx.Response, limit: int, what: str) -> bytes:
        """The body, read as a stream; past ``limit`` bytes an error answer is cut, a success refused."""
        declared = response.headers.get("Content-Length", "")
        p = self.profile
        too_large = p.errors.too_large(
            f"{what}: the {p.server}'s answer is larger than {p.size_setting} ({limit:,} bytes); it was not read. "
            "Narrow the request, or raise the limit.",
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
                f"{what}: the {p.server} answered with {p.quote(cut(media[:60]))} that is not a WebDAV XML answer "
                "(an XML multistatus was expected).",
                response.status_code,
            )
        try:
            return xml.parse_multistatus(response.content)
        except ValueError as exc:
            raise p.errors.backend(
                f"{what}: the server's answer could not be read: {exc}.", response.status_code
            ) from exc


async def send_answered(
    http: httpx.AsyncClient, method: str, url: httpx.URL, body: str | bytes | None, headers: dict[str, str]
) -> httpx.Response:
    """Send one request; when the connection it went on closed without any answer, send it once more.

    A server may close a kept-alive connection as the next request goes out on it (sogod after its
    answer, any server at its idle timeout): the request was never answered, and httpx drops that
    connection, so the second try goes on another. Only safe methods (:data:`RESENT_METHODS`) are sent
    again; a write fails as unreachable, since the server may have acted on it (it is then read back).
    """
    for attempt in (1, 2):
        request = http.build_request(method, url, content=body, headers=headers)
        try:
            return await http.send(request, stream=True)
        except (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError) as exc:
            unanswered = not isinstance(exc, httpx.RemoteProtocolError) or "without sending" in str(exc)
            if attempt == 2 or not unanswered or method.upper() not in RESENT_METHODS:
                raise
    raise AssertionError("unreachable")  # pragma: no cover
