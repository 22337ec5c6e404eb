"""RRULEs are checked on write (RFC 5545 §3.3.10); rules stored by others never wedge a read."""

from __future__ import annotations

import datetime as dt
import os
import sys
import tempfile
import time

import anyio
import icalendar
import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from approval_core.testing import DialogLog, connect, decline
from caldav_helpers import ics, structured, vevent
from caldav_mcp import ical
from caldav_mcp.rrule import rule_problem, until_problem

pytestmark = pytest.mark.anyio

# ---------------------------------------------------------------- the rule grammar


@pytest.mark.parametrize(
    ("rule", "named"),
    [
        ("COUNT=3", "FREQ is required"),
        ("FREQ=FORTNIGHTLY", "FREQ=FORTNIGHTLY is not one of"),
        ("FREQ=DAILY;INTERVAL=0", "INTERVAL=0 is out of range"),
        ("FREQ=DAILY;INTERVAL=-2", "INTERVAL=-2 is out of range"),
        ("FREQ=DAILY;COUNT=0", "COUNT=0 is out of range"),
        ("FREQ=DAILY;COUNT=-1", "COUNT=-1 is out of range"),
        ("FREQ=DAILY;COUNT=3;UNTIL=20261231T000000Z", "COUNT and UNTIL are given together"),
        ("FREQ=DAILY;UNTIL=tomorrow", "UNTIL=TOMORROW is not a DATE"),
        ("FREQ=YEARLY;BYMONTH=13", "BYMONTH=13 is out of range: each value must be 1..12"),
        ("FREQ=YEARLY;BYMONTH=0", "BYMONTH=0 is out of range"),
        ("FREQ=MONTHLY;BYMONTHDAY=32", "BYMONTHDAY=32 is out of range: each value must be 1..31 or -31..-1"),
        ("FREQ=MONTHLY;BYMONTHDAY=0", "BYMONTHDAY=0 is out of range"),
        ("FREQ=YEARLY;BYYEARDAY=367", "BYYEARDAY=367 is out of range"),
        ("FREQ=YEARLY;BYWEEKNO=54", "BYWEEKNO=54 is out of range"),
        ("FREQ=DAILY;BYHOUR=24", "BYHOUR=24 is out of range"),
        ("FREQ=DAILY;BYMINUTE=60", "BYMINUTE=60 is out of range"),
        ("FREQ=DAILY;BYSECOND=61", "BYSECOND=61 is out of range"),
        ("FREQ=MONTHLY;BYDAY=MO;BYSETPOS=367", "BYSETPOS=367 is out of range"),
        ("FREQ=MONTHLY;BYSETPOS=1", "BYSETPOS needs another BYxxx rule part"),
        ("FREQ=WEEKLY;BYDAY=XX", "BYDAY=XX is not a weekday"),
        ("FREQ=WEEKLY;BYDAY=1MO", "BYDAY=1MO has a number"),
        ("FREQ=MONTHLY;BYDAY=54MO", "BYDAY=54MO is out of range"),
        ("FREQ=MONTHLY;BYDAY=-MO", "BYDAY=-MO has a sign but no number"),
        ("FREQ=MONTHLY;BYWEEKNO=3", "BYWEEKNO is allowed only with FREQ=YEARLY"),
        ("FREQ=MONTHLY;BYYEARDAY=3", "BYYEARDAY is not allowed with FREQ=MONTHLY"),
        ("FREQ=WEEKLY;BYMONTHDAY=3", "BYMONTHDAY is not allowed with FREQ=WEEKLY"),
        ("FREQ=WEEKLY;WKST=XY", "WKST=XY is not a weekday"),
        ("FREQ=DAILY;FREQ=WEEKLY", "FREQ is given twice"),
        ("FREQ=DAILY;COLOUR=RED", "COLOUR is not a rule part"),
        ("FREQ=DAILY;COUNT", "'COUNT' is not NAME=VALUE"),
    ],
)
def test_a_rule_that_breaks_rfc_5545_is_named_by_its_part(rule, named) -> None:
    problem = rule_problem(rule)
    assert problem is not None
    assert problem.startswith(named), problem
    assert problem.endswith("(RFC 5545 §3.3.10)")


@pytest.mark.parametrize(
    "rule",
    [
        "FREQ=WEEKLY;BYDAY=MO,WE;COUNT=10",
        "RRULE:FREQ=MONTHLY;BYDAY=-1FR",
        "FREQ=MONTHLY;BYMONTHDAY=-1;INTERVAL=2",
        "FREQ=YEARLY;BYWEEKNO=20,-1;BYDAY=MO",
        "FREQ=YEARLY;BYYEARDAY=1,-366;UNTIL=20301231",
        "FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1",
        "FREQ=DAILY;BYHOUR=0,23;BYMINUTE=0,59;BYSECOND=0,60;WKST=SU",
        "FREQ=DAILY;X-NAME=anything",
    ],
)
def test_a_valid_rule_passes(rule) -> None:
    assert rule_problem(rule) is None


@pytest.mark.parametrize(
    ("until", "start", "named"),
    [
        ("20261231T000000Z", dt.date(2026, 12, 1), "UNTIL=20261231T000000Z is a DATE-TIME but the start is a date"),
        ("20261231", dt.datetime(2026, 12, 1, 9, tzinfo=dt.UTC), "UNTIL=20261231 is a DATE but the start"),
        ("20261231T000000", dt.datetime(2026, 12, 1, 9, tzinfo=dt.UTC), "UNTIL=20261231T000000 must be in UTC"),
        ("20261231T000000Z", dt.datetime(2026, 12, 1, 9), "UNTIL=20261231T000000Z must be floating"),
    ],
)
def test_until_has_the_value_type_of_the_start(until, start, named) -> None:
    problem = until_problem(f"FREQ=DAILY;UNTIL={until}", start)
    assert problem is not None
    assert problem.startswith(named)


async def test_create_event_refuses_each_broken_rule_and_stores_nothing(account) -> None:
    async with connect(account.build(), revision="2026-07-28") as client:
        texts = []
        for rule, start in [
            ("FREQ=DAILY;INTERVAL=0", "2026-12-01T09:00:00Z"),
            ("FREQ=YEARLY;BYMONTH=13", "2026-12-01T09:00:00Z"),
            ("FREQ=DAILY;COUNT=-1", "2026-12-01T09:00:00Z"),
            ("FREQ=DAILY;COUNT=2;UNTIL=20261231T000000Z", "2026-12-01T09:00:00Z"),
            ("FREQ=DAILY;UNTIL=20261231T000000", "2026-12-01T09:00:00Z"),
            ("FREQ=DAILY;UNTIL=20261231T000000Z", "2026-12-01"),
        ]:
            result = await client.call_tool(
                "create_event", {"calendar": account.work, "summary": "x", "start": start, "rrule": rule}
            )
            assert result.is_error, rule
            texts.append(result.content[0].text.removeprefix("Error executing tool create_event: "))
        good = structured(
            await client.call_tool(
                "create_event",
                {
                    "calendar": account.work,
                    "summary": "Standup",
                    "start": "2026-12-01T09:00:00",
                    "tzid": "Europe/Berlin",
                    "rrule": "FREQ=DAILY;UNTIL=20261203T235959Z",
                },
            )
        )
        listed = structured(
            await client.call_tool(
                "list_events", {"calendar": account.work, "start": "2026-12-01", "end": "2027-01-01"}
            )
        )
    assert [t.split(" is ")[0].split(" must ")[0] for t in texts] == [
        "rrule: INTERVAL=0",
        "rrule: BYMONTH=13",
        "rrule: COUNT=-1",
        "rrule: COUNT and UNTIL are given together; a rule may have only one of them (RFC 5545 §3.3.10)",
        "rrule: UNTIL=20261231T000000",
        "rrule: UNTIL=20261231T000000Z",
    ]
    assert [e["uid"] for e in listed["events"]] == [good["uid"]] * 3


# ---------------------------------------------------------------- rules stored by someone else

BAD_RULES = {
    "interval-zero@x": "FREQ=DAILY;INTERVAL=0",
    "month-13@x": "FREQ=YEARLY;BYMONTH=13",
    "count-minus-one@x": "FREQ=DAILY;COUNT=-1",
    "every-second@x": "FREQ=SECONDLY",
}


def seed_bad_data(account) -> None:
    """Store, with plain PUTs that bypass caldav-mcp, entries whose rules break RFC 5545 or the bounds."""
    for uid, rule in BAD_RULES.items():
        account.put(
            account.work,
            f"{uid.split('@')[0]}.ics",
            ics(vevent(uid, ":20261201T090000Z", ":20261201T093000Z", "Broken", f"RRULE:{rule}\n")),
        )
    account.put(account.work, "fine.ics", ics(vevent("fine@x", ":20261202T090000Z", ":20261202T100000Z", "Fine")))
    todo = (
        "BEGIN:VTODO\nUID:{uid}\nDTSTAMP:20261101T000000Z\nDTSTART:20261201T090000Z\nSUMMARY:{summary}\n"
        "{more}END:VTODO\n"
    )
    account.put(account.work, "t1.ics", ics(todo.format(uid="todo-fine@x", summary="Fine task", more="")))
    account.put(
        account.work,
        "t2.ics",
        ics(todo.format(uid="todo-loop@x", summary="Looping task", more="RRULE:FREQ=DAILY;INTERVAL=0\n")),
    )
    account.put(
        account.work, "t3.ics", ics(todo.format(uid="todo-priority@x", summary="Odd task", more="PRIORITY:high\n"))
    )
    journal = (
        "BEGIN:VJOURNAL\nUID:{uid}\nDTSTAMP:20261101T000000Z\nDTSTART;VALUE=DATE:20261201\nSUMMARY:{s}\nEND:VJOURNAL\n"
    )
    account.put(account.work, "j1.ics", ics(journal.format(uid="note-fine@x", s="Fine note")))


def _server_params(account) -> StdioServerParameters:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CALDAV_", "ELICITATION"))}
    env |= {"CALDAV_URL": account.server.url, "CALDAV_USERNAME": "willi", "CALDAV_PASSWORD": "secret"}
    return StdioServerParameters(command=sys.executable, args=["-m", "caldav_mcp"], env=env)


async def test_rules_stored_by_another_client_never_wedge_a_read_tool(account) -> None:
    """Each read tool answers, with the broken entries reported as unreadable and the rest given.

    The server runs as its own process over stdio, so that on a server that loops for ever the
    safety net (fail_after) ends the test and the process; the assertions are on the answers.
    """
    seed_bad_data(account)
    window = {"start": "2026-12-01", "end": "2027-01-01"}
    answers: dict[str, dict] = {}
    with tempfile.TemporaryFile("w+") as errlog, anyio.fail_after(240):
        async with Client(stdio_client(_server_params(account), errlog=errlog), mode="2026-07-28") as client:
            answers["list_events"] = structured(
                await client.call_tool("list_events", {"calendar": account.work, **window})
            )
            answers["search_events"] = structured(
                await client.call_tool("search_events", {"query": "e", "calendars": [account.work], **window})
            )
            answers["get_free_busy"] = structured(
                await client.call_tool("get_free_busy", {"calendars": [account.work], "method": "events", **window})
            )
            for uid in [*BAD_RULES, "fine@x"]:
                answers[f"get_event {uid}"] = structured(
                    await client.call_tool("get_event", {"calendar": account.work, "id": uid})
                )
            occurrence = await client.call_tool(
                "get_event", {"calendar": account.work, "id": "interval-zero@x#20261202T090000Z"}
            )
            answers["list_tasks"] = structured(await client.call_tool("list_tasks", {"calendar": account.work}))
            answers["get_task"] = structured(
                await client.call_tool("get_task", {"calendar": account.work, "uid": "todo-loop@x"})
            )
            answers["list_journals"] = structured(await client.call_tool("list_journals", {"calendar": account.work}))

    listed = answers["list_events"]
    assert [e["uid"] for e in listed["events"]] == ["fine@x"]
    unreadable = {item["id"]: item["reason"] for item in listed["unreadable"]}
    # Radicale's own time-range filter leaves out the BYMONTH=13 and COUNT=-1 entries (they have no
    # occurrence it can find); get_event reads them below.
    assert set(unreadable) == {"interval-zero@x", "every-second@x"}
    assert unreadable["interval-zero@x"].startswith("its RRULE is invalid: INTERVAL=0 is out of range")
    assert "the most this server" in unreadable["every-second@x"]
    assert [e["uid"] for e in answers["search_events"]["events"]] == ["fine@x"]
    assert {item["id"] for item in answers["search_events"]["unreadable"]} >= {"interval-zero@x", "every-second@x"}
    busy = answers["get_free_busy"]
    assert busy["busy"] == [{"start": "2026-12-02T09:00:00+00:00", "end": "2026-12-02T10:00:00+00:00"}]
    assert {item["id"] for item in busy["unreadable"]} >= {"interval-zero@x", "every-second@x"}
    assert answers["get_event interval-zero@x"]["occurrences"] is None
    assert answers["get_event interval-zero@x"]["unreadable"].startswith("its RRULE is invalid: INTERVAL=0")
    assert answers["get_event month-13@x"]["unreadable"].startswith("its RRULE is invalid: BYMONTH=13 is out")
    assert answers["get_event count-minus-one@x"]["unreadable"].startswith("its RRULE is invalid: COUNT=-1")
    assert answers["get_event fine@x"]["unreadable"] is None
    assert occurrence.is_error
    assert "id: the stored event 'interval-zero@x' cannot be read: its RRULE" in occurrence.content[0].text
    tasks = answers["list_tasks"]
    assert sorted(t["uid"] for t in tasks["tasks"]) == ["todo-fine@x", "todo-loop@x"]
    assert [(u["id"], u["reason"]) for u in tasks["unreadable"]] == [
        ("todo-priority@x", "the calendar server returned an entry that is not valid iCalendar")
    ]
    assert answers["get_task"]["summary"] == "Looping task"
    assert [j["uid"] for j in answers["list_journals"]["journals"]] == ["note-fine@x"]


async def test_deleting_a_series_whose_rule_cannot_be_expanded_says_so(account) -> None:
    seed_bad_data(account)
    log = DialogLog(decline)
    with anyio.fail_after(120):
        async with connect(account.build(), revision="2025-11-25", answer=log) as client:
            result = await client.call_tool(
                "delete_event", {"calendar": account.work, "id": "interval-zero@x", "scope": "series"}
            )
    assert result.is_error
    assert log.messages[0].startswith(
        "Delete a recurring event whose stored rule this server cannot expand, with all its occurrences"
    )


# ---------------------------------------------------------------- the bounds themselves


def _series(rule: str, more: str = "") -> icalendar.Calendar:
    return icalendar.Calendar.from_ical(
        ics(vevent("s@x", ":20261201T090000Z", ":20261201T090100Z", "S", f"RRULE:{rule}\n{more}"))
    )


def test_an_entry_over_the_occurrence_bound_is_unreadable(monkeypatch) -> None:
    monkeypatch.setattr(ical, "MAX_OCCURRENCES_PER_ITEM", 50)
    lo, hi = dt.datetime(2026, 12, 1, tzinfo=dt.UTC), dt.datetime(2026, 12, 2, tzinfo=dt.UTC)
    assert len(ical.occurrences(_series("FREQ=MINUTELY;COUNT=50"), "VEVENT", lo, hi)) == 50
    with pytest.raises(ical.Unreadable, match="more than 50 occurrences in this window"):
        ical.occurrences(_series("FREQ=MINUTELY;COUNT=51"), "VEVENT", lo, hi)
    with pytest.raises(ical.Unreadable, match="more than 50 occurrences"):
        ical.count_occurrences(_series("FREQ=MINUTELY;UNTIL=20261202T000000Z"), "VEVENT")


def test_an_expansion_over_the_step_bound_is_interrupted(monkeypatch) -> None:
    """A valid rule that matches nothing makes dateutil search until the year 9999 (6.8 million steps)."""
    monkeypatch.setattr(ical, "MAX_EXPANSION_STEPS", 200_000)
    tracing = sys.gettrace()  # a debugger's or coverage's, if any
    lo, hi = dt.datetime(2026, 12, 1, tzinfo=dt.UTC), dt.datetime(2027, 12, 1, tzinfo=dt.UTC)
    over = r"its recurrence needs more work than the most this server spends on one entry \(200,000 steps\)"
    with pytest.raises(ical.Unreadable, match=over):
        # (an EXDATE, so that the count is not simply read from COUNT)
        ical.count_occurrences(
            _series("FREQ=MINUTELY;BYMONTH=2;BYYEARDAY=1;COUNT=5", "EXDATE:20261201T090000Z\n"), "VEVENT"
        )
    with pytest.raises(ical.Unreadable, match=over):
        ical.occurrences(_series("FREQ=MINUTELY;BYMONTH=2;BYYEARDAY=1"), "VEVENT", lo, hi)
    # Nothing is left pending: ordinary work goes on in this thread afterwards.
    assert sys.gettrace() is tracing
    assert len(ical.occurrences(_series("FREQ=DAILY;COUNT=3"), "VEVENT", lo, hi)) == 3


def test_the_default_step_bound_stops_a_rule_that_matches_nothing() -> None:
    """The rule of the test above needs 6.8 million steps to reach the year 9999: over MAX_EXPANSION_STEPS."""
    lo, hi = dt.datetime(2026, 12, 1, tzinfo=dt.UTC), dt.datetime(2027, 12, 1, tzinfo=dt.UTC)
    with pytest.raises(ical.Unreadable, match=r"the most this server spends on one entry \(5,000,000 steps\)"):
        ical.occurrences(_series("FREQ=MINUTELY;BYMONTH=2;BYYEARDAY=1"), "VEVENT", lo, hi)


def _slowed_and_counted(monkeypatch, expand, delay: float) -> tuple[str, int]:
    """``expand()``'s outcome and the steps charged for it, on a machine ``delay`` slower at each day dateutil
    builds and whose clocks jump an hour on every reading (a loaded machine, without waiting for one).

    The same wrapper runs whatever the delay (a sleep is not a Python call, so not a step): only the time differs.
    """
    from dateutil import rrule as dateutil_rrule

    original = dateutil_rrule._iterinfo.ddayset
    calls = iter(range(10**9))

    def slowed(self, *args):
        if next(calls) < 5:
            time.sleep(delay)
        return original(self, *args)

    monkeypatch.setattr(dateutil_rrule._iterinfo, "ddayset", slowed)
    if delay:
        for clock in ("monotonic", "perf_counter", "time"):
            ticks = iter(range(0, 10**12, 3600))
            monkeypatch.setattr(time, clock, lambda ticks=ticks: float(next(ticks)))
    with ical.expansion_budget(10**9):
        budget = ical._CALL_BUDGET.get()
        assert budget is not None
        try:
            outcome = f"{len(expand())} occurrences"
        except ical.Unreadable as exc:
            outcome = exc.reason
        spent = 10**9 - budget.left
    monkeypatch.undo()
    return outcome, spent


def test_whether_an_entry_is_readable_does_not_depend_on_the_machine_s_speed(monkeypatch) -> None:
    """The bounds count work, not time: a slow, loaded machine gives the same answer, charged the same steps.

    Both entries are expanded with their steps counted (:func:`caldav_mcp.ical.needs_watch`): one wedging
    rule, stopped at the same step, and one legitimate big series (8,775 hourly occurrences, about 1.5 million
    steps), which stays readable however slow the machine. No assertion is on a duration.
    """
    lo, hi = dt.datetime(2026, 12, 1, tzinfo=dt.UTC), dt.datetime(2027, 12, 2, tzinfo=dt.UTC)
    wedging, hourly = _series("FREQ=MINUTELY;BYMONTH=2;BYYEARDAY=1"), _series("FREQ=HOURLY")
    assert ical.needs_watch(wedging, "VEVENT", hi)
    assert ical.needs_watch(hourly, "VEVENT", hi)

    def stopped():
        return ical.occurrences(wedging, "VEVENT", lo, hi)

    def big():
        return ical.occurrences(hourly, "VEVENT", lo, hi)

    with monkeypatch.context() as patch:
        patch.setattr(ical, "MAX_EXPANSION_STEPS", 300_000)
        fast = _slowed_and_counted(patch, stopped, 0.0)
    with monkeypatch.context() as patch:
        patch.setattr(ical, "MAX_EXPANSION_STEPS", 300_000)
        slow = _slowed_and_counted(patch, stopped, 0.05)
    assert fast == slow
    assert fast[0].startswith("its recurrence needs more work than the most this server spends on one entry")
    assert fast[1] == 300_001
    big()  # the libraries' caches filled (the first expansion in a process takes a few more steps)
    with monkeypatch.context() as patch:
        fast = _slowed_and_counted(patch, big, 0.0)
    with monkeypatch.context() as patch:
        slow = _slowed_and_counted(patch, big, 0.05)
    assert fast[0] == slow[0] == "8775 occurrences"
    # The count of a whole expansion can differ by a few dozen steps between two runs in one process (a
    # library cache filled, a finalizer the garbage collector runs): never by the machine's speed, and never
    # near the bound.
    assert abs(fast[1] - slow[1]) <= 1_000
    assert fast[1] < ical.MAX_EXPANSION_STEPS / 2


async def test_moving_a_series_start_keeps_its_until_of_the_same_value_type(account) -> None:
    account.put(
        account.work,
        "days.ics",
        ics(
            vevent(
                "days@x", ";VALUE=DATE:20261201", ";VALUE=DATE:20261202", "Days", "RRULE:FREQ=DAILY;UNTIL=20261205\n"
            )
        ),
    )
    async with connect(account.build(), revision="2025-11-25", answer=DialogLog()) as client:
        result = await client.call_tool(
            "update_event",
            {"calendar": account.work, "id": "days@x", "scope": "series", "start": "2026-12-02T09:00:00Z"},
        )
    assert result.is_error
    assert "start: the series' RRULE no longer fits the new start: UNTIL=20261205 is a DATE" in result.content[0].text
    assert "DTSTART;VALUE=DATE:20261201" in account.get(account.work, "days.ics")[1]


def test_a_call_that_spent_its_expansion_budget_reports_further_entries_unreadable() -> None:
    """Many entries that each run to the per-entry bound must not stretch one call (a review's finding)."""
    lo, hi = dt.datetime(2026, 12, 1, tzinfo=dt.UTC), dt.datetime(2027, 12, 1, tzinfo=dt.UTC)
    with ical.expansion_budget(0), pytest.raises(ical.Unreadable, match="already spent its 50,000,000 steps"):
        ical.occurrences(_series("FREQ=DAILY;COUNT=3"), "VEVENT", lo, hi)
    with ical.expansion_budget(10_000):
        assert len(ical.occurrences(_series("FREQ=DAILY;COUNT=3"), "VEVENT", lo, hi)) == 3


def test_an_entry_that_exhausts_what_is_left_of_the_call_budget_says_so() -> None:
    lo, hi = dt.datetime(2026, 12, 1, tzinfo=dt.UTC), dt.datetime(2027, 12, 1, tzinfo=dt.UTC)
    wedging = _series("FREQ=MINUTELY;BYMONTH=2;BYYEARDAY=1")
    with ical.expansion_budget(100_000):
        with pytest.raises(ical.Unreadable, match=r"^this call's 50,000,000 steps of recurrence expansion"):
            ical.occurrences(wedging, "VEVENT", lo, hi)
        with pytest.raises(ical.Unreadable, match="already spent its"):
            ical.occurrences(_series("FREQ=DAILY;COUNT=3"), "VEVENT", lo, hi)


@pytest.mark.parametrize(
    ("rule", "more", "watched"),
    [
        ("FREQ=DAILY", "", False),
        ("FREQ=WEEKLY;INTERVAL=2;BYDAY=MO,WE;WKST=SU", "", False),
        ("FREQ=MONTHLY;COUNT=12", "EXDATE:20261201T090000Z\n", False),
        ("FREQ=YEARLY;UNTIL=20301201T090000Z", "", False),
        ("FREQ=HOURLY", "", True),
        ("FREQ=MINUTELY;COUNT=5", "", True),
        ("FREQ=MONTHLY;BYDAY=-1TU", "", True),
        ("FREQ=DAILY;BYMONTH=2", "", True),
        ("FREQ=YEARLY;BYMONTHDAY=29", "", True),
        ("FREQ=DAILY;BYSETPOS=1;BYDAY=MO", "", True),
        (
            "FREQ=DAILY",
            "RDATE:" + ",".join(f"2027{m:02d}{d:02d}T090000Z" for m in range(1, 13) for d in range(1, 29)) + "\n",
            False,
        ),
    ],
)
def test_only_rules_bounded_by_themselves_go_unwatched(rule, more, watched) -> None:
    end = dt.datetime(2027, 12, 1, tzinfo=dt.UTC)
    assert ical.needs_watch(_series(rule, more), "VEVENT", end) is watched


def test_a_plain_rule_from_a_distant_start_or_with_many_dates_is_watched(monkeypatch) -> None:
    old = icalendar.Calendar.from_ical(
        ics(vevent("s@x", ":19260101T090000Z", ":19260101T090100Z", "S", "RRULE:FREQ=DAILY\n"))
    )
    end = dt.datetime(2027, 12, 1, tzinfo=dt.UTC)
    assert ical.needs_watch(old, "VEVENT", end) is True  # 37,000 days: over MAX_PLAIN_PERIODS
    assert ical.needs_watch(old, "VEVENT", dt.datetime(1927, 1, 1, tzinfo=dt.UTC)) is False
    assert ical.needs_watch(_series("FREQ=DAILY"), "VEVENT", None) is True
    monkeypatch.setattr(ical, "MAX_PLAIN_DATES", 2)
    assert ical.needs_watch(_series("FREQ=DAILY", "EXDATE:20261202T090000Z,20261203T090000Z\n"), "VEVENT", end) is False
    assert (
        ical.needs_watch(
            _series("FREQ=DAILY", "EXDATE:20261202T090000Z,20261203T090000Z,20261204T090000Z\n"), "VEVENT", end
        )
        is True
    )


def test_an_unwatched_expansion_still_counts_against_the_call_budget() -> None:
    """Charged by its occurrences and its rule's periods up to the window's end (a count, never time)."""
    lo, hi = dt.datetime(2026, 12, 1, tzinfo=dt.UTC), dt.datetime(2027, 12, 1, tzinfo=dt.UTC)
    series = _series("FREQ=DAILY")
    assert ical.needs_watch(series, "VEVENT", hi) is False
    with ical.expansion_budget(10**9):
        budget = ical._CALL_BUDGET.get()
        assert len(ical.occurrences(series, "VEVENT", lo, hi)) == 365
        assert budget is not None
        assert 10**9 - budget.left == 365 * ical.PLAIN_STEPS_PER_OCCURRENCE + 365 * ical.PLAIN_STEPS_PER_PERIOD


@pytest.mark.parametrize(
    ("dtstart", "dtend"),
    [
        ("DTSTART:20261201T090000Z", "DTEND:20261201T100000Z"),
        ("DTSTART;TZID=Europe/Berlin:20261201T090000", "DTEND;TZID=Europe/Berlin:20261201T100000"),
        ("DTSTART;TZID=America/New_York:20261130T220000", "DTEND;TZID=Europe/Berlin:20261201T080000"),
    ],
)
@pytest.mark.parametrize(
    ("lo", "hi"),
    [
        ("20261201T080000Z", "20261201T090000Z"),  # ends where the entry might start
        ("20261201T080000Z", "20261201T083000Z"),
        ("20261201T090000Z", "20261201T100000Z"),
        ("20261201T093000Z", "20261201T093100Z"),
        ("20261201T100000Z", "20261201T110000Z"),  # starts where the entry might end
        ("20261130T000000Z", "20261202T000000Z"),
        ("20261201T030000Z", "20261201T040000Z"),
    ],
)
def test_a_single_zoned_entry_overlaps_a_window_as_the_recurrence_library_says(dtstart, dtend, lo, hi) -> None:
    """The shortcut for one plain zoned entry answers exactly what recurring-ical-events answers (RFC 4791 §9.9)."""
    import recurring_ical_events

    from caldav_mcp.ical import occurrences, parse_calendar

    text = "\r\n".join(
        ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//t//t//EN", "BEGIN:VEVENT", "UID:one", "DTSTAMP:20261101T000000Z",
         dtstart, dtend, "SUMMARY:x", "END:VEVENT", "END:VCALENDAR", ""]
    )  # fmt: skip
    cal = parse_calendar(text)
    start = dt.datetime.strptime(lo, "%Y%m%dT%H%M%SZ").replace(tzinfo=dt.UTC)
    end = dt.datetime.strptime(hi, "%Y%m%dT%H%M%SZ").replace(tzinfo=dt.UTC)
    library = recurring_ical_events.of(cal, components=["VEVENT"]).between(start, end)
    shortcut = occurrences(cal, "VEVENT", start, end)
    assert [c["UID"] for c in shortcut] == [c["UID"] for c in library]
    assert [c.decoded("DTSTART") for c in shortcut] == [c.decoded("DTSTART") for c in library]
