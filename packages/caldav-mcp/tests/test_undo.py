"""Undo on a real Radicale: what a guarded delete, overwrite or move removed comes back, byte for byte.

Each case changes an event with a yes, lists what can be restored (ids, places, times; never the text),
restores it with a yes, and reads back the same UID and the same bytes the server sent before the change.
A restore over an entry changed since refuses and writes nothing; a replayed restore finds nothing to do.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from approval_core import ApprovalSettings
from approval_core.testing import DialogLog, connect
from caldav_helpers import HOSTILE, hostile_series, ics, structured, vevent
from caldav_mcp.server import build_server
from caldav_mcp.settings import CalDAVSettings

pytestmark = pytest.mark.anyio

REVISION = "2025-11-25"


def meeting(uid: str, summary: str = "Meeting") -> str:
    return ics(vevent(uid, ":20261201T090000Z", ":20261201T100000Z", summary))


def series(uid: str, count: int = 3) -> str:
    return ics(vevent(uid, ":20261201T090000Z", ":20261201T100000Z", "Weekly", f"RRULE:FREQ=WEEKLY;COUNT={count}\n"))


def raw(account, calendar: str, name: str) -> tuple[int, bytes]:
    response = account.dav.request(account.server.url.rstrip("/") + calendar + name, "GET")
    body = response.raw if isinstance(response.raw, bytes) else response.raw.encode()
    return response.status, body


async def restorable(client, calendar: str) -> list[dict]:
    listed = structured(await client.call_tool("list_restorable", {"calendar": calendar}))
    return listed["entries"]


async def test_a_deleted_event_comes_back_with_the_same_uid_and_bytes(account) -> None:
    account.put(account.work, "gone.ics", meeting("gone@x"))
    before = raw(account, account.work, "gone.ics")
    log = DialogLog()
    async with connect(account.build(), revision=REVISION, answer=log) as client:
        structured(await client.call_tool("delete_event", {"calendar": account.work, "id": "gone@x"}))
        assert raw(account, account.work, "gone.ics")[0] == 404
        [row] = await restorable(client, account.work)
        assert row["change"] == "deleted"
        assert row["tool"] == "delete_event"
        assert row["href"] == f"{account.work}gone.ics"
        assert row["bytes"] == len(before[1])
        restored = structured(await client.call_tool("restore_entry", {"calendar": row["collection"], "id": row["id"]}))
        assert restored["how"] == "create"
        assert await restorable(client, account.work) == []
    assert raw(account, account.work, "gone.ics") == before
    assert "recoverable for 7 day(s) with restore_entry" in log.messages[0]
    assert "Put back an entry that is gone, where it was" in log.messages[1]


async def test_an_overwritten_series_comes_back_over_the_version_the_change_left(account) -> None:
    account.put(account.work, "weekly.ics", series("weekly@x"))
    before = raw(account, account.work, "weekly.ics")
    async with connect(account.build(), revision=REVISION, answer=DialogLog()) as client:
        call = {"calendar": account.work, "id": "weekly@x", "scope": "series", "summary": "Renamed"}
        structured(await client.call_tool("update_event", call))
        assert b"Renamed" in raw(account, account.work, "weekly.ics")[1]
        [row] = await restorable(client, account.work)
        assert row["change"] == "overwritten"
        restored = structured(await client.call_tool("restore_entry", {"calendar": row["collection"], "id": row["id"]}))
    assert restored["how"] == "replace"
    assert raw(account, account.work, "weekly.ics") == before


async def test_one_deleted_occurrence_comes_back(account) -> None:
    account.put(account.work, "weekly.ics", series("weekly@x"))
    before = raw(account, account.work, "weekly.ics")
    async with connect(account.build(), revision=REVISION, answer=DialogLog()) as client:
        call = {"calendar": account.work, "id": "weekly@x#20261208T090000Z", "scope": "occurrence"}
        structured(await client.call_tool("delete_event", call))
        assert b"EXDATE" in raw(account, account.work, "weekly.ics")[1]
        [row] = await restorable(client, account.work)
        structured(await client.call_tool("restore_entry", {"calendar": row["collection"], "id": row["id"]}))
    assert raw(account, account.work, "weekly.ics") == before


async def test_a_split_series_comes_back_only_once_its_new_series_is_deleted(account) -> None:
    account.put(account.work, "weekly.ics", series("weekly@x", count=4))
    before = raw(account, account.work, "weekly.ics")
    log = DialogLog()
    async with connect(account.build(), revision=REVISION, answer=log) as client:
        call = {"calendar": account.work, "id": "weekly@x#20261208T090000Z", "scope": "following", "summary": "Later"}
        split = structured(await client.call_tool("update_event", call))
        new_uid = split["uid"]
        assert split["split_from"] == "weekly@x"
        [row] = await restorable(client, account.work)
        assert (row["tool"], row["change"]) == ("update_event", "overwritten")
        ended = raw(account, account.work, "weekly.ics")
        refused = await client.call_tool("restore_entry", {"calendar": row["collection"], "id": row["id"]})
        assert refused.is_error
        text = refused.content[0].text
        assert new_uid in text
        assert f"Delete {new_uid} first" in text
        assert "nothing was written" in text
        assert raw(account, account.work, "weekly.ics") == ended  # refused before asking: nothing written
        assert len(log.messages) == 1  # only the split asked
        structured(await client.call_tool("delete_event", {"calendar": account.work, "id": new_uid, "scope": "series"}))
        kept = {r["tool"]: r for r in await restorable(client, account.work)}
        restored = structured(
            await client.call_tool("restore_entry", {"calendar": account.work, "id": kept["update_event"]["id"]})
        )
        gone = await client.call_tool("get_event", {"calendar": account.work, "id": new_uid})
    assert restored["how"] == "replace"
    assert raw(account, account.work, "weekly.ics") == before  # the old series whole again
    assert gone.is_error  # and the new one gone: no occurrence shows twice
    assert "restore_entry puts it back once the new series has been deleted" in log.messages[0]
    assert "recoverable for 7 day(s) with restore_entry" in log.messages[0]


async def test_a_moved_event_is_moved_back(account) -> None:
    account.put(account.work, "moving.ics", meeting("moving@x"))
    before = raw(account, account.work, "moving.ics")
    async with connect(account.build(), revision=REVISION, answer=DialogLog()) as client:
        call = {"calendar": account.work, "id": "moving@x", "destination": account.home}
        structured(await client.call_tool("move_event", call))
        [row] = await restorable(client, account.work)
        assert row["change"] == "moved"
        assert row["now_at"] == f"{account.home}moving.ics"
        restored = structured(await client.call_tool("restore_entry", {"calendar": row["collection"], "id": row["id"]}))
    assert restored["how"] == "move_back"
    assert raw(account, account.work, "moving.ics") == before
    assert raw(account, account.home, "moving.ics")[0] == 404


async def test_a_restore_over_an_entry_changed_since_refuses_and_writes_nothing(account) -> None:
    account.put(account.work, "weekly.ics", series("weekly@x"))
    async with connect(account.build(), revision=REVISION, answer=DialogLog()) as client:
        call = {"calendar": account.work, "id": "weekly@x", "scope": "series", "summary": "Renamed"}
        structured(await client.call_tool("update_event", call))
        account.put(account.work, "weekly.ics", series("weekly@x", count=5))  # someone else changes it
        changed = raw(account, account.work, "weekly.ics")
        [row] = await restorable(client, account.work)
        refused = await client.call_tool("restore_entry", {"calendar": row["collection"], "id": row["id"]})
        assert refused.is_error
        assert "has changed since update_event" in refused.content[0].text
        assert "nothing was written" in refused.content[0].text
        assert len(await restorable(client, account.work)) == 1  # still kept
    assert raw(account, account.work, "weekly.ics") == changed


async def test_a_deleted_event_recreated_since_is_not_overwritten(account) -> None:
    account.put(account.work, "gone.ics", meeting("gone@x"))
    async with connect(account.build(), revision=REVISION, answer=DialogLog()) as client:
        structured(await client.call_tool("delete_event", {"calendar": account.work, "id": "gone@x"}))
        account.put(account.work, "gone.ics", meeting("gone@x", "Someone else's"))
        [row] = await restorable(client, account.work)
        refused = await client.call_tool("restore_entry", {"calendar": row["collection"], "id": row["id"]})
    assert refused.is_error
    assert "was written again since delete_event" in refused.content[0].text
    assert b"Someone else" in raw(account, account.work, "gone.ics")[1]


async def test_a_replayed_restore_finds_nothing_to_do(account) -> None:
    account.put(account.work, "gone.ics", meeting("gone@x"))
    async with connect(account.build(), revision=REVISION, answer=DialogLog()) as client:
        structured(await client.call_tool("delete_event", {"calendar": account.work, "id": "gone@x"}))
        [row] = await restorable(client, account.work)
        structured(await client.call_tool("restore_entry", {"calendar": row["collection"], "id": row["id"]}))
        structured(await client.call_tool("delete_event", {"calendar": account.work, "id": "gone@x"}))
        again = await client.call_tool("restore_entry", {"calendar": row["collection"], "id": row["id"]})
    assert again.is_error
    assert "holds no entry" in again.content[0].text
    assert raw(account, account.work, "gone.ics")[0] == 404


async def test_nothing_stored_reaches_the_listing_or_the_dialogs(account) -> None:
    account.put(account.work, "hostile.ics", hostile_series())
    log = DialogLog()
    async with connect(account.build(), revision=REVISION, answer=log) as client:
        call = {"calendar": account.work, "id": "hostile@example.org", "scope": "series"}
        structured(await client.call_tool("delete_event", call))
        listed = await client.call_tool("list_restorable", {})
        [row] = [r for r in listed.structured_content["entries"] if r["collection"] == account.work]
        restored = await client.call_tool("restore_entry", {"calendar": row["collection"], "id": row["id"]})
    seen = json.dumps(listed.structured_content) + listed.content[0].text + restored.content[0].text
    for shown in [seen, *log.messages]:
        assert HOSTILE not in shown
        assert "Approved by IT" not in shown


async def test_with_the_journal_off_the_dialog_says_it_cannot_be_undone(account) -> None:
    account.put(account.work, "gone.ics", meeting("gone@x"))
    log = DialogLog()
    async with connect(account.build(ApprovalSettings(undo_days=0)), revision=REVISION, answer=log) as client:
        structured(await client.call_tool("delete_event", {"calendar": account.work, "id": "gone@x"}))
        listed = structured(await client.call_tool("list_restorable", {}))
    assert "Once it is gone there is nothing to restore it from" in log.messages[0]
    assert "recoverable" not in log.messages[0]
    assert listed["entries"] == []
    assert listed["days"] is None


async def test_an_entry_changed_on_disk_or_from_another_key_does_not_open(account, tmp_path) -> None:
    import os

    account.put(account.work, "gone.ics", meeting("gone@x"))
    async with connect(account.build(), revision=REVISION, answer=DialogLog()) as client:
        structured(await client.call_tool("delete_event", {"calendar": account.work, "id": "gone@x"}))
        [row] = await restorable(client, account.work)
        folder = Path(os.environ["XDG_DATA_HOME"]) / "mcp-approval-family" / "journal" / "caldav-mcp"
        [path] = [p for p in folder.iterdir() if p.name.endswith(f"-{row['id']}.j")]
        assert path.stat().st_mode & 0o077 == 0
        assert folder.stat().st_mode & 0o077 == 0
        sealed = path.read_bytes()
        assert b"gone@x" not in sealed
        assert b"VEVENT" not in sealed
        path.write_bytes(sealed[:-1] + bytes([sealed[-1] ^ 1]))  # one bit flipped
        listed = structured(await client.call_tool("list_restorable", {}))
        assert row["id"] not in [r["id"] for r in listed["entries"]]
        assert listed["unreadable"] >= 1
        refused = await client.call_tool("restore_entry", {"calendar": row["collection"], "id": row["id"]})
        assert refused.is_error
        assert "does not open" in refused.content[0].text
    assert raw(account, account.work, "gone.ics")[0] == 404


async def test_a_restore_into_another_calendar_by_a_crafted_call_refuses(account) -> None:
    account.put(account.work, "gone.ics", meeting("gone@x"))
    async with connect(account.build(), revision=REVISION, answer=DialogLog()) as client:
        structured(await client.call_tool("delete_event", {"calendar": account.work, "id": "gone@x"}))
        [row] = await restorable(client, account.work)
        crafted = await client.call_tool("restore_entry", {"calendar": account.home, "id": row["id"]})
        made_up = await client.call_tool("restore_entry", {"calendar": account.work, "id": "0123456789abcdef"})
        not_an_id = await client.call_tool("restore_entry", {"calendar": account.work, "id": "../../home/x"})
    assert crafted.is_error
    assert "kept from another calendar" in crafted.content[0].text
    assert made_up.is_error
    assert "holds no entry" in made_up.content[0].text
    assert not_an_id.is_error
    assert raw(account, account.home, "gone.ics")[0] == 404
    assert raw(account, account.work, "gone.ics")[0] == 404


async def test_another_account_of_the_same_user_is_not_offered_the_entry(account) -> None:
    account.put(account.work, "gone.ics", meeting("gone@x"))
    async with connect(account.build(), revision=REVISION, answer=DialogLog()) as client:
        structured(await client.call_tool("delete_event", {"calendar": account.work, "id": "gone@x"}))
        [row] = await restorable(client, account.work)
    other = build_server(ApprovalSettings(), CalDAVSettings(account.server.url, "other", "secret"))
    async with connect(other, revision=REVISION, answer=DialogLog()) as client:
        listed = structured(await client.call_tool("list_restorable", {}))
    assert row["id"] not in [r["id"] for r in listed["entries"]]
