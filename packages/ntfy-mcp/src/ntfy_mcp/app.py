"""What every tool shares: the settings, the live ntfy client, the gate, and the checks used before acting.

A tool asks :class:`NtfyApp` for the client (which fails with the
configuration error when ``NTFY_URL`` and friends were not usable), checks
topics against ``NTFY_TOPICS``, and checks that the server can revise, clear
and delete by sequence id before it asks anybody.
"""

from __future__ import annotations

import re
from collections.abc import AsyncGenerator, Callable, Sequence
from contextlib import asynccontextmanager
from typing import Any

import httpx2

from approval_core import ApprovalGate
from approval_core.serving.stored_text import quoted_name
from ntfy_mcp.client import NtfyClient
from ntfy_mcp.errors import ConfigError, InputError, OutsideAllowedTopics, UnsupportedServer
from ntfy_mcp.settings import TOPIC_PATTERN, NtfySettings

__all__ = ["SEQUENCE_ID_PATTERN", "SEQUENCE_VERSION", "NtfyApp", "parse_version"]

SEQUENCE_ID_PATTERN = re.compile(r"^[-_A-Za-z0-9]{1,64}$")
"""A sequence id (ntfy >= 2.16: letters, digits, ``-`` and ``_``, up to 64)."""

SEQUENCE_VERSION = (2, 16, 0)
"""The first ntfy release that revises, clears and deletes by sequence id."""


def parse_version(text: str) -> tuple[int, int, int] | None:
    """``"2.17.0"`` → ``(2, 17, 0)``; None when it is not ``major.minor.patch``."""
    parts = text.strip().lstrip("v").split("-", 1)[0].split(".")
    if len(parts) != 3 or not all(p.isdigit() for p in parts):
        return None
    return int(parts[0]), int(parts[1]), int(parts[2])


class NtfyApp:
    """The state a server's tools share.

    Args:
        gate: The approval gate.
        settings: The ntfy settings, or a zero-argument callable that reads
            them when the server starts serving (raising ConfigError).
        transport: An httpx2 transport to use instead of the network (tests).
    """

    def __init__(
        self,
        gate: ApprovalGate,
        settings: NtfySettings | Callable[[], NtfySettings],
        transport: httpx2.AsyncBaseTransport | None = None,
    ) -> None:
        self.gate = gate
        self._settings = settings
        self._transport = transport
        self._client: NtfyClient | None = None
        self._problem: ConfigError | None = None

    @asynccontextmanager
    async def running(self) -> AsyncGenerator[None]:
        """Open the ntfy client for the time the server serves; close it after."""
        try:
            settings = self._settings if isinstance(self._settings, NtfySettings) else self._settings()
        except ConfigError as exc:
            self._problem = exc
            yield
            return
        async with NtfyClient(settings, transport=self._transport) as client:
            self._client = client
            try:
                yield
            finally:
                self._client = None

    @property
    def client(self) -> NtfyClient:
        """The live client.

        Raises:
            ConfigError: the ``NTFY_*`` settings were not usable.
        """
        if self._client is None:
            raise self._problem or ConfigError("ntfy-mcp is not connected to an ntfy server (is NTFY_URL set?)")
        return self._client

    @property
    def settings(self) -> NtfySettings:
        """The ntfy settings in force."""
        return self.client.settings

    # ------------------------------------------------------------------ topics

    def topics_or_default(self, topics: Sequence[str] | None, field: str = "topics") -> list[str]:
        """The topics to use: those given, or the default (first of NTFY_TOPICS).

        Raises:
            InputError: none given and no default, a bad name, or a duplicate.
            OutsideAllowedTopics: a topic not in NTFY_TOPICS.
        """
        allowed = self.settings.topics
        chosen = list(topics) if topics else ([allowed[0]] if allowed else [])
        if not chosen:
            raise InputError(f"{field}: give at least one topic (NTFY_TOPICS is not set, so there is no default)")
        if len(set(chosen)) != len(chosen):
            raise InputError(f"{field}: a topic is listed twice")
        for topic in chosen:
            self.check_topic(topic, field)
        return chosen

    def check_topic(self, topic: str, field: str = "topic") -> str:
        """``topic`` if it is a valid name inside NTFY_TOPICS.

        Raises:
            InputError: not a topic name.
            OutsideAllowedTopics: NTFY_TOPICS is set and does not list it.
        """
        if not TOPIC_PATTERN.match(topic):
            raise InputError(f"{field}: {quoted_name(topic)} is not a topic name (1-64 letters, digits, '-' or '_')")
        allowed = self.settings.topics
        if allowed and topic not in allowed:
            raise OutsideAllowedTopics(
                f"{field}: {quoted_name(topic)} is outside NTFY_TOPICS ({', '.join(allowed)}); this server "
                "may not use it"
            )
        return topic

    @staticmethod
    def check_sequence_ids(ids: Sequence[str], field: str = "sequence_ids") -> list[str]:
        """The ids, each valid and none repeated.

        Raises:
            InputError: an id breaks the pattern, or one is repeated.
        """
        for sid in ids:
            if not SEQUENCE_ID_PATTERN.match(sid):
                raise InputError(f"{field}: {quoted_name(sid)} is not a sequence id (1-64 letters, digits, '-' or '_')")
        if len(set(ids)) != len(ids):
            raise InputError(f"{field}: a sequence id is listed twice")
        return list(ids)

    # ------------------------------------------------------------------ server capabilities

    async def sequence_support(self, events: Sequence[dict[str, Any]] = ()) -> tuple[str, str | None]:
        """``(support, version)``: can this server revise, clear and delete by sequence id?

        ``support`` is ``yes``, ``no`` or ``unknown``; ``version`` is what
        ``GET /v1/version`` told (ntfy >= 2.17, admin credentials; older
        servers, 2.13 included, answer 404), or None. Without a version,
        ``events`` already read from a topic decide: only ntfy >= 2.16 writes a
        ``sequence_id`` field or ``message_clear`` / ``message_delete`` events.
        Both are reads with no side effect.
        """
        version = await self.client.version()
        return _support(version, events), version

    async def require_sequences(self, tool: str, topic: str) -> list[dict[str, Any]]:
        """Refuse unless this server is known to be ntfy >= 2.16; return the topic's events read on the way.

        Only reads are sent (``GET /v1/version``, then the topic's poll), so a
        refusal comes before anything is written and before anybody is asked.

        Raises:
            UnsupportedServer: it is older, or nothing shows it is 2.16 or newer.
        """
        version = await self.client.version()
        support = _support(version, ())
        events: list[dict[str, Any]] = []
        if support != "no":
            events = await self.client.poll([topic], {"since": "all", "scheduled": "1"})
            support = _support(version, events)
        if support == "yes":
            return events
        if support == "no":
            why = f"this server is ntfy {version}"
        else:
            why = (
                "this server does not show it is: GET /v1/version answers only on ntfy 2.17 and newer (with admin "
                f"credentials), and no notification on topic {quoted_name(topic)} carries a sequence id or a "
                "clear/delete "
                "event, which only 2.16 and newer write (ntfy 2.13 and older look exactly like this)"
            )
        raise UnsupportedServer(
            f"{tool} needs ntfy 2.16 or newer (message revisions by sequence id); {why}. An older server would "
            "store a second notification instead, so nothing was sent and nobody was asked."
        )


def _support(version: str | None, events: Sequence[dict[str, Any]]) -> str:
    parsed = parse_version(version) if version else None
    if parsed is not None:
        return "yes" if parsed >= SEQUENCE_VERSION else "no"
    if any("sequence_id" in e or e.get("event") in {"message_clear", "message_delete"} for e in events):
        return "yes"
    return "unknown"
