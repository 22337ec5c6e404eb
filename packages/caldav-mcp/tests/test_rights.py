"""403 is "not allowed", 401 is bad credentials, a DELETE of what is already gone is not an error.

Runs a Radicale of its own with a rights file: ``willi`` owns ``/willi/own/``
and may only read ``/willi/shared/`` (as a calendar shared read-only would be).
Radicale answers a write there with 403 and lists only ``read`` and
``read-free-busy`` in its ``current-user-privilege-set`` (RFC 3744 §5.4).
"""

from __future__ import annotations

import http.client
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from processes import free_port, started

from approval_core import ApprovalSettings
from approval_core.testing import DialogLog, accept, connect
from caldav_helpers import ics, structured, vevent
from caldav_mcp.client import CalDAVClient
from caldav_mcp.server import build_server
from caldav_mcp.settings import CalDAVSettings

pytestmark = pytest.mark.anyio

RIGHTS = """\
[shared]
user: willi
collection: willi/shared(/.*)?
permissions: r

[root]
user: .+
collection:
permissions: R

[principal]
user: (.+)
collection: {user}
permissions: RW

[own]
user: (.+)
collection: {user}/[^/]+(/.*)?
permissions: rw
"""

TASK = "BEGIN:VTODO\nUID:{uid}\nDTSTAMP:20261101T000000Z\nSUMMARY:Shared task\nEND:VTODO\n"


@dataclass
class Shared:
    url: str
    storage: Path

    def store(self, calendar: str, name: str, text: str) -> None:
        """Write an item straight into the store (the rights forbid writing it over HTTP)."""
        (self.storage / "collection-root" / "willi" / calendar / name).write_text(text)

    def remove(self, calendar: str, name: str) -> None:
        (self.storage / "collection-root" / "willi" / calendar / name).unlink()


def _answers(port: int) -> bool:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
    try:
        conn.request("OPTIONS", "/")
        conn.getresponse().read()
        return True
    except (OSError, http.client.HTTPException):
        return False
    finally:
        conn.close()


@pytest.fixture(scope="module")
def shared(tmp_path_factory) -> Iterator[Shared]:
    work = tmp_path_factory.mktemp("radicale-rights")
    (work / "users").write_text("willi:secret\n")
    (work / "rights").write_text(RIGHTS)
    storage = work / "collections"
    for name, label in (("own", "Own"), ("shared", "Shared")):
        folder = storage / "collection-root" / "willi" / name
        folder.mkdir(parents=True)
        props = {"tag": "VCALENDAR", "D:displayname": label, "C:supported-calendar-component-set": "VEVENT,VTODO"}
        (folder / ".Radicale.props").write_text(json.dumps(props))
    port = free_port()
    argv = [
        sys.executable, "-m", "radicale",
        "--server-hosts", f"127.0.0.1:{port}",
        "--auth-type", "htpasswd",
        "--auth-htpasswd-filename", str(work / "users"),
        "--auth-htpasswd-encryption", "plain",
        "--auth-delay", "0",
        "--rights-type", "from_file",
        "--rights-file", str(work / "rights"),
        "--storage-filesystem-folder", str(storage),
        "--logging-level", "warning",
    ]  # fmt: skip
    with started(
        argv,
        name="radicale",
        port=port,
        workdir=work,
        log=work / "server.log",
        ready=lambda: _answers(port),
        error=RuntimeError,
        seconds=30,
    ):
        yield Shared(f"http://127.0.0.1:{port}/", storage)


def _server(shared: Shared, approval: ApprovalSettings | None = None):
    return build_server(approval or ApprovalSettings(), CalDAVSettings(shared.url, "willi", "secret"))


async def test_a_write_answered_403_says_not_allowed_not_bad_credentials(shared: Shared) -> None:
    shared.store("shared", "t403.ics", ics(TASK.format(uid="t403@x")))
    async with connect(_server(shared), revision="2026-07-28") as client:
        result = await client.call_tool(
            "update_task", {"calendar": "/willi/shared/", "uid": "t403@x", "summary": "Mine now"}
        )
    text = result.content[0].text
    assert result.is_error
    assert "403 Forbidden: this account may not do that there" in text
    assert "CALDAV_PASSWORD" not in text


async def test_wrong_credentials_are_401_and_say_so(shared: Shared) -> None:
    server = build_server(ApprovalSettings(), CalDAVSettings(shared.url, "willi", "not-the-password"))
    async with connect(server, revision="2026-07-28") as client:
        result = await client.call_tool("list_calendars", {})
    assert result.is_error
    assert "refused these credentials (401); check CALDAV_USERNAME and CALDAV_PASSWORD" in result.content[0].text
    assert "not-the-password" not in result.content[0].text


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
async def test_no_dialog_for_what_this_account_may_not_do(shared: Shared, revision) -> None:
    shared.store("shared", "d.ics", ics(vevent("d@x", ":20261201T090000Z", ":20261201T100000Z")))
    shared.store("shared", "dt.ics", ics(TASK.format(uid="dt@x")))
    log = DialogLog(accept)
    async with connect(_server(shared), revision=revision, answer=log) as client:
        event = await client.call_tool("delete_event", {"calendar": "/willi/shared/", "id": "d@x"})
        task = await client.call_tool("delete_task", {"calendar": "/willi/shared/", "uid": "dt@x"})
    assert log.messages == []
    for result in (event, task):
        assert result.is_error
        assert "calendar: this account may not change entries in /willi/shared/" in result.content[0].text
    assert (shared.storage / "collection-root" / "willi" / "shared" / "d.ics").exists()


async def test_can_write_reads_the_privileges_the_server_publishes(shared: Shared) -> None:
    client = CalDAVClient(CalDAVSettings(shared.url, "willi", "secret"))
    try:
        calendars = {c.path: c for c in await client.calendars()}
        assert await client.can_write(calendars["/willi/own/"].path) is True
        assert await client.can_write(calendars["/willi/shared/"].path) is False
    finally:
        await client.close()


async def test_deleting_what_someone_else_deleted_meanwhile_is_not_an_error(shared: Shared) -> None:
    shared.store("own", "gone.ics", ics(vevent("gone@x", ":20261201T090000Z", ":20261201T100000Z")))
    log = DialogLog(accept)

    async def someone_else_deletes_it_then_approve(context, params):
        shared.remove("own", "gone.ics")
        return await log(context, params)

    async with connect(_server(shared), revision="2025-11-25", answer=someone_else_deletes_it_then_approve) as client:
        result = await client.call_tool("delete_event", {"calendar": "/willi/own/", "id": "gone@x"})
    assert len(log.messages) == 1
    assert structured(result)["uid"] == "gone@x"
    assert structured(result)["already_gone"] is True


async def test_the_client_reports_already_gone(shared: Shared) -> None:
    shared.store("own", "twice.ics", ics(vevent("twice@x", ":20261201T090000Z", ":20261201T100000Z")))
    client = CalDAVClient(CalDAVSettings(shared.url, "willi", "secret"))
    try:
        cal = await client.calendar("/willi/own/")
        resource = await client.find(cal, "VEVENT", "twice@x")
        assert await client.delete(resource) == "deleted"
        assert await client.delete(resource) == "already gone"
    finally:
        await client.close()
