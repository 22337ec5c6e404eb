"""How every server of the family introduces itself: its version, its capabilities, and a start without settings.

* ``serverInfo.version`` is the server's package version, on both revisions.
* The capabilities a 2026-07-28 ``server/discover`` advertises equal those of
  a 2025-11-25 ``initialize`` (approval-core's ``install_one_capability_set``,
  installed by ``ApprovalGate.attach``).
* The family rule for a start without any settings: the server starts, lists
  its tools over stdio, and answers a call that needs the backend with a
  clear "set X" message; nothing is sent to a default server.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import anyio
import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from approval_core import ApprovalSettings
from approval_core.testing import connect
from servers import SERVERS

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def build(name: str):
    return importlib.import_module(f"{name.replace('-', '_')}.server").build_server(ApprovalSettings())


@pytest.mark.parametrize("name", SERVERS)
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_every_server_reports_its_package_version(name: str, mode: str) -> None:
    async with Client(build(name), mode=mode) as client:
        assert client.server_info is not None
        assert client.server_info.name == name
        assert client.server_info.version == importlib.metadata.version(name)


@pytest.mark.parametrize("name", SERVERS)
async def test_discover_and_initialize_advertise_the_same_capabilities(name: str) -> None:
    async with Client(build(name), mode="legacy") as legacy:
        assert legacy.protocol_version == "2025-11-25"
        handshake = legacy.server_capabilities
    async with Client(build(name), mode="auto") as modern:
        assert modern.protocol_version == "2026-07-28"
        discovered = modern.server_capabilities
    assert discovered == handshake
    assert discovered.tools is not None
    assert not discovered.tools.list_changed


UNCONFIGURED_CALL = {
    "caldav-mcp": ("list_calendars", "CALDAV_URL"),
    "carddav-mcp": ("list_address_books", "CARDDAV_URL"),
    "ntfy-mcp": ("list_users", "NTFY_URL"),
}


def test_every_server_has_an_unconfigured_call() -> None:
    assert sorted(UNCONFIGURED_CALL) == SERVERS


@pytest.mark.stdio
@pytest.mark.parametrize("name", SERVERS)
async def test_a_server_started_without_settings_lists_its_tools_and_says_what_to_set(name: str, tmp_path) -> None:
    script = shutil.which(name, path=str(Path(sys.executable).parent))
    assert script is not None, f"{name}'s console script is not installed"
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path)}
    tool, variable = UNCONFIGURED_CALL[name]
    expected = {t.name for t in await build(name).list_tools()}
    params = StdioServerParameters(command=script, args=[], env=env)
    with tempfile.TemporaryFile("w+") as errlog, anyio.fail_after(120):
        async with connect(stdio_client(params, errlog=errlog), revision="2025-11-25") as client:
            listed = {t.name for t in (await client.list_tools()).tools}
            result = await client.call_tool(tool, {})
            handshake = client.server_capabilities
        async with Client(stdio_client(params, errlog=errlog), mode="auto") as modern:
            assert modern.protocol_version == "2026-07-28"
            discovered = modern.server_capabilities
    assert listed == expected
    assert result.is_error
    text = result.content[0].text
    assert variable in text
    assert re.search(r"\bset\b", text), text
    assert discovered == handshake
    assert not list(tmp_path.iterdir()), "a start without settings wrote into the home folder"


DEFERRED = {
    "caldav-mcp": ("icalendar", "recurring_ical_events", "caldav", "httpcore2"),
    "carddav-mcp": ("vobject",),
    "ntfy-mcp": (),
}
"""Per server: the libraries only a tool call needs, which a start up to the first tools/list must not import.

A client waits for that start (Claude Code gives up after 30 s by default), so what the tool list does not need
is imported by the call that does (``nox -s bench``: benchmarks/bench_startup.py times it).
"""


def test_every_server_names_what_its_start_leaves_for_the_first_call() -> None:
    assert sorted(DEFERRED) == SERVERS, "add the server to DEFERRED (an empty tuple when nothing is deferred)"


@pytest.mark.parametrize("name", [name for name in SERVERS if DEFERRED.get(name)])
def test_listing_the_tools_imports_none_of_what_only_a_call_needs(name: str) -> None:
    probe = (
        "import sys, anyio\n"
        "from approval_core import ApprovalSettings\n"
        f"from {name.replace('-', '_')}.server import build_server\n"
        "anyio.run(build_server(ApprovalSettings()).list_tools)\n"
        "print(' '.join(sorted(m for m in sys.argv[1:] if m in sys.modules)))\n"
    )
    done = subprocess.run(  # noqa: S603 - our own interpreter
        [sys.executable, "-c", probe, *DEFERRED[name]], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == [], f"{name} imports these before any call: {done.stdout.strip()}"
