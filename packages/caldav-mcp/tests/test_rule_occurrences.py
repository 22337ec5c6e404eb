"""A rule that never occurs, or that is written with other digits than 0-9, is refused on write (RFC 5545 §3.3.10)."""

from __future__ import annotations

import datetime as dt

import pytest

from approval_core.testing import connect
from caldav_helpers import structured
from caldav_mcp.rrule import first_occurrence_problem, rule_problem
from test_create_retry import stored_uids

pytestmark = pytest.mark.anyio

START = dt.datetime(2026, 12, 1, 9, tzinfo=dt.UTC)


@pytest.mark.parametrize(
    ("rule", "named"),
    [
        ("FREQ=DAILY;INTERVAL=²", "INTERVAL=² is not an integer written with the digits 0-9"),
        ("FREQ=DAILY;COUNT=²", "COUNT=² is not an integer written with the digits 0-9"),
        ("FREQ=DAILY;COUNT=١٠", "COUNT=١٠ is not an integer written with the digits 0-9"),
        ("FREQ=DAILY;INTERVAL=٢", "INTERVAL=٢ is not an integer written with the digits 0-9"),
        ("FREQ=YEARLY;BYMONTH=٣", "BYMONTH=٣ is not a comma-separated list of integers"),
        ("FREQ=MONTHLY;BYMONTHDAY=１", "BYMONTHDAY=１ is not a comma-separated list of integers"),
        ("FREQ=MONTHLY;BYDAY=١MO", "BYDAY=١MO is not a weekday"),
        ("FREQ=DAILY;UNTIL=２０２６１２３１", "UNTIL=２０２６１２３１ is not a DATE"),
        ("FREQ=DAILY;BYMONTH=2;BYMONTHDAY=31", "BYMONTHDAY=31 never falls in BYMONTH=2"),
        ("FREQ=SECONDLY;BYMONTH=2;BYMONTHDAY=30", "BYMONTHDAY=30 never falls in BYMONTH=2"),
        ("FREQ=YEARLY;BYMONTH=4,6,9,11;BYMONTHDAY=31,-31", "BYMONTHDAY=31,-31 never falls in BYMONTH=4,6,9,11"),
    ],
)
def test_a_rule_with_other_digits_or_an_impossible_day_is_named_by_its_part(rule, named) -> None:
    problem = rule_problem(rule)
    assert problem is not None
    assert problem.startswith(named), problem


@pytest.mark.parametrize(
    "rule",
    ["FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29", "FREQ=MONTHLY;BYMONTHDAY=31", "FREQ=YEARLY;BYMONTH=2,3;BYMONTHDAY=30"],
)
def test_a_rare_but_possible_day_passes(rule) -> None:
    assert rule_problem(rule) is None
    assert first_occurrence_problem(rule, START) is None


@pytest.mark.parametrize(
    ("rule", "named"),
    [
        (
            "FREQ=YEARLY;BYWEEKNO=53;BYDAY=MO;BYMONTH=1;BYMONTHDAY=1",
            "FREQ=YEARLY with BYWEEKNO=53, BYDAY=MO, BYMONTH=1, BYMONTHDAY=1 has no occurrence",
        ),
        ("FREQ=YEARLY;BYYEARDAY=1;BYMONTH=2", "FREQ=YEARLY with BYYEARDAY=1, BYMONTH=2 has no occurrence"),
        ("FREQ=DAILY;UNTIL=20261130T000000Z", "FREQ=DAILY with UNTIL=20261130T000000Z has no occurrence before"),
    ],
)
def test_a_rule_without_a_first_occurrence_is_named_by_its_parts(rule, named) -> None:
    assert rule_problem(rule) is None
    problem = first_occurrence_problem(rule, START)
    assert problem is not None
    assert problem.startswith(named), problem


async def test_create_event_refuses_rules_that_never_occur_or_use_other_digits_and_stores_nothing(account) -> None:
    """The review's reproductions: Radicale spent ~50 s storing Feb 31; '²' crashed; '١٠' was stored as 10."""
    rules = {
        "FREQ=DAILY;BYMONTH=2;BYMONTHDAY=31": "rrule: BYMONTHDAY=31 never falls in BYMONTH=2",
        "FREQ=SECONDLY;BYMONTH=2;BYMONTHDAY=30": "rrule: BYMONTHDAY=30 never falls in BYMONTH=2",
        "FREQ=YEARLY;BYWEEKNO=53;BYDAY=MO;BYMONTH=1;BYMONTHDAY=1": "rrule: FREQ=YEARLY with BYWEEKNO=53",
        "FREQ=DAILY;INTERVAL=²": "rrule: INTERVAL=² is not an integer written with the digits 0-9",
        "FREQ=DAILY;COUNT=²": "rrule: COUNT=² is not an integer written with the digits 0-9",
        "FREQ=DAILY;COUNT=١٠": "rrule: COUNT=١٠ is not an integer written with the digits 0-9",
    }
    async with connect(account.build(), revision="2026-07-28") as client:
        for index, (rule, named) in enumerate(rules.items()):
            result = await client.call_tool(
                "create_event",
                {
                    "calendar": account.work,
                    "summary": "r",
                    "start": "2026-12-01T09:00:00Z",
                    "rrule": rule,
                    "uid": f"never-{index}",
                },
            )
            assert result.is_error, rule
            assert result.content[0].text.startswith(named), result.content[0].text
        good = structured(
            await client.call_tool(
                "create_event",
                {
                    "calendar": account.work,
                    "summary": "Leap",
                    "start": "2026-12-01T09:00:00Z",
                    "rrule": "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29",
                    "uid": "leap",
                },
            )
        )
    assert good["action"] == "created"
    assert stored_uids(account, account.work) == ["leap"]


@pytest.mark.parametrize("rule", ["FREQ=MONTHLY;BYDAY=+53MO", "FREQ=YEARLY;BYMONTH=2;BYDAY=+53MO"])
def test_a_rule_the_expansion_library_cannot_expand_is_refused_not_a_crash(rule) -> None:
    """dateutil raises IndexError on an ordinal beyond a month's weeks; the review saw an internal error."""
    problem = first_occurrence_problem(rule, START)
    assert problem is not None
    assert problem.startswith("the rule cannot be expanded from this start (IndexError)"), problem


def test_the_search_for_a_first_occurrence_is_bounded_by_work_not_by_the_clock(monkeypatch) -> None:
    """A rule too rare to find within the step budget is refused naming the budget, whatever the machine's load.

    FREQ=DAILY;BYWEEKNO=53;BYMONTH=6 never occurs (week 53 never falls in June) and costs dateutil about
    four million calls over 100 years; with a smaller budget the verdict comes from the budget, and a clock
    that jumps by an hour on every reading changes nothing.
    """
    import time

    from caldav_mcp import rrule

    rule = "FREQ=DAILY;BYWEEKNO=53;BYMONTH=6"
    monkeypatch.setattr(rrule, "FIRST_OCCURRENCE_CALLS", 50_000)
    ticks = iter(range(0, 10**9, 3600))
    monkeypatch.setattr(time, "monotonic", lambda: float(next(ticks)))
    problem = first_occurrence_problem(rule, START)
    assert problem is not None
    assert problem.startswith("no occurrence of FREQ=DAILY with BYWEEKNO=53, BYMONTH=6 was found"), problem
    assert "(50,000 steps)" in problem
    assert first_occurrence_problem("FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29", START) is None
