"""The records of MCP tasks that wait for a pending approval, and their wire shapes on both revisions.

A task (:mod:`approval_core.serving.tasks`) is kept in the gate's record store (this process, the user's
file store, or Redis shared by replicas) as three notes, each written once (``only_new``):

* ``task``: the :class:`TaskRecord` (the call to make again, the pending approval it waits for, who made it);
* ``task-run``: taken by the one request that settles the task (makes the call, or cancels it), so a task
  settles once however many ``tasks/get`` arrive together;
* ``task-call``: written just before the task makes its call, so a request that takes ``task-run`` after it
  lapsed (the call ran longer than :data:`RUN_SECONDS`, or its request died) never reads the approval the
  call spent as used by another call: it waits for that call's outcome, or says the outcome is unknown;
* ``task-outcome``: the :class:`Outcome`, the task's terminal state.

Wire shapes: the ``io.modelcontextprotocol/tasks`` extension (SEP-2663; ``ttlMs``, ``pollIntervalMs``,
the result inline in ``tasks/get``) on 2026-07-28, and the experimental tasks of MCP 2025-11-25 (Basic,
Utilities, Tasks; ``ttl``, ``pollInterval``, a ``tool`` result with ``isError`` reported as ``failed``).
Times are wall-clock seconds in the records and ISO 8601 (UTC) on the wire.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from approval_core.asking.binding import principal
from approval_core.asking.results import APPROVAL_META_KEY
from approval_core.page.pending import KEEP_AFTER_EXPIRY, PendingApproval
from approval_core.records.store import RecordStore

__all__ = ["POLL_INTERVAL_MS", "Outcome", "TaskBook", "TaskRecord", "caller", "task_fields"]

POLL_INTERVAL_MS = 2000
"""Milliseconds a client is asked to wait between two ``tasks/get`` (the decision is a person's)."""

RUN_SECONDS = 120.0
"""Seconds the request settling a task holds it; past that another request may settle it."""

Terminal = Literal["completed", "failed", "cancelled"]


def caller() -> list[str | None] | None:
    """Who makes this request: the authenticated principal over HTTP (client id, issuer, subject), else None."""
    found = principal()
    return None if found is None else list(found)


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True, slots=True)
class TaskRecord:
    """One task: a ``tools/call`` that waits for a person's decision on the approval page.

    Attributes:
        id: The task id (128 random bits, URL-safe). It reads the task's state and result, only for
            :attr:`owner`; it approves nothing.
        tool: The tool called.
        call: The ``tools/call`` params to make again once the person approved (``name``, ``arguments``).
        pending_id: The pending approval it waits for, or None when the call finished at once (2025-11-25,
            where a task-augmented call always gets a task).
        code: That approval's code (``K7Q-4``), or None.
        url: That approval's page URL, or None.
        owner: The principal that made it (:func:`caller`); None over stdio.
        modern: Made on 2026-07-28 (the extension), else on 2025-11-25.
        created, expires: Wall-clock seconds; after ``expires`` the store may forget it.
    """

    id: str
    tool: str
    call: dict[str, Any]
    pending_id: str | None
    code: str | None
    url: str | None
    owner: list[str | None] | None
    modern: bool
    created: float
    expires: float

    def to_json(self) -> str:
        """The record as compact JSON."""
        return json.dumps(asdict(self), separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def from_json(cls, raw: str) -> TaskRecord | None:
        """The record ``raw`` holds, or None when it is not one."""
        try:
            return cls(**json.loads(raw))
        except (ValueError, TypeError):
            return None


@dataclass(frozen=True, slots=True)
class Outcome:
    """A task's terminal state.

    Attributes:
        status: ``completed`` (``result`` holds the ``CallToolResult``, a refusal included), ``failed``
            (``error`` holds the JSON-RPC error the call raised) or ``cancelled`` (``result`` says so).
        result: The ``CallToolResult`` as JSON, or None.
        error: The JSON-RPC error object, or None.
        at: Wall-clock seconds when it was reached.
    """

    status: Terminal
    result: dict[str, Any] | None
    error: dict[str, Any] | None
    at: float

    def to_json(self) -> str:
        """The outcome as compact JSON."""
        return json.dumps(asdict(self), separators=(",", ":"), ensure_ascii=False)

    @classmethod
    def from_json(cls, raw: str) -> Outcome | None:
        """The outcome ``raw`` holds, or None when it is not one."""
        try:
            return cls(**json.loads(raw))
        except (ValueError, TypeError):
            return None

    def said(self) -> str | None:
        """The approval outcome the result carries (``_meta[APPROVAL_META_KEY]["outcome"]``), or None."""
        try:
            outcome: Any = (self.result or {})["_meta"][APPROVAL_META_KEY]["outcome"]
        except (TypeError, KeyError):
            return None
        return outcome if isinstance(outcome, str) else None

    def is_error(self) -> bool:
        """Whether the call did not run as asked (a refusal, a JSON-RPC error, or a cancel)."""
        return self.status != "completed" or bool((self.result or {}).get("isError"))


class TaskBook:
    """Creates, finds and settles task records in a record store.

    Args:
        store: The gate's record store.
        clock: Wall-clock seconds (the page's clock).

    Every method may raise :class:`~approval_core.records.store.StoreUnavailable`.
    """

    def __init__(self, store: RecordStore, clock: Any) -> None:
        self.store = store
        self._clock = clock

    @property
    def now(self) -> float:
        """The book's wall-clock seconds."""
        return float(self._clock())

    async def create(
        self, call: dict[str, Any], *, modern: bool, record: PendingApproval | None, url: str | None
    ) -> TaskRecord:
        """Record a new task for ``call``, waiting for ``record`` (or already finished when None)."""
        now = self.now
        waits_until = now if record is None else record.expires
        task = TaskRecord(
            id=secrets.token_urlsafe(16),
            tool=str(call.get("name", "")),
            call=call,
            pending_id=None if record is None else record.id,
            code=None if record is None else record.code,
            url=url,
            owner=caller(),
            modern=modern,
            created=now,
            expires=waits_until + KEEP_AFTER_EXPIRY,
        )
        await self.store.write("task", task.id, task.to_json(), task.expires - now, only_new=True)
        return task

    async def get(self, task_id: str) -> TaskRecord | None:
        """The task ``task_id`` when it exists and this request's caller made it, else None."""
        raw = await self.store.read("task", task_id)
        task = None if raw is None else TaskRecord.from_json(raw)
        if task is None or task.id != task_id or task.owner != caller():
            return None
        return task

    async def outcome(self, task: TaskRecord) -> Outcome | None:
        """The task's terminal state, or None while it waits."""
        raw = await self.store.read("task-outcome", task.id)
        return None if raw is None else Outcome.from_json(raw)

    async def claim(self, task: TaskRecord) -> bool:
        """Take the right to settle ``task``: True for one request only (for :data:`RUN_SECONDS`)."""
        return await self.store.write("task-run", task.id, "1", RUN_SECONDS, only_new=True)

    async def start(self, task: TaskRecord) -> None:
        """Note that the task's own call is being made (it may spend the approval), before it is made."""
        await self.store.write("task-call", task.id, "1", max(1.0, task.expires - self.now), only_new=True)

    async def started(self, task: TaskRecord) -> bool:
        """Whether the task's own call was made already, by a request whose claim may have lapsed since."""
        return await self.store.read("task-call", task.id) is not None

    async def finish(self, task: TaskRecord, outcome: Outcome) -> Outcome:
        """Record ``outcome`` unless one stands already; the outcome that stands."""
        keep = max(task.expires, outcome.at) - self.now + KEEP_AFTER_EXPIRY
        if await self.store.write("task-outcome", task.id, outcome.to_json(), keep, only_new=True):
            return outcome
        return await self.outcome(task) or outcome


def task_fields(task: TaskRecord, outcome: Outcome | None, now: float, *, modern: bool) -> dict[str, Any]:
    """The task as ``tasks/get``, ``CreateTaskResult`` and the status notification give it.

    On 2026-07-28 (``modern``) a terminal task carries its ``result`` (or ``error``) inline and a refusal
    is ``completed`` (SEP-2663, "Task Status"); on 2025-11-25 a ``CallToolResult`` with ``isError`` is
    ``failed`` and the result is read with ``tasks/result``.
    """
    status: str = "working" if outcome is None else outcome.status
    if not modern and outcome is not None and outcome.status == "completed" and outcome.is_error():
        status = "failed"
    ttl = round((task.expires - task.created) * 1000)
    fields: dict[str, Any] = {
        "taskId": task.id,
        "status": status,
        "statusMessage": status_message(task, outcome, now),
        "createdAt": _iso(task.created),
        "lastUpdatedAt": _iso(task.created if outcome is None else outcome.at),
        "ttlMs" if modern else "ttl": ttl,
        "pollIntervalMs" if modern else "pollInterval": POLL_INTERVAL_MS,
    }
    if modern and outcome is not None and outcome.result is not None and outcome.status == "completed":
        fields["result"] = outcome.result
    if modern and outcome is not None and outcome.error is not None:
        fields["error"] = outcome.error
    return fields


def status_message(task: TaskRecord, outcome: Outcome | None, now: float) -> str:
    """The task's state in this server's own words (never text read from a backend)."""
    if outcome is None:
        left = max(0.0, task.expires - KEEP_AFTER_EXPIRY - now)
        return (
            f"{task.tool} waits for the person's decision: they open {task.url} , check that the page shows "
            f"the code {task.code}, and approve or deny it there with their passkey. The approval expires in "
            f"{left / 60:.0f} minute(s)."
        )
    if outcome.status == "cancelled":
        if outcome.said() == "used_elsewhere":
            return f"Cancelled: this task ran nothing; the approval was used by another identical {task.tool} call."
        return f"Cancelled: {task.tool} was not run and its approval was withdrawn."
    if outcome.status == "failed":
        return f"{task.tool} failed with a protocol error; nothing more will happen for this task."
    if not outcome.is_error():
        return f"Finished: {task.tool} ran once."
    return f"Finished: {task.tool} was not run; the result says why."
