"""Every dialog names the entry the caller chose by the id it gave, under the caller heading (issue 22, §4).

Each server's scenario (``tests/scenarios.py``) is driven through a client
that ticks every dialog. For each call that asked, every id argument the
caller passed must be in the dialog's caller values (below
``CALLER_VALUES_HEADING``), shown as an identifier is (escaped), and in none
of the server's own words above it.

An id argument is one named ``id``, ``uid``, ``name`` or ``username``, or
ending in ``_id`` or ``_ids`` (a string, or a list of strings): the names the
family's servers give the arguments that choose an entry. A new server that
names its ids so is covered as soon as its scenario drives its guarded tools;
a server whose guarded tools take no such argument has nothing to check here.
"""

from __future__ import annotations

import importlib
from typing import Any

import mcp_types as mt
import pytest

from approval_core import CALLER_VALUES_HEADING, CallerValue, Dialog, GuardTable, operation
from approval_core.testing import DialogLog, accept, connect
from scenarios import Driver, scenario_of
from servers import SERVERS

pytestmark = pytest.mark.anyio


def is_id(name: str) -> bool:
    """Whether an argument chooses an entry by id (see the module docstring)."""
    return name in {"id", "uid", "name", "username"} or name.endswith(("_id", "_ids"))


def shown(value: str) -> str:
    """``value`` as a dialog shows an identifier."""
    ((_, text),) = Dialog(operation("x"), "x", [CallerValue("Id", value, identifier=True)]).shown_values()
    return text


class Naming(Driver):
    """A :class:`Driver` that checks, for every call that asked, that its dialog names each id it was given."""

    def __init__(self, client: Any, log: DialogLog, guards: GuardTable) -> None:
        super().__init__(client)
        self.log, self.guards = log, guards
        self.checked: set[str] = set()
        self.problems: list[str] = []

    async def call(self, tool: str, args: dict[str, Any]) -> mt.CallToolResult:
        before = len(self.log.messages)
        result = await super().call(tool, args)
        for message in self.log.messages[before:]:
            self.check(tool, args, message)
        return result

    def check(self, tool: str, args: dict[str, Any], message: str) -> None:
        server_words, _, caller_values = message.partition(CALLER_VALUES_HEADING)
        for name, value in args.items():
            if not is_id(name):
                continue
            self.checked.add(tool)
            for one in value if isinstance(value, list) else [value]:
                if shown(str(one)) not in caller_values:
                    self.problems.append(f"{tool}: the dialog does not name {name}={one!r} under the caller heading")
                if str(one) in server_words:
                    self.problems.append(f"{tool}: {name}={one!r} appears in the server's own words of the dialog")


@pytest.mark.parametrize("name", SERVERS)
async def test_every_dialog_names_the_ids_the_caller_gave(name: str, request: pytest.FixtureRequest) -> None:
    scenario = scenario_of(name)
    guards: GuardTable = importlib.import_module(f"{name.replace('-', '_')}.guards").GUARDS
    backend = request.getfixturevalue(scenario.backend)
    log = DialogLog(accept)
    async with connect(scenario.make(backend), revision="2025-11-25", answer=log) as client:
        driver = Naming(client, log, guards)
        await scenario.drive(driver, backend)
        schemas = {tool.name: tool.input_schema for tool in (await client.list_tools()).tools}
    taking_ids = {
        tool
        for tool, schema in schemas.items()
        if guards[tool].may_ask
        and tool not in scenario.asks_elsewhere
        and any(is_id(arg) for arg in schema.get("properties", {}))
    }
    assert not driver.problems, "\n".join(driver.problems)
    never = sorted(taking_ids - driver.checked)
    assert not never, f"guarded tools taking an id that never asked: {never}"
