"""A guarded call that removes several things at once says in its own words how many.

Every server's scenario (``tests/scenarios.py``) is driven through a client that says yes to each dialog. For
each call that asked, of a tool that declares :attr:`~approval_core.Effect.REMOVES`, every argument given as
a list (the ids of the messages, contacts or memos to delete) must have its number of items in the dialog's
own words, above the caller heading (``delete 2 contacts``), as digits: the caller's list below the heading
can be cut, so a person may not see how many there are, and the count is the server's own arithmetic (seed
001, "the counts are the exception").
"""

from __future__ import annotations

import importlib
import re
from typing import Any

import mcp_types as mt
import pytest

from approval_core import CALLER_VALUES_HEADING, Effect
from approval_core.testing import DialogLog, accept, connect
from scenarios import Driver, scenario_of
from servers import SERVERS

pytestmark = pytest.mark.anyio


def numbers_in(text: str) -> set[int]:
    """Every whole number written in digits in ``text`` (``1,024`` counts as 1024)."""
    return {int(found.replace(",", "")) for found in re.findall(r"(?<![\w.])\d[\d,]*(?![\w.])", text)}


class Counting(Driver):
    """Checks, for each dialog of a removing tool, that each list argument's length is in the server's words."""

    def __init__(self, client: Any, log: DialogLog, effects: dict[str, frozenset[Effect]]) -> None:
        super().__init__(client)
        self.log, self.effects = log, effects
        self.checked: set[str] = set()
        self.problems: list[str] = []

    async def call(self, tool: str, args: dict[str, Any]) -> mt.CallToolResult:
        before = len(self.log.messages)
        result = await super().call(tool, args)
        if Effect.REMOVES not in self.effects[tool]:
            return result
        for message in self.log.messages[before:]:
            own_words = message.partition(CALLER_VALUES_HEADING)[0]
            for argument, value in args.items():
                if isinstance(value, list) and value:
                    self.checked.add(tool)
                    if len(value) not in numbers_in(own_words):
                        self.problems.append(
                            f"{tool}: {argument} holds {len(value)} items, and the dialog's own words do not say "
                            f"{len(value)}: {own_words[:300]!r}"
                        )
        return result


@pytest.mark.parametrize("name", SERVERS)
async def test_a_dialog_that_removes_a_list_of_things_states_how_many(
    name: str, request: pytest.FixtureRequest
) -> None:
    scenario = scenario_of(name)
    effects: dict[str, frozenset[Effect]] = dict(importlib.import_module(f"{name.replace('-', '_')}.guards").EFFECTS)
    backend = request.getfixturevalue(scenario.backend)
    log = DialogLog(accept)
    async with connect(scenario.make(backend), revision="2025-11-25", answer=log) as client:
        driver = Counting(client, log, effects)
        await scenario.drive(driver, backend)
    assert not driver.problems, "\n".join(driver.problems)


def test_numbers_are_read_as_a_person_reads_them() -> None:
    assert numbers_in("delete 2 contact(s) and 1,024 messages; v2.16") == {2, 1024}
