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
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

import anyio
import pytest
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from approval_core import ApprovalSettings
from approval_core.testing import connect
from servers import SERVERS, missing_rows, row

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
    assert (problem := missing_rows(UNCONFIGURED_CALL, "UNCONFIGURED_CALL in tests/test_start.py")) is None, problem


@pytest.mark.stdio
@pytest.mark.parametrize("name", SERVERS)
async def test_a_server_started_without_settings_lists_its_tools_and_says_what_to_set(name: str, tmp_path) -> None:
    script = shutil.which(name, path=str(Path(sys.executable).parent))
    assert script is not None, f"{name}'s console script is not installed"
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path)}
    tool, variable = row(UNCONFIGURED_CALL, name, "UNCONFIGURED_CALL in tests/test_start.py")
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


DEFERRED: dict[str, tuple[tuple[str, ...], dict[str, str]]] = {
    "caldav-mcp": (
        ("icalendar", "recurring_ical_events", "caldav", "httpcore2"),
        {"CALDAV_URL": "http://127.0.0.1:9/", "CALDAV_USERNAME": "you", "CALDAV_PASSWORD": "secret"},
    ),
    "carddav-mcp": (
        ("vobject",),
        {"CARDDAV_URL": "http://127.0.0.1:9/", "CARDDAV_USERNAME": "you", "CARDDAV_PASSWORD": "secret"},
    ),
    "ntfy-mcp": (("httpcore2",), {"NTFY_URL": "http://127.0.0.1:9/"}),
}
"""Per server: the libraries only a tool call needs, and settings that configure its backend (nothing listens there).

A client waits for the start up to its first tools/list (Claude Code gives up after 30 s by default), so what
the tool list does not need is imported by the call that needs it (``nox -s bench``: benchmarks/bench_startup.py).
A server with nothing to defer has ``((), {})``.
"""

FIRST_LIST = [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize",
     "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "probe", "version": "0"}}},
    {"jsonrpc": "2.0", "method": "notifications/initialized"},
    {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
]  # fmt: skip
"""What a client sends before its first tool call: the handshake and the tool list (2025-11-25)."""


def test_every_server_names_what_its_start_leaves_for_the_first_call() -> None:
    assert (problem := missing_rows(DEFERRED, "DEFERRED in tests/test_start.py")) is None, problem


@pytest.mark.parametrize("name", [name for name in SERVERS if DEFERRED.get(name, ((), {}))[0]])
def test_a_start_up_to_the_first_tool_list_imports_none_of_what_only_a_call_needs(name: str, tmp_path: Path) -> None:
    """The console script's own start (main(), settings, lifespan) answers the handshake and the tool list."""
    modules, settings = row(DEFERRED, name, "DEFERRED in tests/test_start.py")
    probe = (
        "import atexit, sys\n"
        "watched = sys.argv[1:]\n"
        "report = lambda: print('imported:', *sorted(m for m in watched if m in sys.modules), file=sys.stderr)\n"
        "atexit.register(report)\n"
        f"from {name.replace('-', '_')}.server import main\n"
        "main()\n"
    )
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), **settings}
    answers: dict[object, dict] = {}
    with subprocess.Popen(  # noqa: S603 - our own interpreter
        [sys.executable, "-c", probe, *modules],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        text=True,
    ) as process:
        assert process.stdin is not None
        assert process.stdout is not None
        assert process.stderr is not None
        deadline = threading.Timer(120, process.kill)
        deadline.start()
        try:
            process.stdin.write("".join(json.dumps(message) + "\n" for message in FIRST_LIST))
            process.stdin.flush()
            while 2 not in answers and (line := process.stdout.readline()):  # the end of input only after the list
                answer = json.loads(line)
                answers[answer.get("id")] = answer
            process.stdin.close()
            stderr = process.stderr.read()
            returncode = process.wait()
        finally:
            deadline.cancel()
    assert returncode == 0, stderr[-2000:]
    assert answers[2]["result"]["tools"], stderr[-2000:]
    (line,) = [line for line in stderr.splitlines() if line.startswith("imported:")]
    assert line == "imported:", f"{name} imports these before any call: {line.removeprefix('imported:').strip()}"


@pytest.mark.parametrize("name", SERVERS)
async def test_server_info_says_who_the_server_is_and_the_tool_list_may_be_kept(name: str) -> None:
    """MCP 2025-11-25 ``Implementation``: title, description and icons; 2026-07-28 ``tools/list``: a ``ttlMs``."""
    import base64

    from approval_core.serving.identity import TOOL_LIST_TTL_MS

    async with Client(build(name), mode="legacy") as client:
        info = client.server_info
    assert info is not None
    assert info.title
    assert info.description == importlib.metadata.metadata(name)["Summary"]
    (icon,) = info.icons or []
    assert icon.mime_type == "image/svg+xml"
    svg = base64.b64decode(icon.src.removeprefix("data:image/svg+xml;base64,")).decode()
    assert svg.startswith("<svg xmlns=")
    assert "script" not in svg.lower()
    async with connect(build(name), revision="2026-07-28") as modern:
        listed = await modern.list_tools()
    assert listed.ttl_ms == TOOL_LIST_TTL_MS


@pytest.mark.parametrize("name", SERVERS)
async def test_server_info_names_a_website_only_where_the_package_declares_one(name: str) -> None:
    """``websiteUrl`` comes from the package's own ``Project-URL``; with none declared it is absent, never invented."""
    from approval_core.serving.identity import identity

    declared = identity(name, "title", "")["website_url"]
    async with Client(build(name), mode="legacy") as client:
        info = client.server_info
    assert info is not None
    assert info.website_url == declared


@pytest.mark.parametrize(
    ("entries", "expected"),
    [
        (["Homepage, https://example.org/family"], "https://example.org/family"),
        (
            ["Funding, https://example.org/give", "Documentation, https://docs.example.org/"],
            "https://docs.example.org/",
        ),
        (["Homepage, http://example.org/plain"], None),
        (["Funding, https://example.org/give"], None),
        ([], None),
    ],
)
def test_the_website_is_a_declared_https_home_documentation_or_repository_url(
    monkeypatch: pytest.MonkeyPatch, entries: list[str], expected: str | None
) -> None:
    import email.message

    from approval_core.serving import identity as module

    metadata = email.message.Message()
    metadata["Version"] = "1.2.3"
    metadata["Summary"] = "A server"
    for entry in entries:
        metadata["Project-URL"] = entry
    monkeypatch.setattr(module.importlib.metadata, "metadata", lambda distribution: metadata)
    assert module.identity("some-server", "title", "")["website_url"] == expected
