"""The single-use record contract, as tests every store must pass (approval_core.records.store.RecordStore).

The notes of the approval page (``write`` / ``read``) follow the same
contract: a note written ``only_new`` is written once and never changed, of
concurrent first writers exactly one wins, a note past its ``ttl`` reads as
absent, and spaces are kept apart.

A test module imports these functions and provides two fixtures: ``clock``
(a :class:`FakeClock`) and ``store`` (the store under test, built with that
clock). ``packages/approval-core/tests/test_store.py`` runs them against the
in-process store; ``integration/test_shared_store.py`` runs the same tests
against Redis.
"""

from __future__ import annotations

import anyio
import pytest

from approval_core.records.store import RecordStore, StoreUnavailable

__all__ = [
    "FakeClock",
    "test_a_note_is_kept_under_its_space_only",
    "test_a_note_past_its_ttl_reads_as_absent_and_may_be_written_anew",
    "test_a_note_reads_back_any_number_of_times_and_only_new_never_changes_it",
    "test_a_record_is_kept_under_its_space_only",
    "test_a_record_is_taken_once",
    "test_a_record_past_its_ttl_is_taken_as_expired",
    "test_a_secret_never_issued_is_not_found",
    "test_an_existing_record_is_never_overwritten",
    "test_of_concurrent_only_new_writes_exactly_one_wins",
    "test_of_concurrent_takes_exactly_one_gets_the_record",
]

FP = "f" * 64
OTHER = "e" * 64


class FakeClock:
    """Wall-clock seconds that move only when a test moves them."""

    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        """The current fake time (seconds)."""
        return self.now


@pytest.mark.anyio
async def test_a_record_is_taken_once(store: RecordStore) -> None:
    """A record comes back once, with its own fingerprint; then it is gone."""
    await store.put("token", "secret-1", FP, 300)
    await store.put("token", "secret-2", OTHER, 300)
    assert await store.take("token", "secret-1") == (FP, False)
    assert await store.take("token", "secret-1") is None
    assert await store.take("token", "secret-2") == (OTHER, False)


@pytest.mark.anyio
async def test_a_secret_never_issued_is_not_found(store: RecordStore) -> None:
    """Taking a secret nobody issued finds nothing."""
    assert await store.take("state", "never-issued") is None


@pytest.mark.anyio
async def test_a_record_is_kept_under_its_space_only(store: RecordStore) -> None:
    """A token and a state nonce with the same text are different records."""
    await store.put("token", "shared-secret", FP, 300)
    assert await store.take("state", "shared-secret") is None
    assert await store.take("token", "shared-secret") == (FP, False)


@pytest.mark.anyio
async def test_a_record_past_its_ttl_is_taken_as_expired(store: RecordStore, clock: FakeClock) -> None:
    """A record taken at or after its expiry (store clock) is reported expired, and spent."""
    await store.put("state", "early", FP, 300)
    await store.put("state", "late", FP, 300)
    clock.now += 299.5
    assert await store.take("state", "early") == (FP, False)
    clock.now += 0.5
    assert await store.take("state", "late") == (FP, True)
    assert await store.take("state", "late") is None


@pytest.mark.anyio
async def test_an_existing_record_is_never_overwritten(store: RecordStore) -> None:
    """Issuing a secret that is already recorded fails and leaves the first record."""
    await store.put("token", "twice", FP, 300)
    with pytest.raises(StoreUnavailable, match="exists already"):
        await store.put("token", "twice", OTHER, 300)
    assert await store.take("token", "twice") == (FP, False)


@pytest.mark.anyio
async def test_of_concurrent_takes_exactly_one_gets_the_record(store: RecordStore) -> None:
    """Twenty concurrent takes of one record: exactly one gets it."""
    await store.put("token", "contended", FP, 300)
    results: list[tuple[str, bool] | None] = []

    async def take() -> None:
        results.append(await store.take("token", "contended"))

    async with anyio.create_task_group() as group:
        for _ in range(20):
            group.start_soon(take)
    assert sorted(results, key=lambda r: r is None) == [(FP, False)] + [None] * 19


# ---------------------------------------------------------------------------- notes (write / read)


@pytest.mark.anyio
async def test_a_note_reads_back_any_number_of_times_and_only_new_never_changes_it(store: RecordStore) -> None:
    """A note is read as often as asked; ``only_new`` leaves it as it is, a plain write replaces it."""
    assert await store.read("decision", "pending-1") is None
    assert await store.write("decision", "pending-1", "approve", 300, only_new=True) is True
    assert await store.write("decision", "pending-1", "deny", 300, only_new=True) is False
    assert [await store.read("decision", "pending-1") for _ in range(3)] == ["approve"] * 3
    assert await store.write("pending-of", FP, "first", 300, only_new=False) is True
    assert await store.write("pending-of", FP, "second", 300, only_new=False) is True
    assert await store.read("pending-of", FP) == "second"


@pytest.mark.anyio
async def test_a_note_is_kept_under_its_space_only(store: RecordStore) -> None:
    """The same key in two spaces is two notes; a note is never a single-use record either."""
    assert await store.write("decision", "shared-key", "approve", 300, only_new=True) is True
    assert await store.read("spent", "shared-key") is None
    assert await store.write("spent", "shared-key", "1", 300, only_new=True) is True
    assert await store.read("decision", "shared-key") == "approve"
    assert await store.read("spent", "shared-key") == "1"
    assert await store.take("challenge", "shared-key") is None


@pytest.mark.anyio
async def test_a_note_past_its_ttl_reads_as_absent_and_may_be_written_anew(
    store: RecordStore, clock: FakeClock
) -> None:
    """A note lives ``ttl`` seconds (the store's clock in process, Redis' own expiry in Redis: both move here).

    Past it, it reads as absent, and an ``only_new`` write takes its place.
    """
    assert await store.write("pending", "short", "question", 0.3, only_new=True) is True
    assert await store.write("pending", "long", "question", 300, only_new=True) is True
    clock.now += 0.1
    assert await store.read("pending", "short") == "question"
    clock.now += 0.5
    await anyio.sleep(0.6)  # Redis expires a note in its own real time
    assert await store.read("pending", "short") is None
    assert await store.read("pending", "long") == "question"
    assert await store.write("pending", "short", "another", 300, only_new=True) is True
    assert await store.read("pending", "short") == "another"


@pytest.mark.anyio
async def test_of_concurrent_only_new_writes_exactly_one_wins(store: RecordStore) -> None:
    """Twenty concurrent first writes of one note (twenty taps, twenty spends): exactly one is written, and stays."""
    won: list[str] = []

    async def write(value: str) -> None:
        if await store.write("spent", "contended", value, 300, only_new=True):
            won.append(value)

    async with anyio.create_task_group() as group:
        for index in range(20):
            group.start_soon(write, f"writer-{index}")
    assert len(won) == 1, won
    assert await store.read("spent", "contended") == won[0]
