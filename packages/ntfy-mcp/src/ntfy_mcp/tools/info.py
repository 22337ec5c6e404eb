"""The server and the account: get_server_info, get_account, check_topic_access (read-only, never ask)."""

from __future__ import annotations

from typing import Annotated, Any

import mcp_types as mt
from mcp.server.mcpserver import MCPServer
from pydantic import Field

from approval_core import annotations, structured
from approval_core.serving.stored_text import quoted_name
from ntfy_mcp.app import NtfyApp
from ntfy_mcp.errors import InputError, NtfyRejected
from ntfy_mcp.outputs import AccessCheck, Account, ServerInfo
from ntfy_mcp.settings import TOPIC_PATTERN

__all__ = ["register"]


def register(server: MCPServer[Any], app: NtfyApp) -> None:
    """Add the three server and account tools to ``server``."""

    @server.tool(annotations=annotations(read_only=True, destructive=False, idempotent=True, open_world=True))
    async def get_server_info() -> Annotated[mt.CallToolResult, ServerInfo]:
        """Health, version (where the server tells it), message stats, and what these credentials can do.

        admin_tools says whether the user tools will work; sequence_support
        whether update_message, mark_messages_read and delete_messages can.
        """
        client = app.client
        healthy = await client.healthy()
        stats = await client.stats()
        account = await client.account()
        try:
            await client.users()
            admin = True
        except NtfyRejected:
            admin = False
        support, version = await app.sequence_support()
        rate = stats.get("messages_rate")
        return structured(
            ServerInfo(
                url=app.settings.url,
                healthy=healthy,
                version=version,
                sequence_support="yes" if support == "yes" else "no" if support == "no" else "unknown",
                messages=stats.get("messages"),
                messages_rate=float(rate) if isinstance(rate, int | float) else None,
                authenticated_as=str(account.get("username", "*")),
                role=str(account.get("role", "anonymous")),
                admin_tools=admin,
                topics=list(app.settings.topics),
            )
        )

    @server.tool(annotations=annotations(read_only=True, destructive=False, idempotent=True, open_world=True))
    async def get_account() -> Annotated[mt.CallToolResult, Account]:
        """The account behind these credentials: name, role, tier, limits, usage. Never its access tokens.

        While NTFY_TOPICS is set, reserved topics outside it are counted (other_reservations), not named.
        """
        raw = await app.client.account()
        tier: dict[str, Any] | None = raw.get("tier") if isinstance(raw.get("tier"), dict) else None
        held: list[dict[str, Any]] = list(raw.get("reservations") or [])
        topics = app.settings.topics
        shown = [r for r in held if not topics or r.get("topic") in topics]
        reservations = [{"topic": r.get("topic"), "everyone": r.get("everyone")} for r in shown]
        return structured(
            Account(
                username=str(raw.get("username", "*")),
                role=str(raw.get("role", "anonymous")),
                tier=str(tier.get("name") or tier.get("code")) if tier is not None else None,
                token_count=len(raw.get("tokens") or []),
                reservations=reservations,
                other_reservations=len(held) - len(shown),
                limits=dict(raw.get("limits") or {}),
                stats=dict(raw.get("stats") or {}),
            )
        )

    @server.tool(annotations=annotations(read_only=True, destructive=False, idempotent=True, open_world=True))
    async def check_topic_access(
        topic: Annotated[str, Field(min_length=1, max_length=64, description="A topic name")],
    ) -> Annotated[mt.CallToolResult, AccessCheck]:
        """Whether these credentials may read a topic, and whether NTFY_TOPICS lets this server use it."""
        if not TOPIC_PATTERN.match(topic):
            raise InputError(f"topic: {quoted_name(topic)} is not a topic name (1-64 letters, digits, '-' or '_')")
        readable = await app.client.can_read(topic)
        allowed = app.settings.topics
        return structured(AccessCheck(topic=topic, read=readable, allowed_by_config=not allowed or topic in allowed))
