"""Cross-package checks every server of the family must pass.

Servers are discovered from ``packages/*-mcp``: a new sister server is picked
up without editing this file.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import tomllib
from pathlib import Path

import pytest

from approval_core import ApprovalSettings
from servers import LIBRARIES, SERVERS, missing_rows, pyproject, workspace_members

ROOT = Path(__file__).resolve().parents[1]


def test_the_first_servers_are_discovered() -> None:
    assert {"caldav-mcp", "carddav-mcp", "ntfy-mcp"} <= set(SERVERS)


def test_every_workspace_member_but_the_shared_libraries_is_a_server_named_for_its_folder() -> None:
    """A server in a folder not named ``*-mcp`` would be missed by every family test: it fails here instead."""
    assert sorted([*LIBRARIES, *SERVERS]) == workspace_members()
    for name in workspace_members():
        assert pyproject(name)["project"]["name"] == name


def project(name: str) -> dict:
    return tomllib.loads((ROOT / "packages" / name / "pyproject.toml").read_text())["project"]


def test_one_version_for_the_whole_family() -> None:
    version = project("approval-core")["version"]
    for name in SERVERS:
        meta = project(name)
        assert meta["version"] == version, name
        assert f"approval-core=={version}" in meta["dependencies"], name


@pytest.mark.parametrize("name", SERVERS)
@pytest.mark.anyio
async def test_a_server_builds_without_a_backend_and_every_tool_has_a_guard_row(name: str) -> None:
    module = importlib.import_module(f"{name.replace('-', '_')}.server")
    guards = importlib.import_module(f"{name.replace('-', '_')}.guards").GUARDS
    assert name == module.SERVER_NAME
    server = module.build_server(ApprovalSettings())
    assert server.name == name
    tools = {tool.name for tool in await server.list_tools()}
    assert tools == set(guards)


@pytest.mark.parametrize("name", SERVERS)
def test_the_console_script_is_the_servers_main(name: str) -> None:
    (script,) = [ep for ep in importlib.metadata.entry_points(group="console_scripts") if ep.name == name]
    assert script.value == f"{name.replace('-', '_')}.server:main"


@pytest.mark.parametrize("name", SERVERS)
@pytest.mark.parametrize("value", ["off", "1", "TRUE", ""])
def test_a_bad_flag_stops_every_server_before_it_serves(name: str, value: str, monkeypatch, capsys) -> None:
    monkeypatch.setenv("ELICITATION", value)
    main = importlib.import_module(f"{name.replace('-', '_')}.server").main
    with pytest.raises(SystemExit) as caught:
        main()
    assert caught.value.code == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith(f"{name}: ELICITATION={value!r} is not a valid value")
    assert "'true'" in err
    assert "'false'" in err


URL_VARIABLES: dict[str, str | None] = {
    "caldav-mcp": "CALDAV_URL",
    "carddav-mcp": "CARDDAV_URL",
    "ntfy-mcp": "NTFY_URL",
}
"""Each server's setting that names its backend's URL; None for a server whose backend has no URL."""


def test_every_server_says_which_setting_names_its_backends_url() -> None:
    assert (problem := missing_rows(URL_VARIABLES, "URL_VARIABLES in tests/test_family.py")) is None, problem


@pytest.mark.parametrize("name", [name for name in SERVERS if URL_VARIABLES.get(name)])
def test_a_malformed_server_url_stops_the_server_before_it_serves(name: str, monkeypatch, capsys) -> None:
    variable = URL_VARIABLES[name]
    assert variable is not None
    monkeypatch.setenv(variable, "ftp://dav.example.org/")
    main = importlib.import_module(f"{name.replace('-', '_')}.server").main
    with pytest.raises(SystemExit) as caught:
        main()
    assert caught.value.code == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith(f"{name}: ")
    assert variable in err
