"""``TOOLS``: the preset of tools a server serves, as the operator wrote it.

``TOOLS`` (unprefixed, like ``ELICITATION``) is a comma list of entries, each a tool name
(``create_event``), a prefix ending in ``*`` (``list_*``; ``*`` alone is every tool), or either of them
after ``-`` to leave tools out (``-delete_*``). A tool is served when an entry without ``-`` matches it
(or when every entry has a ``-``) and no ``-`` entry does. Spaces around an entry are ignored; anything
else (an empty entry, a ``*`` inside a name, upper case) is refused when the settings are read. Which
tools a server offers is known only once it is built: :mod:`approval_core.serving.selection` applies the
preset and refuses entries that match none.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from approval_core.errors import SettingsError

__all__ = ["TOOLS_ENV", "ToolSelection"]

TOOLS_ENV = "TOOLS"
_ENTRY = re.compile(r"-?(?:[a-z][a-z0-9_]*\*?|\*)")


@dataclass(frozen=True, slots=True)
class ToolSelection:
    """The entries of ``TOOLS``, as written (see the module docstring).

    Attributes:
        entries: Each entry, spaces stripped, in order (``("list_*", "-list_users")``).
    """

    entries: tuple[str, ...]

    @property
    def text(self) -> str:
        """The entries joined with commas, as the startup line shows them."""
        return ",".join(self.entries)

    @classmethod
    def parse(cls, raw: str | None) -> ToolSelection | None:
        """Read ``TOOLS``; None when it is unset.

        Raises:
            SettingsError: it is set but empty, or an entry is not a tool name, a prefix ending in ``*``, or
                either after ``-``.
        """
        if raw is None:
            return None
        entries = tuple(entry.strip() for entry in raw.split(","))
        if not any(entries):
            raise SettingsError(f"{TOOLS_ENV} is set but empty: name the tools to serve (list_*,get_*), or unset it")
        bad = [entry for entry in entries if not _ENTRY.fullmatch(entry)]
        if bad:
            shown = ", ".join(repr(entry) for entry in bad)
            raise SettingsError(
                f"{TOOLS_ENV} has {shown}, not a tool entry: write tool names in lower case, a prefix ending in "
                "'*' (list_*), or either after '-' to leave tools out (-delete_*), separated by commas"
            )
        return cls(entries)

    def admits(self, name: str) -> bool:
        """Whether tool ``name`` is served under these entries."""
        wanted = [entry for entry in self.entries if not entry.startswith("-")]
        left_out = [entry[1:] for entry in self.entries if entry.startswith("-")]
        chosen = not wanted or any(_matches(entry, name) for entry in wanted)
        return chosen and not any(_matches(entry, name) for entry in left_out)

    def unmatched(self, names: Iterable[str]) -> list[str]:
        """The entries that match none of ``names`` (each as written)."""
        offered = list(names)
        return [entry for entry in self.entries if not any(_matches(entry.lstrip("-"), n) for n in offered)]


def _matches(pattern: str, name: str) -> bool:
    return name.startswith(pattern[:-1]) if pattern.endswith("*") else name == pattern
