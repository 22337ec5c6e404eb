"""Guarded changes to notifications already sent: update_message and delete_messages (ntfy >= 2.16).

Both read the topic first, check the server can do this by sequence id (an
older ntfy would publish a second notification instead), refuse ids that are
not on the topic, and only then ask. The dialog names the topic, the counts
and the sequence ids: never a notification's text. The notifications as read
go to the approval page alone (:mod:`ntfy_mcp.stored`).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Annotated, Any

import mcp_types as mt
from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field

from approval_core import NotApproved, StoredView, annotations, plan_writes, structured
from approval_core.serving.stored_text import quoted_name, unmarked
from ntfy_mcp import stored
from ntfy_mcp.app import NtfyApp
from ntfy_mcp.dialogs import delete_messages_dialog, update_dialog
from ntfy_mcp.errors import BackendError, ChangedMeanwhile, InputError
from ntfy_mcp.models import HttpAction
from ntfy_mcp.outputs import IdResult, IdResults, PublishResult, message_from_ntfy
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
from ntfy_mcp.tools.messages import SequenceIds

__all__ = ["register"]

Topic = Annotated[str, Field(min_length=1, max_length=64, description="The topic the notification is on")]
ConfirmToken = Annotated[
    str | None, Field(description="Only where no dialog can be shown: the token from the first call")
]


_STORED_AS = {
    "message": "message",
    "title": "title",
    "priority": "priority",
    "tags": "tags",
    "markdown": "content_type",
    "click": "click",
    "icon": "icon",
    "attach": "attachment",
    "actions": "actions",
}
"""Each content field and the key ntfy stores it under in a message."""


def _dropped(current: dict[str, Any], fields: Sequence[str]) -> int:
    """How many fields the current version has that the new one does not set."""
    return sum(1 for field, key in _STORED_AS.items() if current.get(key) and field not in fields)


def _sequences(events: Sequence[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The newest ``message`` event of each sequence id on a topic."""
    latest: dict[str, dict[str, Any]] = {}
    for event in events:
        if event.get("event", "message") == "message":
            latest[str(event.get("sequence_id") or event.get("id"))] = event
    return latest


def _deleted(events: Sequence[dict[str, Any]]) -> set[str]:
    """The sequence ids whose newest event is a ``message_delete`` (ntfy >= 2.16): gone from every device.

    ntfy keeps a deleted sequence's messages in its cache, followed by the
    delete event; such a sequence is no notification any more, so it is
    neither counted as one to delete nor revised (which would bring it back).
    """
    newest: dict[str, str] = {}
    for event in events:
        newest[str(event.get("sequence_id") or event.get("id"))] = str(event.get("event", "message"))
    return {sid for sid, kind in newest.items() if kind == "message_delete"}


def _revision(event: dict[str, Any]) -> str:
    """The version an approval binds: the id of the sequence's newest message as read (ntfy gives no ETag)."""
    return str(event.get("id"))


async def _unchanged(app: NtfyApp, topic: str, versions: dict[str, str]) -> None:
    """Read the topic again after the answer: each sequence's newest message must still be the one asked about.

    ntfy has no conditional write (no If-Match), so this re-read right before
    the write is the check; the window left is the one request's time.

    Raises:
        ChangedMeanwhile: a sequence was revised, or dropped from the cache, meanwhile.
    """
    now = _sequences(await app.client.poll([topic], {"since": "all", "scheduled": "1"}))
    moved = [sid for sid, version in versions.items() if sid not in now or _revision(now[sid]) != version]
    if moved:
        raise ChangedMeanwhile(
            f"sequence_ids: {', '.join(moved)} on topic {quoted_name(topic)} changed while the person was being asked; "
            "nothing was done. Call again to be asked about what is there now."
        )


def register(server: MCPServer[Any], app: NtfyApp) -> None:
    """Add update_message and delete_messages to ``server``."""

    @server.tool(annotations=annotations(read_only=False, destructive=True, idempotent=True, open_world=True))
    async def update_message(
        ctx: Context,
        topic: Topic,
        sequence_id: Annotated[str, Field(min_length=1, max_length=64, description="Which notification")],
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
        confirm_token: ConfirmToken = None,
    ) -> Annotated[mt.CallToolResult, PublishResult] | mt.InputRequiredResult:
        """Revise a notification in place by sequence id (ntfy >= 2.16). Always asks a person first.

        The new content replaces the whole notification: fields not given are
        gone from the new version. Refused on servers older than 2.16, which
        would send a second notification instead.
        """
        app.check_topic(topic)
        (sid,) = app.check_sequence_ids([sequence_id], "sequence_id")
        content = content_from(
            message=message, title=title, priority=priority, tags=tags, markdown=markdown, click=click,
            icon=icon, attach=attach, filename=filename, actions=actions,
        )  # fmt: skip
        if content.message is None and content.attach is None:
            raise InputError("message: a revision needs a message (or an attachment by URL)")
        body = content.to_ntfy()
        events = await app.require_sequences("update_message", topic)
        current = _sequences(events).get(sid)
        if current is None:
            raise InputError(
                f"sequence_id: no notification {quoted_name(sid)} in the cache of topic {quoted_name(topic)}"
            )
        if sid in _deleted(events):
            raise InputError(
                f"sequence_id: notification {quoted_name(sid)} on topic {quoted_name(topic)} was deleted; "
                "there is none to revise"
            )
        fields = content.set_fields()
        http_buttons = sum(isinstance(a, HttpAction) for a in content.actions or [])
        version = _revision(current)
        edits = stored.content_changes(current, content.model_dump())
        shown = StoredView(entries=(stored.message(app.settings.url, topic, current, changes=edits),))
        decision = await app.gate.check(
            ctx,
            tool="update_message",
            version=version,
            target={
                "topic": topic,
                "sequence_id": sid,
                "content": content.model_dump(mode="json", exclude_none=True),
            },
            dialog=update_dialog(topic, sid, fields, _dropped(current, fields), http_buttons),
            confirm_token=confirm_token,
            stored=shown,
        )
        if isinstance(decision, NotApproved):
            return decision.result
        await _unchanged(app, topic, {sid: version})
        revised = await app.client.publish(topic, body, sequence_id=sid)
        sent = message_from_ntfy(revised, time.time(), shorten=True)
        return structured(
            PublishResult(topic=topic, ok=True, id=sent.id, sequence_id=sent.sequence_id or sent.id, time=sent.time)
        )

    @server.tool(annotations=annotations(read_only=False, destructive=True, idempotent=True, open_world=True))
    async def delete_messages(
        ctx: Context,
        topic: Topic,
        sequence_ids: SequenceIds,
        confirm_token: ConfirmToken = None,
    ) -> Annotated[mt.CallToolResult, IdResults] | mt.InputRequiredResult:
        """Delete notifications by sequence id (ntfy >= 2.16), cancelling scheduled ones; a result per id.

        Always asks a person first. Every id must be on the topic.
        """
        app.check_topic(topic)
        ids = app.check_sequence_ids(sequence_ids)
        events = await app.require_sequences("delete_messages", topic)
        known = _sequences(events)
        missing = [sid for sid in ids if sid not in known]
        if missing:
            raise InputError(f"sequence_ids: not in the cache of topic {quoted_name(topic)}: {', '.join(missing)}")
        if gone := [sid for sid in ids if sid in _deleted(events)]:
            raise InputError(
                f"sequence_ids: already deleted on topic {quoted_name(topic)}, so not counted or deleted again: "
                f"{', '.join(gone)}; leave them out"
            )
        now = time.time()
        scheduled = sum(int(known[sid].get("time", 0)) > now for sid in ids)
        versions = {sid: _revision(known[sid]) for sid in ids}
        decision = await app.gate.check(
            ctx,
            tool="delete_messages",
            version=";".join(f"{sid}={versions[sid]}" for sid in sorted(ids)),
            target={"topic": topic, "sequence_ids": frozenset(ids), "count": len(ids), "scheduled": scheduled},
            dialog=delete_messages_dialog(topic, ids, scheduled),
            confirm_token=confirm_token,
            stored=stored.messages(app.settings.url, topic, [known[sid] for sid in ids]),
            collection=topic if len(ids) == 1 else None,  # a grant counts calls: one message, never several
        )
        if isinstance(decision, NotApproved):
            return decision.result
        await _unchanged(app, topic, versions)
        results: list[IdResult] = []
        await plan_writes([lambda s=s: app.client.delete(topic, s) for s in ids])  # APPROVAL_PROFILE=every-write
        for sid in ids:
            try:
                await app.client.delete(topic, sid)
                results.append(IdResult(sequence_id=sid, ok=True))
            except BackendError as exc:
                results.append(IdResult(sequence_id=sid, ok=False, error=unmarked(str(exc))))
        failed = sum(not r.ok for r in results)
        return structured(IdResults(topic=topic, results=results, done=len(results) - failed, failed=failed))
