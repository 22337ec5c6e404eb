"""A thin CardDAV client (RFC 6352) on httpx, and the one place backend errors are translated.

It speaks exactly what the tools need: PROPFIND (discovery, listings with
ETags), REPORT addressbook-query / addressbook-multiget / sync-collection,
GET, PUT with ``If-Match`` or ``If-None-Match: *``, DELETE and MOVE with
``If-Match``, and extended MKCOL. Every HTTP failure becomes one of the
exceptions of :mod:`carddav_mcp.errors` in :meth:`CardDavClient._send`;
nothing above this module sees an httpx exception or a status code.

A 412 is reported as :class:`PreconditionFailed` and never retried: the card
changed since it was read, and a blind retry would overwrite that change.
"""

from __future__ import annotations

import base64
import logging
import re
from collections.abc import AsyncGenerator, Generator, Iterable, Mapping
from dataclasses import dataclass
from typing import Literal
from urllib.parse import urlsplit

import anyio
import httpx2 as httpx

from carddav_mcp import davxml
from carddav_mcp.davxml import CARDDAV, DAV, DavResponse, norm_href
from carddav_mcp.errors import (
    AuthenticationFailed,
    BackendError,
    CardRejected,
    Conflict,
    Forbidden,
    NotFound,
    OffOrigin,
    PreconditionFailed,
    ResponseTooLarge,
    Unreachable,
)
from carddav_mcp.settings import CardDavSettings

log = logging.getLogger("carddav_mcp")

__all__ = ["MAX_REDIRECTS", "Answer", "BookInfo", "CardData", "CardDavClient", "Discovery", "SyncResult"]

MULTIGET_BATCH = 250
"""Hrefs per addressbook-multiget REPORT."""
MAX_REDIRECTS = 5
"""Same-origin redirects followed for one request before it counts as a loop."""
_REDIRECTS = {301, 302, 303, 307, 308}
_ERROR_BODY_BYTES = 65_536
"""How much of an error answer is read (for its precondition element); the rest is dropped."""
_DEFAULT_PORTS = {"http": 80, "https": 443}
_VCARD_TYPES = {"text/vcard", "text/x-vcard", "text/directory"}
_WELL_KNOWN = "/.well-known/carddav"
_PLAIN_SEGMENT = re.compile(r"[A-Za-z0-9._~-]+")
"""One path segment of unreserved characters (RFC 3986 §2.3): nothing to decode, re-encode or refuse."""
_MAX_HREF = 1000
"""The longest card href taken (as ids: ``backend.MAX_ID_LENGTH``)."""
_DISCOVERY_PROPS = [(DAV, "resourcetype"), (DAV, "current-user-principal"), (CARDDAV, "addressbook-home-set")]

_WRITE_PRIVILEGES = {"write", "write-content", "bind", "all"}
_BOOK_PROPS = [
    (DAV, "resourcetype"),
    (DAV, "displayname"),
    (CARDDAV, "addressbook-description"),
    (DAV, "current-user-privilege-set"),
]  # not DAV:sync-token: Radicale computes it over every card, ~1 s for 5,000


@dataclass(frozen=True)
class BookInfo:
    """An address book as the server describes it.

    Attributes:
        path: Normalised collection path, ending in ``/``.
        display_name: ``DAV:displayname``, or None.
        description: ``CARDDAV:addressbook-description``, or None.
        writable: False only when the server reports privileges without a
            write privilege (RFC 3744 §5.4); True when it reports none.
    """

    path: str
    display_name: str | None
    description: str | None
    writable: bool


@dataclass(frozen=True)
class Discovery:
    """How the address books were found from ``CARDDAV_URL`` (RFC 6764 §6, RFC 5397, RFC 6352 §7.1.1).

    Attributes:
        method: ``principal`` (``CARDDAV_URL`` named the current-user-principal),
            ``well-known`` (it did not; ``/.well-known/carddav`` did), or
            ``given URL`` (no principal anywhere: ``CARDDAV_URL`` is the book or the home).
        url: The path of ``CARDDAV_URL``.
        well_known: Where ``/.well-known/carddav`` led (after same-origin redirects), when it was used.
        principal: The principal's path, when one was named.
        home: The ``addressbook-home-set`` path, when one was named.
    """

    method: Literal["given URL", "principal", "well-known"]
    url: str
    well_known: str | None
    principal: str | None
    home: str | None


@dataclass(frozen=True)
class CardData:
    """One vCard resource: its href (normalised path), ETag and text."""

    href: str
    etag: str | None
    text: str


@dataclass(frozen=True)
class SyncResult:
    """An RFC 6578 sync-collection answer: the new token, changed (href, ETag) pairs, deleted hrefs."""

    token: str | None
    changed: list[tuple[str, str | None]]
    deleted: list[str]


@dataclass(frozen=True)
class Answer:
    """A whole answer, read within the size limit: status, headers and body bytes."""

    status_code: int
    headers: httpx.Headers
    content: bytes
    url: str = ""
    """The URL that answered (after same-origin redirects)."""

    @property
    def media_type(self) -> str:
        """The Content-Type without parameters, lower case ("" when absent)."""
        return self.headers.get("Content-Type", "").split(";", 1)[0].strip().lower()

    @property
    def text(self) -> str:
        """The body decoded with the Content-Type's charset (default UTF-8; undecodable bytes replaced)."""
        charset = "utf-8"
        for param in self.headers.get("Content-Type", "").split(";")[1:]:
            name, _, value = param.partition("=")
            if name.strip().lower() == "charset" and value.strip():
                charset = value.strip().strip('"')
        try:
            return self.content.decode(charset, errors="replace")
        except LookupError:
            return self.content.decode("utf-8", errors="replace")


def _origin(url: httpx.URL) -> tuple[str, str, int]:
    """(scheme, host, port) of ``url``, the port made explicit (RFC 6454 §4)."""
    scheme = url.scheme.lower()
    return scheme, url.host.lower(), url.port or _DEFAULT_PORTS.get(scheme, 0)


def _shown(value: str) -> str:
    """A caller's value, quoted and cut to 80 characters, for an error text."""
    return repr(value if len(value) <= 80 else value[:77] + "...")


class _OriginAuth(httpx.Auth):
    """Attach the account's credentials (and header credentials) only to requests for one origin."""

    def __init__(self, origin: tuple[str, str, int], credentials: Mapping[str, str]) -> None:
        self._origin = origin
        self._credentials = dict(credentials)

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response]:
        if _origin(request.url) == self._origin:
            request.headers.update(self._credentials)
        yield request

    async def async_auth_flow(self, request: httpx.Request) -> AsyncGenerator[httpx.Request, httpx.Response]:
        if _origin(request.url) == self._origin:
            request.headers.update(self._credentials)
        yield request


def _raise_for_status(answer: Answer, what: str) -> None:
    """Translate an error status (RFC 9110 §15) into the error a tool shows.

    Raises:
        AuthenticationFailed: 401 (bad credentials).
        Forbidden: 403 (the credentials were accepted; the action is not allowed).
        NotFound: 404, 410.  Conflict: 409, or a UID conflict.
        PreconditionFailed: 412 without a CardDAV precondition element (never retried).
        CardRejected: 400, 415, 422, or 412 naming valid-address-data / supported-address-data.
        BackendError: anything else, a 3xx without a Location included.
    """
    status = answer.status_code
    text = answer.content[:_ERROR_BODY_BYTES].decode("utf-8", errors="replace")
    if status == 401:
        raise AuthenticationFailed(
            f"{what}: the server did not accept the credentials (401); check CARDDAV_USERNAME and CARDDAV_PASSWORD.",
            status,
        )
    if status == 403:
        raise Forbidden(
            f"{what}: not allowed (403): the server accepted the credentials, but this account may not do that there.",
            status,
        )
    if status in {404, 410}:
        raise NotFound(f"{what}: not found on the server ({status}).", status)
    if status == 409 or "uid-conflict" in text:
        raise Conflict(f"{what}: the server reports a conflict ({status}); a card with that UID may exist.", status)
    if status == 412 and "valid-address-data" not in text and "supported-address-data" not in text:
        raise PreconditionFailed(
            f"{what}: the card changed on the server since it was read (412), so nothing was written. "
            "Read it again and repeat the change if it still applies.",
            status,
        )
    if status in {400, 412, 415, 422}:
        raise CardRejected(f"{what}: the server refused the vCard as invalid ({status}).", status)
    raise BackendError(f"{what}: the CardDAV server answered {status}.", status)


def _privileges_allow_write(response: DavResponse) -> bool | None:
    """Whether ``DAV:current-user-privilege-set`` (RFC 3744 §5.4) grants a write privilege; None when absent."""
    privileges = response.props.get(f"{{{DAV}}}current-user-privilege-set")
    if privileges is None:
        return None
    names = {el.tag.split("}")[-1] for el in privileges.iter() if el.tag != privileges.tag}
    return bool(names & _WRITE_PRIVILEGES)


def _book_info(response: DavResponse) -> BookInfo:
    writable = _privileges_allow_write(response) is not False
    path = response.href if response.href.endswith("/") else response.href + "/"
    return BookInfo(
        path=path,
        display_name=response.text(DAV, "displayname") or None,
        description=response.text(CARDDAV, "addressbook-description") or None,
        writable=writable,
    )


def _folder(path: str) -> str:
    return path if path.endswith("/") else path + "/"


def _is_book(response: DavResponse) -> bool:
    return response.has_child(DAV, "resourcetype", (CARDDAV, "addressbook"))


class CardDavClient:
    """Async CardDAV client for one account, confined to the origin of ``CARDDAV_URL``.

    Every request goes through :meth:`_send`: its URL must have the scheme,
    host and port of ``CARDDAV_URL`` (else :class:`OffOrigin`, and nothing is
    sent); the credentials (basic auth and ``extra_headers``) are attached by
    an auth flow only to requests for that origin; a redirect is followed only
    within the origin, at most :data:`MAX_REDIRECTS` times; an answer is read
    as a stream and stopped at ``max_response_bytes``; the whole exchange,
    redirects and body included, ends after ``timeout`` seconds.

    Args:
        settings: Where to connect (``settings.require()`` must pass).
        transport: An httpx transport (tests of fault handling only).
    """

    def __init__(self, settings: CardDavSettings, transport: httpx.AsyncBaseTransport | None = None) -> None:
        self.base_url = settings.require()
        base = httpx.URL(self.base_url)
        self.origin = _origin(base)
        self._origin_url = f"{base.scheme}://{base.netloc.decode('ascii')}"
        credentials: dict[str, str] = dict(settings.extra_headers)
        if settings.username and settings.password:
            token = base64.b64encode(f"{settings.username}:{settings.password}".encode()).decode("ascii")
            credentials["Authorization"] = f"Basic {token}"
        self._timeout = settings.timeout
        self._max_bytes = settings.max_response_bytes
        self._discovery: Discovery | None = None
        self._text_match: bool | None = None
        self._http = httpx.AsyncClient(
            auth=_OriginAuth(self.origin, credentials),
            timeout=settings.timeout,
            transport=transport,
            follow_redirects=False,
        )

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self._http.aclose()

    def url(self, path: str) -> httpx.URL:
        """The absolute URL of a server path (``/user/book/``) or of a URL on the configured origin.

        Raises:
            OffOrigin: ``path`` leads to another scheme, host or port (``//host/x``,
                ``http://other/``, a backslash), or is not a URL at all.
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
        if url is None or url.userinfo or _origin(url) != self.origin:
            raise OffOrigin(
                f"{_shown(path)} is not a path on the configured CardDAV server ({self.origin_text}); "
                "carddav-mcp sends requests only to the server of CARDDAV_URL."
            )
        return url

    @property
    def origin_text(self) -> str:
        """``scheme://host:port`` of ``CARDDAV_URL`` (never with user information)."""
        scheme, host, port = self.origin
        return f"{scheme}://{'[' + host + ']' if ':' in host else host}:{port}"

    def card_in(self, book: str, raw: str) -> str | None:
        """The canonical path of a card href a server listed for ``book``, or None (logged) when it is not one.

        A server's answer names cards by ``DAV:href`` (RFC 4918 §14.7), which
        may be a path or an absolute URL. It is taken only when it resolves,
        by the rules ids given by a caller follow
        (:func:`carddav_mcp.backend.resolve_path`), to ``book`` followed by
        exactly one segment, on the configured origin. Anything else (another
        book, a dot segment, another host, a nested collection) is left out of
        the answer and logged, so nothing is ever read or written there.

        The common case, ``book`` followed by one segment of unreserved
        characters (RFC 3986 §2.3), is taken as it stands: the rules give it
        back unchanged, and a listing of 20,000 cards would spend seconds
        applying them.

        Args:
            book: The address book that was asked, canonical, ending in ``/``.
            raw: The href as the server wrote it.
        """
        segment = raw[len(book) :] if book.startswith("/") and raw.startswith(book) else ""
        if _PLAIN_SEGMENT.fullmatch(segment) and segment not in {".", ".."} and len(raw) <= _MAX_HREF:
            return raw
        return self._resolved_card(book, raw)

    def _resolved_card(self, book: str, raw: str) -> str | None:
        """:meth:`card_in` by the rules of ids, for any href."""
        from carddav_mcp.backend import resolve_path  # here, because backend imports this module
        from carddav_mcp.errors import InvalidInput

        path: str | None = None
        try:
            self.url(raw)  # on the configured origin (a path, or an absolute URL there)
            parts = urlsplit(raw)
            if not parts.query and not parts.fragment:
                path = resolve_path("href", parts.path, "a card of the address book that was asked")
        except (OffOrigin, InvalidInput, ValueError):
            path = None
        if path is None or not path.startswith(book) or "/" in path[len(book) :] or path == book:
            log.warning("left out an href %s in the answer for %s: not a card of that address book", _shown(raw), book)
            return None
        return path

    # ---------------------------------------------------------------- transport and error translation

    async def _send(
        self,
        method: str,
        path: str,
        *,
        body: str | bytes | None = None,
        headers: Mapping[str, str] | None = None,
        what: str,
    ) -> Answer:
        """Send one request; translate every failure into a :mod:`carddav_mcp.errors` exception.

        Raises:
            OffOrigin: the path (or a redirect) leads off the configured origin; nothing was sent there.
            Unreachable: no connection, or no whole answer within ``timeout`` seconds.
            ResponseTooLarge: the answer is larger than ``max_response_bytes``.
            BackendError: an error status (see :func:`_raise_for_status`), a redirect loop,
                an answer that could not be decoded.
        """
        sent = dict(headers or {})
        if body is not None and "Content-Type" not in sent:
            sent["Content-Type"] = "application/xml; charset=utf-8"
        url = self.url(path)
        try:
            with anyio.fail_after(self._timeout):
                answer = await self._exchange(method, url, body, sent, what)
        except TimeoutError as exc:
            raise Unreachable(
                f"{what}: the CardDAV server did not answer in full within {self._timeout:g} s (CARDDAV_TIMEOUT)."
            ) from exc
        except httpx.TimeoutException as exc:
            raise Unreachable(f"{what}: the CardDAV server did not answer in time.") from exc
        except httpx.DecodingError as exc:
            raise BackendError(f"{what}: the server's answer could not be decoded ({type(exc).__name__}).") from exc
        except httpx.HTTPError as exc:
            raise Unreachable(f"{what}: could not reach the CardDAV server ({type(exc).__name__}).") from exc
        if answer.status_code >= 300:
            _raise_for_status(answer, what)
        return answer

    async def _exchange(
        self, method: str, url: httpx.URL, body: str | bytes | None, headers: dict[str, str], what: str
    ) -> Answer:
        """The request, its same-origin redirects (method and body kept), and the answer read within the limit."""
        for _ in range(MAX_REDIRECTS + 1):
            request = self._http.build_request(method, url, content=body, headers=headers)
            response = await self._http.send(request, stream=True)
            try:
                location = response.headers.get("Location")
                if response.status_code in _REDIRECTS and location:
                    url = self._redirect_target(url, location, what)
                    continue
                limit = self._max_bytes if response.status_code < 300 else _ERROR_BODY_BYTES
                content = await self._read(response, limit, what)
                return Answer(response.status_code, response.headers, content, str(url))
            finally:
                await response.aclose()
        raise BackendError(
            f"{what}: the CardDAV server redirected more than {MAX_REDIRECTS} times (a redirect loop); "
            "check CARDDAV_URL."
        )

    def _redirect_target(self, current: httpx.URL, location: str, what: str) -> httpx.URL:
        try:
            target = current.join(location)
        except (httpx.InvalidURL, ValueError) as exc:
            raise BackendError(f"{what}: the CardDAV server redirected to an unreadable address.") from exc
        if target.userinfo:
            raise BackendError(
                f"{what}: the CardDAV server redirected to an address carrying a user name or password; "
                "carddav-mcp does not follow such a redirect (it sends only the configured credentials), so the "
                "request was not repeated there."
            )
        if _origin(target) != self.origin:
            scheme, host, port = _origin(target)
            raise BackendError(
                f"{what}: the CardDAV server redirected to another server ({scheme}://{host}:{port}). "
                f"carddav-mcp sends requests and credentials only to {self.origin_text}, so it did not follow; "
                "if that address is the right one, set CARDDAV_URL to it."
            )
        return target

    async def _read(self, response: httpx.Response, limit: int, what: str) -> bytes:
        """The body, read as a stream; past ``limit`` bytes an error answer is cut, a success refused."""
        declared = response.headers.get("Content-Length", "")
        too_large = ResponseTooLarge(
            f"{what}: the CardDAV server's answer is larger than {limit:,} bytes "
            f"(CARDDAV_MAX_RESPONSE_BYTES); it was not read."
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

    async def _multistatus(self, method: str, path: str, body: str, depth: str, what: str) -> davxml.MultiStatus:
        response = await self._send(method, path, body=body, headers={"Depth": depth}, what=what)
        return self._parsed(response, what)

    def _parsed(self, response: Answer, what: str) -> davxml.MultiStatus:
        """The multistatus of a 2xx answer.

        Raises:
            BackendError: not XML, or not a readable multistatus (a DTD is refused by the parser).
        """
        media = response.media_type
        if media and not (media.endswith("/xml") or media.endswith("+xml")):
            raise BackendError(
                f"{what}: the server answered with {_shown(media[:60])} instead of an XML multistatus.",
                response.status_code,
            )
        try:
            return davxml.parse_multistatus(response.content)
        except ValueError as exc:
            raise BackendError(f"{what}: the server's answer could not be read: {exc}.", response.status_code) from exc

    # ---------------------------------------------------------------- discovery

    async def options(self, path: str = "") -> set[str]:
        """The DAV compliance classes of ``path`` (OPTIONS, RFC 4918 §10.1), e.g. ``{"1", "3", "addressbook"}``."""
        response = await self._send("OPTIONS", path or self.base_url, what="OPTIONS")
        header = response.headers.get("DAV", "")
        return {part.strip() for part in header.split(",") if part.strip()}

    async def _probe(self, path: str) -> tuple[int, str, DavResponse | None]:
        """PROPFIND Depth 0 at ``path`` for the discovery properties: (status, path that answered, response).

        An error status is returned, not raised (discovery goes on elsewhere),
        except 401.

        Raises:
            AuthenticationFailed: 401.
            OffOrigin / BackendError: a redirect off the origin or a loop; Unreachable, ResponseTooLarge.
        """
        what = f"discovery (PROPFIND {path})"
        url = self.url(path)
        try:
            with anyio.fail_after(self._timeout):
                answer = await self._exchange(
                    "PROPFIND",
                    url,
                    davxml.propfind(_DISCOVERY_PROPS),
                    {"Depth": "0", "Content-Type": "application/xml; charset=utf-8"},
                    what,
                )
        except TimeoutError as exc:
            raise Unreachable(
                f"{what}: the CardDAV server did not answer in full within {self._timeout:g} s (CARDDAV_TIMEOUT)."
            ) from exc
        except httpx.HTTPError as exc:
            raise Unreachable(f"{what}: could not reach the CardDAV server ({type(exc).__name__}).") from exc
        answered = norm_href(answer.url) or "/"
        if answer.status_code == 401:
            _raise_for_status(answer, what)
        if answer.status_code != 207:
            return answer.status_code, answered, None
        ms = self._parsed(answer, what)
        return answer.status_code, answered, (ms.responses[0] if ms.responses else None)

    async def discover(self, *, refresh: bool = False) -> Discovery:
        """Find the principal and address-book home from ``CARDDAV_URL`` (worked out once, again with ``refresh``).

        1. PROPFIND ``CARDDAV_URL``: a ``current-user-principal`` (RFC 5397) there leads on (``principal``).
        2. Otherwise (an error status such as DAViCal's 405 on ``/``, or no
           principal named), PROPFIND ``/.well-known/carddav`` (RFC 6764 §5),
           following its redirects on the same origin only (``well-known``).
        3. Otherwise ``CARDDAV_URL`` itself is used (``given URL``).

        The principal's ``addressbook-home-set`` (RFC 6352 §7.1.1) is the home.

        Raises:
            AuthenticationFailed: 401 anywhere.
            BackendError: nothing answered with WebDAV properties (the message says what answered what),
                or a redirect left the origin.
        """
        if self._discovery is not None and not refresh:
            return self._discovery
        given = norm_href(self.base_url) or "/"
        status, answered, response = await self._probe(given)
        method: Literal["given URL", "principal", "well-known"] = "principal"
        well_known: str | None = None
        principal = self._principals(response)
        if not principal:
            wk_status, wk_answered, wk_response = await self._probe(_WELL_KNOWN)
            wk_principal = self._principals(wk_response)
            if wk_principal:
                method, well_known, principal = "well-known", wk_answered, wk_principal
                answered, response = wk_answered, wk_response
            elif response is not None:
                self._discovery = Discovery("given URL", given, None, None, None)
                return self._discovery
            else:
                moved = f" at {wk_answered}" if wk_answered != _WELL_KNOWN else ""
                raise BackendError(
                    f"no address books could be found from CARDDAV_URL (PROPFIND {given} answered {status}; "
                    f"PROPFIND {_WELL_KNOWN} answered {wk_status}{moved}; no current-user-principal was named, "
                    "RFC 6764 §6). Set CARDDAV_URL to your principal or address-book home URL.",
                    status,
                )
        found = _folder(principal[0])
        raw_homes = response.raw_hrefs(CARDDAV, "addressbook-home-set") if response and found == answered else []
        homes = [h for h in (self._discovered("addressbook-home-set", raw) for raw in raw_homes[:1]) if h]
        home = _folder(homes[0]) if homes else await self.home(found)
        self._discovery = Discovery(method, given, well_known, found, home)
        return self._discovery

    async def principal(self) -> str | None:
        """The current user's principal path (RFC 5397, found as :meth:`discover` does), or None."""
        return (await self.discover()).principal

    async def home(self, principal: str) -> str | None:
        """The principal's ``addressbook-home-set`` (RFC 6352 §7.1.1), or None."""
        ms = await self._multistatus(
            "PROPFIND", principal, davxml.propfind([(CARDDAV, "addressbook-home-set")]), "0", "find the home"
        )
        for response in ms.responses:
            hrefs = response.raw_hrefs(CARDDAV, "addressbook-home-set")
            if hrefs:
                found = self._discovered("addressbook-home-set", hrefs[0])
                return _folder(found) if found else None
        return None

    def _principals(self, response: DavResponse | None) -> list[str]:
        """The ``current-user-principal`` of a discovery answer, as a path on this origin (or none)."""
        raw = response.raw_hrefs(DAV, "current-user-principal") if response else []
        return [p for p in (self._discovered("current-user-principal", href) for href in raw[:1]) if p]

    def _discovered(self, name: str, raw: str) -> str | None:
        """A discovered principal or home href as a path, or None (logged) when it points off the configured origin.

        An absolute URL or a scheme-relative ``//host/`` on another server must
        not be reduced to its path: that would widen the scope to whatever path
        it names on this server (``/``). The caller then falls back to the path
        of ``CARDDAV_URL``.
        """
        try:
            self.url(raw)
        except OffOrigin:
            log.warning("ignored the %s %s: it is not on %s", name, _shown(raw), self.origin_text)
            return None
        return norm_href(raw)

    async def address_books(self) -> list[BookInfo]:
        """Every address book reachable from the configured URL, sorted by path.

        The URL may be an address book, a home, a principal or the server root
        (see :meth:`discover`).
        """
        found = await self.discover()
        start = norm_href(self.base_url) or "/"
        books: dict[str, BookInfo] = {}
        if found.method != "well-known":  # CARDDAV_URL answers PROPFIND: it may be a book or a home
            ms = await self._multistatus("PROPFIND", start, davxml.propfind(_BOOK_PROPS), "1", "list address books")
            books = {r.href: _book_info(r) for r in ms.responses if _is_book(r)}
        if not books and found.home and found.home != start:
            ms = await self._multistatus(
                "PROPFIND", found.home, davxml.propfind(_BOOK_PROPS), "1", "list address books"
            )
            books = {r.href: _book_info(r) for r in ms.responses if _is_book(r)}
        return sorted(books.values(), key=lambda b: b.path)

    async def book(self, path: str) -> BookInfo | None:
        """The address book at ``path``, or None when that path is something else.

        Raises:
            NotFound: nothing at ``path``.
        """
        ms = await self._multistatus("PROPFIND", path, davxml.propfind(_BOOK_PROPS), "0", f"read {path}")
        for response in ms.responses:
            if _is_book(response):
                return _book_info(response)
        return None

    async def can_write(self, url: str) -> bool | None:
        """Whether the account may write at ``url``, as the server publishes it (RFC 3744 §5.4).

        Reads ``DAV:current-user-privilege-set`` with a depth-0 PROPFIND.

        Returns:
            True when it grants ``write``, ``write-content``, ``bind`` or ``all``;
            False when it grants none of them; None when the server does not publish
            the property (then only the write itself can tell).

        Raises:
            NotFound: nothing at ``url``.  Forbidden: not even reading it is allowed.
        """
        body = davxml.propfind([(DAV, "current-user-privilege-set")])
        ms = await self._multistatus("PROPFIND", url, body, "0", f"read the privileges on {url}")
        for response in ms.responses:
            allowed = _privileges_allow_write(response)
            if allowed is not None:
                return allowed
        return None

    async def supports_sync(self, path: str) -> bool:
        """Whether ``path`` lists the sync-collection REPORT among its supported reports (RFC 6578 §3.1)."""
        body = davxml.propfind([(DAV, "supported-report-set")])
        ms = await self._multistatus("PROPFIND", path, body, "0", f"read {path}")
        return any(r.has_child(DAV, "supported-report-set", (DAV, "sync-collection")) for r in ms.responses)

    # ---------------------------------------------------------------- reading cards

    async def list_etags(self, book: str) -> list[tuple[str, str | None]]:
        """(href, ETag) of every card in ``book``, sorted by href (PROPFIND depth 1)."""
        ms = await self._multistatus(
            "PROPFIND", book, davxml.propfind([(DAV, "getetag"), (DAV, "resourcetype")]), "1", f"list {book}"
        )
        own = norm_href(book)
        rows = [
            (href, r.text(DAV, "getetag"))
            for r in ms.responses
            if r.href.rstrip("/") != own.rstrip("/") and not r.has_child(DAV, "resourcetype", (DAV, "collection"))
            if (href := self.card_in(own, r.raw or r.href)) is not None
        ]
        return sorted(rows)

    def _cards(self, ms: davxml.MultiStatus, book: str, asked: set[str] | None = None) -> list[CardData]:
        """The cards of a REPORT answer that lie in ``book`` (and, for a multiget, were asked for)."""
        cards: list[CardData] = []
        for r in ms.responses:
            if r.status != 200 or f"{{{CARDDAV}}}address-data" not in r.props:
                continue
            href = self.card_in(norm_href(book), r.raw or r.href)
            if href is None:
                continue
            if asked is not None and href not in asked:
                log.warning("left out %s in the multiget answer for %s: it was not asked for", _shown(href), book)
                continue
            cards.append(CardData(href, r.text(DAV, "getetag"), r.props[f"{{{CARDDAV}}}address-data"].text or ""))
        return cards

    async def multiget(self, book: str, hrefs: Iterable[str], properties: list[str] | None = None) -> list[CardData]:
        """The cards at ``hrefs`` (addressbook-multiget, in batches); missing ones are left out."""
        wanted = list(hrefs)
        cards: list[CardData] = []
        for start in range(0, len(wanted), MULTIGET_BATCH):
            batch = wanted[start : start + MULTIGET_BATCH]
            body = davxml.multiget(batch, properties)
            answer = await self._multistatus("REPORT", book, body, "1", f"read cards in {book}")
            cards.extend(self._cards(answer, book, {norm_href(h) for h in batch}))
        return cards

    async def query(self, book: str, prop_filters: list[tuple[str, str]], *, anyof: bool = False) -> list[CardData]:
        """Cards of ``book`` whose properties equal the given texts (addressbook-query)."""
        body = davxml.addressbook_query(prop_filters, anyof=anyof)
        return self._cards(await self._multistatus("REPORT", book, body, "1", f"search {book}"), book)

    async def text_query(self, book: str, names: list[str], text: str) -> list[CardData]:
        """Cards of ``book`` where any of the vCard properties ``names`` contains ``text``, sorted by href.

        One addressbook-query REPORT (RFC 6352 §8.6) with a ``text-match``
        (§10.5.4, match-type ``contains``, collation ``i;unicode-casemap``) per
        property. The server decides what matches: callers check each card again.

        Raises:
            ResponseTooLarge: the answer is larger than ``max_response_bytes``.
            BackendError: the server refused the query (e.g. 403 supported-filter, 501).
        """
        body = davxml.addressbook_text_query(names, text)
        cards = self._cards(await self._multistatus("REPORT", book, body, "1", f"search {book}"), book)
        return sorted(cards, key=lambda c: c.href)

    def honours_text_match(self) -> bool:
        """Whether to ask this server for a ``text-match`` addressbook-query (learnt from its answers, then kept).

        No separate probe is sent: on a server that filters by parsing every
        card (Radicale) a probe costs as much as the search itself. The first
        search asks; a server that refuses the query, or answers with a card
        that does not hold the text asked for (it ignored the filter), is
        noted by :meth:`text_match_ignored` and later searches read whole
        books. Asking a server that ignores the filter costs one answer
        holding the whole book, which is still right: every card is matched
        again locally.
        """
        return self._text_match is not False

    def text_match_ignored(self) -> None:
        """Note that the server refuses or ignores ``text-match`` (kept for the life of the client)."""
        if self._text_match is not False:
            log.info("the server does not filter addressbook-query by text-match; searches read whole books")
        self._text_match = False

    async def get(self, href: str) -> CardData:
        """One card, fresh from the server (GET), with its ETag.

        Raises:
            NotFound: no card at ``href``.
        """
        response = await self._send("GET", href, what=f"read {href}")
        if response.media_type and response.media_type not in _VCARD_TYPES:
            raise BackendError(
                f"read {href}: the server answered with {_shown(response.media_type[:60])}, not a vCard (text/vcard).",
                response.status_code,
            )
        return CardData(norm_href(href), response.headers.get("ETag"), response.text)

    async def sync(self, book: str, token: str | None) -> SyncResult:
        """Changes since ``token`` (RFC 6578); None for a first, full sync."""
        ms = await self._multistatus("REPORT", book, davxml.sync_collection(token), "1", f"sync {book}")
        own = norm_href(book)
        changed = [
            (href, r.text(DAV, "getetag"))
            for r in ms.responses
            if r.status != 404 and not r.href.endswith("/")
            if (href := self.card_in(own, r.raw or r.href)) is not None
        ]
        deleted = [
            href for r in ms.responses if r.status == 404 if (href := self.card_in(own, r.raw or r.href)) is not None
        ]
        return SyncResult(ms.sync_token, sorted(changed), sorted(deleted))

    # ---------------------------------------------------------------- writing

    async def put(self, href: str, text: str, *, etag: str | None) -> str | None:
        """Write a card: ``If-Match: etag`` to replace, ``If-None-Match: *`` when ``etag`` is None.

        Returns:
            The new ETag, when the server sends one.

        Raises:
            PreconditionFailed: the card changed (or, on create, exists).
            CardRejected: the server refused the vCard.
        """
        headers = {"Content-Type": "text/vcard; charset=utf-8"}
        headers.update({"If-Match": etag} if etag else {"If-None-Match": "*"})
        response = await self._send("PUT", href, body=text.encode(), headers=headers, what=f"write {href}")
        return response.headers.get("ETag")

    async def delete(self, href: str, etag: str | None) -> bool:
        """DELETE a card, with ``If-Match`` when its ETag is known.

        Returns:
            True when this request deleted it (200, 204); False when the server
            answered 404 or 410: the card is already gone (someone else deleted
            it meanwhile; RFC 9110 §9.3.5), which is not an error.

        Raises:
            PreconditionFailed: the card changed since ``etag`` was read (412).
        """
        try:
            await self._send("DELETE", href, headers={"If-Match": etag} if etag else {}, what=f"delete {href}")
        except NotFound:
            return False
        return True

    async def move(self, href: str, destination: str, etag: str | None) -> None:
        """MOVE a card to ``destination`` (RFC 4918 §9.9) with ``Overwrite: F`` and ``If-Match``."""
        headers = {"Destination": str(self.url(destination)), "Overwrite": "F"}
        if etag:
            headers["If-Match"] = etag
        await self._send("MOVE", href, headers=headers, what=f"move {href}")

    async def make_address_book(self, path: str, display_name: str) -> None:
        """Create an address book at ``path`` (extended MKCOL, RFC 5689)."""
        await self._send("MKCOL", path, body=davxml.mkcol_addressbook(display_name), what=f"create {path}")
