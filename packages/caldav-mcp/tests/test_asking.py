"""Seed 000: which caldav-mcp tools ask, when, what the dialog says, and what it never says."""

from __future__ import annotations

import pytest
from rewriting_proxy import rewriting_proxy

from approval_core import CALLER_VALUES_HEADING, ApprovalSettings
from approval_core.testing import REVISIONS, DialogLog, accept, approval_of, connect, decline
from caldav_helpers import HOSTILE, hostile_series, ics, structured, vevent
from caldav_mcp.server import build_server
from caldav_mcp.settings import CalDAVSettings

pytestmark = pytest.mark.anyio

SERIES_ID = "hostile@example.org"
OCCURRENCE_ID = "hostile@example.org#20261202T080000Z"
NO_HISTORY = "A CalDAV server keeps no version history. Once it is gone there is nothing to restore it from."
OFF_JOURNAL = ApprovalSettings(undo_days=0)
"""The seed's dialogs, word for word: with the undo journal on they also say how long a change stays recoverable."""
KEPT = (
    "A CalDAV server keeps no version history, so this server keeps the entry as it is now in its own undo "
    "journal (list_restorable shows it); after that it is gone."
)


def guarded_calls(account) -> dict[str, dict]:
    return {
        "delete_event": {"calendar": account.work, "id": SERIES_ID, "scope": "series"},
        "move_event": {"calendar": account.work, "id": SERIES_ID, "destination": account.home},
        "respond_to_event": {
            "calendar": account.work,
            "id": SERIES_ID,
            "partstat": "ACCEPTED",
            "attendee": "willi@example.org",
        },
        "update_event": {"calendar": account.work, "id": SERIES_ID, "scope": "series", "summary": "Renamed"},
    }


async def entries(client, account) -> list[str]:
    listed = structured(
        await client.call_tool("list_events", {"calendar": account.work, "start": "2026-12-01", "end": "2026-12-31"})
    )
    return [e["summary"] for e in listed["events"]]


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize("tool", ["delete_event", "move_event", "respond_to_event", "update_event"])
async def test_a_hostile_entry_never_reaches_the_dialog_and_a_decline_changes_nothing(account, revision, tool) -> None:
    account.put(account.work, "hostile.ics", hostile_series())
    log = DialogLog(decline)
    async with connect(account.build(), revision=revision, answer=log) as client:
        result = await client.call_tool(tool, guarded_calls(account)[tool])
        after = await entries(client, account)
    assert result.is_error
    assert approval_of(result)["outcome"] == "declined"
    assert after == [HOSTILE] * 3
    (message,) = log.messages
    assert HOSTILE not in message
    assert "mallory" not in message
    assert "willi@example.org" not in message
    assert f"{CALLER_VALUES_HEADING}\n  Calendar: {account.work}\n  Event: {SERIES_ID}" in message


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize(
    ("days", "said"),
    [
        (0, f"Delete a recurring event and all 3 of its occurrences\n\n{NO_HISTORY}"),  # the journal off: seed 000
        (
            7,
            "Delete a recurring event and all 3 of its occurrences, recoverable for 7 day(s) with restore_entry"
            f"\n\n{KEPT}",
        ),
    ],
)
async def test_deleting_a_series_says_how_many_occurrences_go(account, revision, days, said) -> None:
    account.put(account.work, "hostile.ics", hostile_series())
    log = DialogLog(accept)
    async with connect(account.build(ApprovalSettings(undo_days=days)), revision=revision, answer=log) as client:
        result = await client.call_tool("delete_event", guarded_calls(account)["delete_event"])
        after = await entries(client, account)
    structured(result)
    assert after == []
    assert log.messages == [f"{said}\n\n{CALLER_VALUES_HEADING}\n  Calendar: {account.work}\n  Event: {SERIES_ID}"]


async def test_the_dialog_describes_the_entry_itself(account) -> None:
    account.put(account.work, "lunch.ics", ics(vevent("lunch@x", ":20261201T120000Z", ":20261201T130000Z", "Lunch")))
    account.put(
        account.work,
        "open.ics",
        ics(vevent("open@x", ":20261201T080000Z", ":20261201T083000Z", "Gym", "RRULE:FREQ=WEEKLY\n")),
    )
    account.put(account.work, "hostile.ics", hostile_series())
    log = DialogLog(decline)
    async with connect(account.build(OFF_JOURNAL), revision="2026-07-28", answer=log) as client:
        # A caller that calls the lunch a series gets no say: it does not repeat.
        series_claim = await client.call_tool(
            "delete_event", {"calendar": account.work, "id": "lunch@x", "scope": "occurrence"}
        )
        await client.call_tool("delete_event", {"calendar": account.work, "id": "lunch@x"})
        await client.call_tool("delete_event", {"calendar": account.work, "id": "open@x", "scope": "series"})
        await client.call_tool("delete_event", {"calendar": account.work, "id": OCCURRENCE_ID, "scope": "occurrence"})
    assert series_claim.is_error
    assert [m.split("\n")[0] for m in log.messages] == [
        "Delete an event",
        "Delete a recurring event that never ends, with every occurrence it would have",
        "Delete one occurrence of a recurring event",
    ]


@pytest.mark.parametrize("revision", REVISIONS)
async def test_update_event_asks_only_for_a_whole_series(account, revision) -> None:
    account.put(account.work, "hostile.ics", hostile_series())
    account.put(account.work, "lunch.ics", ics(vevent("lunch@x", ":20261201T120000Z", ":20261201T130000Z", "Lunch")))
    log = DialogLog(accept)
    async with connect(account.build(), revision=revision, answer=log) as client:
        structured(
            await client.call_tool("update_event", {"calendar": account.work, "id": "lunch@x", "summary": "Long lunch"})
        )
        structured(
            await client.call_tool(
                "update_event",
                {"calendar": account.work, "id": OCCURRENCE_ID, "scope": "occurrence", "summary": "One-off"},
            )
        )
        assert log.messages == []
        structured(
            await client.call_tool(
                "update_event",
                {"calendar": account.work, "id": SERIES_ID, "scope": "series", "location": "Room 2", "summary": "All"},
            )
        )
    (message,) = log.messages
    # The occurrence changed first keeps its own values: the series change reaches the other two.
    assert message.startswith(
        "Change 2 field(s) of a recurring event, in 2 of its 3 occurrences; 1 with changes of their own keep them"
    )
    assert message.endswith(f"  Calendar: {account.work}\n  Event: {SERIES_ID}\n  Fields: location, summary")


@pytest.mark.parametrize("revision", REVISIONS)
async def test_the_token_path_for_every_guarded_tool(account, revision) -> None:
    off = ApprovalSettings(elicitation=False)
    account.put(account.work, "hostile.ics", hostile_series())
    async with connect(account.build(off), revision=revision, answer=accept) as client:
        for tool, args in guarded_calls(account).items():
            if tool == "delete_event":
                continue
            first = await client.call_tool(tool, args)
            assert first.is_error, tool
            assert "caldav-mcp was started with the approval dialog switched off" in first.content[0].text
            assert HOSTILE not in first.content[0].text
            token = approval_of(first)["confirm_token"]
            structured(await client.call_tool(tool, {**args, "confirm_token": token}))
            if tool == "move_event":
                structured(
                    await client.call_tool(
                        "move_event",
                        {
                            "calendar": account.home,
                            "id": SERIES_ID,
                            "destination": account.work,
                            "confirm_token": approval_of(
                                await client.call_tool(
                                    "move_event",
                                    {
                                        "calendar": account.home,
                                        "id": SERIES_ID,
                                        "destination": account.work,
                                    },
                                )
                            )["confirm_token"],
                        },
                    )
                )
        first = await client.call_tool("delete_event", guarded_calls(account)["delete_event"])
        token = approval_of(first)["confirm_token"]
        widened = await client.call_tool(
            "delete_event",
            {"calendar": account.work, "id": OCCURRENCE_ID, "scope": "occurrence", "confirm_token": token},
        )
        assert widened.is_error
        assert "issued for a different call" in widened.content[0].text
        assert len(await entries(client, account)) == 3


@pytest.mark.parametrize("revision", REVISIONS)
async def test_tasks_and_journals_ask_only_to_delete(account, revision) -> None:
    log = DialogLog(accept)
    async with connect(account.build(), revision=revision, answer=log) as client:
        task = structured(await client.call_tool("create_task", {"calendar": account.work, "summary": HOSTILE}))
        note = structured(await client.call_tool("create_journal", {"calendar": account.work, "summary": HOSTILE}))
        structured(await client.call_tool("update_task", {"calendar": account.work, "uid": task["uid"], "priority": 1}))
        structured(await client.call_tool("complete_task", {"calendar": account.work, "uid": task["uid"]}))
        structured(
            await client.call_tool(
                "update_journal", {"calendar": account.work, "uid": note["uid"], "description": "more"}
            )
        )
        assert log.messages == []
        structured(await client.call_tool("delete_task", {"calendar": account.work, "uid": task["uid"]}))
        structured(await client.call_tool("delete_journal", {"calendar": account.work, "uid": note["uid"]}))
        tasks = structured(await client.call_tool("list_tasks", {"calendar": account.work}))
    assert tasks["tasks"] == []
    assert [m.split("\n")[0] for m in log.messages] == [
        "Delete a task, recoverable for 7 day(s) with restore_entry",
        "Delete a journal entry, recoverable for 7 day(s) with restore_entry",
    ]
    assert all(HOSTILE not in m for m in log.messages)


async def test_move_validates_the_destination_before_asking(account) -> None:
    account.put(account.work, "hostile.ics", hostile_series())
    account.put(account.home, "same.ics", hostile_series())
    log = DialogLog(accept)
    async with connect(account.build(), revision="2026-07-28", answer=log) as client:
        results = [
            await client.call_tool("move_event", {"calendar": account.work, "id": SERIES_ID, "destination": dest})
            for dest in (account.work, account.tasks_only, "/other/calendar/", account.home, "https://evil.example/x/")
        ]
    texts = [r.content[0].text for r in results]
    assert all(r.is_error for r in results)
    assert "already in" in texts[0]
    assert "does not accept events" in texts[1]
    assert "not one of the calendars" in texts[2]
    assert "already has an event with this UID" in texts[3]
    assert "destination: must be a calendar id from list_calendars; ids are paths on the configured server" in texts[4]
    assert "never a URL or a host" in texts[4]  # the layer's rule: no URL is an id, not even one on the origin
    assert log.messages == []


async def test_responding_without_scheduling_says_only_the_marker_changes(account) -> None:
    account.put(account.work, "hostile.ics", hostile_series())
    log = DialogLog(accept)
    async with connect(account.build(), revision="2025-11-25", answer=log) as client:
        result = structured(await client.call_tool("respond_to_event", guarded_calls(account)["respond_to_event"]))
        event = structured(await client.call_tool("get_event", {"calendar": account.work, "id": SERIES_ID}))
    assert result["reply_sent_by_server"] is False
    assert "does not do RFC 6638 scheduling: only the participation marker" in log.messages[0]
    assert "  Answer: ACCEPTED" in log.messages[0]
    assert [a["partstat"] for a in event["attendees"]] == ["ACCEPTED"]


async def test_responding_to_an_event_without_you_fails_before_asking(account) -> None:
    account.put(account.work, "lunch.ics", ics(vevent("lunch@x", ":20261201T120000Z", ":20261201T130000Z", "Lunch")))
    log = DialogLog(accept)
    async with connect(account.build(), revision="2026-07-28", answer=log) as client:
        result = await client.call_tool(
            "respond_to_event", {"calendar": account.work, "id": "lunch@x", "partstat": "DECLINED"}
        )
    assert result.is_error
    assert "not among the event's attendees" in result.content[0].text
    assert log.messages == []


@pytest.mark.parametrize("revision", REVISIONS)
async def test_the_token_path_deletes_tasks_and_journal_entries(account, revision) -> None:
    off = ApprovalSettings(elicitation=False)
    async with connect(account.build(off), revision=revision) as client:
        made = {
            "delete_task": [
                structured(await client.call_tool("create_task", {"calendar": account.work, "summary": s}))["uid"]
                for s in "ab"
            ],
            "delete_journal": [
                structured(await client.call_tool("create_journal", {"calendar": account.work, "summary": s}))["uid"]
                for s in "ab"
            ],
        }
        for tool, (first_uid, second_uid) in made.items():
            first = await client.call_tool(tool, {"calendar": account.work, "uid": first_uid})
            assert first.is_error
            token = approval_of(first)["confirm_token"]
            other = await client.call_tool(tool, {"calendar": account.work, "uid": second_uid, "confirm_token": token})
            assert other.is_error
            assert "issued for a different call" in other.content[0].text
            fresh = await client.call_tool(tool, {"calendar": account.work, "uid": first_uid})
            token = approval_of(fresh)["confirm_token"]
            structured(
                await client.call_tool(tool, {"calendar": account.work, "uid": first_uid, "confirm_token": token})
            )
        tasks = structured(await client.call_tool("list_tasks", {"calendar": account.work}))
        notes = structured(await client.call_tool("list_journals", {"calendar": account.work}))
    assert [t["uid"] for t in tasks["tasks"]] == [made["delete_task"][1]]
    assert [n["uid"] for n in notes["journals"]] == [made["delete_journal"][1]]


@pytest.mark.parametrize("revision", REVISIONS)
@pytest.mark.parametrize("tool", ["delete_event", "move_event"])
async def test_an_event_whose_end_cannot_be_read_can_still_be_changed(account, revision, tool) -> None:
    """A stored DTEND that is not a time (another client wrote it) does not stop the approval page's view.

    Radicale rewrites what it is sent, so a rewriting proxy (a test double) serves the entry as a server that
    keeps the bytes would: its DTEND with a space inside, which the icalendar library cannot read as a time.
    """
    account.put(account.work, "broken.ics", ics(vevent("broken@example.org", ":20261203T100000Z", ":20261203T110000Z")))
    arguments = {"calendar": account.work, "id": "broken@example.org"}
    if tool == "move_event":
        arguments["destination"] = account.home
    log = DialogLog(accept)
    with rewriting_proxy(
        account.server.url, lambda body: body.replace(b"DTEND:20261203T", b"DTEND:20261203 T")
    ) as proxy:
        server = build_server(ApprovalSettings(), CalDAVSettings(proxy.url, "willi", "secret"))
        async with connect(server, revision=revision, answer=log) as client:
            result = await client.call_tool(tool, arguments)
    assert not result.is_error, result
    assert account.get(account.work, "broken.ics")[0] == 404
    (message,) = log.messages
    assert "20261203 T" not in message
