"""What a refusal looks like on the wire, and the strict-client check every test client applies.

A strict client (the TypeScript SDK client 1.x, ``Client.callTool``) validates
``structuredContent`` against the tool's ``outputSchema`` whenever it is
present, error or not, and throws -32602 on a mismatch; it accepts an
``isError`` result without ``structuredContent``. A refusal must therefore
carry none, and keep its outcome in ``_meta`` and its token in the text.
"""

from __future__ import annotations

import re
from typing import Annotated

import mcp_types as mt
import pytest

from approval_core import APPROVAL_META_KEY, ApprovalSettings, approval_outcome, refusal, structured
from approval_core.testing import approval_of, call_once, check_result, connect, decline
from example_server import Example, Items

pytestmark = pytest.mark.anyio

ARGS = {"book": "/books/work/", "ids": ["a"]}

# MCP 2025-11-25, Basic, "General fields", _meta: prefix = labels separated by dots, then "/";
# a label starts with a letter and ends with a letter or digit; the name begins and ends alphanumeric.
_LABEL = r"[A-Za-z](?:[A-Za-z0-9-]*[A-Za-z0-9])?"
_META_KEY = re.compile(rf"^(?:{_LABEL}(?:\.{_LABEL})*/)?(?:[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)?$")


def test_the_meta_key_is_a_valid_spec_key_outside_the_reserved_prefixes() -> None:
    assert _META_KEY.match(APPROVAL_META_KEY)
    prefix = APPROVAL_META_KEY.split("/", 1)[0]
    labels = prefix.split(".")
    assert len(labels) < 2 or labels[1] not in {"modelcontextprotocol", "mcp"}


def test_a_refusal_has_no_structured_content_and_its_outcome_in_meta() -> None:
    result = refusal("delete_items was not run.", {"outcome": "declined", "path": "dialog", "changed": False})
    assert result.is_error
    assert result.structured_content is None
    wire = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    assert "structuredContent" not in wire
    assert wire["_meta"] == {APPROVAL_META_KEY: {"outcome": "declined", "path": "dialog", "changed": False}}
    assert approval_outcome(result) == {"outcome": "declined", "path": "dialog", "changed": False}


def test_approval_outcome_is_none_for_a_result_that_is_not_a_refusal() -> None:
    assert approval_outcome(structured(Items(items=["a"]))) is None
    assert approval_outcome(mt.CallToolResult(content=[], is_error=True, meta={APPROVAL_META_KEY: "x"})) is None


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
async def test_the_token_is_in_the_text_and_in_meta_and_nothing_structured(revision) -> None:
    ex = Example(ApprovalSettings(elicitation=False))
    async with connect(ex.server, revision=revision) as client:
        first = await client.call_tool("delete_items", ARGS)
    assert first.structured_content is None
    token = approval_of(first)["confirm_token"]
    assert f'confirm_token="{token}"' in first.content[0].text
    assert approval_of(first)["outcome"] == "token_issued"


async def test_a_declined_dialog_and_an_input_required_refusal_carry_nothing_structured() -> None:
    ex = Example()
    async with connect(ex.server, revision="2025-11-25", answer=decline) as client:
        pushed = await client.call_tool("delete_items", ARGS)
    async with connect(ex.server, revision="2026-07-28", answer=decline) as client:
        first = await call_once(client, "delete_items", ARGS)
        assert isinstance(first, mt.InputRequiredResult)
        answered = await call_once(
            client, "delete_items", ARGS, answer=mt.ElicitResult(action="decline"), request_state=first.request_state
        )
    assert isinstance(answered, mt.CallToolResult)
    for result in (pushed, answered):
        assert result.structured_content is None
        assert approval_of(result)["outcome"] == "declined"


async def test_a_tool_error_carries_no_structured_content() -> None:
    ex = Example()
    async with connect(ex.server, revision="2025-11-25") as client:
        result = await client.call_tool("delete_items", {"book": "/b/", "ids": ["zz"]})
    assert result.is_error
    assert result.structured_content is None
    assert "no such item" in result.content[0].text


SCHEMA = {
    "type": "object",
    "properties": {"calendar": {"type": "string"}, "uid": {"type": "string"}, "when": {"type": "string"}},
    "required": ["calendar", "uid"],
}
TOOL = mt.Tool(name="delete_event", input_schema={"type": "object"}, output_schema=SCHEMA)


def test_check_result_refuses_what_a_strict_client_refuses() -> None:
    old_refusal = mt.CallToolResult(
        content=[mt.TextContent(type="text", text="not run")],
        structured_content={"approval": {"outcome": "declined"}},
        is_error=True,
    )
    with pytest.raises(AssertionError, match="error structuredContent does not match the outputSchema"):
        check_result(TOOL, old_refusal)
    with pytest.raises(AssertionError, match="has no structuredContent"):
        check_result(TOOL, mt.CallToolResult(content=[]))
    with pytest.raises(AssertionError, match="'uid' is a required property"):
        check_result(TOOL, mt.CallToolResult(content=[], structured_content={"calendar": "/c/"}))


def test_check_result_accepts_what_a_strict_client_accepts() -> None:
    check_result(TOOL, mt.CallToolResult(content=[], structured_content={"calendar": "/c/", "uid": "u"}))
    check_result(TOOL, refusal("not run", {"outcome": "declined"}))
    check_result(TOOL, mt.CallToolResult(content=[], is_error=True, structured_content={"calendar": "/c/", "uid": "u"}))
    check_result(mt.Tool(name="t", input_schema={"type": "object"}), mt.CallToolResult(content=[]))


def test_check_result_refuses_an_output_schema_that_is_not_2020_12() -> None:
    tool = mt.Tool(name="t", input_schema={"type": "object"}, output_schema={"type": "object", "required": "uid"})
    with pytest.raises(Exception, match="is not of type 'array'"):
        check_result(tool, mt.CallToolResult(content=[], structured_content={}))


async def test_every_client_connect_returns_checks_each_result_against_the_listed_schema() -> None:
    ex = Example()

    @ex.server.tool()
    async def old_refusal() -> Annotated[mt.CallToolResult, Items]:
        """Refuses the way refusals used to look: an approval object as structured content."""
        return mt.CallToolResult(
            content=[mt.TextContent(type="text", text="not run")],
            structured_content={"approval": {"outcome": "declined"}},
            is_error=True,
        )

    for revision in ("2025-11-25", "2026-07-28"):
        async with connect(ex.server, revision=revision) as client:
            listed = await client.call_tool("list_items", {})
            assert listed.structured_content == {"items": ["a", "b", "c"]}
            with pytest.raises(AssertionError, match="old_refusal: error structuredContent does not match"):
                await client.call_tool("old_refusal", {})


async def test_a_client_made_with_check_false_does_not_check() -> None:
    ex = Example()

    @ex.server.tool()
    async def old_refusal() -> Annotated[mt.CallToolResult, Items]:
        """Refuses the way refusals used to look."""
        return mt.CallToolResult(content=[], structured_content={"approval": {}}, is_error=True)

    async with connect(ex.server, revision="2025-11-25", check=False) as client:
        result = await client.call_tool("old_refusal", {})
    assert result.structured_content == {"approval": {}}
