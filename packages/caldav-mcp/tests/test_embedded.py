"""The opt-in embedded backend: a real Radicale started by caldav-mcp itself on 127.0.0.1."""

from __future__ import annotations

import concurrent.futures
import datetime as dt
import os
import re
import socket
import stat
import sys
import tempfile
from pathlib import Path

import caldav
import pytest
from caldav.lib import error as caldav_error
from mcp.client.stdio import StdioServerParameters, stdio_client

from approval_core import ApprovalSettings, SettingsError
from approval_core.testing import DialogLog, accept, connect
from caldav_helpers import structured
from caldav_mcp import embedded
from caldav_mcp.server import build_server, main
from caldav_mcp.settings import CalDAVSettings

pytestmark = pytest.mark.anyio
STARTED = r"^caldav-mcp: embedded Radicale on http://127\.0\.0\.1:(\d+)/, calendars kept in (.*)$"


def backend_settings(server: embedded.EmbeddedRadicale) -> CalDAVSettings:
    return CalDAVSettings(server.url, server.username, server.password)


@pytest.fixture
def private_tmp(tmp_path, monkeypatch) -> Path:
    """tempfile's folder, pointed at a test folder: the embedded server must leave nothing there."""
    folder = tmp_path / "private-tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def files_holding(root: Path, secret: str) -> list[Path]:
    """Every file under ``root`` whose bytes contain ``secret``."""
    return [p for p in root.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]


# ---------------------------------------------------------------- settings


@pytest.mark.parametrize(
    ("env", "embedded_on", "folder"),
    [
        ({}, False, None),
        ({"CALDAV_EMBEDDED": "false"}, False, None),
        ({"CALDAV_EMBEDDED": "true"}, True, None),
        ({"CALDAV_EMBEDDED": "true", "CALDAV_EMBEDDED_DIR": "/srv/cal"}, True, Path("/srv/cal")),
        ({"CALDAV_EMBEDDED": "true", "CALDAV_CALENDARS": "Calendar"}, True, None),
    ],
)
def test_embedded_settings_are_read_exactly(env, embedded_on, folder) -> None:
    settings = CalDAVSettings.from_env(env)
    assert (settings.embedded, settings.embedded_dir) == (embedded_on, folder)


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"CALDAV_EMBEDDED": "1"}, "CALDAV_EMBEDDED='1' is not valid: set it to exactly true or false"),
        ({"CALDAV_EMBEDDED": "True"}, "CALDAV_EMBEDDED='True' is not valid"),
        ({"CALDAV_EMBEDDED": ""}, "CALDAV_EMBEDDED='' is not valid"),
        (
            {"CALDAV_EMBEDDED": "true", "CALDAV_URL": "https://dav.example.org/", "CALDAV_PASSWORD": "x"},
            "so CALDAV_URL, CALDAV_PASSWORD would be ignored",
        ),
        ({"CALDAV_EMBEDDED_DIR": "/srv/cal"}, "CALDAV_EMBEDDED_DIR is set but CALDAV_EMBEDDED is not true"),
        ({"CALDAV_EMBEDDED": "true", "CALDAV_EMBEDDED_DIR": "cal"}, "CALDAV_EMBEDDED_DIR='cal' is not valid"),
    ],
)
def test_bad_embedded_settings_are_refused_with_the_rule(env, message) -> None:
    with pytest.raises(SettingsError, match=re.escape(message)):
        CalDAVSettings.from_env(env)


def test_a_bad_embedded_setting_stops_the_server_before_anything_starts(monkeypatch, capsys, tmp_path) -> None:
    monkeypatch.delenv("CALDAV_URL", raising=False)
    monkeypatch.setenv("CALDAV_EMBEDDED", "true")
    monkeypatch.setenv("CALDAV_EMBEDDED_DIR", "relative/folder")
    with pytest.raises(SystemExit) as caught:
        main()
    assert caught.value.code == 1
    assert "CALDAV_EMBEDDED_DIR='relative/folder' is not valid" in capsys.readouterr().err


@pytest.mark.skipif(sys.platform != "linux", reason="XDG_DATA_HOME is the Linux convention")
def test_the_default_folder_is_in_the_users_data_folder(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "share"))
    assert embedded.default_folder() == tmp_path / "share" / "caldav-mcp" / "radicale"


def test_without_the_extra_the_message_says_what_to_install(monkeypatch, tmp_path) -> None:
    monkeypatch.setitem(sys.modules, "radicale", None)  # what an install without the extra looks like
    monkeypatch.setitem(sys.modules, "radicale.app", None)
    with pytest.raises(SettingsError, match=re.escape("caldav-mcp[embedded]")) as raised:
        embedded.start(tmp_path / "cal")
    assert not (tmp_path / "cal").exists()
    # Commands that work before the package is on a package index: from a clone, and from dist/.
    assert "uv run --package caldav-mcp --extra embedded caldav-mcp" in str(raised.value)
    assert "uvx --find-links dist/" in str(raised.value)
    assert "pip install" not in str(raised.value)


@pytest.mark.parametrize(("inside", "why"), [(True, "Not a directory"), (False, "it is not a folder")])
def test_an_unusable_folder_is_reported_by_name(tmp_path, private_tmp, inside, why) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the folder should be")
    folder = blocker / "cal" if inside else blocker
    with pytest.raises(embedded.EmbeddedStartError, match=re.escape(f"folder {folder} cannot be used: {why}")):
        embedded.start(folder)
    assert list(private_tmp.iterdir()) == []


def make_open_folder(folder: Path) -> None:
    folder.mkdir()
    folder.chmod(0o755)


def make_symlink(folder: Path) -> None:
    (folder.parent / "real").mkdir(mode=0o700)
    folder.symlink_to(folder.parent / "real")


def make_open_collection_root(folder: Path) -> None:
    (folder / "collection-root").mkdir(parents=True)
    folder.chmod(0o700)
    (folder / "collection-root").chmod(0o777)  # the unsafe set-up under test


@pytest.mark.skipif(os.name != "posix", reason="owner and mode bits are POSIX")
@pytest.mark.parametrize(
    ("make", "why"),
    [
        (make_open_folder, "other users have access to it (mode 755); make it private with chmod 700"),
        (make_symlink, "it is a symbolic link"),
        (make_open_collection_root, "collection-root cannot be used: other users have access to it (mode 777)"),
    ],
)
def test_an_existing_folder_others_could_reach_is_refused(tmp_path, make, why) -> None:
    folder = tmp_path / "cal"
    make(folder)
    with pytest.raises(embedded.EmbeddedStartError, match=re.escape(why)):
        embedded.start(folder)
    assert not (folder / "collection-root" / "me").exists()


def test_two_first_starts_on_one_new_folder_both_succeed_with_one_calendar(tmp_path) -> None:
    folder = tmp_path / "new"
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        servers = list(pool.map(embedded.start, [folder, folder]))
    try:
        with caldav.DAVClient(servers[1].url, username=servers[1].username, password=servers[1].password) as client:
            assert [c.url.path for c in client.principal().calendars()] == [embedded.CALENDAR_PATH]
    finally:
        for server in servers:
            server.stop()


# ---------------------------------------------------------------- the running server


def test_first_start_makes_one_calendar_and_the_data_outlives_the_server(tmp_path, private_tmp) -> None:
    folder = tmp_path / "data" / "radicale"
    first = embedded.start(folder)
    try:
        assert first.url.startswith("http://127.0.0.1:")
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
        with caldav.DAVClient(first.url, username=first.username, password=first.password) as client:
            calendars = client.principal().calendars()
            assert [(c.url.path, c.get_display_name(), c.get_supported_components()) for c in calendars] == [
                (embedded.CALENDAR_PATH, "Calendar", ["VEVENT", "VTODO", "VJOURNAL"])
            ]
            calendars[0].save_event(dtstart=dt.datetime(2026, 12, 3, 10, tzinfo=dt.UTC), summary="Kept")
        assert list(private_tmp.iterdir()) == []
        assert files_holding(tmp_path, first.password) == []  # the password lives in memory only
    finally:
        first.stop()
    port = int(first.url.removesuffix("/").rsplit(":", 1)[1])
    with pytest.raises(ConnectionRefusedError), socket.create_connection(("127.0.0.1", port), 1):
        pass  # nothing listens any more

    second = embedded.start(folder)
    try:
        assert second.password != first.password
        with caldav.DAVClient(second.url, username=second.username, password=second.password) as client:
            calendars = client.principal().calendars()
            assert [c.url.path for c in calendars] == [embedded.CALENDAR_PATH]  # not a second one
            assert [e.icalendar_component["SUMMARY"] for e in calendars[0].events()] == ["Kept"]
    finally:
        second.stop()


def test_only_this_starts_password_opens_it(tmp_path, private_tmp) -> None:
    server = embedded.start(tmp_path / "cal")
    try:
        for password in ("", "me", server.password[:-1]):
            with (
                caldav.DAVClient(server.url, username=server.username, password=password) as client,
                pytest.raises(caldav_error.AuthorizationError),
            ):
                client.principal()
    finally:
        server.stop()


def test_two_servers_on_one_folder_see_each_others_writes(tmp_path, private_tmp) -> None:
    folder = tmp_path / "shared"
    one, two = embedded.start(folder), embedded.start(folder)
    try:
        assert one.url != two.url
        with caldav.DAVClient(one.url, username=one.username, password=one.password) as client:
            client.principal().calendars()[0].save_todo(summary="Written through one")
        with caldav.DAVClient(two.url, username=two.username, password=two.password) as client:
            todos = client.principal().calendars()[0].todos()
        assert [t.icalendar_component["SUMMARY"] for t in todos] == ["Written through one"]
    finally:
        one.stop()
        two.stop()


async def test_the_tools_work_against_it_and_still_ask(tmp_path, private_tmp) -> None:
    server = embedded.start(tmp_path / "cal")
    try:
        log = DialogLog(accept)
        tools = build_server(ApprovalSettings(), backend_settings(server))
        async with connect(tools, revision="2026-07-28", answer=log) as client:
            created = structured(
                await client.call_tool(
                    "create_event",
                    {"calendar": embedded.CALENDAR_PATH, "summary": "Try", "start": "2026-12-03T10:00:00Z"},
                )
            )
            deleted = await client.call_tool("delete_event", {"calendar": embedded.CALENDAR_PATH, "id": created["id"]})
            listed = structured(
                await client.call_tool(
                    "list_events", {"calendar": embedded.CALENDAR_PATH, "start": "2026-12-01", "end": "2026-12-31"}
                )
            )
    finally:
        server.stop()
    assert not deleted.is_error
    assert len(log.messages) == 1
    assert listed["events"] == []


async def test_caldav_embedded_over_stdio_keeps_calendars_across_restarts(tmp_path) -> None:
    folder = tmp_path / "cal"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CALDAV_", "ELICITATION"))}
    env |= {"CALDAV_EMBEDDED": "true", "CALDAV_EMBEDDED_DIR": str(folder), "TMPDIR": str(tmp_path)}
    params = StdioServerParameters(command=sys.executable, args=["-m", "caldav_mcp"], env=env)

    async def run(*calls: tuple[str, dict[str, object]]) -> tuple[list[dict[str, object]], str]:
        with tempfile.TemporaryFile("w+") as errlog:
            async with connect(stdio_client(params, errlog=errlog), revision="2026-07-28") as client:
                results = [structured(await client.call_tool(name, arguments)) for name, arguments in calls]
            errlog.seek(0)
            return results, errlog.read()

    window = {"calendar": embedded.CALENDAR_PATH, "start": "2026-12-01", "end": "2026-12-31"}
    event = {"calendar": embedded.CALENDAR_PATH, "summary": "Dentist", "start": "2026-12-03T10:00:00Z"}
    (calendars, _created), first_err = await run(("list_calendars", {}), ("create_event", event))
    (listed,), second_err = await run(("list_events", window))

    assert [c["id"] for c in calendars["calendars"]] == [embedded.CALENDAR_PATH]
    assert [e["summary"] for e in listed["events"]] == ["Dentist"]
    for stderr in (first_err, second_err):
        started = re.findall(STARTED, stderr, re.MULTILINE)
        assert len(started) == 1
        port, kept_in = started[0]
        assert kept_in == str(folder)
        with pytest.raises(ConnectionRefusedError), socket.create_connection(("127.0.0.1", int(port)), 1):
            pass  # Radicale ended with the server
    assert not [p for p in tmp_path.iterdir() if p.name.startswith("caldav-mcp-")]  # no password file left


def test_the_settings_repr_never_shows_the_password() -> None:
    settings = CalDAVSettings("https://dav.example.org/", "willi", "correct horse battery")
    assert "correct horse" not in repr(settings)
    assert "willi" in repr(settings)
