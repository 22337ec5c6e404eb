"""The opt-in embedded backend: carddav-mcp starts a real Radicale itself, on 127.0.0.1."""

from __future__ import annotations

import os
import re
import socket
import stat
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio
import httpx2 as httpx
import pytest
from mcp.client.stdio import StdioServerParameters, stdio_client

from approval_core import ApprovalSettings, SettingsError
from approval_core.testing import DialogLog, accept, connect, decline
from carddav_mcp import embedded
from carddav_mcp.client import CardDavClient
from carddav_mcp.server import build_server, main
from carddav_mcp.settings import CardDavSettings

pytestmark = pytest.mark.anyio
STARTED = r"^carddav-mcp: embedded Radicale on http://127\.0\.0\.1:(\d+)/, address books kept in (.*)$"
ADA = {"fn": "Ada Lovelace", "emails": [{"value": "ada@example.org"}]}


@pytest.fixture
def private_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """tempfile's folder, pointed at a test folder so the password file can be watched."""
    folder = tmp_path / "private-tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def names(folder: Path) -> list[str]:
    return sorted(os.listdir(folder))


def holding(root: Path, secret: str) -> list[Path]:
    """The files under ``root`` that contain ``secret``."""
    return [p for p in root.rglob("*") if p.is_file() and secret.encode() in p.read_bytes()]


def port_of(url: str) -> int:
    return int(url.removesuffix("/").rsplit(":", 1)[1])


async def books(settings: CardDavSettings) -> list[tuple[str, str | None]]:
    client = CardDavClient(settings)
    try:
        return [(book.path, book.display_name) for book in await client.address_books()]
    finally:
        await client.aclose()


# ---------------------------------------------------------------- settings


@pytest.mark.parametrize(
    ("env", "on", "folder"),
    [
        ({}, False, None),
        ({"CARDDAV_EMBEDDED": "false"}, False, None),
        ({"CARDDAV_EMBEDDED": "true"}, True, None),
        ({"CARDDAV_EMBEDDED": "true", "CARDDAV_EMBEDDED_DIR": "/srv/books"}, True, Path("/srv/books")),
        ({"CARDDAV_EMBEDDED": "true", "CARDDAV_ADDRESSBOOKS": "contacts"}, True, None),
    ],
)
def test_embedded_settings_are_read_exactly(env: dict[str, str], on: bool, folder: Path | None) -> None:
    settings = CardDavSettings.from_env(env)
    assert (settings.embedded, settings.embedded_dir) == (on, folder)


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"CARDDAV_EMBEDDED": "yes"}, "CARDDAV_EMBEDDED='yes' is not valid: set it to exactly true or false"),
        ({"CARDDAV_EMBEDDED": "TRUE"}, "CARDDAV_EMBEDDED='TRUE' is not valid"),
        (
            {"CARDDAV_EMBEDDED": "true", "CARDDAV_URL": "https://dav.example.org/", "CARDDAV_USERNAME": "ada"},
            "so CARDDAV_URL, CARDDAV_USERNAME would be ignored",
        ),
        ({"CARDDAV_EMBEDDED_DIR": "/srv/books"}, "CARDDAV_EMBEDDED_DIR is set but CARDDAV_EMBEDDED is not true"),
        ({"CARDDAV_EMBEDDED": "true", "CARDDAV_EMBEDDED_DIR": "books"}, "CARDDAV_EMBEDDED_DIR='books' is not valid"),
    ],
)
def test_bad_embedded_settings_are_refused_with_the_rule(env: dict[str, str], message: str) -> None:
    with pytest.raises(SettingsError, match=re.escape(message)):
        CardDavSettings.from_env(env)


def test_a_bad_embedded_setting_stops_the_server(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    for name in ("CARDDAV_URL", "CARDDAV_USERNAME", "CARDDAV_PASSWORD"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("CARDDAV_EMBEDDED", "on")
    with pytest.raises(SystemExit) as caught:
        main()
    assert caught.value.code == 1
    assert "carddav-mcp: CARDDAV_EMBEDDED='on' is not valid" in capsys.readouterr().err


@pytest.mark.skipif(sys.platform != "linux", reason="XDG_DATA_HOME is the Linux convention")
def test_the_default_folder_is_in_the_users_data_folder(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "share"))
    assert embedded.default_folder() == tmp_path / "share" / "carddav-mcp" / "radicale"


async def test_without_the_extra_the_message_says_what_to_install(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.setitem(sys.modules, "radicale", None)  # how an install without the extra looks
    with pytest.raises(SettingsError, match=re.escape("carddav-mcp[embedded]")) as raised:
        await embedded.start(tmp_path / "books")
    assert not (tmp_path / "books").exists()
    # Commands that work before the package is on a package index: from a clone, and from dist/.
    assert "uv run --package carddav-mcp --extra embedded carddav-mcp" in str(raised.value)
    assert "uvx --find-links dist/" in str(raised.value)
    assert "pip install" not in str(raised.value)


@pytest.mark.parametrize(("inside", "why"), [(True, "Not a directory"), (False, "it is not a folder")])
async def test_an_unusable_folder_is_reported_by_name(tmp_path: Path, private_tmp, inside: bool, why: str) -> None:
    (tmp_path / "file").write_text("a file where a folder should be")
    folder = tmp_path / "file" / "books" if inside else tmp_path / "file"
    with pytest.raises(embedded.EmbeddedStartError, match=re.escape(f"folder {folder} cannot be used: {why}")):
        await embedded.start(folder)
    assert names(private_tmp) == []


def open_folder(folder: Path) -> None:
    folder.mkdir()
    folder.chmod(0o750)


def linked_folder(folder: Path) -> None:
    (folder.parent / "elsewhere").mkdir(mode=0o700)
    folder.symlink_to(folder.parent / "elsewhere")


def open_collection_root(folder: Path) -> None:
    (folder / "collection-root").mkdir(parents=True)
    folder.chmod(0o700)
    (folder / "collection-root").chmod(0o757)  # the unsafe set-up under test


@pytest.mark.skipif(os.name != "posix", reason="owner and mode bits are POSIX")
@pytest.mark.parametrize(
    ("make", "why"),
    [
        (open_folder, "other users have access to it (mode 750); make it private with chmod 700"),
        (linked_folder, "it is a symbolic link"),
        (open_collection_root, "collection-root cannot be used: other users have access to it (mode 757)"),
    ],
)
async def test_an_existing_folder_others_could_reach_is_refused(tmp_path: Path, make: Any, why: str) -> None:
    folder = tmp_path / "books"
    make(folder)
    with pytest.raises(embedded.EmbeddedStartError, match=re.escape(why)):
        await embedded.start(folder)
    assert not (folder / "collection-root" / "me").exists()


async def test_two_first_starts_on_one_new_folder_both_succeed_with_one_address_book(tmp_path: Path) -> None:
    folder = tmp_path / "new"
    servers: list[embedded.EmbeddedRadicale] = []

    async def one() -> None:
        servers.append(await embedded.start(folder))

    async with anyio.create_task_group() as group:
        group.start_soon(one)
        group.start_soon(one)
    try:
        assert await books(servers[1].settings) == [(embedded.ADDRESS_BOOK_PATH, "Contacts")]
    finally:
        for server in servers:
            server.stop()


# ---------------------------------------------------------------- the running server


async def test_first_start_makes_one_address_book_and_contacts_outlive_the_server(
    tmp_path: Path, private_tmp: Path
) -> None:
    folder = tmp_path / "data" / "radicale"
    first = await embedded.start(folder)
    try:
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700
        assert await books(first.settings) == [(embedded.ADDRESS_BOOK_PATH, "Contacts")]
        async with connect(build_server(ApprovalSettings(), first.settings), revision="2026-07-28") as client:
            book = {"address_book": embedded.ADDRESS_BOOK_PATH}
            created = await client.call_tool("create_contact", {**book, "fields": ADA})
        assert not created.is_error
        assert names(private_tmp) == []
        assert holding(tmp_path, first.settings.password or "") == []  # the password is in memory only
    finally:
        first.stop()
    port = port_of(first.settings.url or "")
    with pytest.raises(ConnectionRefusedError), socket.create_connection(("127.0.0.1", port), 1):
        pass  # nothing listens there any more

    second = await embedded.start(folder)
    try:
        assert second.settings.password != first.settings.password
        assert await books(second.settings) == [(embedded.ADDRESS_BOOK_PATH, "Contacts")]  # not a second one
        async with connect(build_server(ApprovalSettings(), second.settings), revision="2026-07-28") as client:
            listed = await client.call_tool("list_contacts", {"address_book": embedded.ADDRESS_BOOK_PATH})
    finally:
        second.stop()
    assert [c["fn"] for c in listed.structured_content["contacts"]] == ["Ada Lovelace"]


async def test_only_this_starts_password_opens_it(tmp_path: Path, private_tmp: Path) -> None:
    server = await embedded.start(tmp_path / "books")
    try:
        url, password = server.settings.url or "", server.settings.password or ""
        async with httpx.AsyncClient() as http:
            for attempt in ("", "me", password[:-1]):
                refused = await http.request("PROPFIND", url + "me/", auth=("me", attempt), headers={"Depth": "0"})
                assert refused.status_code == 401
            anonymous = await http.request("PROPFIND", url + "me/", headers={"Depth": "0"})
            assert anonymous.status_code == 401
            allowed = await http.request("PROPFIND", url + "me/", auth=("me", password), headers={"Depth": "0"})
            assert allowed.status_code == 207
    finally:
        server.stop()


async def test_the_guarded_tools_still_ask(tmp_path: Path, private_tmp: Path) -> None:
    server = await embedded.start(tmp_path / "books")
    try:
        book = {"address_book": embedded.ADDRESS_BOOK_PATH}
        async with connect(build_server(ApprovalSettings(), server.settings), revision="2026-07-28") as client:
            created = (await client.call_tool("create_contact", {**book, "fields": ADA})).structured_content
        logs = {"declined": DialogLog(decline), "ticked": DialogLog(accept)}
        remaining: dict[str, list[str]] = {}
        for answer, log in logs.items():
            tools = build_server(ApprovalSettings(), server.settings)
            async with connect(tools, revision="2026-07-28", answer=log) as client:
                await client.call_tool("delete_contact", {"contact_ids": [created["id"]]})
                listed = (await client.call_tool("list_contacts", book)).structured_content
                remaining[answer] = [contact["fn"] for contact in listed["contacts"]]
    finally:
        server.stop()
    assert [len(log.messages) for log in logs.values()] == [1, 1]
    assert remaining == {"declined": ["Ada Lovelace"], "ticked": []}


async def test_carddav_embedded_over_stdio_keeps_contacts_across_restarts(tmp_path: Path) -> None:
    folder = tmp_path / "books"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CARDDAV_", "ELICITATION"))}
    env |= {"CARDDAV_EMBEDDED": "true", "CARDDAV_EMBEDDED_DIR": str(folder), "TMPDIR": str(tmp_path)}
    params = StdioServerParameters(command=sys.executable, args=["-m", "carddav_mcp"], env=env)

    async def run(name: str, arguments: dict[str, Any]) -> tuple[dict[str, Any], str]:
        with tempfile.TemporaryFile("w+") as errlog:
            async with connect(stdio_client(params, errlog=errlog), revision="2026-07-28") as client:
                result = await client.call_tool(name, arguments)
            errlog.seek(0)
            assert not result.is_error, result.content
            return result.structured_content or {}, errlog.read()

    book = {"address_book": embedded.ADDRESS_BOOK_PATH}
    _, first_err = await run("create_contact", {**book, "fields": ADA})
    listed, second_err = await run("list_contacts", book)

    assert [c["fn"] for c in listed["contacts"]] == ["Ada Lovelace"]
    for stderr in (first_err, second_err):
        started = re.findall(STARTED, stderr, re.MULTILINE)
        assert len(started) == 1
        port, kept_in = started[0]
        assert kept_in == str(folder)
        with pytest.raises(ConnectionRefusedError), socket.create_connection(("127.0.0.1", int(port)), 1):
            pass  # Radicale stopped with the server
    assert not [name for name in names(tmp_path) if name.startswith("carddav-mcp-")]  # no password file left
