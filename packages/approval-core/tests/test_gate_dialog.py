"""The 2025-11-25 path: a form elicitation pushed to the client mid-call."""

from __future__ import annotations

import mcp_types as mt
import pytest

from approval_core import APPROVE_FIELD, APPROVE_TITLE, CALLER_VALUES_HEADING, ApprovalSettings
from approval_core.testing import (
    DialogLog,
    accept,
    answer_with,
    approval_of,
    bad_content,
    cancel,
    client_error,
    connect,
    decline,
    never_answers,
    unticked,
)
from example_server import Example

pytestmark = pytest.mark.anyio

ARGS = {"book": "/books/work/", "ids": ["a", "b"]}


async def test_ticked_box_runs_the_call_once_with_the_dialog_shown() -> None:
    ex = Example()
    log = DialogLog(accept)
    async with connect(ex.server, revision="2025-11-25", answer=log) as client:
        result = await client.call_tool("delete_items", ARGS)
    assert not result.is_error
    assert result.structured_content == {"items": ["c"]}
    assert ex.items == {"c"}
    assert log.messages == [
        "Delete 2 item(s)\n\n"
        "Items are not kept anywhere else, so they cannot be restored.\n\n"
        f"{CALLER_VALUES_HEADING}\n"
        "  Book: /books/work/"
    ]


async def test_the_form_is_one_boolean_box_unticked_by_default() -> None:
    ex = Example()
    log = DialogLog(decline)
    async with connect(ex.server, revision="2025-11-25", answer=log) as client:
        await client.call_tool("delete_items", ARGS)
    (schema,) = log.schemas
    assert schema["required"] == [APPROVE_FIELD]
    assert schema["properties"] == {
        APPROVE_FIELD: {
            "type": "boolean",
            "title": APPROVE_TITLE,
            "description": schema["properties"][APPROVE_FIELD]["description"],
            "default": False,
        }
    }


@pytest.mark.parametrize(
    ("answer", "outcome", "phrase"),
    [
        (decline, "declined", "the person declined"),
        (cancel, "cancelled", "dismissed without an answer"),
        (unticked, "unticked", "unticked, which counts as declined"),
        (bad_content(), "invalid_answer", "not one ticked box"),
        (bad_content({APPROVE_FIELD: True, "also": "x"}), "invalid_answer", "not one ticked box"),
        (bad_content({"something": True}), "invalid_answer", "not one ticked box"),
        (client_error, "client_error", "could not show the dialog"),
    ],
)
async def test_every_answer_but_a_ticked_box_changes_nothing(answer, outcome: str, phrase: str) -> None:
    ex = Example()
    async with connect(ex.server, revision="2025-11-25", answer=answer) as client:
        result = await client.call_tool("delete_items", ARGS)
    assert result.is_error
    assert ex.items == {"a", "b", "c"}
    assert approval_of(result) == {"outcome": outcome, "path": "dialog", "changed": False}
    text = result.content[0].text
    assert phrase in text
    assert text.endswith("Nothing was changed.")


async def test_no_answer_within_the_timeout_abandons_the_change() -> None:
    ex = Example(ApprovalSettings(dialog_timeout=0.2))
    async with connect(ex.server, revision="2025-11-25", answer=never_answers) as client:
        result = await client.call_tool("delete_items", ARGS)
    assert result.is_error
    assert ex.items == {"a", "b", "c"}
    assert approval_of(result)["outcome"] == "timed_out"
    assert "no answer came within 0.2 seconds" in result.content[0].text


async def test_a_form_only_client_gets_the_dialog() -> None:
    ex = Example()
    log = DialogLog(accept)
    async with connect(ex.server, revision="2025-11-25", answer=log, elicitation="form") as client:
        result = await client.call_tool("delete_items", ARGS)
    assert not result.is_error
    assert len(log.messages) == 1


async def test_an_unguarded_tool_and_an_unmet_condition_never_ask() -> None:
    ex = Example()
    log = DialogLog(decline)
    async with connect(ex.server, revision="2025-11-25", answer=log) as client:
        listed = await client.call_tool("list_items", {})
        one = await client.call_tool("update_item", {"scope": "one"})
        every = await client.call_tool("update_item", {"scope": "all"})
    assert not listed.is_error
    assert not one.is_error
    assert every.is_error
    assert ex.updates == 1
    assert log.messages == ["Change all 3 items\n\nNo history is kept."]


async def test_an_answer_the_client_cannot_encode_changes_nothing() -> None:
    ex = Example()
    malformed = mt.ElicitResult.model_construct(action="accept", content={APPROVE_FIELD: {"nested": True}})
    async with connect(ex.server, revision="2025-11-25", answer=answer_with(malformed)) as client:
        result = await client.call_tool("delete_items", ARGS)
    assert result.is_error
    assert approval_of(result)["outcome"] == "client_error"
    assert ex.items == {"a", "b", "c"}
