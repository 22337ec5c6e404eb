"""The tool tables in docs/ against the code: names, four annotations, and when each tool asks.

A server with tools documents them in ``docs/<server>.md`` in a table whose
rows read ``| `tool` | RO | D | I | OW | asks |``: four ``yes``/``no`` (or ``true``/``false``) cells for
readOnlyHint, destructiveHint, idempotentHint and openWorldHint, then
``never``, ``always`` or, for a conditional guard, its condition in words.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import anyio
import pytest

from approval_core import ApprovalSettings
from servers import GUIDE, SERVERS

ROOT = Path(__file__).resolve().parents[1]
ROW = re.compile(
    r"^\|\s*`(?P<tool>[a-z_]+)`\s*\|" + r"\s*(yes|no|true|false)\s*\|" * 4 + r"\s*(?P<asks>[^|]+?)\s*\|\s*$"
)


def documented(name: str) -> dict[str, tuple[list[bool], str]]:
    rows: dict[str, tuple[list[bool], str]] = {}
    page = ROOT / "docs" / f"{name}.md"
    if not page.is_file():
        pytest.fail(f"docs/{name}.md is missing: write it with the tool table, see docs/adding-a-server.md, section 6")
    for line in page.read_text().splitlines():
        match = ROW.match(line)
        if match:
            cells = [cell.strip() in {"yes", "true"} for cell in line.split("|")[2:6]]
            assert match["tool"] not in rows, f"{match['tool']} is documented twice"
            rows[match["tool"]] = (cells, match["asks"])
    return rows


@pytest.mark.parametrize("name", SERVERS)
def test_the_tool_table_matches_the_code(name: str) -> None:
    module = name.replace("-", "_")
    server = importlib.import_module(f"{module}.server").build_server(ApprovalSettings())
    guards = importlib.import_module(f"{module}.guards").GUARDS
    tools = anyio.run(server.list_tools)
    if not tools:
        return  # a skeleton: nothing to document yet
    rows = documented(name)
    assert sorted(rows) == sorted(tool.name for tool in tools)
    for tool in tools:
        hints = tool.annotations
        cells, asks = rows[tool.name]
        assert cells == [hints.read_only_hint, hints.destructive_hint, hints.idempotent_hint, hints.open_world_hint], (
            tool.name
        )
        assert asks == guards[tool.name].condition, tool.name


# ---------------------------------------------------------------- the places that list the servers

LISTS = {
    "README.md": "[`{name}`](packages/{name}/)",
    "docs/index.md": "[{name}]({name}.md)",
    "docs/clients.md": "[{name}]({name}.md)",
    "docs/security.md": "[{name}]({name}.md#asking-a-person)",
    "mkdocs.yml": "- {name}: {name}.md",
}
"""Each file that lists the servers, and how it names one: every server must be there."""

COUNTED = re.compile(
    r"\b(?:all\s+)?(?:two|three|four|five|six|seven|eight|nine|ten|\d+)\s+(?:sister\s+)?(?:servers|distributions)\b"
    r"|\b(?:second|third|fourth|fifth|sixth)\s+(?:sister\s+)?server\b",
    re.IGNORECASE,
)
SCANNED = sorted(
    {*LISTS, "pyproject.toml", "CHANGELOG.md"}
    | {str(page.relative_to(ROOT)) for page in (ROOT / "docs").glob("*.md")}
    | {str(page.relative_to(ROOT)) for page in (ROOT / "packages").glob("*/README.md")}
)
"""Every page a reader sees (docs/, README.md and each package's README) and the files that list the servers."""


@pytest.mark.parametrize("path", sorted(LISTS))
@pytest.mark.parametrize("name", SERVERS)
def test_every_place_that_lists_the_servers_lists_each(path: str, name: str) -> None:
    expected = LISTS[path].format(name=name)
    assert expected in (ROOT / path).read_text(), f"{path} does not list {name} as {expected!r} (see {GUIDE})"


@pytest.mark.parametrize("path", SCANNED)
def test_no_page_counts_the_servers_by_hand(path: str) -> None:
    """A count written by hand goes stale with the next server; the lists above are checked instead."""
    assert COUNTED.findall((ROOT / path).read_text()) == [], path


INDEX_ROW = re.compile(r"^\| \[(?P<name>[a-z-]+)\]\([a-z-]+\.md\) \| [^|]+ \| (?P<tools>\d+) \|", re.MULTILINE)


@pytest.mark.parametrize("name", SERVERS)
def test_the_home_page_gives_each_servers_number_of_tools(name: str) -> None:
    rows = {m["name"]: int(m["tools"]) for m in INDEX_ROW.finditer((ROOT / "docs" / "index.md").read_text())}
    server = importlib.import_module(f"{name.replace('-', '_')}.server").build_server(ApprovalSettings())
    assert rows.get(name) == len(anyio.run(server.list_tools)), f"docs/index.md: the tools cell of {name} ({GUIDE})"


INSPECTOR = re.compile(r"@modelcontextprotocol/inspector@(?P<version>[0-9][^\s`'\"]*)")


@pytest.mark.parametrize("path", SCANNED)
def test_the_inspector_the_docs_run_is_the_one_the_interop_tests_run(path: str) -> None:
    """A reader's ``npx ... @modelcontextprotocol/inspector@<version>`` is the version ``nox -s interop`` drives."""
    import json

    pinned = json.loads((ROOT / "testing" / "interop" / "package.json").read_text())["dependencies"]
    named = {m["version"] for m in INSPECTOR.finditer((ROOT / path).read_text())}
    assert named <= {pinned["@modelcontextprotocol/inspector"]}, f"{path} names the Inspector at {sorted(named)}"
