"""The ntfy HTTP client, and the one place where ntfy's replies become this package's errors.

Built on httpx2 (the maintained httpx line the MCP SDK itself uses). Every
request goes through :meth:`NtfyClient._send`, which turns:

* a connection failure or timeout → :class:`NtfyUnavailable`;
* a 5xx, or a reply that is not ntfy's JSON → :class:`NtfyUnavailable`;
* ntfy's error document ``{"code", "http", "error"}`` (ntfy docs, "Error
  codes") → :class:`NtfyRejected` with the status, code and ntfy's text.

Routes (checked against a running ntfy 2.13; see docs/ntfy-mcp.md for what
differs from the 2.16 notes): ``POST /`` JSON publish, ``GET /<topics>/json?poll=1``,
``GET /<topic>/auth``, ``/v1/health``, ``/v1/stats``, ``/v1/account``,
``/v1/users`` and ``/v1/users/access`` (admin), and from ntfy 2.16
``PUT /<topic>/<sequence_id>/clear`` and ``DELETE /<topic>/<sequence_id>``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, cast

import httpx2

from ntfy_mcp.errors import NtfyRejected, NtfyUnavailable
from ntfy_mcp.settings import NtfySettings

__all__ = ["SEQUENCE_VERSION", "NtfyClient", "parse_version"]

SEQUENCE_VERSION = (2, 16, 0)
"""The first ntfy release that revises, clears and deletes by sequence id."""

_USER_AGENT = "ntfy-mcp"


def parse_version(text: str) -> tuple[int, int, int] | None:
    """``"2.17.0"`` → ``(2, 17, 0)``; None when it is not ``major.minor.patch``."""
    parts = text.strip().lstrip("v").split("-", 1)[0].split(".")
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        return None
    return int(parts[0]), int(parts[1]), int(parts[2])


class NtfyClient:
    """An async client for one ntfy server, with the credentials from :class:`NtfySettings`.

    Use as an async context manager, or call :meth:`aclose`.

    Args:
        settings: URL, credentials and timeout.
        transport: An httpx2 transport to use instead of the network (tests).
    """

    def __init__(self, settings: NtfySettings, *, transport: httpx2.AsyncBaseTransport | None = None) -> None:
        self.settings = settings
        headers = {"User-Agent": _USER_AGENT}
        auth: httpx2.Auth | None = None
        if settings.token:
            headers["Authorization"] = f"Bearer {settings.token}"
        elif settings.username and settings.password:
            auth = httpx2.BasicAuth(settings.username, settings.password)
        self._http = httpx2.AsyncClient(
            base_url=settings.url,
            headers=headers,
            auth=auth,
            timeout=settings.timeout,
            transport=transport,
            follow_redirects=False,
        )

    async def __aenter__(self) -> NtfyClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Close the connection pool."""
        await self._http.aclose()

    # ------------------------------------------------------------------ the one translation point

    async def _send(
        self,
        method: str,
        path: str,
        *,
        body: Any = None,
        params: Mapping[str, str] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> httpx2.Response:
        sent = dict(headers or {})
        if body is not None:
            sent["Content-Type"] = "application/json"
        try:
            response = await self._http.request(
                method,
                path,
                content=None if body is None else json.dumps(body),
                headers=sent or None,
                params=dict(params or {}),
            )
        except httpx2.TimeoutException as exc:
            raise NtfyUnavailable(
                f"ntfy at {self.settings.url} did not answer {method} {path} within {self.settings.timeout:g} s"
            ) from exc
        except httpx2.HTTPError as exc:
            raise NtfyUnavailable(f"cannot reach ntfy at {self.settings.url}: {type(exc).__name__}") from exc
        if response.status_code < 400:
            return response
        code, reason = _error_document(response)
        if response.status_code >= 500:
            raise NtfyUnavailable(f"ntfy failed with HTTP {response.status_code} (code {code}): {reason}")
        raise NtfyRejected(response.status_code, code, reason)

    async def _json(self, method: str, path: str, **kwargs: Any) -> Any:
        response = await self._send(method, path, **kwargs)
        try:
            return response.json()
        except ValueError as exc:
            raise NtfyUnavailable(f"ntfy's answer to {method} {path} was not JSON") from exc

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
        return dict(await self._json("POST", "/", body=body, headers=headers))

    async def poll(
        self, topics: Sequence[str], params: Mapping[str, str], limit: int | None = None
    ) -> list[dict[str, Any]]:
        """The cached events of ``topics`` (``GET /<t1,t2>/json?poll=1``), oldest first.

        ``limit`` stops reading after that many events (ntfy itself has no
        limit parameter, so the rest of the answer is left unparsed).
        """
        response = await self._send("GET", f"/{','.join(topics)}/json", params={"poll": "1", **params})
        events: list[dict[str, Any]] = []
        for line in response.content.decode("utf-8", errors="replace").splitlines():
            if limit is not None and len(events) >= limit:
                break
            if line.strip():
                try:
                    events.append(json.loads(line))
                except ValueError as exc:
                    raise NtfyUnavailable("ntfy's message listing held a line that is not JSON") from exc
        return events

    async def clear(self, topic: str, sequence_id: str) -> dict[str, Any]:
        """Mark a notification read and dismiss it (``PUT /<topic>/<sequence_id>/clear``, ntfy >= 2.16)."""
        return dict(await self._json("PUT", f"/{topic}/{sequence_id}/clear"))

    async def delete(self, topic: str, sequence_id: str) -> dict[str, Any]:
        """Delete a notification, cancelling it if scheduled (``DELETE /<topic>/<sequence_id>``, ntfy >= 2.16)."""
        return dict(await self._json("DELETE", f"/{topic}/{sequence_id}"))

    async def can_read(self, topic: str) -> bool:
        """Whether these credentials may read ``topic`` (``GET /<topic>/auth``); False on 403."""
        try:
            await self._send("GET", f"/{topic}/auth")
        except NtfyRejected as exc:
            if exc.status == 403:
                return False
            raise
        return True

    # ------------------------------------------------------------------ server

    async def healthy(self) -> bool:
        """``GET /v1/health`` → its ``healthy`` flag."""
        return bool((await self._json("GET", "/v1/health")).get("healthy"))

    async def stats(self) -> dict[str, Any]:
        """``GET /v1/stats``: ``messages`` and ``messages_rate``."""
        return dict(await self._json("GET", "/v1/stats"))

    async def version(self) -> str | None:
        """The server's version from ``GET /v1/version`` (admin, ntfy >= 2.17), or None when not told."""
        try:
            data = await self._json("GET", "/v1/version")
        except NtfyRejected as exc:
            if exc.status in {401, 403, 404}:
                return None
            raise
        version: object = cast(dict[str, object], data).get("version") if isinstance(data, dict) else None
        return str(version) if version else None

    async def account(self) -> dict[str, Any]:
        """``GET /v1/account``: the account behind these credentials (``*`` when anonymous)."""
        return dict(await self._json("GET", "/v1/account"))

    # ------------------------------------------------------------------ administration (admin role)

    async def users(self) -> list[dict[str, Any]]:
        """``GET /v1/users``: every user with role and grants."""
        return list(await self._json("GET", "/v1/users"))

    async def create_user(self, username: str, password: str) -> None:
        """``POST /v1/users``."""
        await self._send("POST", "/v1/users", body={"username": username, "password": password})

    async def delete_user(self, username: str) -> None:
        """``DELETE /v1/users``."""
        await self._send("DELETE", "/v1/users", body={"username": username})

    async def set_access(self, username: str, topic: str, permission: str) -> None:
        """``PUT /v1/users/access``: write one access rule."""
        await self._send(
            "PUT", "/v1/users/access", body={"username": username, "topic": topic, "permission": permission}
        )

    async def reset_access(self, username: str, topic: str) -> None:
        """``DELETE /v1/users/access``: remove a user's rule for ``topic``."""
        await self._send("DELETE", "/v1/users/access", body={"username": username, "topic": topic})


def _error_document(response: httpx2.Response) -> tuple[int, str]:
    try:
        data = response.json()
    except ValueError:
        return 0, f"HTTP {response.status_code} without ntfy's error document"
    if not isinstance(data, dict) or "error" not in data:
        return 0, f"HTTP {response.status_code} without ntfy's error document"
    document = cast(dict[str, object], data)
    code = document.get("code")
    return (code if isinstance(code, int) else 0), str(document["error"])[:500]
