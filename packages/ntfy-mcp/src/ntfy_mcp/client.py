"""The ntfy HTTP client: the one place where URLs are made and where ntfy's replies become this package's errors.

Built on httpx2 (as the MCP SDK); with APPROVAL_PROFILE=every-write each request passes ``before_send`` first.
Where requests go (:meth:`NtfyClient.url`): every path argument (a topic, a sequence id) is checked against ntfy's
own rule for it, after any decoding, and joined under ``NTFY_URL``; the resulting URL must have ``NTFY_URL``'s
scheme, host and port, or the call is refused naming the field. Credentials (:class:`_OriginAuth`) are attached only
to requests for that origin, and redirects are never followed: a 3xx is reported, so neither a request nor a
credential can be led elsewhere.

What comes back (:meth:`NtfyClient._send`): the answer is read in full within ``NTFY_TIMEOUT`` seconds (a slow drip
ends there too) and up to ``NTFY_MAX_RESPONSE_BYTES``; then

* a connection failure, a timeout, a 3xx, a 5xx, an answer that is too large or not ntfy's JSON →
  :class:`NtfyUnavailable`;
* ntfy's error document ``{"code", "http", "error"}`` (ntfy docs, "Error codes") → :class:`NtfyRejected`, whose text
  says what the status means (401: credentials not accepted; 403: not allowed; 429: a rate limit).

Routes (checked against a running ntfy 2.13; see docs/ntfy-mcp.md): ``POST /`` JSON publish,
``GET /<topics>/json?poll=1``, ``GET /<topic>/auth``, ``/v1/health``, ``/v1/stats``, ``/v1/account``, ``/v1/users``
and ``/v1/users/access`` (admin), ``GET /v1/version`` (ntfy >= 2.17, admin), and from ntfy 2.16
``PUT /<topic>/<sequence_id>/clear`` and ``DELETE /<topic>/<sequence_id>`` (ntfy docs, "Publishing" → "Updating +
deleting notifications", https://docs.ntfy.sh/publish/#updating-deleting-notifications).
"""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Generator, Mapping, Sequence
from typing import Any, cast
from urllib.parse import unquote, urlsplit

import anyio
import httpx2
from pydantic_core import from_json

from approval_core.every_write.scope import before_send
from approval_core.serving.stored_text import name_in_text, quoted_name
from ntfy_mcp.errors import InputError, NtfyRejected, NtfyUnavailable
from ntfy_mcp.settings import NtfySettings

__all__ = ["NtfyClient"]

_USER_AGENT = "ntfy-mcp"
_SEGMENT = re.compile(r"^[-_A-Za-z0-9]{1,64}(,[-_A-Za-z0-9]{1,64}){0,19}$")
"""A topic (or a comma list of them, for polling) or a sequence id: ntfy's own ``[-_A-Za-z0-9]{1,64}``."""
_MEANING = {
    401: "ntfy did not accept these credentials (check NTFY_TOKEN or NTFY_USERNAME/NTFY_PASSWORD); "
    "ntfy also answers 401 when an account without the admin role uses an admin route",
    403: "this account is not allowed to do that (ntfy's access rules)",
    404: "ntfy has no such route or object",
    413: "ntfy found the request too large",
    429: "ntfy's rate limit for this client was reached; nothing was retried, try again later",
}


def _origin(url: httpx2.URL) -> tuple[str, str, int | None]:
    default = {"http": 80, "https": 443}.get(url.scheme)
    return url.scheme, url.host, url.port or default


class _OriginAuth(httpx2.Auth):
    """Adds the ``Authorization`` header only to requests for the configured origin."""

    def __init__(self, origin: tuple[str, str, int | None], header: str | None) -> None:
        self._origin = origin
        self._header = header

    def auth_flow(self, request: httpx2.Request) -> Generator[httpx2.Request, httpx2.Response, None]:
        if self._header is not None and _origin(request.url) == self._origin:
            request.headers["Authorization"] = self._header
        yield request


class NtfyClient:
    """An async client for one ntfy server, with the credentials from :class:`NtfySettings`.

    Use as an async context manager, or call :meth:`aclose`.

    Args:
        settings: URL, credentials, timeout and answer size limit.
        transport: An httpx2 transport to use instead of the network (tests).
    """

    def __init__(self, settings: NtfySettings, *, transport: httpx2.AsyncBaseTransport | None = None) -> None:
        self.settings = settings
        self._base = httpx2.URL(settings.url.rstrip("/") + "/")
        self.origin = _origin(self._base)
        header: str | None = None
        if settings.token:
            header = f"Bearer {settings.token}"
        elif settings.username and settings.password:
            pair = f"{settings.username}:{settings.password}".encode()
            header = "Basic " + base64.b64encode(pair).decode("ascii")
        self._auth = _OriginAuth(self.origin, header)
        self._transport = transport
        self._client: httpx2.AsyncClient | None = None
        self._urls: dict[tuple[tuple[tuple[str, str], ...], str], httpx2.URL] = {}

    @property
    def _http(self) -> httpx2.AsyncClient:
        """The connection pool, made at the first request.

        Making it loads the HTTP stack (httpcore2), which a server that only lists its tools does not need.
        """
        if self._client is None:
            self._client = httpx2.AsyncClient(
                headers={"User-Agent": _USER_AGENT},
                auth=self._auth,
                timeout=self.settings.timeout,
                transport=self._transport,
                follow_redirects=False,
            )
        return self._client

    async def __aenter__(self) -> NtfyClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the connection pool, if a request made one."""
        if self._client is not None:
            await self._client.aclose()
            self._client = None

    # ------------------------------------------------------------------ the one place URLs are made

    def url(self, *segments: tuple[str, str], route: str = "") -> httpx2.URL:
        """The URL of a route under ``NTFY_URL``, from ``(field, value)`` path segments and a fixed ``route``.

        Each value must be ntfy's ``[-_A-Za-z0-9]{1,64}`` (a topic list may
        join up to 20 with commas) once every percent-encoding is undone, and
        the joined URL must have ``NTFY_URL``'s scheme, host and port. A URL
        that passed is kept (up to 256) and given again for the same segments.

        Raises:
            InputError: a value breaks the rule, or would lead elsewhere; names the field.
        """
        if (known := self._urls.get((segments, route))) is not None:
            return known
        parts: list[str] = []
        for field, value in segments:
            decoded = value
            for _ in range(4):  # undo nested encodings (%252F...) before judging
                decoded = unquote(decoded)
            if decoded != value or not _SEGMENT.match(value):
                raise InputError(
                    f"{field}: {quoted_name(value[:80])} is not a valid ntfy name (letters, digits, '-' and "
                    "'_', up to 64); nothing was sent"
                )
            parts.append(value)
        path = "/".join([*parts, *([route] if route else [])])
        url = self._base.join(path)
        if _origin(url) != self.origin or not url.path.startswith(self._base.path):
            field = segments[0][0] if segments else "route"
            raise InputError(f"{field}: would leave the configured ntfy server; nothing was sent")
        if len(self._urls) < 256:  # the same few topics and routes, checked and joined once
            self._urls[(segments, route)] = url
        return url

    # ------------------------------------------------------------------ the one translation point

    async def _send(
        self,
        method: str,
        url: httpx2.URL,
        *,
        body: Any = None,
        params: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
        lines: int | None = None,
    ) -> bytes:
        """Send one request to ntfy and read its answer (bounded in time and size); returns the body.

        ``lines`` stops reading a successful answer once it holds that many
        complete lines (a poll needs only the first page of its NDJSON).
        """
        sent = dict(headers or {})
        if body is not None:
            sent["Content-Type"] = "application/json"
        what = f"{method} {url.path}"
        if _origin(url) != self.origin:  # url() makes every URL; this guards the guard
            raise InputError(f"{what} would leave the configured ntfy server; nothing was sent")
        request = self._http.build_request(
            method, url, content=None if body is None else json.dumps(body), headers=sent or None,
            params=dict(params) if params else None,  # none: httpx2 skips re-parsing the URL for an empty query
        )  # fmt: skip
        await before_send(method, str(request.url), request.content, request.headers)
        try:
            with anyio.fail_after(self.settings.timeout):
                status, content = await self._exchange(request, lines)
        except TimeoutError as exc:
            raise NtfyUnavailable(
                f"ntfy at {self.settings.url} did not answer {what} in full within {self.settings.timeout:g} s"
            ) from exc
        except httpx2.TimeoutException as exc:
            raise NtfyUnavailable(
                f"ntfy at {self.settings.url} did not answer {what} within {self.settings.timeout:g} s"
            ) from exc
        except httpx2.HTTPError as exc:
            raise NtfyUnavailable(f"cannot reach ntfy at {self.settings.url} for {what}: {type(exc).__name__}") from exc
        return self._judge(what, status, content)

    async def _exchange(self, request: httpx2.Request, lines: int | None) -> tuple[int, bytes]:
        limit = self.settings.max_response_bytes
        response = await self._http.send(request, stream=True)
        try:
            declared = response.headers.get("Content-Length", "")
            if declared.isdigit() and int(declared) > limit:
                raise NtfyUnavailable(_too_large(request, limit))
            content = bytearray()
            if response.is_stream_consumed:  # an in-memory transport hands over a response already read
                content.extend(response.content)
            else:
                wanted = lines if lines is not None and response.status_code == 200 else None
                seen = 0  # complete lines so far, counted in each chunk as it comes (not the whole buffer again)
                async for chunk in response.aiter_bytes():
                    content.extend(chunk)
                    seen += chunk.count(b"\n")
                    if wanted is not None and seen >= wanted:
                        break  # the rest is not needed; closing the response drops its connection
                    if len(content) > limit:
                        raise NtfyUnavailable(_too_large(request, limit))
            if len(content) > limit:
                raise NtfyUnavailable(_too_large(request, limit))
            if response.is_redirect:
                location = urlsplit(response.headers.get("Location", ""))
                where = "another server" if location.netloc else "another path"
                raise NtfyUnavailable(
                    f"ntfy answered {request.method} {request.url.path} with a redirect (HTTP {response.status_code}) "
                    f"to {where}; redirects are not followed, so nothing was sent there. Check NTFY_URL"
                )
            return response.status_code, bytes(content)
        finally:
            await response.aclose()

    def _judge(self, what: str, status: int, content: bytes) -> bytes:
        if status < 300:
            return content
        code, reason = _error_document(status, content)
        if status >= 500:
            raise NtfyUnavailable(f"ntfy failed with HTTP {status} (code {code}) on {what}: {reason}")
        meaning = _MEANING.get(status, "ntfy refused the request")
        raise NtfyRejected(status, code, reason, meaning)

    async def _json(self, method: str, url: httpx2.URL, **kwargs: Any) -> Any:
        content = await self._send(method, url, **kwargs)
        try:
            return json.loads(content)
        except (ValueError, RecursionError) as exc:  # json raises RecursionError for too deep nesting
            raise NtfyUnavailable(f"ntfy's answer to {method} {url.path} was not JSON") from exc

    async def _object(self, method: str, url: httpx2.URL, **kwargs: Any) -> dict[str, Any]:
        data = await self._json(method, url, **kwargs)
        if not isinstance(data, dict):
            raise NtfyUnavailable(f"ntfy's answer to {method} {url.path} was not a JSON object")
        return cast(dict[str, Any], data)

    # ------------------------------------------------------------------ messages

    async def publish(self, topic: str, content: Mapping[str, Any], sequence_id: str | None = None) -> dict[str, Any]:
        """Publish one notification with ntfy's JSON body; returns the stored message.

        ``sequence_id`` makes it a revision of that sequence (ntfy >= 2.16;
        an older server ignores the field and publishes a new notification,
        so callers check the version first).
        """
        body = {"topic": topic, **content}
        headers: dict[str, str] = {}
        if sequence_id is not None:
            # ntfy 2.16 reads the sequence id from the JSON field and from the X-Sequence-ID header
            # (its own Go client sends the header); both carry the same value.
            body["sequence_id"] = sequence_id
            headers["X-Sequence-ID"] = sequence_id
        return await self._object("POST", self.url(), body=body, headers=headers)

    async def poll(
        self, topics: Sequence[str], params: Mapping[str, str], limit: int | None = None
    ) -> list[dict[str, Any]]:
        """The cached events of ``topics`` (``GET /<t1,t2>/json?poll=1``), oldest first.

        ``limit`` stops reading after that many events (ntfy itself has no limit parameter, so the rest of the answer is
        neither read nor parsed). Lines end at a line feed only (``str.splitlines()`` would also cut at a NEL, U+0085,
        which ntfy writes unescaped); ``pydantic_core.from_json`` reads each as json.loads would in a third of its time,
        and refuses an unpaired surrogate escape (which ntfy, writing Go strings, never sends).
        """
        url = self.url(("topics", ",".join(topics)), route="json")
        content = await self._send("GET", url, params={"poll": "1", **params}, lines=limit)
        return _events(content.decode("utf-8", errors="replace"), limit)

    async def clear(self, topic: str, sequence_id: str) -> dict[str, Any]:
        """Mark a notification read and dismiss it (``PUT /<topic>/<sequence_id>/clear``, ntfy >= 2.16)."""
        return await self._object("PUT", self.url(("topic", topic), ("sequence_id", sequence_id), route="clear"))

    async def delete(self, topic: str, sequence_id: str) -> dict[str, Any]:
        """Delete a notification, cancelling it if scheduled (``DELETE /<topic>/<sequence_id>``, ntfy >= 2.16)."""
        return await self._object("DELETE", self.url(("topic", topic), ("sequence_id", sequence_id)))

    async def can_read(self, topic: str) -> bool:
        """Whether these credentials may read ``topic`` (``GET /<topic>/auth``); False on 403."""
        try:
            await self._send("GET", self.url(("topic", topic), route="auth"))
        except NtfyRejected as exc:
            if exc.status == 403:
                return False
            raise
        return True

    # ------------------------------------------------------------------ server

    async def healthy(self) -> bool:
        """``GET /v1/health`` → its ``healthy`` flag."""
        return bool((await self._object("GET", self.url(route="v1/health"))).get("healthy"))

    async def stats(self) -> dict[str, Any]:
        """``GET /v1/stats``: ``messages`` and ``messages_rate``."""
        return await self._object("GET", self.url(route="v1/stats"))

    async def version(self) -> str | None:
        """The server's version from ``GET /v1/version`` (admin, ntfy >= 2.17), or None when not told."""
        try:
            data = await self._json("GET", self.url(route="v1/version"))
        except NtfyRejected as exc:
            if exc.status in {401, 403, 404}:
                return None
            raise
        version: object = cast(dict[str, object], data).get("version") if isinstance(data, dict) else None
        return str(version) if version else None

    async def account(self) -> dict[str, Any]:
        """``GET /v1/account``: the account behind these credentials (``*`` when anonymous)."""
        return await self._object("GET", self.url(route="v1/account"))

    # ------------------------------------------------------------------ administration (admin role)

    async def users(self) -> list[dict[str, Any]]:
        """``GET /v1/users``: every user with role and grants."""
        data = await self._json("GET", self.url(route="v1/users"))
        if not isinstance(data, list) or not all(isinstance(u, dict) for u in cast(list[object], data)):
            raise NtfyUnavailable("ntfy's answer to GET /v1/users was not a list of users")
        return cast(list[dict[str, Any]], data)

    async def create_user(self, username: str, password: str) -> None:
        """``POST /v1/users``."""
        await self._send("POST", self.url(route="v1/users"), body={"username": username, "password": password})

    async def delete_user(self, username: str) -> None:
        """``DELETE /v1/users``."""
        await self._send("DELETE", self.url(route="v1/users"), body={"username": username})

    async def set_access(self, username: str, topic: str, permission: str) -> None:
        """``PUT /v1/users/access``: write one access rule."""
        await self._send(
            "PUT",
            self.url(route="v1/users/access"),
            body={"username": username, "topic": topic, "permission": permission},
        )

    async def reset_access(self, username: str, topic: str) -> None:
        """``DELETE /v1/users/access``: remove a user's rule for ``topic``."""
        await self._send("DELETE", self.url(route="v1/users/access"), body={"username": username, "topic": topic})


def _events(text: str, limit: int | None) -> list[dict[str, Any]]:
    """The first ``limit`` events of a poll's NDJSON (see :meth:`NtfyClient.poll`)."""
    events: list[dict[str, Any]] = []
    for line in text.split("\n"):
        if limit is not None and len(events) >= limit:
            break
        if line.strip():
            try:
                event = from_json(line, cache_strings="keys")
            except ValueError as exc:
                raise NtfyUnavailable("ntfy's message listing held a line that is not JSON") from exc
            if not isinstance(event, dict):
                raise NtfyUnavailable("ntfy's message listing held a line that is not a JSON object")
            events.append(cast(dict[str, Any], event))
    return events


def _error_document(status: int, content: bytes) -> tuple[int, str]:
    try:
        data = json.loads(content)
    except (ValueError, RecursionError):  # json raises RecursionError for too deep nesting
        return 0, f"HTTP {status} without ntfy's error document"
    if not isinstance(data, dict) or "error" not in data:
        return 0, f"HTTP {status} without ntfy's error document"
    document = cast(dict[str, object], data)
    code = document.get("code")
    return (code if isinstance(code, int) else 0), name_in_text(str(document["error"])[:500])  # ntfy's words: fenced


def _too_large(request: httpx2.Request, limit: int) -> str:
    return (
        f"ntfy's answer to {request.method} {request.url.path} is larger than NTFY_MAX_RESPONSE_BYTES "
        f"({limit} bytes); it was not read further"
    )
