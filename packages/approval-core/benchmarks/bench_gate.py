"""What the approval gate itself costs per guarded call, against an unguarded call.

Two views, both in one process:

1. end to end through the SDK's in-process client: the same tool called with
   a guard that does not ask (baseline), on the token path (issue + redeem),
   and on the input_required path (question + answered retry);
2. the gate alone, ``ApprovalGate.check`` with a stand-in context (no
   transport), for the same paths, plus the primitives: fingerprint, seal,
   open (verify + spend).

Target: the gate adds under 1 ms per guarded call in-process.
Run: ``uv run nox -s bench`` (or ``uv run python packages/approval-core/benchmarks/bench_gate.py``).
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import anyio
import mcp_types as mt
from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "testing"))
from bench_summary import record  # noqa: E402 - found on the path set just above

from approval_core import (
    ApprovalGate,
    ApprovalSettings,
    CallerValue,
    Dialog,
    Guard,
    GuardTable,
    NotApproved,
    StateSealer,
    annotations,
    fingerprint,
    operation,
    structured,
)
from approval_core.testing import accept, approval_of, call_once, connect, ticked

TARGET = {"calendar": "/calendars/willi/work/", "uids": {f"uid-{i}@example.org" for i in range(5)}}
DIALOG = Dialog(
    operation("delete {count} events", count=5),
    "A CalDAV server keeps no version history. Once it is gone there is nothing to restore it from.",
    [CallerValue("Calendar", "/calendars/willi/work/")],
)
GUARDS = GuardTable(
    {"delete": Guard.when(lambda call: bool(call.arguments["ask"]), "when ask is true")},
    unversioned={"delete": "the benchmark's target has no stored version"},
)


class Out(BaseModel):
    deleted: int


def build(settings: ApprovalSettings) -> MCPServer[Any]:
    server: MCPServer[Any] = MCPServer("bench-mcp")
    gate = ApprovalGate.attach(server, GUARDS, settings)

    @server.tool(annotations=annotations(read_only=False, destructive=True, idempotent=True, open_world=False))
    async def delete(
        ask: bool, ctx: Context, confirm_token: str | None = None
    ) -> Annotated[mt.CallToolResult, Out] | mt.InputRequiredResult:
        decision = await gate.check(
            ctx,
            tool="delete",
            target=TARGET,
            dialog=DIALOG,
            arguments={"ask": ask},
            confirm_token=confirm_token,
        )
        if isinstance(decision, NotApproved):
            return decision.result
        return structured(Out(deleted=5))

    return server


async def per_call_us(run: Callable[[], Awaitable[None]], calls_per_run: int, rounds: int = 7, n: int = 200) -> float:
    """Median over ``rounds`` of the mean microseconds per call."""
    for _ in range(20):
        await run()
    results = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(n):
            await run()
        results.append((time.perf_counter() - start) / (n * calls_per_run) * 1e6)
    return statistics.median(results)


@dataclass
class StandInSession:
    """Stand-in for the server session: only what the gate reads."""

    can_send_request: bool = False


@dataclass
class StandInContext:
    """Stand-in for the tool context: no transport, so only the gate's own work is timed."""

    protocol_version: str
    client_capabilities: mt.ClientCapabilities | None
    session: StandInSession = field(default_factory=StandInSession)
    request_state: str | None = None
    input_responses: dict[str, Any] | None = None
    request_id: str = "1"


async def end_to_end() -> dict[str, float]:
    figures: dict[str, float] = {}
    server = build(ApprovalSettings())
    async with connect(server, revision="2026-07-28", answer=accept, check=False) as client:

        async def unguarded() -> None:
            await client.call_tool("delete", {"ask": False})

        async def input_required() -> None:
            first = await call_once(client, "delete", {"ask": True})
            assert isinstance(first, mt.InputRequiredResult)
            done = await call_once(client, "delete", {"ask": True}, answer=ticked, request_state=first.request_state)
            assert isinstance(done, mt.CallToolResult)
            assert not done.is_error

        figures["e2e unguarded (1 round)"] = await per_call_us(unguarded, 1)
        figures["e2e input_required (2 rounds)"] = await per_call_us(input_required, 2)
    async with connect(build(ApprovalSettings(elicitation=False)), revision="2026-07-28", check=False) as client:

        async def token() -> None:
            first = await client.call_tool("delete", {"ask": True})
            token = approval_of(first)["confirm_token"]
            done = await client.call_tool("delete", {"ask": True, "confirm_token": token})
            assert not done.is_error

        figures["e2e token (2 calls)"] = await per_call_us(token, 2)
    return figures


async def gate_alone() -> dict[str, float]:
    figures: dict[str, float] = {}
    caps = mt.ClientCapabilities(elicitation=mt.ElicitationCapability(form=mt.FormElicitationCapability()))
    gate = ApprovalGate("bench-mcp", GUARDS, ApprovalSettings())
    off = ApprovalGate("bench-mcp", GUARDS, ApprovalSettings(elicitation=False))
    modern = StandInContext("2026-07-28", caps)

    async def not_asked() -> None:
        decision = await gate.check(modern, tool="delete", target=TARGET, dialog=DIALOG, arguments={"ask": False})  # type: ignore[arg-type]
        assert decision.approved

    async def input_required() -> None:
        first = await gate.check(modern, tool="delete", target=TARGET, dialog=DIALOG, arguments={"ask": True})  # type: ignore[arg-type]
        assert not first.approved
        assert isinstance(first.result, mt.InputRequiredResult)
        retry = StandInContext(
            "2026-07-28", caps, request_state=first.result.request_state, input_responses={"approval": ticked}
        )
        done = await gate.check(retry, tool="delete", target=TARGET, dialog=DIALOG, arguments={"ask": True})  # type: ignore[arg-type]
        assert done.approved

    async def token() -> None:
        first = await off.check(modern, tool="delete", target=TARGET, dialog=DIALOG, arguments={"ask": True})  # type: ignore[arg-type]
        assert not first.approved
        assert isinstance(first.result, mt.CallToolResult)
        value = approval_of(first.result)["confirm_token"]
        done = await off.check(
            modern,
            tool="delete",
            target=TARGET,
            dialog=DIALOG,
            arguments={"ask": True},  # type: ignore[arg-type]
            confirm_token=value,
        )
        assert done.approved

    figures["gate not asked (1 call)"] = await per_call_us(not_asked, 1, n=2000)
    figures["gate input_required (per round, 2 rounds)"] = await per_call_us(input_required, 2, n=2000)
    figures["gate token (per call, 2 calls)"] = await per_call_us(token, 2, n=2000)

    sealer = StateSealer("bench-mcp")
    fp = fingerprint("bench-mcp", "delete", TARGET)

    async def fingerprint_only() -> None:
        fingerprint("bench-mcp", "delete", TARGET)

    async def seal_and_open() -> None:
        state = await sealer.seal("delete", fp)
        assert (await sealer.open(state, "delete", fp)).ok

    figures["fingerprint"] = await per_call_us(fingerprint_only, 1, n=5000)
    figures["seal + open"] = await per_call_us(seal_and_open, 1, n=5000)
    return figures


async def main() -> None:
    e2e = await end_to_end()
    alone = await gate_alone()
    width = max(map(len, [*e2e, *alone]))
    print("approval gate benchmark (median of 7 runs, microseconds per call)")
    for name, value in {**e2e, **alone}.items():
        print(f"  {name:<{width}}  {value:9.1f} µs")
    base = e2e["e2e unguarded (1 round)"]
    print()
    print(
        f"  added per guarded round, end to end: input_required {e2e['e2e input_required (2 rounds)'] - base:+.1f} µs, "
        f"token {e2e['e2e token (2 calls)'] - base:+.1f} µs"
    )
    worst = max(alone["gate input_required (per round, 2 rounds)"], alone["gate token (per call, 2 calls)"])
    verdict = "meets" if worst - alone["gate not asked (1 call)"] < 1000 else "MISSES"
    print(f"  gate's own cost per guarded call: at most {worst:.1f} µs -> {verdict} the < 1 ms target")
    own = worst - alone["gate not asked (1 call)"]
    record("bench_gate", "the gate's own cost per guarded call", f"{own:.1f} µs", "< 1000 µs", own < 1000)


if __name__ == "__main__":
    anyio.run(main)
