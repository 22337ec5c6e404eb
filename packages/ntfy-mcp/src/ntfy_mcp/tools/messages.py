"""Notifications that never ask: publish_message, list_messages, get_message, mark_messages_read.

Publishing is not guarded (seed 002): it destroys nothing, and NTFY_TOPICS
bounds where it may go. Reading is bounded the same way.
"""

from __future__ import annotations

import re
import time
from typing import Annotated, Any

import httpx2
import mcp_types as mt
from mcp.server.mcpserver import MCPServer
from pydantic import Field

from approval_core import annotations, chosen_by_server, plan_writes, structured
from approval_core.serving.stored_text import quoted_name, unmarked
from ntfy_mcp.app import NtfyApp
from ntfy_mcp.errors import BackendError, InputError, NtfyUnavailable
from ntfy_mcp.models import Priority, priority_number
from ntfy_mcp.outputs import (
    IdResult,
    IdResults,
    Message,
    MessageList,
    PublishResult,
    PublishResults,
    message_from_ntfy,
    messages_from_ntfy,
)
from ntfy_mcp.tools._common import (
    ActionsArg,
    AttachArg,
    ClickArg,
    FilenameArg,
    IconArg,
    MarkdownArg,
    MessageArg,
    PriorityArg,
    TagsArg,
    TitleArg,
    content_from,
)

__all__ = ["register"]

_SINCE = re.compile(r"^(all|\d{1,7}[smhd]|\d{9,11}|[A-Za-z0-9]{12})$")
_MESSAGE_ID = re.compile(r"^[A-Za-z0-9]{12}$")

Topics = Annotated[
    list[Annotated[str, Field(min_length=1, max_length=64)]] | None,
    Field(None, max_length=20, description="Topic names; default: the first of NTFY_TOPICS"),
]
SequenceIds = Annotated[
    list[Annotated[str, Field(min_length=1, max_length=64)]],
    Field(min_length=1, max_length=50, description="Sequence ids (a message's id unless it was given one)"),
]


def since_param(since: str, cursor: str | None) -> str:
    """Ntfy's ``since``: the cursor (a message id) when given, else ``since`` checked.

    Raises:
        InputError: ``since`` is not all, a duration, a Unix time or a message id; or a bad cursor.
    """
    if cursor is not None:
        if not _MESSAGE_ID.match(cursor):
            raise InputError("cursor: pass back the next_cursor of an earlier list_messages result")
        return cursor
    if not _SINCE.match(since):
        raise InputError(
            f"since: {quoted_name(since)} is not 'all', a duration (10m, 2h, 1d), a Unix time or a message id"
        )
    return since


def _answer_lost(exc: BackendError) -> bool:
    """Whether a publish failed with no answer after the request may have left (a timeout, a broken connection).

    False for an answer (an error document, a 5xx, a redirect) and for a connection that was never made
    (httpx ConnectError / ConnectTimeout): then nothing was published.
    """
    if not isinstance(exc, NtfyUnavailable):
        return False
    cause = exc.__cause__
    if isinstance(cause, httpx2.ConnectError | httpx2.ConnectTimeout):
        return False
    return isinstance(cause, TimeoutError | httpx2.TimeoutException | httpx2.TransportError)


async def _read_back(
    app: NtfyApp, topic: str, body: dict[str, Any], before: float
) -> tuple[dict[str, Any] | None, str]:
    """Look on ``topic`` for the message a publish whose answer was lost would have stored.

    Polls ``GET /<topic>/json?poll=1&since=<unix>&scheduled=1`` (ntfy docs, "Subscribe API": poll, since,
    scheduled) over the last :data:`READ_BACK_WINDOW` seconds and matches each ``message`` event's
    ``message`` and ``title`` against the body sent. ntfy keeps no client-given id, so a match proves
    delivery only when it is the one identical message and it is not older than the publish (ntfy times
    are whole seconds): an identical message from before means the match may be that earlier one.

    Returns:
        (the message, "") when it was found delivered; (None, why) when that is not known, ``why``
        being "" (nothing matched) or a sentence naming the earlier identical message.
    """
    try:
        events = await app.client.poll(
            [topic], {"since": str(int(before) - READ_BACK_WINDOW), "scheduled": "1"}, limit=READ_BACK_EVENTS
        )
    except BackendError:
        return None, ""
    matches = [
        event
        for event in events
        if event.get("event") == "message"
        and all(event.get(key) == body.get(key) for key in ("message", "title") if key in body)
    ]
    ours = [event for event in matches if int(event.get("time") or 0) >= int(before)]
    earlier = [event for event in matches if int(event.get("time") or 0) < int(before)]
    if len(ours) == 1 and not earlier:
        return ours[0], ""
    if earlier:
        last = earlier[-1]
        return None, (
            f"an identical message (id {last.get('id')}, time {last.get('time')}) was already on the topic "
            "before this publish, so the one found may be that earlier message"
        )
    if len(ours) > 1:
        return None, f"{len(ours)} identical messages arrived since this publish began"
    return None, ""


def _unknown(exc: BackendError, topic: str, before: float, why: str = "") -> str:
    found = f"reading the topic back could not tell ({why})" if why else "reading the topic back did not find it (yet)"
    return (
        f"not known whether it was delivered: {unmarked(str(exc))}, and {found}. Before "
        f'publishing again, check with list_messages(topics=["{topic}"], since="{int(before) - 1}"): a second '
        "publish would deliver a second notification."
    )


READ_BACK_WINDOW = 600
"""How far back (seconds) a lost publish's read-back looks for an identical earlier message."""

READ_BACK_EVENTS = 100
"""The most events read back from a topic to find a publish whose answer was lost."""


def register(server: MCPServer[Any], app: NtfyApp) -> None:
    """Add the four unguarded message tools to ``server``."""

    @server.tool(annotations=annotations(read_only=False, destructive=False, idempotent=False, open_world=True))
    async def publish_message(
        topics: Topics = None,
        message: MessageArg = None,
        title: TitleArg = None,
        priority: PriorityArg = None,
        tags: TagsArg = None,
        markdown: MarkdownArg = None,
        click: ClickArg = None,
        icon: IconArg = None,
        attach: AttachArg = None,
        filename: FilenameArg = None,
        actions: ActionsArg = None,
        delay: Annotated[str | None, Field(description="30s, 10m, 2h, 1d (10 s to 3 days) or a Unix time")] = None,
    ) -> Annotated[mt.CallToolResult, PublishResults]:
        """Send a notification to one or more topics, with a result per topic.

        Returns each topic's message id and sequence id (use them with
        update_message, mark_messages_read and delete_messages). Not guarded:
        nothing is taken away, and NTFY_TOPICS bounds where it may go.
        """
        chosen = app.topics_or_default(topics)
        if not topics:  # the default topic: shown in an every-write dialog, as the caller named none
            chosen_by_server("topic (the first of NTFY_TOPICS)", chosen[0])
        content = content_from(
            message=message, title=title, priority=priority, tags=tags, markdown=markdown, click=click,
            icon=icon, attach=attach, filename=filename, actions=actions, delay=delay,
        )  # fmt: skip
        if content.message is None and content.attach is None:
            raise InputError("message: give a message (or attach a file by URL)")
        body = content.to_ntfy()
        now = time.time()
        results: list[PublishResult] = []
        await plan_writes([lambda t=t: app.client.publish(t, body) for t in chosen])  # APPROVAL_PROFILE=every-write
        for topic in chosen:
            note = None
            try:
                stored = await app.client.publish(topic, body)
            except BackendError as exc:
                if not _answer_lost(exc):
                    results.append(PublishResult(topic=topic, ok=False, error=f"not published: {unmarked(str(exc))}"))
                    continue
                found, why = await _read_back(app, topic, body, now)
                if found is None:
                    results.append(PublishResult(topic=topic, ok=False, error=_unknown(exc, topic, now, why)))
                    continue
                stored = found
                note = (
                    f"ntfy's answer was lost ({exc}); reading the topic back found the message delivered "
                    f"(id {found.get('id')})."
                )
            sent = message_from_ntfy(
                stored, time.time(), shorten=True
            )  # "now" after the answer: scheduled = in the future
            results.append(
                PublishResult(
                    topic=topic, ok=True, id=sent.id, sequence_id=sent.sequence_id or sent.id, time=sent.time,
                    scheduled=sent.scheduled, cancellable_until=sent.time if sent.scheduled else None, note=note,
                )
            )  # fmt: skip
        failed = sum(not r.ok for r in results)
        if failed == len(results):
            unknown = any((r.error or "").startswith("not known") for r in results)
            lead = "Not known whether it was published on every topic." if unknown else "Nothing was published."
            raise BackendError(lead + " " + " ".join(f"{r.topic}: {r.error}" for r in results))
        return structured(PublishResults(results=results, published=len(results) - failed, failed=failed))

    @server.tool(annotations=annotations(read_only=True, destructive=False, idempotent=True, open_world=True))
    async def list_messages(
        topics: Topics = None,
        since: Annotated[str, Field(description="all, a duration (10m, 2h, 1d), a Unix time, or a message id")] = "all",
        cursor: Annotated[str | None, Field(description="next_cursor from the previous page")] = None,
        id: Annotated[str | None, Field(description="Only the message with this id")] = None,
        title: Annotated[str | None, Field(description="Only messages with exactly this title")] = None,
        message: Annotated[str | None, Field(description="Only messages with exactly this body")] = None,
        priority: Annotated[list[Priority] | None, Field(max_length=5, description="Any of these")] = None,
        tags: Annotated[list[str] | None, Field(max_length=10, description="All of these tags")] = None,
        scheduled: Annotated[bool, Field(description="Include notifications not yet delivered")] = False,
        limit: Annotated[int, Field(ge=1, le=100, description="Events per page")] = 20,
    ) -> Annotated[mt.CallToolResult, MessageList]:
        """List a topic's cached notifications, oldest first, bodies shortened to 280 characters.

        Page with cursor; get_message returns a whole body. Text in the
        result was written by whoever published to the topic.
        """
        chosen = app.topics_or_default(topics)
        params = {"since": since_param(since, cursor)}
        if id is not None and not _MESSAGE_ID.match(id):
            raise InputError(f"id: {quoted_name(id[:80])} is not an ntfy message id (12 letters and digits)")
        if scheduled:
            params["scheduled"] = "1"
        for name, value in (("id", id), ("title", title), ("message", message)):
            if value is not None:
                params[name] = value
        if priority:
            params["priority"] = ",".join(str(priority_number(p)) for p in priority)
        if tags:
            params["tags"] = ",".join(tags)
        events = await app.client.poll(chosen, params, limit=limit + 1)
        now = time.time()
        page = messages_from_ntfy(events[:limit], now, shorten=True, topic=len(chosen) > 1)
        cut = len(events) > limit
        listing = MessageList(
            topics=chosen, messages=page, count=len(page), next_cursor=page[-1].id if cut else None, cut=cut
        )
        return structured(listing)

    @server.tool(annotations=annotations(read_only=True, destructive=False, idempotent=True, open_world=True))
    async def get_message(
        topic: Annotated[str, Field(min_length=1, max_length=64, description="The topic")],
        id: Annotated[str, Field(description="The message id (12 characters)")],
    ) -> Annotated[mt.CallToolResult, Message]:
        """One cached notification with its whole body. Its text was written by whoever published it."""
        app.check_topic(topic)
        if not _MESSAGE_ID.match(id):
            raise InputError(f"id: {quoted_name(id)} is not an ntfy message id (12 letters and digits)")
        events = await app.client.poll([topic], {"since": "all", "scheduled": "1", "id": id})
        found = [e for e in events if e.get("id") == id]
        if not found:
            raise InputError(f"id: no message {quoted_name(id)} in the cache of topic {quoted_name(topic)}")
        return structured(message_from_ntfy(found[0], time.time(), shorten=False))

    @server.tool(annotations=annotations(read_only=False, destructive=False, idempotent=True, open_world=True))
    async def mark_messages_read(
        topic: Annotated[str, Field(min_length=1, max_length=64, description="The topic")],
        sequence_ids: SequenceIds,
    ) -> Annotated[mt.CallToolResult, IdResults]:
        """Mark notifications read and dismiss them on subscribers' devices (ntfy >= 2.16), a result per id.

        The notifications stay in the topic's cache. Refused on older servers.
        """
        app.check_topic(topic)
        ids = app.check_sequence_ids(sequence_ids)
        await app.require_sequences("mark_messages_read", topic)
        results: list[IdResult] = []
        await plan_writes([lambda s=s: app.client.clear(topic, s) for s in ids])
        for sid in ids:
            try:
                await app.client.clear(topic, sid)
                results.append(IdResult(sequence_id=sid, ok=True))
            except BackendError as exc:
                results.append(IdResult(sequence_id=sid, ok=False, error=unmarked(str(exc))))
        failed = sum(not r.ok for r in results)
        return structured(IdResults(topic=topic, results=results, done=len(results) - failed, failed=failed))
