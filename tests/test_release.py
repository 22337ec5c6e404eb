"""The release's own bookkeeping against the code: the changelog and nox -s release's expectations.

tests/test_family.py checks that every distribution has the family's version
and that every server pins approval-core to it; this file checks what the
release adds on top: CHANGELOG.md opens with that version and names every
distribution (in that version's section, or, for one added since, in a
section of its own under ``## [Unreleased]``), and ``TOOL_COUNTS`` in noxfile.py (what ``nox -s release``
expects each installed server to list) matches what each server lists.
"""

from __future__ import annotations

import ast
import importlib
import re
import tomllib
from pathlib import Path

import anyio
import pytest

from approval_core import ApprovalSettings
from servers import GUIDE, SERVERS, missing_rows, row

ROOT = Path(__file__).resolve().parents[1]
VERSION = tomllib.loads((ROOT / "packages" / "approval-core" / "pyproject.toml").read_text())["project"]["version"]


def tool_counts() -> dict[str, int]:
    tree = ast.parse((ROOT / "noxfile.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["TOOL_COUNTS"]:
            return ast.literal_eval(node.value)
    raise AssertionError("noxfile.py has no TOOL_COUNTS")


def test_the_changelog_opens_with_the_family_version_and_names_every_distribution() -> None:
    text = (ROOT / "CHANGELOG.md").read_text()
    versions = re.findall(r"^## \[(\d+\.\d+\.\d+)\]", text, flags=re.MULTILINE)
    assert versions, "CHANGELOG.md has no '## [x.y.z]' section"
    assert versions[0] == VERSION
    latest = text.split(f"## [{VERSION}]", 1)[1].split("\n## [", 1)[0]
    unreleased = text.split("## [Unreleased]", 1)[1].split("\n## [", 1)[0] if "## [Unreleased]" in text else ""
    for name in ["approval-core", *SERVERS]:
        # Released with VERSION, or new since: a section of its own under Unreleased until the next release.
        new = re.search(rf"^### {re.escape(name)}$", unreleased, flags=re.MULTILINE)
        if f"### {name} {VERSION}" in latest or new:
            continue
        pytest.fail(
            f"CHANGELOG.md names {name} neither in '## [{VERSION}]' (as '### {name} {VERSION}') nor under "
            f"'## [Unreleased]' in a section headed exactly '### {name}': add that section, as {GUIDE} says",
            pytrace=False,
        )


def test_the_release_session_expects_every_server() -> None:
    assert (problem := missing_rows(tool_counts(), "TOOL_COUNTS in noxfile.py")) is None, problem


@pytest.mark.parametrize("name", SERVERS)
def test_the_release_session_expects_the_number_of_tools_the_server_lists(name: str) -> None:
    server = importlib.import_module(f"{name.replace('-', '_')}.server").build_server(ApprovalSettings())
    assert len(anyio.run(server.list_tools)) == row(tool_counts(), name, "TOOL_COUNTS in noxfile.py")
