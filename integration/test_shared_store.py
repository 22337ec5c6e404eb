"""Shared approval state against a real Redis (``redis-server`` from Debian, started on 127.0.0.1).

Runs in ``nox -s integration`` only (this folder is outside the default test
paths) and is marked ``redis``. The store contract of testing/store_contract.py
runs here against :class:`approval_core.RedisStore`, the same tests the
default suite runs against the in-process store; then two gates (two server
objects, as two replicas would be) share one key file and one Redis.
A missing redis-server fails with the step to take (``apt-get install redis-server``).
"""

from __future__ import annotations

import base64
import os
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import mcp_types as mt
import pytest
import redis.asyncio as aioredis

from approval_core import ApprovalSettings, RedisStore, StoreUnavailable
from approval_core.testing import approval_of, asked_here_approved_there, call_once, connect, ticked

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "packages" / "approval-core" / "tests"))

from redis_server import RedisServer
from store_contract import (  # noqa: F401  (collected: the contract, run against Redis)
    FakeClock,
    test_a_note_is_kept_under_its_space_only,
    test_a_note_past_its_ttl_reads_as_absent_and_may_be_written_anew,
    test_a_note_reads_back_any_number_of_times_and_only_new_never_changes_it,
    test_a_record_is_kept_under_its_space_only,
    test_a_record_is_taken_once,
    test_a_record_past_its_ttl_is_taken_as_expired,
    test_a_secret_never_issued_is_not_found,
    test_an_existing_record_is_never_overwritten,
    test_of_concurrent_only_new_writes_exactly_one_wins,
    test_of_concurrent_takes_exactly_one_gets_the_record,
)

from example_server import Example

pytestmark = [pytest.mark.anyio, pytest.mark.redis]

FP = "f" * 64
ARGS = {"book": "/b/", "ids": ["a"]}


@pytest.fixture(scope="module")
def redis_process() -> Iterator[RedisServer]:
    """One redis-server for the module; a test that stops it starts it again."""
    with RedisServer() as server:
        yield server


@pytest.fixture
def redis(redis_process: RedisServer) -> RedisServer:
    redis_process.start()  # a test that failed while it was stopped leaves it stopped
    return redis_process


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
async def store(redis: RedisServer, clock: FakeClock) -> AsyncIterator[RedisStore]:
    opened = RedisStore(redis.url, f"test-{uuid.uuid4().hex[:8]}", clock=clock)
    yield opened
    await opened.aclose()


@pytest.fixture
def settings(tmp_path: Path, redis: RedisServer) -> ApprovalSettings:
    """The settings two replicas share: one Redis, one key file (current and previous key)."""
    keys = tmp_path / "approval.keys"
    keys.write_text("".join(base64.b64encode(os.urandom(32)).decode() + "\n" for _ in range(2)))
    keys.chmod(0o600)
    return ApprovalSettings.from_env({"APPROVAL_STORE_URL": redis.url, "APPROVAL_KEY_FILE": str(keys)})


# ---------------------------------------------------------------- what Redis holds


async def test_redis_holds_a_digest_and_an_expiry_never_the_secret(store: RedisStore, redis: RedisServer) -> None:
    await store.put("token", "the-secret-token", FP, 300)
    client = aioredis.Redis.from_url(redis.url, decode_responses=True)
    try:
        keys = await client.keys(f"approval-core:{store.namespace}:*")
        assert keys == [store.key("token", "the-secret-token")]
        value = await client.get(keys[0])
        assert value is not None
        assert "the-secret-token" not in value
        assert "the-secret-token" not in keys[0]
        lifetime = await client.pttl(keys[0])
        assert 300_000 < lifetime <= 360_000
    finally:
        await client.aclose()


async def test_a_record_outlives_the_store_object_and_stays_in_its_namespace(
    store: RedisStore, redis: RedisServer
) -> None:
    await store.put("state", "nonce", FP, 300)
    other_server = RedisStore(redis.url, store.namespace + "-other")
    restarted = RedisStore(redis.url, store.namespace)
    try:
        assert await other_server.take("state", "nonce") is None
        assert await restarted.take("state", "nonce") == (FP, False)
        assert await store.take("state", "nonce") is None
    finally:
        await other_server.aclose()
        await restarted.aclose()


async def test_a_stopped_redis_raises_store_unavailable_and_a_started_one_works_again(
    store: RedisStore, redis: RedisServer
) -> None:
    await store.put("token", "before", FP, 300)
    redis.stop()
    with pytest.raises(StoreUnavailable):
        await store.take("token", "before")
    with pytest.raises(StoreUnavailable):
        await store.put("token", "during", FP, 300)
    redis.start()
    assert await store.take("token", "before") is None  # no persistence: the restart forgot it
    await store.put("token", "after", FP, 300)
    assert await store.take("token", "after") == (FP, False)


async def test_a_note_written_before_a_restart_from_a_snapshot_reads_as_absent_and_may_be_written_anew() -> None:
    """A decision saved in a snapshot comes back with the snapshot, but not as a decision of the new Redis run.

    Debian's redis-server saves snapshots by default; after a crash a start
    loads the last one. A note names the Redis run that wrote it (``run_id``),
    so a restored one reads as absent, and the first ``only_new`` write of
    the new run (a fresh decision, a fresh spend) is written, as where no
    note is.
    """
    with RedisServer(snapshots=True) as redis:
        store = RedisStore(redis.url, f"test-{uuid.uuid4().hex[:8]}")
        raw = aioredis.Redis.from_url(redis.url, decode_responses=True)
        try:
            assert await store.write("decision", "pending-1", "approve", 300, only_new=True)
            assert await store.write("spent", "pending-1", "1", 300, only_new=True)
            assert await store.read("decision", "pending-1") == "approve"
            before = (await raw.info("server"))["run_id"]
            await raw.save()  # the scheduled snapshot happens to fall here
            await raw.aclose()
            redis.crash()
            redis.start()
            raw = aioredis.Redis.from_url(redis.url, decode_responses=True)
            assert (await raw.info("server"))["run_id"] != before
            assert await raw.exists(store.key("decision", "pending-1")) == 1, "the snapshot did not bring it back"
            assert await store.read("decision", "pending-1") is None
            assert await store.read("spent", "pending-1") is None
            assert await store.write("decision", "pending-1", "deny", 300, only_new=True) is True
            assert await store.read("decision", "pending-1") == "deny"
            assert await store.write("decision", "pending-1", "approve", 300, only_new=True) is False
        finally:
            await raw.aclose()
            await store.aclose()


async def test_after_a_redis_restart_the_first_operation_reconnects_instead_of_failing(
    store: RedisStore, redis: RedisServer
) -> None:
    """The client's connection from before the restart is dead; the one retry reconnects, nothing is refused.

    (Without it, the first question, answer or tap on the approval page after
    every Redis restart was refused as "store unavailable", once per
    connection of every replica.)
    """
    await store.put("token", "before", FP, 300)
    assert await store.write("decision", "pending-1", "approve", 300, only_new=True)
    redis.restart()  # no persistence: every record is gone
    assert await store.read("decision", "pending-1") is None
    redis.restart()
    assert await store.take("token", "before") is None
    redis.restart()
    await store.put("token", "after", FP, 300)
    assert await store.take("token", "after") == (FP, False)


async def test_a_hung_redis_raises_store_unavailable_instead_of_hanging(store: RedisStore, redis: RedisServer) -> None:
    await store.put("token", "before", FP, 300)
    redis.pause()
    try:
        with pytest.raises(StoreUnavailable):
            await store.take("token", "before")
        with pytest.raises(StoreUnavailable):
            await store.put("token", "during", FP, 300)
    finally:
        redis.resume()
    # The timed-out commands may still run once Redis goes on (they were sent): a record caught that way is
    # spent without approving anything. The store itself works again.
    await store.put("token", "after", FP, 300)
    assert await store.take("token", "after") == (FP, False)


# ---------------------------------------------------------------- two gates, one Redis, one key file


async def test_a_question_from_one_replica_is_answered_through_the_other_once(settings: ApprovalSettings) -> None:
    one, two = Example(settings), Example(settings)
    try:
        async with (
            connect(one.server, revision="2026-07-28", answer=ticked) as first,
            connect(two.server, revision="2026-07-28", answer=ticked) as second,
        ):
            spent = await asked_here_approved_there(first, second, "delete_items", ARGS)
            assert two.items == {"b", "c"}
            two.items.add("a")  # as if the backend were shared: a replay that worked would delete it again
            for client in (first, second):
                replay = await call_once(client, "delete_items", ARGS, answer=ticked, request_state=spent)
                assert isinstance(replay, mt.InputRequiredResult)  # a fresh question; nothing ran
        assert one.items == two.items == {"a", "b", "c"}
    finally:
        await one.gate.store.aclose()
        await two.gate.store.aclose()


async def test_a_token_from_one_replica_is_redeemed_through_the_other_once(
    settings: ApprovalSettings, tmp_path: Path
) -> None:
    off = ApprovalSettings(elicitation=False, store_url=settings.store_url, key_ring=settings.key_ring)
    one, two = Example(off), Example(off)
    try:
        async with (
            connect(one.server, revision="2025-11-25") as first,
            connect(two.server, revision="2025-11-25") as second,
        ):
            issued = await first.call_tool("delete_items", ARGS)
            token = approval_of(issued)["confirm_token"]
            done = await second.call_tool("delete_items", {**ARGS, "confirm_token": token})
            assert not done.is_error
            again = await first.call_tool("delete_items", {**ARGS, "confirm_token": token})
            assert approval_of(again)["outcome"] == "token_refused"
        assert (one.items, two.items) == ({"a", "b", "c"}, {"b", "c"})
    finally:
        await one.gate.store.aclose()
        await two.gate.store.aclose()


@pytest.mark.parametrize(
    ("revision", "elicitation", "path"), [("2026-07-28", True, "input_required"), ("2025-11-25", False, "token")]
)
async def test_redis_stopped_refuses_guarded_calls_and_reads_still_work_then_redis_back_works(
    settings: ApprovalSettings, redis: RedisServer, revision, elicitation: bool, path: str
) -> None:
    chosen = ApprovalSettings(elicitation=elicitation, store_url=settings.store_url, key_ring=settings.key_ring)
    one, two = Example(chosen), Example(chosen)
    answer = ticked if elicitation else None
    try:
        async with (
            connect(one.server, revision=revision, answer=answer) as first,
            connect(two.server, revision=revision, answer=answer) as second,
        ):
            if elicitation:
                asked = await call_once(first, "delete_items", ARGS)
                assert isinstance(asked, mt.InputRequiredResult)
                pending: dict[str, object] = {"request_state": asked.request_state}
            else:
                issued = await first.call_tool("delete_items", ARGS)
                pending = {"confirm_token": approval_of(issued)["confirm_token"]}
            redis.stop()
            for client in (first, second):
                if elicitation:
                    refused = await call_once(
                        client, "delete_items", ARGS, answer=ticked, request_state=str(pending["request_state"])
                    )
                else:
                    refused = await client.call_tool("delete_items", {**ARGS, **pending})
                assert isinstance(refused, mt.CallToolResult)
                assert approval_of(refused) == {"outcome": "store_unavailable", "path": path, "changed": False}
                listing = await client.call_tool("list_items", {})
                assert not listing.is_error
            assert one.items == two.items == {"a", "b", "c"}
            redis.start()  # no persistence: what was pending before is gone, so ask again
            if elicitation:
                asked = await call_once(second, "delete_items", ARGS)
                assert isinstance(asked, mt.InputRequiredResult)
                done = await call_once(first, "delete_items", ARGS, answer=ticked, request_state=asked.request_state)
            else:
                issued = await second.call_tool("delete_items", ARGS)
                token = approval_of(issued)["confirm_token"]
                done = await first.call_tool("delete_items", {**ARGS, "confirm_token": token})
            assert isinstance(done, mt.CallToolResult)
            assert not done.is_error
        assert (one.items, two.items) == ({"b", "c"}, {"a", "b", "c"})
    finally:
        redis.start()
        await one.gate.store.aclose()
        await two.gate.store.aclose()


async def test_a_store_that_refuses_the_credentials_says_to_fix_the_setting_not_to_try_again(
    settings: ApprovalSettings,
) -> None:
    """A wrong password in APPROVAL_STORE_URL is a lasting fault: the refusal names the setting, not "try again"."""
    with RedisServer() as guarded:
        admin = aioredis.Redis.from_url(guarded.url)
        await admin.config_set("requirepass", "the-password")
        await admin.aclose()
        wrong = guarded.url.replace("redis://", "redis://:not-the-password@")
        chosen = ApprovalSettings(elicitation=False, store_url=wrong, key_ring=settings.key_ring)
        example = Example(chosen)
        async with connect(example.server, revision="2026-07-28") as client:
            refused = await client.call_tool("delete_items", ARGS)
            assert approval_of(refused) == {"outcome": "store_unavailable", "path": "token", "changed": False}
            text = refused.content[0].text  # type: ignore[union-attr]
            assert "must fix APPROVAL_STORE_URL" in text
            assert "Try again in a moment" not in text
            assert "not-the-password" not in text
        assert example.items == {"a", "b", "c"}
        store = RedisStore(wrong, "test-auth")
        try:
            with pytest.raises(StoreUnavailable) as raised:
                await store.put("token", "x", FP, 300)
            assert raised.value.lasting
        finally:
            await store.aclose()
        right = RedisStore(guarded.url.replace("redis://", "redis://:the-password@"), "test-auth")
        try:
            await right.put("token", "x", FP, 300)
            assert await right.take("token", "x") == (FP, False)
        finally:
            await right.aclose()
