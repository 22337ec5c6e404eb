"""Guard rules, guard tables, documented mismatches and the four annotations."""

from __future__ import annotations

import pytest

from approval_core import Guard, GuardedCall, GuardTable, GuardTableError, Mismatch, annotations


def test_never_always_and_when() -> None:
    call = GuardedCall("update_event", {"scope": "series"}, {"recurring": True})
    assert not Guard.never().asks(call)
    assert Guard.always().asks(call)
    series = Guard.when(lambda c: c.arguments["scope"] == "series" and c.facts["recurring"], "a whole series")
    assert series.asks(call)
    assert not series.asks(GuardedCall("update_event", {"scope": "occurrence"}, {"recurring": True}))
    assert [g.may_ask for g in (Guard.never(), Guard.always(), series)] == [False, True, True]
    assert series.condition == "a whole series"


def test_a_when_guard_needs_its_condition_in_words() -> None:
    with pytest.raises(GuardTableError, match="condition"):
        Guard.when(lambda c: True, "  ")


def test_a_table_is_a_read_only_mapping_with_mismatches() -> None:
    table = GuardTable(
        {"create_user": Guard.always(), "list_users": Guard.never()},
        [Mismatch("create_user", "guarded-not-destructive", "changes who may reach the instance")],
    )
    assert list(table) == ["create_user", "list_users"]
    assert len(table) == 2
    assert table["list_users"].kind == "never"
    assert table.guard("create_user").kind == "always"
    assert table.mismatch("create_user") is not None
    assert table.mismatch("list_users") is None


def test_an_unknown_tool_fails_loudly() -> None:
    with pytest.raises(GuardTableError, match="no row"):
        GuardTable({}).guard("delete_everything")


@pytest.mark.parametrize(
    ("mismatches", "match"),
    [
        ([Mismatch("ghost", "destructive-not-guarded", "r")], "no guard row"),
        (
            [Mismatch("t", "destructive-not-guarded", "r"), Mismatch("t", "destructive-not-guarded", "r")],
            "twice",
        ),
        ([Mismatch("t", "destructive-not-guarded", " ")], "reason"),
    ],
)
def test_malformed_mismatches_are_refused(mismatches, match) -> None:
    with pytest.raises(GuardTableError, match=match):
        GuardTable({"t": Guard.never()}, mismatches)


def test_annotations_state_all_four_hints() -> None:
    hints = annotations(read_only=False, destructive=True, idempotent=True, open_world=False, title="Delete")
    dumped = hints.model_dump(by_alias=True, exclude_none=True)
    assert dumped == {
        "title": "Delete",
        "readOnlyHint": False,
        "destructiveHint": True,
        "idempotentHint": True,
        "openWorldHint": False,
    }


def test_read_only_and_destructive_contradict() -> None:
    with pytest.raises(GuardTableError, match="read-only"):
        annotations(read_only=True, destructive=True, idempotent=True, open_world=False)


@pytest.mark.parametrize(
    ("rows", "unversioned", "match"),
    [
        ({"t": Guard.always()}, {"ghost": "r"}, "no guard row"),
        ({"t": Guard.never()}, {"t": "r"}, "never asks"),
        ({"t": Guard.always()}, {"t": " "}, "reason"),
    ],
)
def test_unversioned_entries_are_checked(rows, unversioned, match) -> None:
    with pytest.raises(GuardTableError, match=match):
        GuardTable(rows, unversioned=unversioned)
