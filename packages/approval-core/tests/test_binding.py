"""The binding fingerprint: canonical, type-tagged, SHA-256."""

from __future__ import annotations

import datetime as dt
import enum
import math
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import BaseModel

from approval_core import Binding, BindingError, canonical_json, fingerprint


def fp(target: dict[str, Any], **kw: Any) -> str:
    return fingerprint("demo-mcp", "tool", target, **kw)


def test_a_fingerprint_is_64_hex_digits_and_stable() -> None:
    value = fp({"ids": {"a", "b"}})
    assert len(value) == 64
    assert int(value, 16) >= 0
    assert value == fp({"ids": {"b", "a"}})


def test_sets_compare_as_sets() -> None:
    assert fp({"ids": {"a"}}) != fp({"ids": {"a", "b"}})
    assert fp({"ids": frozenset({"a", "b"})}) == fp({"ids": {"b", "a"}})


def test_positions_are_ordered() -> None:
    assert fp({"pair": ("alice", "deploy")}) != fp({"pair": ("deploy", "alice")})
    assert fp({"pair": ["alice", "deploy"]}) == fp({"pair": ("alice", "deploy")})


def test_omitted_differs_from_null() -> None:
    assert fp({"title": "x"}) != fp({"title": "x", "note": None})


def test_types_are_part_of_the_value() -> None:
    variants = [
        {"v": True},
        {"v": 1},
        {"v": "1"},
        {"v": 1.0},
        {"v": [1]},
        {"v": {1}},
        {"v": {"1": 1}},
        {"v": None},
    ]
    assert len({fp(v) for v in variants}) == len(variants)


def test_server_and_tool_are_bound() -> None:
    target = {"id": "x"}
    assert fingerprint("a-mcp", "t", target) != fingerprint("b-mcp", "t", target)
    assert fingerprint("a-mcp", "t", target) != fingerprint("a-mcp", "u", target)


def test_excluded_fields_do_not_count() -> None:
    assert fp({"user": "alice", "password": "one"}, exclude=["password"]) == fp(
        {"user": "alice", "password": "two"}, exclude=["password"]
    )
    assert fp({"user": "alice", "password": "one"}) != fp({"user": "alice", "password": "two"})


class Colour(enum.Enum):
    RED = "red"


class Patch(BaseModel):
    title: str | None = None
    note: str | None = None


def test_rich_values_have_canonical_forms() -> None:
    when = dt.datetime(2026, 11, 30, 9, 0, tzinfo=dt.timezone(dt.timedelta(hours=1)))
    values = {"when": when, "day": dt.date(2026, 11, 30), "at": dt.time(9), "c": Colour.RED, "b": b"\x00"}
    assert fp(values) == fp(dict(reversed(list(values.items()))))
    assert fp({"when": when}) != fp({"when": when.astimezone(dt.UTC)})


def test_a_model_keeps_omitted_fields_omitted() -> None:
    assert fp({"patch": Patch(title="x")}) != fp({"patch": Patch(title="x", note=None)})
    assert fp({"patch": Patch(title="x")}) == fp({"patch": {"title": "x"}})


@pytest.mark.parametrize(
    ("target", "where"),
    [
        ({"x": math.nan}, "target.x"),
        ({"x": [1, math.inf]}, "target.x[1]"),
        ({"x": object()}, "target.x"),
        ({"x": {1: "a"}}, "target.x"),
    ],
)
def test_values_without_a_canonical_form_are_refused(target, where) -> None:
    with pytest.raises(BindingError, match=r"^" + where.replace("[", r"\[").replace("]", r"\]")):
        canonical_json(target)


def test_a_binding_carries_its_fingerprint() -> None:
    binding = Binding("demo-mcp", "tool", {"id": "x", "secret": "s"}, frozenset({"secret"}))
    assert binding.fingerprint == fp({"id": "x"})
    assert binding.short == binding.fingerprint[:12]


def test_lone_surrogates_do_not_break_the_encoding() -> None:
    assert fp({"x": "\ud800"}) != fp({"x": "\ud801"})


# ---------------------------------------------------------------- properties

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
)
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.frozensets(st.one_of(st.text(max_size=4), st.integers()), max_size=4),
        st.dictionaries(st.text(max_size=4), inner, max_size=4),
    ),
    max_leaves=12,
)
targets = st.dictionaries(st.text(max_size=6), values, max_size=5)


def _same(a: Any, b: Any) -> bool:
    """Structural equality that keeps the distinctions the fingerprint keeps."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, frozenset):
        return {canonical_json(x) for x in a} == {canonical_json(x) for x in b}
    if isinstance(a, float):
        return repr(a) == repr(b)
    return a == b


@given(targets, targets)
def test_different_targets_never_share_a_fingerprint(a, b) -> None:
    assert (fp(a) == fp(b)) == _same(a, b)


@given(targets)
def test_equal_targets_always_share_one(a) -> None:
    reordered = dict(reversed(list(a.items())))
    assert fp(a) == fp(reordered)


@given(st.lists(st.text(max_size=5), min_size=1, max_size=6, unique=True), st.text(max_size=5))
def test_widening_a_set_changes_the_fingerprint(members, extra) -> None:
    widened = {*members, extra}
    assert (fp({"ids": set(members)}) == fp({"ids": widened})) == (extra in members)
    assert fp({"ids": set(members)}) == fp({"ids": set(reversed(members))})


@given(st.text(max_size=5), st.text(max_size=5))
def test_positions_never_commute(x, y) -> None:
    assert (fp({"pair": (x, y)}) == fp({"pair": (y, x)})) == (x == y)


@given(st.dictionaries(st.text(max_size=4), scalars, min_size=1, max_size=4))
def test_omitting_a_field_always_differs_from_nulling_it(fields) -> None:
    for key in fields:
        without = {k: v for k, v in fields.items() if k != key}
        assert fp(without) != fp({**without, key: None})
