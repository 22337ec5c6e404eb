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
from typing import Any, Literal

from mcp_types import ToolAnnotations

from approval_core.errors import GuardTableError

__all__ = [
    "Guard",
    "GuardKind",
    "GuardTable",
    "GuardedCall",
    "Mismatch",
    "MismatchKind",
    "annotations",
]

GuardKind = Literal["never", "always", "when"]
MismatchKind = Literal["guarded-not-destructive", "destructive-not-guarded"]


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
        kind: ``guarded-not-destructive`` (asks, though nothing is taken away)
            or ``destructive-not-guarded`` (takes something away, does not ask).
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
            among the mismatches, or a reason is empty.
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
        seen: set[str] = set()
        for mismatch in mismatches:
            if mismatch.tool not in self._rows:
                raise GuardTableError(f"mismatch for {mismatch.tool!r}, which has no guard row")
            if mismatch.tool in seen:
                raise GuardTableError(f"{mismatch.tool!r} is listed twice among the mismatches")
            if not mismatch.reason.strip():
                raise GuardTableError(f"the mismatch for {mismatch.tool!r} needs a reason")
            seen.add(mismatch.tool)
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

    def mismatch(self, tool: str) -> Mismatch | None:
        """The documented mismatch for ``tool``, if there is one."""
        return next((m for m in self.mismatches if m.tool == tool), None)


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
