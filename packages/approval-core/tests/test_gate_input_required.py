"""The 2026-07-28 path: input_required, sealed single-use state, and every way a state can fail."""

from __future__ import annotations

import mcp_types as mt
import pytest
from mcp.server.request_state import RequestStateBoundary

from approval_core import INPUT_KEY, ApprovalSettings
from approval_core.testing import (
    DialogLog,
    accept,
    approval_of,
    bad_content,
    call_once,
    cancel,
    connect,
    decline,
    ticked,
    unticked,
)
from example_server import Example

pytestmark = pytest.mark.anyio

ARGS = {"book": "/books/work/", "ids": ["a", "b"]}
UNTICKED = mt.ElicitResult(action="accept", content={"approve": False})


class FakeClock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def question_of(result: mt.CallToolResult | mt.InputRequiredResult) -> mt.InputRequiredResult:
    assert isinstance(result, mt.InputRequiredResult), result
    assert result.input_requests is not None
    assert set(result.input_requests) == {INPUT_KEY}
    assert result.request_state
    return result


async def test_the_client_loop_asks_and_a_ticked_box_runs_the_call() -> None:
    ex = Example()
    log = DialogLog(accept)
    async with connect(ex.server, revision="2026-07-28", answer=log) as client:
        result = await client.call_tool("delete_items", ARGS)
    assert not result.is_error
    assert ex.items == {"c"}
    assert len(log.messages) == 1
    assert log.messages[0].startswith("Delete 2 item(s)")


@pytest.mark.parametrize(
    ("answer", "outcome"),
    [(decline, "declined"), (cancel, "cancelled"), (unticked, "unticked"), (bad_content(), "invalid_answer")],
)
async def test_every_answer_but_a_ticked_box_changes_nothing(answer, outcome: str) -> None:
    ex = Example()
    async with connect(ex.server, revision="2026-07-28", answer=answer) as client:
        result = await client.call_tool("delete_items", ARGS)
    assert result.is_error
    assert ex.items == {"a", "b", "c"}
    assert approval_of(result) == {"outcome": outcome, "path": "input_required", "changed": False}


async def test_the_question_is_one_form_and_nothing_runs_before_the_answer() -> None:
    ex = Example()
    async with connect(ex.server, revision="2026-07-28", answer=accept) as client:
        first = question_of(await call_once(client, "delete_items", ARGS))
    assert ex.items == {"a", "b", "c"}
    request = first.input_requests[INPUT_KEY]
    assert isinstance(request, mt.ElicitRequest)
    assert isinstance(request.params, mt.ElicitRequestFormParams)
    assert request.params.message.startswith("Delete 2 item(s)")


async def test_a_replayed_answer_is_refused_and_asked_again() -> None:
    ex = Example()
    async with connect(ex.server, revision="2026-07-28", answer=accept) as client:
        first = question_of(await call_once(client, "delete_items", {"book": "/b/", "ids": ["a"]}))
        done = await call_once(
            client,
            "delete_items",
            {"book": "/b/", "ids": ["a"]},
            answer=ticked,
            request_state=first.request_state,
        )
        assert isinstance(done, mt.CallToolResult)
        assert not done.is_error
        ex.items.add("a")  # put it back: a replay that worked would delete it again
        replay = await call_once(
            client,
            "delete_items",
            {"book": "/b/", "ids": ["a"]},
            answer=ticked,
            request_state=first.request_state,
        )
    question_of(replay)
    assert ex.items == {"a", "b", "c"}


async def test_a_declined_answer_spends_the_state_too() -> None:
    ex = Example()
    async with connect(ex.server, revision="2026-07-28", answer=accept) as client:
        first = question_of(await call_once(client, "delete_items", ARGS))
        declined = await call_once(
            client,
            "delete_items",
            ARGS,
            answer=mt.ElicitResult(action="decline"),
            request_state=first.request_state,
        )
        assert isinstance(declined, mt.CallToolResult)
        assert declined.is_error
        flipped = await call_once(client, "delete_items", ARGS, answer=ticked, request_state=first.request_state)
    question_of(flipped)
    assert ex.items == {"a", "b", "c"}


async def test_a_tampered_state_is_a_fresh_question_not_an_error() -> None:
    ex = Example()
    async with connect(ex.server, revision="2026-07-28", answer=accept) as client:
        first = question_of(await call_once(client, "delete_items", ARGS))
        state = first.request_state
        assert state is not None
        flipped = state[:-6] + ("AAAAAA" if not state.endswith("AAAAAA") else "BBBBBB")
        for bad in (flipped, "garbage", "", state + "x"):
            result = await call_once(client, "delete_items", ARGS, answer=ticked, request_state=bad)
            question_of(result)
    assert ex.items == {"a", "b", "c"}


async def test_a_state_for_another_target_is_a_fresh_question() -> None:
    ex = Example()
    async with connect(ex.server, revision="2026-07-28", answer=accept) as client:
        first = question_of(await call_once(client, "delete_items", {"book": "/b/", "ids": ["a"]}))
        widened = await call_once(
            client,
            "delete_items",
            {"book": "/b/", "ids": ["a", "b"]},
            answer=ticked,
            request_state=first.request_state,
        )
        other_tool = await call_once(
            client, "update_item", {"scope": "all"}, answer=ticked, request_state=first.request_state
        )
    question_of(widened)
    question_of(other_tool)
    assert ex.items == {"a", "b", "c"}
    assert ex.updates == 0


async def test_an_answer_without_a_state_we_minted_is_ignored() -> None:
    ex = Example()
    async with connect(ex.server, revision="2026-07-28", answer=accept) as client:
        result = await call_once(client, "delete_items", ARGS, answer=ticked)
    question_of(result)
    assert ex.items == {"a", "b", "c"}


async def test_a_state_with_no_answer_is_asked_again() -> None:
    ex = Example()
    async with connect(ex.server, revision="2026-07-28", answer=accept) as client:
        first = question_of(await call_once(client, "delete_items", ARGS))
        again = await call_once(client, "delete_items", ARGS, request_state=first.request_state)
    question_of(again)
    assert ex.items == {"a", "b", "c"}


async def test_a_state_from_before_a_restart_is_a_fresh_question() -> None:
    before, after = Example(), Example()
    async with connect(before.server, revision="2026-07-28", answer=accept) as client:
        first = question_of(await call_once(client, "delete_items", ARGS))
    async with connect(after.server, revision="2026-07-28", answer=accept) as client:
        result = await call_once(client, "delete_items", ARGS, answer=ticked, request_state=first.request_state)
    question_of(result)
    assert after.items == {"a", "b", "c"}


async def test_an_expired_state_is_a_fresh_question() -> None:
    clock = FakeClock()
    ex = Example(clock=clock)
    async with connect(ex.server, revision="2026-07-28", answer=accept) as client:
        first = question_of(await call_once(client, "delete_items", ARGS))
        clock.now += 301
        late = await call_once(client, "delete_items", ARGS, answer=ticked, request_state=first.request_state)
    question_of(late)
    assert ex.items == {"a", "b", "c"}


async def test_without_the_sdk_envelope_approval_cores_own_seal_holds() -> None:
    # The low-level Server has no SDK envelope: approval-core's HMAC and nonce stand alone.
    ex = Example()
    ex.server.middleware[:] = [m for m in ex.server.middleware if not isinstance(m, RequestStateBoundary)]
    async with connect(ex.server, revision="2026-07-28", answer=accept) as client:
        first = question_of(await call_once(client, "delete_items", {"book": "/b/", "ids": ["a"]}))
        state = first.request_state
        assert state is not None
        assert state.startswith("ac1.")
        body, _, tag = state.rpartition(".")
        forged = body + "." + ("A" * len(tag))
        for bad in (forged, "ac1.e30.AAAA", "not-a-state"):
            question_of(
                await call_once(client, "delete_items", {"book": "/b/", "ids": ["a"]}, answer=ticked, request_state=bad)
            )
        question_of(
            await call_once(
                client, "delete_items", {"book": "/b/", "ids": ["a", "b"]}, answer=ticked, request_state=state
            )
        )
        # The widened attempt spent the nonce: the genuine retry is asked again too.
        question_of(
            await call_once(client, "delete_items", {"book": "/b/", "ids": ["a"]}, answer=ticked, request_state=state)
        )
        assert ex.items == {"a", "b", "c"}
        fresh = question_of(await call_once(client, "delete_items", {"book": "/b/", "ids": ["a"]}))
        done = await call_once(
            client,
            "delete_items",
            {"book": "/b/", "ids": ["a"]},
            answer=ticked,
            request_state=fresh.request_state,
        )
        assert isinstance(done, mt.CallToolResult)
        assert not done.is_error
        ex.items.add("a")  # put it back: a replay that worked would delete it again
        replay = await call_once(
            client,
            "delete_items",
            {"book": "/b/", "ids": ["a"]},
            answer=ticked,
            request_state=fresh.request_state,
        )
    question_of(replay)
    assert ex.items == {"a", "b", "c"}


async def test_unticked_on_a_retry_changes_nothing() -> None:
    ex = Example(ApprovalSettings())
    async with connect(ex.server, revision="2026-07-28", answer=accept) as client:
        first = question_of(await call_once(client, "delete_items", ARGS))
        result = await call_once(client, "delete_items", ARGS, answer=UNTICKED, request_state=first.request_state)
    assert isinstance(result, mt.CallToolResult)
    assert result.is_error
    assert ex.items == {"a", "b", "c"}


async def test_an_answer_of_the_wrong_kind_changes_nothing() -> None:
    ex = Example()
    async with connect(ex.server, revision="2026-07-28", answer=accept) as client:
        first = question_of(await call_once(client, "delete_items", ARGS))
        result = await client.session.call_tool(
            "delete_items",
            ARGS,
            request_state=first.request_state,
            allow_input_required=True,
            input_responses={INPUT_KEY: mt.ListRootsResult(roots=[])},
        )
    assert isinstance(result, mt.CallToolResult)
    assert result.is_error
    assert approval_of(result)["outcome"] == "invalid_answer"
    assert ex.items == {"a", "b", "c"}


async def test_an_answer_given_for_an_older_version_gets_a_fresh_question() -> None:
    ex = Example()
    async with connect(ex.server, revision="2026-07-28", answer=accept) as client:
        first = question_of(await call_once(client, "delete_items", ARGS))
        ex.version += 1  # someone else changed the items while the person was reading the dialog
        again = await call_once(client, "delete_items", ARGS, answer=ticked, request_state=first.request_state)
        question_of(again)
    assert ex.items == {"a", "b", "c"}
