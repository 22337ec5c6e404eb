"""The single-use stores: confirm tokens and sealed input_required state."""

from __future__ import annotations

import base64
import json

import pytest

from approval_core import Redemption, StateSealer, TokenStore
from approval_core.asking.tokens import SingleUseStore

pytestmark = pytest.mark.anyio


class FakeClock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


FP = "f" * 64
OTHER = "e" * 64


async def test_a_token_is_random_and_redeems_once_for_its_call() -> None:
    store = TokenStore()
    first, second = await store.issue(FP), await store.issue(FP)
    assert first.token != second.token
    assert len(first.token) == 24
    assert await store.redeem(first.token, FP) is Redemption.ACCEPTED
    assert await store.redeem(first.token, FP) is Redemption.UNKNOWN


async def test_a_token_presented_for_another_call_is_spent() -> None:
    store = TokenStore()
    issued = await store.issue(FP)
    assert await store.redeem(issued.token, OTHER) is Redemption.OTHER_CALL
    assert await store.redeem(issued.token, FP) is Redemption.UNKNOWN


async def test_a_token_expires_after_300_seconds() -> None:
    clock = FakeClock()
    store = TokenStore(clock=clock)
    early, late = await store.issue(FP), await store.issue(FP)
    clock.now += 299.9
    assert await store.redeem(early.token, FP) is Redemption.ACCEPTED
    clock.now += 0.1
    assert await store.redeem(late.token, FP) is Redemption.EXPIRED


async def test_the_store_sweeps_expired_entries_and_stays_bounded() -> None:
    clock = FakeClock()
    store = TokenStore(clock=clock, capacity=3)
    old = [await store.issue(FP) for _ in range(3)]
    assert len(store) == 3
    clock.now += 301
    await store.issue(FP)
    assert len(store) == 1
    newer = [await store.issue(FP) for _ in range(3)]
    assert len(store) == 3
    assert await store.redeem(newer[-1].token, FP) is Redemption.ACCEPTED
    assert [await store.redeem(t.token, FP) for t in old] == [Redemption.UNKNOWN] * 3


def test_a_full_store_drops_its_oldest_entry() -> None:
    store = SingleUseStore(ttl=300, capacity=2)
    store.add("one", FP)
    store.add("two", FP)
    store.add("three", FP)
    assert store.take("one") is None
    assert store.take("three") == (FP, False)


def test_store_arguments_are_checked() -> None:
    with pytest.raises(ValueError, match="positive"):
        SingleUseStore(ttl=0)
    with pytest.raises(ValueError, match="positive"):
        SingleUseStore(ttl=10, capacity=0)


# ---------------------------------------------------------------- sealing


async def test_a_state_opens_once_for_its_own_call() -> None:
    sealer = StateSealer("demo-mcp")
    state = await sealer.seal("delete", FP)
    assert state.startswith("ac1.")
    assert (await sealer.open(state, "delete", FP)).ok
    second = await sealer.open(state, "delete", FP)
    assert (second.ok, second.reason) == (False, "spent")


@pytest.mark.parametrize(("tool", "fp", "reason"), [("other", FP, "tool"), ("delete", OTHER, "target")])
async def test_a_state_for_another_call_does_not_open_and_is_spent(tool, fp, reason) -> None:
    sealer = StateSealer("demo-mcp")
    state = await sealer.seal("delete", FP)
    assert (await sealer.open(state, tool, fp)).reason == reason
    assert (await sealer.open(state, "delete", FP)).reason == "spent"


async def test_a_state_from_another_server_or_key_does_not_open() -> None:
    key = b"k" * 32
    theirs = await StateSealer("other-mcp", key=key).seal("delete", FP)
    assert (await StateSealer("demo-mcp", key=key).open(theirs, "delete", FP)).reason == "server"
    restarted = StateSealer("demo-mcp")
    assert (await restarted.open(await StateSealer("demo-mcp").seal("delete", FP), "delete", FP)).reason == "seal"


async def test_a_state_expires() -> None:
    clock = FakeClock()
    sealer = StateSealer("demo-mcp", clock=clock, ttl=300)
    state = await sealer.seal("delete", FP)
    clock.now += 301
    assert (await sealer.open(state, "delete", FP)).reason == "expired"


async def test_a_state_opens_until_the_end_of_its_lifetime() -> None:
    clock = FakeClock()
    sealer = StateSealer("demo-mcp", clock=clock, ttl=300)
    state = await sealer.seal("delete", FP)
    clock.now += 299.5
    assert (await sealer.open(state, "delete", FP)).ok


def _resign(sealer: StateSealer, claims: dict) -> str:
    body = base64.urlsafe_b64encode(json.dumps(claims).encode()).decode().rstrip("=")
    tag = sealer._tag(("ac1." + body).encode())
    return f"ac1.{body}.{base64.urlsafe_b64encode(tag).decode().rstrip('=')}"


async def test_a_resealed_state_with_a_nonce_not_minted_here_is_refused() -> None:
    sealer = StateSealer("demo-mcp", key=b"k" * 32)
    forged = _resign(sealer, {"v": 1, "srv": "demo-mcp", "tool": "delete", "fp": FP, "n": "mine", "exp": 4e9})
    assert (await sealer.open(forged, "delete", FP)).reason == "malformed"  # exp must be an integer
    forged = _resign(sealer, {"v": 1, "srv": "demo-mcp", "tool": "delete", "fp": FP, "n": "mine", "exp": 4_000_000_000})
    assert (await sealer.open(forged, "delete", FP)).reason == "spent"
    assert (await sealer.open(_resign(sealer, {"v": 2}), "delete", FP)).reason == "malformed"
    assert (await sealer.open(_resign(sealer, []), "delete", FP)).reason == "malformed"


@pytest.mark.parametrize(
    "state",
    [
        "",
        "ac1.",
        "ac1..",
        "v1.abc.def",
        "ac1.abc",
        "ac1.a.b.c",
        "ac1.!!!.AAAA",
        "ac1.YQ.ü",
        "ac1.YQ=.AAAA",
        "ac1.bm90IGpzb24.AAAA",
    ],
)
async def test_malformed_states_never_raise(state) -> None:
    opened = await StateSealer("demo-mcp").open(state, "delete", FP)
    assert not opened.ok
    assert opened.reason in {"malformed", "seal"}


async def test_a_non_json_payload_under_a_good_seal_is_malformed() -> None:
    sealer = StateSealer("demo-mcp", key=b"k" * 32)
    body = base64.urlsafe_b64encode(b"not json").decode().rstrip("=")
    tag = base64.urlsafe_b64encode(sealer._tag(("ac1." + body).encode())).decode().rstrip("=")
    assert (await sealer.open(f"ac1.{body}.{tag}", "delete", FP)).reason == "malformed"


def test_a_short_key_is_refused() -> None:
    with pytest.raises(ValueError, match="32 bytes"):
        StateSealer("demo-mcp", key=b"short")
