"""An approval binds what the person was shown: the ETag read and the counts the dialog states.

Each case changes the entry with another client (a plain PUT) between the question and the
answer. The token path must refuse the token, the 2026-07-28 path must ask afresh, and the
pushed dialog's write must be refused by the server (If-Match, 412), never retried.
"""

from __future__ import annotations

import anyio
import pytest
from mcp_types import InputRequiredResult

from approval_core import ApprovalSettings
from approval_core.testing import REVISIONS, DialogLog, approval_of, call_once, connect, ticked
from caldav_helpers import ics, structured, vevent
from caldav_mcp.client import Resource
from caldav_mcp.errors import BackendError

pytestmark = pytest.mark.anyio

UID = "weekly@x"
OFF = ApprovalSettings(elicitation=False)


def weekly(count: int, summary: str = "Weekly") -> str:
    return ics(vevent(UID, ":20261201T090000Z", ":20261201T100000Z", summary, f"RRULE:FREQ=WEEKLY;COUNT={count}\n"))


def rewrite(account, calendar: str, count: int, summary: str = "Weekly") -> None:
    """Another client replaces the series (same resource, new ETag)."""
    account.put(calendar, "weekly.ics", weekly(count, summary))


def still_there(account, calendar: str, count: int) -> bool:
    status, body = account.get(calendar, "weekly.ics")
    return status == 200 and f"COUNT={count}" in body


def text_of(result) -> str:
    return result.content[0].text


# ---------------------------------------------------------------- the token path (ELICITATION=false)


@pytest.mark.parametrize("revision", REVISIONS)
async def test_a_token_for_three_occurrences_does_not_delete_five_hundred(account, revision) -> None:
    account.put(account.work, "weekly.ics", weekly(3))
    call = {"calendar": account.work, "id": UID, "scope": "series"}
    async with connect(account.build(OFF), revision=revision) as client:
        first = await client.call_tool("delete_event", call)
        assert "Delete a recurring event and all 3 of its occurrences" in text_of(first)
        token = approval_of(first)["confirm_token"]
        rewrite(account, account.work, 500)
        second = await client.call_tool("delete_event", {**call, "confirm_token": token})
    assert approval_of(second)["outcome"] == "token_refused"
    assert "The confirm_token given was refused" in text_of(second)
    assert "Delete a recurring event and all 500 of its occurrences" in text_of(second)
    assert still_there(account, account.work, 500)


@pytest.mark.parametrize("revision", REVISIONS)
async def test_a_token_for_moving_two_occurrences_does_not_move_four_hundred(account, revision) -> None:
    account.put(account.work, "weekly.ics", weekly(2))
    call = {"calendar": account.work, "id": UID, "destination": account.home}
    async with connect(account.build(OFF), revision=revision) as client:
        first = await client.call_tool("move_event", call)
        assert "Move a recurring event with 2 occurrences to another calendar" in text_of(first)
        token = approval_of(first)["confirm_token"]
        rewrite(account, account.work, 400)
        second = await client.call_tool("move_event", {**call, "confirm_token": token})
    assert approval_of(second)["outcome"] == "token_refused"
    assert "Move a recurring event with 400 occurrences" in text_of(second)
    assert still_there(account, account.work, 400)
    assert account.get(account.home, "weekly.ics")[0] == 404


def _single(summary: str) -> str:
    return ics(vevent("single@x", ":20261201T090000Z", ":20261201T100000Z", summary))


def _todo(summary: str) -> str:
    return ics(f"BEGIN:VTODO\nUID:todo@x\nDTSTAMP:20261101T000000Z\nSUMMARY:{summary}\nEND:VTODO\n")


def _journal(summary: str) -> str:
    return ics(
        f"BEGIN:VJOURNAL\nUID:note@x\nDTSTAMP:20261101T000000Z\nDTSTART;VALUE=DATE:20261201\nSUMMARY:{summary}\n"
        "END:VJOURNAL\n"
    )


def _invitation(summary: str) -> str:
    return ics(
        vevent(
            "invite@x",
            ":20261201T090000Z",
            ":20261201T100000Z",
            summary,
            "ORGANIZER:mailto:boss@example.org\nATTENDEE;PARTSTAT=NEEDS-ACTION:mailto:willi@example.org\n",
        )
    )


# tool -> (file name, entry maker, arguments)
EVERY_GUARDED = {
    "delete_event": ("single.ics", _single, {"id": "single@x"}),
    "update_event": ("weekly.ics", lambda s: weekly(3, s), {"id": UID, "scope": "series", "summary": "New"}),
    "move_event": ("weekly.ics", lambda s: weekly(3, s), {"id": UID}),
    "respond_to_event": (
        "invite.ics",
        _invitation,
        {"id": "invite@x", "partstat": "DECLINED", "attendee": "willi@example.org"},
    ),
    "delete_task": ("todo.ics", _todo, {"uid": "todo@x"}),
    "delete_journal": ("note.ics", _journal, {"uid": "note@x"}),
}


@pytest.mark.parametrize("tool", sorted(EVERY_GUARDED))
async def test_every_guarded_tool_refuses_a_token_once_the_entry_changed(account, tool) -> None:
    name, make, arguments = EVERY_GUARDED[tool]
    call = {"calendar": account.work, **arguments}
    if tool == "move_event":
        call["destination"] = account.home
    account.put(account.work, name, make("Before"))
    async with connect(account.build(OFF), revision="2026-07-28") as client:
        first = await client.call_tool(tool, call)
        token = approval_of(first)["confirm_token"]
        account.put(account.work, name, make("Changed by someone else"))
        second = await client.call_tool(tool, {**call, "confirm_token": token})
        # The fresh token, given for the version now stored, goes through.
        third = await client.call_tool(tool, {**call, "confirm_token": approval_of(second)["confirm_token"]})
    assert approval_of(second)["outcome"] == "token_refused"
    structured(third)


# ---------------------------------------------------------------- 2026-07-28: input_required


async def test_an_answer_for_three_occurrences_gets_a_fresh_question_about_five_hundred(account) -> None:
    account.put(account.work, "weekly.ics", weekly(3))
    call = {"calendar": account.work, "id": UID, "scope": "series"}
    async with connect(account.build(), revision="2026-07-28", answer=DialogLog()) as client:
        asked = await call_once(client, "delete_event", call)
        assert isinstance(asked, InputRequiredResult)
        assert asked.input_requests["approval"].params.message.startswith(
            "Delete a recurring event and all 3 of its occurrences"
        )
        rewrite(account, account.work, 500)
        again = await call_once(client, "delete_event", call, answer=ticked, request_state=asked.request_state)
    assert isinstance(again, InputRequiredResult)
    assert again.input_requests["approval"].params.message.startswith(
        "Delete a recurring event and all 500 of its occurrences"
    )
    assert still_there(account, account.work, 500)


async def test_an_answer_for_moving_two_gets_a_fresh_question_about_four_hundred(account) -> None:
    account.put(account.work, "weekly.ics", weekly(2))
    call = {"calendar": account.work, "id": UID, "destination": account.home}
    async with connect(account.build(), revision="2026-07-28", answer=DialogLog()) as client:
        asked = await call_once(client, "move_event", call)
        assert isinstance(asked, InputRequiredResult)
        rewrite(account, account.work, 400)
        again = await call_once(client, "move_event", call, answer=ticked, request_state=asked.request_state)
    assert isinstance(again, InputRequiredResult)
    assert again.input_requests["approval"].params.message.startswith(
        "Move a recurring event with 400 occurrences to another calendar"
    )
    assert still_there(account, account.work, 400)
    assert account.get(account.home, "weekly.ics")[0] == 404


async def test_an_answer_about_a_single_event_rewritten_meanwhile_gets_a_fresh_question(account) -> None:
    account.put(account.work, "single.ics", _single("Before"))
    call = {"calendar": account.work, "id": "single@x"}
    async with connect(account.build(), revision="2026-07-28", answer=DialogLog()) as client:
        asked = await call_once(client, "delete_event", call)
        assert isinstance(asked, InputRequiredResult)
        account.put(account.work, "single.ics", _single("Rewritten"))
        again = await call_once(client, "delete_event", call, answer=ticked, request_state=asked.request_state)
        assert isinstance(again, InputRequiredResult)
        done = await call_once(client, "delete_event", call, answer=ticked, request_state=again.request_state)
    structured(done)
    assert account.get(account.work, "single.ics")[0] == 404


# ---------------------------------------------------------------- 2025-11-25: the pushed dialog


@pytest.mark.parametrize(
    ("tool", "call"),
    [
        ("delete_event", {"id": UID, "scope": "series"}),
        ("move_event", {"id": UID}),
        ("update_event", {"id": UID, "scope": "series", "summary": "Renamed"}),
    ],
)
async def test_a_change_while_the_dialog_is_open_makes_the_write_fail_with_412(account, tool, call) -> None:
    account.put(account.work, "weekly.ics", weekly(3))
    arguments = {"calendar": account.work, **call}
    if tool == "move_event":
        arguments["destination"] = account.home

    async def rewrite_then_accept(context, params):
        await anyio.to_thread.run_sync(rewrite, account, account.work, 500)
        return ticked

    async with connect(account.build(), revision="2025-11-25", answer=rewrite_then_accept) as client:
        result = await client.call_tool(tool, arguments)
    assert result.is_error
    assert "changed on the server since it was read (412 Precondition Failed). Nothing was written." in text_of(result)
    assert still_there(account, account.work, 500)
    _, body = account.get(account.work, "weekly.ics")
    assert "Renamed" not in body


def test_an_entry_without_an_etag_is_refused_before_asking() -> None:
    """A server that sends no ETag, even on the GET that find() falls back to, leaves nothing to bind."""
    from caldav_mcp.tools.events_write import version_of

    with pytest.raises(BackendError, match="sent no ETag for this entry"):
        version_of(Resource("/willi/work/a.ics", None, "BEGIN:VCALENDAR\r\nEND:VCALENDAR\r\n"))
    assert version_of(Resource("/willi/work/a.ics", '"abc"', "")) == '"abc"'
