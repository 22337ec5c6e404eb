"""Tasks, free/busy, configuration, CALDAV_CALENDARS, and the server over real stdio."""

from __future__ import annotations

import json
import os
import sys
import tempfile

import pytest
from mcp.client.stdio import StdioServerParameters, stdio_client

from approval_core import ApprovalSettings
from approval_core.testing import approval_of, connect
from caldav_helpers import ics, structured, vevent
from caldav_mcp.server import build_server, main
from caldav_mcp.settings import CalDAVSettings

pytestmark = pytest.mark.anyio


async def test_tasks_with_and_without_dates_status_filters_and_links(account) -> None:
    async with connect(account.build(), revision="2026-07-28") as client:
        parent = structured(
            await client.call_tool(
                "create_task", {"calendar": account.tasks_only, "summary": "Move house", "priority": 1}
            )
        )
        child = structured(
            await client.call_tool(
                "create_task",
                {"calendar": account.tasks_only, "summary": "Book van", "due": "2026-12-20", "parent": parent["uid"]},
            )
        )
        structured(
            await client.call_tool(
                "create_task", {"calendar": account.tasks_only, "summary": "Pack", "due": "2026-12-18T18:00:00+01:00"}
            )
        )
        structured(await client.call_tool("complete_task", {"calendar": account.tasks_only, "uid": child["uid"]}))
        every = structured(await client.call_tool("list_tasks", {"calendar": account.tasks_only}))
        open_ = structured(
            await client.call_tool("list_tasks", {"calendar": account.tasks_only, "status": ["NEEDS-ACTION"]})
        )
        structured(
            await client.call_tool(
                "complete_task", {"calendar": account.tasks_only, "uid": child["uid"], "completed": False}
            )
        )
        reopened = structured(await client.call_tool("get_task", {"calendar": account.tasks_only, "uid": child["uid"]}))
        events_here = await client.call_tool(
            "create_event", {"calendar": account.tasks_only, "summary": "x", "start": "2026-12-01"}
        )
    assert [t["summary"] for t in every["tasks"]] == ["Pack", "Book van", "Move house"]
    by_summary = {t["summary"]: t for t in every["tasks"]}
    assert by_summary["Book van"]["status"] == "COMPLETED"
    assert by_summary["Book van"]["percent_complete"] == 100
    assert by_summary["Book van"]["parent"] == parent["uid"]
    assert by_summary["Move house"]["children"] == [child["uid"]]
    assert by_summary["Move house"]["due"] is None
    assert by_summary["Move house"]["priority"] == 1
    assert [t["summary"] for t in open_["tasks"]] == ["Pack", "Move house"]
    assert (reopened["status"], reopened["completed"]) == ("NEEDS-ACTION", None)
    assert events_here.is_error
    assert "does not accept events" in events_here.content[0].text


def _vtodo(uid: str, due: str, summary: str) -> str:
    return f"BEGIN:VTODO\nUID:{uid}\nDTSTAMP:20261101T000000Z\nDUE{due}\nSUMMARY:{summary}\nEND:VTODO\n"


async def test_tasks_due_in_different_zones_are_listed_in_the_order_they_fall_due(account) -> None:
    """Tokyo's 09:00 is 00:00Z, before Berlin's 08:00 (07:00Z), though its wall-clock text sorts after."""
    account.put(account.tasks_only, "b.ics", ics(_vtodo("berlin@x", ";TZID=Europe/Berlin:20261218T080000", "A")))
    account.put(account.tasks_only, "t.ics", ics(_vtodo("tokyo@x", ";TZID=Asia/Tokyo:20261218T090000", "B")))
    account.put(account.tasks_only, "d.ics", ics(_vtodo("day@x", ";VALUE=DATE:20261217", "C")))  # read as 00:00Z
    async with connect(account.build(), revision="2026-07-28") as client:
        every = structured(await client.call_tool("list_tasks", {"calendar": account.tasks_only}))
        first = structured(await client.call_tool("list_tasks", {"calendar": account.tasks_only, "limit": 1}))
        rest = structured(
            await client.call_tool(
                "list_tasks", {"calendar": account.tasks_only, "limit": 5, "cursor": first["next_cursor"]}
            )
        )
    assert [t["uid"] for t in every["tasks"]] == ["day@x", "tokyo@x", "berlin@x"]
    assert [t["uid"] for t in first["tasks"] + rest["tasks"]] == ["day@x", "tokyo@x", "berlin@x"]


async def test_journal_entries_in_different_zones_are_listed_newest_first_by_their_instant(account) -> None:
    """Berlin's 08:00 (07:00Z) is newer than Tokyo's 09:00 (00:00Z) the same day."""
    for uid, start in (
        ("tokyo@x", ";TZID=Asia/Tokyo:20261201T090000"),
        ("berlin@x", ";TZID=Europe/Berlin:20261201T080000"),
    ):
        entry = f"BEGIN:VJOURNAL\nUID:{uid}\nDTSTAMP:20261101T000000Z\nDTSTART{start}\nSUMMARY:Note\nEND:VJOURNAL\n"
        account.put(account.home, f"{uid.split('@')[0]}.ics", ics(entry))
    async with connect(account.build(), revision="2026-07-28") as client:
        every = structured(await client.call_tool("list_journals", {"calendar": account.home}))
        first = structured(await client.call_tool("list_journals", {"calendar": account.home, "limit": 1}))
        rest = structured(
            await client.call_tool("list_journals", {"calendar": account.home, "cursor": first["next_cursor"]})
        )
    assert [j["uid"] for j in every["journals"]] == ["berlin@x", "tokyo@x"]
    assert [j["uid"] for j in first["journals"] + rest["journals"]] == ["berlin@x", "tokyo@x"]


async def test_free_busy_merges_calendars_and_ignores_transparent_and_cancelled(account) -> None:
    account.put(account.work, "a.ics", ics(vevent("a@x", ":20261201T090000Z", ":20261201T100000Z", "A")))
    account.put(account.home, "b.ics", ics(vevent("b@x", ":20261201T093000Z", ":20261201T110000Z", "B")))
    account.put(
        account.work, "t.ics", ics(vevent("t@x", ":20261201T130000Z", ":20261201T140000Z", "T", "TRANSP:TRANSPARENT\n"))
    )
    account.put(
        account.work, "c.ics", ics(vevent("c@x", ":20261201T150000Z", ":20261201T160000Z", "C", "STATUS:CANCELLED\n"))
    )
    args = {
        "start": "2026-12-01T08:00:00Z",
        "end": "2026-12-01T18:00:00Z",
        "calendars": [account.work, account.home],
        "min_duration_minutes": 60,
        "working_hours": "08:00-17:00",
    }
    async with connect(account.build(), revision="2026-07-28") as client:
        computed = structured(await client.call_tool("get_free_busy", {**args, "method": "events"}))
        auto = structured(await client.call_tool("get_free_busy", args))
        asked = structured(await client.call_tool("get_free_busy", {**args, "method": "server"}))
        bad = await client.call_tool("get_free_busy", {**args, "working_hours": "5pm-9am"})
    assert computed["source"] == "events"
    # Radicale answers the free-busy-query REPORT (RFC 4791 §7.10) with 200 text/calendar: read, not refused.
    # auto computes from the events.
    assert (auto["source"], asked["source"]) == ("events", "server")
    assert asked["busy"] == computed["busy"]
    assert computed["busy"] == [{"start": "2026-12-01T09:00:00+00:00", "end": "2026-12-01T11:00:00+00:00"}]
    assert computed["free"] == [
        {"start": "2026-12-01T08:00:00+00:00", "end": "2026-12-01T09:00:00+00:00"},
        {"start": "2026-12-01T11:00:00+00:00", "end": "2026-12-01T17:00:00+00:00"},
    ]
    assert auto["busy"] == computed["busy"]
    assert bad.is_error
    assert "working_hours" in bad.content[0].text


async def test_without_settings_the_tools_list_and_say_what_to_set() -> None:
    server = build_server(ApprovalSettings(), CalDAVSettings())
    async with connect(server, revision="2026-07-28") as client:
        tools = await client.list_tools()
        info = structured(await client.call_tool("get_server_info", {}))
        result = await client.call_tool("list_calendars", {})
    assert len(tools.tools) == 24
    assert info["configured"] is False
    assert info["missing_settings"] == ["CALDAV_URL", "CALDAV_USERNAME", "CALDAV_PASSWORD"]
    assert result.is_error
    assert "set CALDAV_URL, CALDAV_USERNAME, CALDAV_PASSWORD" in result.content[0].text


async def test_an_unreachable_server_is_reported_with_its_address() -> None:
    server = build_server(ApprovalSettings(), CalDAVSettings("http://127.0.0.1:9/", "willi", "secret"))
    async with connect(server, revision="2026-07-28") as client:
        info = structured(await client.call_tool("get_server_info", {}))
        listed = await client.call_tool("list_calendars", {})
    assert info["configured"] is True
    assert info["reachable"] is False
    assert "http://127.0.0.1:9" in info["error"]
    assert listed.is_error
    assert "could not be reached" in listed.content[0].text
    assert "http://127.0.0.1:9" in listed.content[0].text


async def test_caldav_calendars_hides_every_other_calendar(account) -> None:
    async with connect(account.build(calendars=(account.work,)), revision="2026-07-28") as client:
        listed = structured(await client.call_tool("list_calendars", {}))
        outside = await client.call_tool(
            "list_events", {"calendar": account.home, "start": "2026-12-01", "end": "2026-12-02"}
        )
    assert [c["id"] for c in listed["calendars"]] == [account.work]
    assert outside.is_error
    assert "not one of the calendars this server may use" in outside.content[0].text


async def test_wrong_credentials_are_reported_without_the_password(account) -> None:
    server = build_server(ApprovalSettings(), CalDAVSettings(account.server.url, "willi", "wrong-secret-123"))
    async with connect(server, revision="2026-07-28") as client:
        result = await client.call_tool("list_calendars", {})
    assert result.is_error
    assert "refused these credentials" in result.content[0].text
    assert "wrong-secret-123" not in result.content[0].text


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"CALDAV_URL": "ftp://example.org"}, "CALDAV_URL is not valid: give an http:// or https:// URL"),
        ({"CALDAV_URL": "http://[hunter2-secret/"}, "CALDAV_URL is not valid: its host or port cannot be read"),
        ({"CALDAV_URL": "http://127.0.0.1:99999/"}, "CALDAV_URL is not valid: its host or port cannot be read"),
        ({"CALDAV_URL": "http://127.0.0.1:1/?pw=hunter2-secret"}, "must not have a query (?) or fragment (#)"),
        ({"CALDAV_URL": "http://127.0.0.1:1/#hunter2-secret"}, "must not have a query (?) or fragment (#)"),
        ({"CALDAV_CALENDARS": "work,,home"}, "CALDAV_CALENDARS has an empty entry"),
    ],
)
def test_bad_backend_settings_stop_the_server(monkeypatch, capsys, env, message) -> None:
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    with pytest.raises(SystemExit) as caught:
        main()
    assert caught.value.code == 1
    err = capsys.readouterr().err
    assert message in err
    assert "hunter2" not in err
    assert "Traceback" not in err


async def test_end_to_end_over_stdio(account) -> None:
    env = {
        **os.environ,
        "CALDAV_URL": account.server.url,
        "CALDAV_USERNAME": "willi",
        "CALDAV_PASSWORD": "secret",
        "ELICITATION": "false",
    }
    params = StdioServerParameters(command=sys.executable, args=["-m", "caldav_mcp"], env=env)
    errlog = tempfile.TemporaryFile("w+")  # noqa: SIM115 - read after the server has ended
    async with connect(stdio_client(params, errlog=errlog), revision="2025-11-25") as client:
        created = structured(
            await client.call_tool(
                "create_event", {"calendar": account.work, "summary": "Over stdio", "start": "2026-12-03T10:00:00Z"}
            )
        )
        first = await client.call_tool("delete_event", {"calendar": account.work, "id": created["id"]})
        token = approval_of(first)["confirm_token"]
        structured(
            await client.call_tool(
                "delete_event", {"calendar": account.work, "id": created["id"], "confirm_token": token}
            )
        )
        listed = structured(
            await client.call_tool(
                "list_events", {"calendar": account.work, "start": "2026-12-01", "end": "2026-12-31"}
            )
        )
    assert listed["events"] == []
    errlog.seek(0)
    stderr = errlog.read().splitlines()
    errlog.close()
    assert stderr[0] == "caldav-mcp: ELICITATION=false — guarded tools fall back to the two-call token"
    audited = [line for line in stderr if line.startswith("approval_core.audit: approval ")]
    assert [json.loads(line.split(" ", 2)[2])["event"] for line in audited] == ["token_issued", "token_redeemed"]
    assert not [line for line in stderr if "secret" in line or "Over stdio" in line]


async def test_the_free_busy_report_of_xandikos_is_read_although_labelled_octet_stream(tmp_path) -> None:
    """Xandikos answers the free-busy-query REPORT with iCalendar labelled application/octet-stream."""
    from dav_servers import xandikos

    with xandikos(tmp_path / "xandikos") as server:
        headers = server.headers_for("alice")
        cal = "/alice/calendars/calendar/"
        settings = CalDAVSettings(server.url, "alice", "unused")  # the header authenticates
        async with connect(build_server(ApprovalSettings(), settings, headers=headers), revision="2026-07-28") as c:
            structured(
                await c.call_tool(
                    "create_event",
                    {"calendar": cal, "summary": "B", "start": "2026-12-01T09:00:00Z", "end": "2026-12-01T10:00:00Z"},
                )
            )
            window = {"start": "2026-12-01T00:00:00Z", "end": "2026-12-02T00:00:00Z", "calendars": [cal]}
            asked = structured(await c.call_tool("get_free_busy", {**window, "method": "server"}))
    assert asked["source"] == "server"
    assert asked["busy"] == [{"start": "2026-12-01T09:00:00+00:00", "end": "2026-12-01T10:00:00+00:00"}]
