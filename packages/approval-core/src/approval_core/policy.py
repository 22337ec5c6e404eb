"""Which tools ask, when, and how that lines up with their annotations.

A server declares one :class:`GuardTable`: a row per tool with a
:class:`Guard` rule, plus the *documented mismatches*: tools whose guard and
``destructiveHint`` deliberately disagree, each with its reason (seed 000
§"Annotations are the other half"). Annotations say what a call does; the
guard decides whether a person is asked first. The two are different claims,
and softening an annotation to make them agree would define a real gap away.

A guarded tool binds the *version* of what it read (an ETag, a message's
revision) into its approval, so a change made by someone else between the
question and the answer ends in a fresh question or a refused token, never in
a write the person did not see. A guarded tool with no version to bind is
listed in ``unversioned`` with the reason; the gate refuses to ask for any
other guarded tool that gives no version.

Annotations are built with :func:`annotations`, which insists on all four MCP
hints (readOnlyHint, destructiveHint, idempotentHint, openWorldHint; MCP
2025-11-25 §Tool annotations), so none is left to a client's default.
"""

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal

from mcp_types import ToolAnnotations

from approval_core.errors import GuardTableError

__all__ = [
    "CHANGES",
    "TAKES_AWAY",
    "Effect",
    "Guard",
    "GuardKind",
    "GuardTable",
    "GuardedCall",
    "Mismatch",
    "MismatchKind",
    "annotations",
    "effects",
]

GuardKind = Literal["never", "always", "when"]
MismatchKind = Literal["guarded-not-destructive", "destructive-not-guarded", "changes-not-destructive"]


class Effect(StrEnum):
    """What a tool call does to the data a backend holds, as a server declares it per tool (``guards.EFFECTS``).

    The family tests derive the annotation rules from these (``tests/test_guards.py``) and check them against
    what a call is seen to send to its backend (:mod:`approval_core.testing`, :class:`~approval_core.testing.
    HttpRecorder` and :class:`~approval_core.testing.FolderRecorder`).

    Members:
        READS: reads stored data. A tool whose effects are only ``READS`` is read-only (``readOnlyHint: true``)
            and never asks.
        CREATES: stores something new, next to what was there (an event, a card, a user, a message).
        REPLACES: overwrites something stored (a new text for an entry, a new status, new access rules); the
            earlier value is not kept. Implies ``destructiveHint: true`` unless documented otherwise.
        REMOVES: takes something stored away (a delete; the source of a move). Implies ``destructiveHint: true``.
        SENDS: reaches people other than the account holder (a notification to a topic's subscribers, an iTIP
            message mailed by a scheduling server). Implies ``openWorldHint: true``.
    """

    READS = "reads"
    CREATES = "creates"
    REPLACES = "replaces"
    REMOVES = "removes"
    SENDS = "sends"


CHANGES: frozenset[Effect] = frozenset({Effect.CREATES, Effect.REPLACES, Effect.REMOVES, Effect.SENDS})
"""The effects that change something: a tool declaring none of these is read-only."""

TAKES_AWAY: frozenset[Effect] = frozenset({Effect.REPLACES, Effect.REMOVES})
"""The effects that take stored data away: a tool declaring one is destructive, unless a documented mismatch."""


def effects(*declared: Effect | str) -> frozenset[Effect]:
    """One tool's declared effects, as a frozen set: ``effects("reads")`` or ``effects(Effect.REMOVES)``.

    Raises:
        GuardTableError: nothing declared, or a name that is not an :class:`Effect`.
    """
    if not declared:
        raise GuardTableError("a tool declares at least one effect (a read-only tool declares Effect.READS)")
    try:
        return frozenset(Effect(value) for value in declared)
    except ValueError as exc:
        raise GuardTableError(f"{exc}; the effects are {', '.join(e.value for e in Effect)}") from None


@dataclass(frozen=True, slots=True)
class GuardedCall:
    """What a ``when`` predicate sees of a call.

    Attributes:
        tool: The tool's name.
        arguments: The call's arguments as the tool validated them.
        facts: What the server read before asking (e.g. ``{"recurring": True}``).
    """

    tool: str
    arguments: Mapping[str, Any] = field(default_factory=lambda: {})
    facts: Mapping[str, Any] = field(default_factory=lambda: {})


@dataclass(frozen=True, slots=True)
class Guard:
    """The rule for one tool: ``never``, ``always``, or ``when`` a predicate holds.

    Build one with :meth:`never`, :meth:`always` or :meth:`when`.

    Attributes:
        kind: ``"never"``, ``"always"`` or ``"when"``.
        condition: In words, when it asks (``"always"``, ``"never"``, or the
            condition given to :meth:`when`); used by docs and tests.
        predicate: For ``when``: decides from a :class:`GuardedCall`.
    """

    kind: GuardKind
    condition: str
    predicate: Callable[[GuardedCall], bool] | None = None

    @classmethod
    def never(cls) -> "Guard":
        """The tool never asks."""
        return cls("never", "never")

    @classmethod
    def always(cls) -> "Guard":
        """The tool asks on every call."""
        return cls("always", "always")

    @classmethod
    def when(cls, predicate: Callable[[GuardedCall], bool], condition: str) -> "Guard":
        """The tool asks only when ``predicate(call)`` is true.

        Args:
            predicate: Decides from the call's arguments and the facts the
                server read before asking.
            condition: The same rule in words, e.g. ``"only when changing a
                whole recurring series"``.

        Raises:
            GuardTableError: ``condition`` is empty.
        """
        if not condition.strip():
            raise GuardTableError("Guard.when needs the condition in words")
        return cls("when", condition, predicate)

    @property
    def may_ask(self) -> bool:
        """True unless the rule is ``never``."""
        return self.kind != "never"

    def asks(self, call: GuardedCall) -> bool:
        """Whether this call must be approved by a person first."""
        if self.kind == "when":
            assert self.predicate is not None
            return bool(self.predicate(call))
        return self.kind == "always"


@dataclass(frozen=True, slots=True)
class Mismatch:
    """A tool whose guard and ``destructiveHint`` deliberately disagree.

    Attributes:
        tool: The tool's name.
        kind: ``guarded-not-destructive`` (asks, though nothing is taken away),
            ``destructive-not-guarded`` (takes something away, does not ask), or
            ``changes-not-destructive`` (declares :attr:`Effect.REPLACES` or
            :attr:`Effect.REMOVES` yet is annotated ``destructiveHint: false``,
            because what it replaces can be set back as it was).
        reason: Why, in a sentence a reader of the docs can check.
    """

    tool: str
    kind: MismatchKind
    reason: str


class GuardTable(Mapping[str, Guard]):
    """A server's guard rules, one row per tool, and its documented mismatches.

    Behaves as a read-only mapping from tool name to :class:`Guard`.

    Args:
        rows: Tool name -> its rule.
        mismatches: The documented guard / ``destructiveHint`` disagreements.
        unversioned: Guarded tools whose target has no version to bind
            (nothing was read before asking, or the backend keeps no version
            of it), each with the reason. Every other guarded tool must give
            :meth:`ApprovalGate.check` a ``version``.

    Raises:
        GuardTableError: a mismatch or unversioned entry names a tool without
            a row, an unversioned tool never asks, a tool is listed twice
            among the mismatches with the same kind, or a reason is empty.
    """

    def __init__(
        self,
        rows: Mapping[str, Guard],
        mismatches: Sequence[Mismatch] = (),
        *,
        unversioned: Mapping[str, str] | None = None,
    ) -> None:
        self._rows = dict(rows)
        self.unversioned: Mapping[str, str] = dict(unversioned or {})
        for tool, reason in self.unversioned.items():
            if tool not in self._rows:
                raise GuardTableError(f"{tool!r} is listed as unversioned but has no guard row")
            if not self._rows[tool].may_ask:
                raise GuardTableError(f"{tool!r} is listed as unversioned but never asks")
            if not reason.strip():
                raise GuardTableError(f"the unversioned entry for {tool!r} needs a reason")
        seen: set[tuple[str, str]] = set()
        for mismatch in mismatches:
            if mismatch.tool not in self._rows:
                raise GuardTableError(f"mismatch for {mismatch.tool!r}, which has no guard row")
            if (mismatch.tool, mismatch.kind) in seen:
                raise GuardTableError(f"{mismatch.tool!r} is listed twice among the mismatches as {mismatch.kind}")
            if not mismatch.reason.strip():
                raise GuardTableError(f"the mismatch for {mismatch.tool!r} needs a reason")
            seen.add((mismatch.tool, mismatch.kind))
        self.mismatches: tuple[Mismatch, ...] = tuple(mismatches)

    def __getitem__(self, tool: str) -> Guard:
        return self._rows[tool]

    def __iter__(self) -> Iterator[str]:
        return iter(self._rows)

    def __len__(self) -> int:
        return len(self._rows)

    def guard(self, tool: str) -> Guard:
        """The row for ``tool``.

        Raises:
            GuardTableError: the tool has no row (a guarded tool that forgot
                its row must fail loudly, not run unasked).
        """
        try:
            return self._rows[tool]
        except KeyError:
            raise GuardTableError(f"{tool!r} has no row in this server's guard table") from None

    def mismatch(self, tool: str, kind: MismatchKind | None = None) -> Mismatch | None:
        """The documented mismatch for ``tool`` (of ``kind``, when given), if there is one."""
        return next((m for m in self.mismatches if m.tool == tool and kind in (None, m.kind)), None)


def annotations(
    *,
    read_only: bool,
    destructive: bool,
    idempotent: bool,
    open_world: bool,
    title: str | None = None,
) -> ToolAnnotations:
    """All four MCP tool annotations, each stated explicitly.

    Raises:
        GuardTableError: ``read_only`` together with ``destructive`` (a tool
            that changes nothing cannot take anything away).
    """
    if read_only and destructive:
        raise GuardTableError("a read-only tool cannot be destructive")
    return ToolAnnotations(
        title=title,
        read_only_hint=read_only,
        destructive_hint=destructive,
        idempotent_hint=idempotent,
        open_world_hint=open_world,
    )
