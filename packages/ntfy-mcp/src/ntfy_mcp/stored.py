"""What a guarded call touches, as the ntfy instance stores it: the approval page's view of it (issue 31).

Each guarded tool already reads what it changes (the topic's cached
messages, the user list). These functions describe it for the approval page
alone (:class:`approval_core.StoredView`, passed to ``gate.check(stored=...)``):

* a notification (update_message, delete_messages): its topic, its title and
  the first line of its message, when it was sent (or is due), and the id of
  the version read; a revision shows each content field before -> after
  (a revision replaces the whole notification, so every field either side
  sets is listed); a delete of several lists each, up to the view's bound;
* an account (create_user, delete_user, manage_user_access): its name, its
  role and its access rules; a rule change shows the rule before -> after.

Nothing here goes into a dialog, a result or a log: approval-core keeps the
view in the pending approval's record only, and draws it as stored data.
ntfy has no ETags, so no entry names one (the version each tool binds is the
id of the newest message as read, or the account's role and rules as read,
and each tool reads again right before it writes).
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Iterable, Mapping
from typing import Any

from approval_core import Change, Collection, StoredEntry, StoredField, StoredView
from ntfy_mcp.outputs import Grant, User

__all__ = ["access_change", "account", "content_changes", "message", "messages", "topic"]

_CONTENT = (
    ("title", "title", "Title"),
    ("message", "message", "Message"),
    ("priority", "priority", "Priority"),
    ("tags", "tags", "Tags"),
    ("markdown", "content_type", "Markdown"),
    ("click", "click", "Opens when tapped"),
    ("icon", "icon", "Icon"),
    ("attach", "attachment", "Attachment"),
    ("filename", "attachment", "Attachment's file name"),
    ("actions", "actions", "Action buttons"),
)
"""Each content field of a revision, the key ntfy stores it under, and the page's label."""


def topic(url: str, name: str) -> Collection:
    """A topic as the page names it: its name, and its URL on this instance (``url`` without a trailing slash)."""
    return Collection(path=f"{url}/{name}", name=name)


def _when(seconds: Any) -> tuple[str | None, str | None]:
    """A Unix time as ``2026-12-03 09:00:05 UTC`` and its instant (ISO 8601) for the browser's zone."""
    try:
        moment = dt.datetime.fromtimestamp(int(seconds), dt.UTC)
    except (TypeError, ValueError, OverflowError, OSError):
        return None, None
    return f"{moment:%Y-%m-%d %H:%M:%S} UTC", moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def message(
    url: str, name: str, event: Mapping[str, Any], *, changes: Iterable[Change] = (), now: float | None = None
) -> StoredEntry:
    """One notification as the topic's cache holds it (its newest version): title, first line, time, version.

    Args:
        url: The instance's base URL.
        name: The topic.
        event: The sequence's newest ``message`` event as polled.
        changes: For a revision, each field before -> after (:func:`content_changes`).
        now: The current Unix time (a message due later is scheduled); default the clock.
    """
    text = str(event.get("message") or "")
    first, _, rest = text.partition("\n")
    sent, instant = _when(event.get("time"))
    scheduled = isinstance(event.get("time"), int | float) and event["time"] > (time.time() if now is None else now)
    fields = [
        StoredField(label="Title", value=_text(event.get("title")), name=True),
        StoredField(label="First line", value=first or None),
    ]
    if rest:
        fields.append(StoredField(label="Lines after it", value=f"{len(rest.splitlines())}"))
    fields += [
        StoredField(label="Due" if scheduled else "Sent", value=sent, instant=instant),
        StoredField(label="Sequence id", value=_text(event.get("sequence_id") or event.get("id"))),
        StoredField(label="Version read (message id)", value=_text(event.get("id"))),
    ]
    kind = "Notification (scheduled, not delivered yet)" if scheduled else "Notification"
    return StoredEntry(kind=kind, collection=topic(url, name), fields=tuple(fields), changes=tuple(changes))


def messages(url: str, name: str, events: Iterable[Mapping[str, Any]]) -> StoredView:
    """A delete of notifications: each one (its newest version), listed up to the view's bound."""
    return StoredView(entries=tuple(message(url, name, event) for event in events))


def _text(value: Any) -> str | None:
    return None if value is None or value == "" else str(value)


def _stored(key: str, field: str, event: Mapping[str, Any]) -> str | None:
    """The value a stored message holds for a content field, as a person reads it."""
    value = event.get(key)
    if key == "content_type":
        return "yes" if value == "text/markdown" else None
    if key == "attachment":
        attachment: Mapping[str, Any] = value if isinstance(value, Mapping) else {}  # pyright: ignore[reportUnknownVariableType]
        return _text(attachment.get("name" if field == "filename" else "url"))
    return _given(field, value)


def _given(field: str, value: Any) -> str | None:
    """A content field's value as a person reads it (a list joined, buttons counted, Markdown as yes)."""
    if value is None or value == [] or value == "":
        return None
    if field == "markdown":
        return "yes" if value else None
    if field == "actions":
        count = len(value) if isinstance(value, list) else 1  # pyright: ignore[reportUnknownArgumentType]
        return f"{count} button{'s' if count != 1 else ''}"
    if isinstance(value, list):
        return ", ".join(str(item) for item in value)  # pyright: ignore[reportUnknownVariableType]
    return str(value)


def content_changes(current: Mapping[str, Any], new: Mapping[str, Any]) -> list[Change]:
    """Before -> after of every content field a revision replaces (it replaces the whole notification).

    ``current`` is the newest message as polled; ``new`` the revision's fields (``Content.model_dump``,
    ``None`` for a field not set). A field neither sets is left out.
    """
    out: list[Change] = []
    for field, key, label in _CONTENT:
        before, after = _stored(key, field, current), _given(field, new.get(field))
        if before is None and after is None:
            continue
        out.append(Change(label=label, before=before, after=after, name=field == "title"))
    return out


def _rules(grants: Iterable[Grant]) -> str | None:
    listed = [f"{grant.topic}: {grant.permission}" for grant in grants]
    return "; ".join(listed) if listed else None


def account(url: str, username: str, user: User | None, *, changes: Iterable[Change] = ()) -> StoredEntry:
    """An account as the instance's user list holds it: name, role and access rules (``user`` None: none yet)."""
    if user is None:
        fields = (
            StoredField(label="Account", value=username, name=True),
            StoredField(label="Exists now", value="no: this call creates it, with the role user and no access"),
        )
        kind = "Account (new)"
    else:
        fields = (
            StoredField(label="Account", value=user.name, name=True),
            StoredField(label="Role", value=user.role),
            StoredField(label="Access rules", value=f"{len(user.grants)}"),
            StoredField(label="Rules", value=_rules(user.grants)),
        )
        kind = "Account"
    return StoredEntry(kind=kind, collection=Collection(path=f"{url}/v1/users"), fields=fields, changes=tuple(changes))


def access_change(user: User, name: str, permission: str) -> Change:
    """One access rule before -> after: the rule(s) ``user`` has for topic ``name`` now, and what the call writes."""
    before = _rules(grant for grant in user.grants if grant.topic == name)
    after = None if permission == "remove" else f"{name}: {permission}"
    return Change(label=f"Access to {name}", before=before, after=after)
