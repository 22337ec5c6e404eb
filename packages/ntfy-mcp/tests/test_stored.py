"""What ntfy-mcp hands the approval page (ntfy_mcp.stored), checked without a server.

The browser tests (test_page_stored.py) show the page drawing these views;
here each builder's choices are pinned: a notification's title, first line and
time; a revision listing every field either version sets (it replaces the
whole notification); an account's rules and a rule change.
"""

from __future__ import annotations

from ntfy_mcp import stored
from ntfy_mcp.outputs import Grant, User

URL = "https://ntfy.example.org"


def test_a_notification_shows_its_title_first_line_and_time() -> None:
    event = {"id": "m2", "sequence_id": "s1", "time": 1_796_288_400, "title": "Backup", "message": "done\nok\nbye"}
    shown = stored.message(URL, "alerts", event, now=1_796_288_500)
    fields = {f.label: (f.value, f.instant) for f in shown.fields}
    assert fields == {
        "Title": ("Backup", None),
        "First line": ("done", None),
        "Lines after it": ("2", None),
        "Sent": ("2026-12-03 09:00:00 UTC", "2026-12-03T09:00:00Z"),
        "Sequence id": ("s1", None),
        "Version read (message id)": ("m2", None),
    }
    assert shown.collection.path == f"{URL}/alerts"
    assert shown.etag is None, "ntfy has no ETag"
    assert stored.message(URL, "alerts", event, now=1_796_288_000).kind.startswith("Notification (scheduled")


def test_a_revision_lists_every_field_either_version_sets() -> None:
    current = {"title": "Old", "message": "m", "tags": ["a", "b"], "content_type": "text/markdown",
               "attachment": {"name": "f.txt", "url": "https://x.example/f.txt"}}  # fmt: skip
    new = {"title": "New", "message": "m", "priority": 4, "actions": [{"action": "view"}]}
    changes = {c.label: (c.before, c.after) for c in stored.content_changes(current, new)}
    assert changes == {
        "Title": ("Old", "New"),
        "Message": ("m", "m"),
        "Priority": (None, "4"),
        "Tags": ("a, b", None),
        "Markdown": ("yes", None),
        "Attachment": ("https://x.example/f.txt", None),
        "Attachment's file name": ("f.txt", None),
        "Action buttons": (None, "1 button"),
    }


def test_an_account_shows_its_role_and_rules_and_a_rule_change() -> None:
    user = User(name="phil", role="user", grants=[Grant(topic="alerts", permission="read-write")])
    change = stored.access_change(user, "alerts", "read-only")
    shown = stored.account(URL, "phil", user, changes=[change])
    assert {f.label: f.value for f in shown.fields} == {
        "Account": "phil",
        "Role": "user",
        "Access rules": "1",
        "Rules": "alerts: read-write",
    }
    assert (change.before, change.after) == ("alerts: read-write", "alerts: read-only")
    assert stored.access_change(user, "alerts", "remove").after is None
    assert stored.account(URL, "newbie", None).kind == "Account (new)"
