"""The HTTP layer under the ``caldav`` library: one origin, bounded answers, no DTDs.

``caldav.DAVClient`` sends every request through ``self.session.request(...)``
(a niquests session by default). Left alone, that session follows redirects to
any origin (stripping a Basic ``Authorization`` header but still sending the
request, its body and headers there), and its Digest handler answers a 401 from
the new origin with the account's Digest response. It reads each answer whole,
without a size limit, and its timeout bounds each read, not the answer.

:class:`ConfinedSession` replaces that session (``DAVClient.session``), on
``httpx2``:

* A request is sent only when its URL has ``CALDAV_URL``'s scheme, host and
  port (:class:`caldav_mcp.ids.Origin`); anything else raises
  :class:`OffOrigin` before a byte is sent. Redirects are followed here, never
  by the HTTP library: at most :data:`MAX_REDIRECTS`, each to the same origin.
  So credentials (Basic or Digest, chosen from the server's 401 challenge,
  RFC 9110 §11.6.1) go only to the configured origin.
* One request may take ``CALDAV_TIMEOUT`` seconds in all: connecting, sending,
  the status line and headers (however slowly they drip, and however many
  ``100 Continue`` come first), the body, its redirects and its authentication
  round trips share one deadline. Each socket operation waits at most what is
  left of it (:mod:`caldav_mcp.deadline`), so a slow server cannot reset it.
  An answer may be ``CALDAV_MAX_RESPONSE_BYTES`` long after decompression.
* An answer that declares a DTD (``<!DOCTYPE``, hence entities) is refused
  before any XML parser builds a tree (the billion-laughs family). The
  ``caldav`` library then parses with lxml's ``resolve_entities=False``,
  ``no_network=True`` and ``huge_tree=False`` as a second line.
* A 2xx answer to PROPFIND, REPORT or PROPPATCH must be well-formed XML whose
  root is in the ``DAV:`` namespace (RFC 4918 §13, §14.16), whatever its
  Content-Type says (some servers mislabel it); a 2xx answer to GET that is not
  XML must be ``text/calendar`` (or ``text/plain``, ``application/octet-stream``),
  and so may a 2xx answer to a free-busy-query REPORT (it answers with
  iCalendar, RFC 4791 §7.10).
  Any other body that is not XML (an error page, an OPTIONS text) is dropped:
  its status and headers are the answer.

Every refusal is a :class:`caldav_mcp.errors.BackendError` subclass whose text
names what failed; :mod:`caldav_mcp.client` adds what was being done.
"""

from __future__ import annotations

import logging
import time
import xml.parsers.expat
from collections.abc import Mapping
from typing import Any

import httpx2 as httpx

from caldav_mcp.deadline import deadline_at, deadline_of, deadline_transport
from caldav_mcp.errors import BackendError
from caldav_mcp.ids import Origin
from caldav_mcp.negotiated_auth import NegotiatedAuth

__all__ = [
    "MAX_REDIRECTS",
    "Answer",
    "BadAnswer",
    "ConfinedSession",
    "OffOrigin",
    "TooLarge",
    "TooSlow",
    "Unreachable",
    "screen_xml",
]

logger = logging.getLogger("caldav_mcp.transport")

MAX_REDIRECTS = 5
_REDIRECTS = {301, 302, 303, 307, 308}
_XML_METHODS = {"PROPFIND", "REPORT", "PROPPATCH"}
_CALENDAR_TYPES = {"text/calendar", "text/plain", "application/octet-stream"}
_FREE_BUSY_QUERY = b"free-busy-query"  # the CalDAV REPORT answered with iCalendar (RFC 4791 §7.10)


class OffOrigin(BackendError):
    """A request (or a redirect) would leave the configured origin; nothing was sent there."""


class TooLarge(BackendError):
    """An answer exceeded ``CALDAV_MAX_RESPONSE_BYTES``."""


class TooSlow(BackendError):
    """An answer took longer than ``CALDAV_TIMEOUT``."""


class Unreachable(BackendError):
    """The server could not be reached, or the connection broke."""


class BadAnswer(BackendError):
    """An answer that is refused: a DTD, malformed or non-WebDAV XML, too many redirects, not HTTP."""


class MalformedXML(BadAnswer):
    """A body that starts as XML but is not well-formed."""


def _mib(count: int) -> str:
    return f"{count / (1024 * 1024):g} MiB"


class Answer:
    """One complete answer, shaped as the ``caldav`` library reads a requests/niquests response.

    Attributes:
        status_code: The HTTP status.
        reason: Its reason phrase (also ``reason_phrase``).
        headers: The response headers (case-insensitive).
        content: The whole body, decompressed.
        url: The URL that answered (after same-origin redirects).
    """

    def __init__(self, status_code: int, reason: str, headers: httpx.Headers, content: bytes, url: str) -> None:
        self.status_code = status_code
        self.reason = reason
        self.reason_phrase = reason
        self.headers = headers
        self.content = content
        self.url = url

    @property
    def text(self) -> str:
        """The body as text (the charset the server declared, else UTF-8; undecodable bytes replaced)."""
        charset = "utf-8"
        for part in self.headers.get("Content-Type", "").split(";")[1:]:
            key, _, value = part.strip().partition("=")
            if key.lower() == "charset" and value:
                charset = value.strip('"')
        try:
            return self.content.decode(charset, errors="replace")
        except LookupError:
            return self.content.decode("utf-8", errors="replace")


class _Stop(Exception):
    """Raised from the expat handler at the root element: the prologue is over."""


def screen_xml(body: bytes, *, what: str, whole: bool) -> str | None:
    """Refuse a body that declares a DTD; return the root element's ``{namespace}name`` (None: not XML).

    Args:
        body: The answer's bytes.
        what: ``METHOD /path``, for the error.
        whole: Parse to the end (the body must be well-formed); otherwise stop
            at the root element (a DTD can only come before it, XML 1.0 §2.8).

    Raises:
        BadAnswer: a ``<!DOCTYPE`` or entity declaration; with ``whole``, XML
            that is not well-formed.
    """
    parser = xml.parsers.expat.ParserCreate(namespace_separator=" ")
    root: list[str] = []

    def doctype(*_: Any) -> None:
        raise BadAnswer(
            f"the CalDAV server's answer to {what} declares a DTD (<!DOCTYPE>), which caldav-mcp never "
            "parses (entity expansion is refused)"
        )

    def start(name: str, _attributes: Any) -> None:
        if not root:
            namespace, _, local = name.rpartition(" ")
            root.append(f"{{{namespace}}}{local}" if namespace else local)
        if not whole:
            raise _Stop
        parser.StartElementHandler = None

    parser.StartDoctypeDeclHandler = doctype
    parser.EntityDeclHandler = doctype
    parser.StartElementHandler = start
    try:
        parser.Parse(body, True)
    except _Stop:
        pass
    except xml.parsers.expat.ExpatError as exc:
        if whole and root:
            raise MalformedXML(
                f"the CalDAV server's answer to {what} is malformed XML (line {exc.lineno}, "
                f"column {exc.offset}: {xml.parsers.expat.ErrorString(exc.code)})"
            ) from None
        return None
    return root[0] if root else None


class ConfinedSession:
    """A drop-in for ``DAVClient.session`` that keeps every request on one origin (see the module docstring).

    Args:
        url: ``CALDAV_URL`` (its origin is the only one used).
        username: ``CALDAV_USERNAME`` or None (no credentials then).
        password: ``CALDAV_PASSWORD`` or None.
        timeout: Seconds one request may take in all (connect, headers, body,
            redirects and authentication round trips).
        max_bytes: Largest answer body read, after decompression.
        transport: An httpx transport (tests only).
    """

    def __init__(
        self,
        url: str,
        *,
        username: str | None,
        password: str | None,
        timeout: float,
        max_bytes: int,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.origin = Origin(url)
        self.timeout = timeout
        self.max_bytes = max_bytes
        auth = NegotiatedAuth(username, password) if username and password else None
        self._auth = auth
        self._http = httpx.Client(
            auth=auth,
            timeout=httpx.Timeout(timeout),
            follow_redirects=False,
            transport=transport if transport is not None else deadline_transport(),
        )

    @property
    def authenticated(self) -> bool:
        """True once a 401 challenge has chosen the scheme: every later request carries the credentials."""
        return self._auth is not None and self._auth.chosen

    def close(self) -> None:
        """Close the connection pool."""
        self._http.close()

    def request(
        self,
        method: str,
        url: str,
        data: bytes | str | None = None,
        headers: Mapping[str, str] | None = None,
        **_ignored: Any,
    ) -> Answer:
        """Send ``method`` to ``url`` (same origin only), following same-origin redirects.

        The ``caldav`` library's ``auth``, ``proxies``, ``timeout``, ``verify``
        and ``cert`` arguments are ignored: this session holds its own.

        Raises:
            OffOrigin: ``url`` or a redirect target is on another origin.
            TooLarge, TooSlow, Unreachable, BadAnswer: see the module docstring.
        """
        body = data.encode() if isinstance(data, str) else data
        sent = {k: v for k, v in (headers or {}).items() if k.lower() not in {"authorization", "host"}}
        with deadline_of(self.timeout):
            return self._follow(method, url, body, sent)

    def _follow(self, method: str, url: str, body: bytes | None, sent: dict[str, str]) -> Answer:
        target = url
        for hop in range(MAX_REDIRECTS + 1):
            if not self.origin.same(target):
                raise OffOrigin(self._off_origin(method, target, redirected=hop > 0))
            answer = self._exchange(method, target, body, sent)
            location = answer.headers.get("Location")
            if answer.status_code not in _REDIRECTS or not location:
                return answer
            if hop == MAX_REDIRECTS:
                raise BadAnswer(
                    f"the CalDAV server redirected {method} more than {MAX_REDIRECTS} times (a redirect loop?)"
                )
            try:
                target = str(httpx.URL(target).join(location))
            except (httpx.InvalidURL, ValueError):
                raise BadAnswer(f"the CalDAV server redirected {method} to an address that is not a URL") from None
            if answer.status_code == 303 and method != "HEAD":
                method, body = "GET", None
                sent = {k: v for k, v in sent.items() if k.lower() not in {"content-type", "content-length"}}
        raise AssertionError("unreachable")  # pragma: no cover

    def _off_origin(self, method: str, url: str, *, redirected: bool) -> str:
        try:
            parsed = httpx.URL(url)
            where = f"{parsed.scheme}://{parsed.host}" + (f":{parsed.port}" if parsed.port else "")
        except (httpx.InvalidURL, ValueError):
            where = "an address that is not a URL"
        if redirected:
            return (
                f"the CalDAV server redirected {method} to another origin ({where}); caldav-mcp sends requests "
                f"and credentials only to {self.origin} (CALDAV_URL). If the server moved, set CALDAV_URL to "
                "its new address"
            )
        return f"a request to {where} was refused: caldav-mcp talks only to {self.origin} (CALDAV_URL)"

    def _exchange(self, method: str, url: str, body: bytes | None, headers: Mapping[str, str]) -> Answer:
        path = httpx.URL(url).raw_path.decode("ascii", errors="replace")
        what = f"{method} {path[:200]}"
        deadline = deadline_at() or time.monotonic() + self.timeout
        try:
            with self._http.stream(method, url, content=body, headers=headers) as response:
                declared = response.headers.get("Content-Length", "")
                if declared.isdigit() and int(declared) > self.max_bytes:
                    raise TooLarge(self._too_large(what, f"it announced {int(declared):,} bytes"))
                chunks: list[bytes] = []
                size = 0
                for chunk in response.iter_bytes():
                    size += len(chunk)
                    if size > self.max_bytes:
                        raise TooLarge(self._too_large(what, "it was longer"))
                    if time.monotonic() > deadline:
                        raise TooSlow(self._too_slow(what))
                    chunks.append(chunk)
                answer = Answer(
                    response.status_code,
                    response.reason_phrase,
                    response.headers,
                    b"".join(chunks),
                    str(response.url),
                )
        except httpx.TimeoutException as exc:
            raise TooSlow(self._too_slow(what)) from exc
        except httpx.DecodingError as exc:
            raise BadAnswer(f"the CalDAV server's answer to {what} could not be decompressed") from exc
        except httpx.RemoteProtocolError as exc:
            if "disconnected" in str(exc).lower():
                raise Unreachable(
                    f"the CalDAV server at {self.origin} closed the connection without answering {what}"
                ) from exc
            raise BadAnswer(f"the CalDAV server's answer to {what} is not valid HTTP ({type(exc).__name__})") from exc
        except httpx.LocalProtocolError as exc:
            raise BadAnswer(f"the CalDAV server's answer to {what} is not valid HTTP ({type(exc).__name__})") from exc
        except (httpx.TransportError, OSError) as exc:
            raise Unreachable(
                f"the CalDAV server at {self.origin} could not be reached ({type(exc).__name__})"
            ) from exc
        freebusy = method.upper() == "REPORT" and _FREE_BUSY_QUERY in (body or b"")
        self._check_body(method, what, answer, freebusy=freebusy)
        return answer

    def _check_body(self, method: str, what: str, answer: Answer, *, freebusy: bool = False) -> None:
        if not answer.content:
            return
        expects_xml = method.upper() in _XML_METHODS and 200 <= answer.status_code < 300
        kind = answer.headers.get("Content-Type", "").split(";")[0].strip().lower() or "no Content-Type"
        if expects_xml and freebusy and kind in _CALENDAR_TYPES and answer.content.lstrip()[:1] != b"<":
            # The one REPORT answered with iCalendar, not a multistatus: free-busy-query (RFC 4791 §7.10), 200 with
            # a VFREEBUSY (Radicale and Cyrus label it text/calendar, Xandikos application/octet-stream). Not XML,
            # so nothing here is parsed; the caldav library reads it as iCalendar.
            return
        if not 200 <= answer.status_code < 300 and kind == "text/html":
            # An error page (Apache's 405 on a server root starts with <!DOCTYPE HTML ...>): never parsed;
            # its status and headers are the answer.
            answer.content = b""
            return
        try:
            root = screen_xml(answer.content, what=what, whole=True)
        except MalformedXML:
            if expects_xml:
                raise
            root = None
        if expects_xml and (root is None or not root.startswith("{DAV:}")):
            raise BadAnswer(
                f"the CalDAV server answered {what} with {kind} that is not a WebDAV XML answer "
                "(a login page, a proxy, or not a CalDAV server at CALDAV_URL?)"
            )
        if root is not None:
            return
        if method.upper() == "GET" and 200 <= answer.status_code < 300:
            if kind not in _CALENDAR_TYPES:
                raise BadAnswer(f"the CalDAV server answered {what} with {kind} where iCalendar was expected")
        else:
            # Not XML, not an entry: the status and headers are the answer (a 500 page, an OPTIONS text).
            answer.content = b""

    def _too_large(self, what: str, detail: str) -> str:
        return (
            f"the CalDAV server's answer to {what} is larger than CALDAV_MAX_RESPONSE_BYTES "
            f"({self.max_bytes:,} bytes, {_mib(self.max_bytes)}); {detail}. Narrow the request, or raise the limit"
        )

    def _too_slow(self, what: str) -> str:
        return f"the CalDAV server did not answer {what} within CALDAV_TIMEOUT ({self.timeout:g} s)"
