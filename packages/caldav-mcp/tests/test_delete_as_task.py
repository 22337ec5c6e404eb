"""caldav-mcp's delete_event as an MCP task that waits for the approval page, against Radicale, on both revisions.

A client declaring tasks (2026-07-28: the ``io.modelcontextprotocol/tasks`` extension; 2025-11-25: ``task``
in the ``tools/call`` params) gets a task instead of the page's refusal; the event is deleted once the person
approves (through the page's book, and once in Debian's Chromium with a virtual passkey), exactly once, and
a denial leaves it in place with the page's refusal. A client that declares no tasks gets the refusal as before.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from browser import browser, paired
from mcp.client import Client

from approval_core import ApprovalGate, ApprovalSettings, approval_outcome
from approval_core.gate import GATE_ATTRIBUTE
from approval_core.page.loopback import running_page
from approval_core.page.pending import PendingApproval
from approval_core.page.settings import PageSettings
from approval_core.testing.tasks import TasksExtension, call_as_task, paired_passkey_file, task_request
from caldav_helpers import ics, vevent

pytestmark = pytest.mark.anyio

MODES = ["legacy", "2026-07-28"]
UID = "task-delete@example.org"


def page_server(account: Any, tmp_path: Path) -> tuple[Any, ApprovalGate]:
    settings = ApprovalSettings(page=PageSettings(passkeys_file=paired_passkey_file(tmp_path / "passkeys.json")))
    server = account.build(settings)
    gate: ApprovalGate = getattr(server, GATE_ATTRIBUTE)
    assert gate.page is not None
    gate.page.bind("http://localhost:8765")
    return server, gate


async def waited_for(gate: ApprovalGate, task: dict[str, Any]) -> PendingApproval:
    assert gate.page is not None
    record = await gate.page.book.get(task["statusMessage"].split(" , ")[0].rsplit("/", 1)[1])
    assert record is not None
    return record


async def result_of(client: Client, mode: str, task_id: str) -> dict[str, Any]:
    if mode == "legacy":
        return await task_request(client, "tasks/result", task_id)
    state = await task_request(client, "tasks/get", task_id)
    assert state["status"] == "completed"
    return state["result"]


@pytest.mark.parametrize("mode", MODES)
async def test_delete_event_waits_as_a_task_and_deletes_once_when_approved(account, tmp_path: Path, mode: str) -> None:
    account.put(account.work, "task.ics", ics(vevent(UID, ":20261203T100000Z", ":20261203T110000Z")))
    call = {"calendar": account.work, "id": UID, "scope": "series"}
    server, gate = page_server(account, tmp_path)
    async with Client(server, mode=mode, extensions=[TasksExtension()]) as client:  # type: ignore[arg-type]
        created = await call_as_task(client, "delete_event", call, legacy=mode == "legacy")
        task = created["task"] if mode == "legacy" else created
        assert task["status"] == "working"
        record = await waited_for(gate, task)
        assert account.get(account.work, "task.ics")[0] == 200
        assert gate.page is not None
        await gate.page.book.decide(record, "approve")
        result = await result_of(client, mode, task["taskId"])
        assert result["isError"] is False
        assert account.get(account.work, "task.ics")[0] == 404

        account.put(account.work, "task.ics", ics(vevent(UID, ":20261203T100000Z", ":20261203T110000Z")))
        again = await call_as_task(client, "delete_event", call, legacy=mode == "legacy")
        assert (await waited_for(gate, again["task"] if mode == "legacy" else again)).id != record.id
        assert (await task_request(client, "tasks/get", task["taskId"]))["status"] == "completed"
    assert account.get(account.work, "task.ics")[0] == 200, "the approval acted once"


@pytest.mark.parametrize("mode", MODES)
async def test_a_denied_delete_event_task_changes_nothing(account, tmp_path: Path, mode: str) -> None:
    account.put(account.work, "task.ics", ics(vevent(UID, ":20261203T100000Z", ":20261203T110000Z")))
    server, gate = page_server(account, tmp_path)
    async with Client(server, mode=mode, extensions=[TasksExtension()]) as client:  # type: ignore[arg-type]
        created = await call_as_task(
            client, "delete_event", {"calendar": account.work, "id": UID, "scope": "series"}, legacy=mode == "legacy"
        )
        task = created["task"] if mode == "legacy" else created
        record = await waited_for(gate, task)
        assert gate.page is not None
        await gate.page.book.decide(record, "deny")
        result = await result_of(client, mode, task["taskId"])
    assert result["isError"] is True
    assert result["_meta"]["approval-core/approval"]["outcome"] == "declined"
    assert record.code in result["content"][0]["text"]
    assert account.get(account.work, "task.ics")[0] == 200


@pytest.mark.parametrize("mode", MODES)
async def test_a_client_without_tasks_gets_the_page_refusal(account, tmp_path: Path, mode: str) -> None:
    account.put(account.work, "task.ics", ics(vevent(UID, ":20261203T100000Z", ":20261203T110000Z")))
    server, _ = page_server(account, tmp_path)
    async with Client(server, mode=mode) as client:  # type: ignore[arg-type]
        result = await client.call_tool("delete_event", {"calendar": account.work, "id": UID, "scope": "series"})
    assert result.is_error
    outcome = approval_outcome(result)
    assert outcome is not None
    assert outcome["outcome"] == "approval_pending"
    assert account.get(account.work, "task.ics")[0] == 200


@pytest.mark.parametrize("mode", MODES)
async def test_approved_in_the_browser_the_task_deletes_the_event(account, tmp_path: Path, mode: str) -> None:
    account.put(account.work, "task.ics", ics(vevent(UID, ":20261203T100000Z", ":20261203T110000Z")))
    server = account.build(ApprovalSettings(page=PageSettings(passkeys_file=tmp_path / "passkeys.json")))
    page = server.approval_gate.page
    call = {"calendar": account.work, "id": UID, "scope": "series"}
    async with running_page(page), browser(1) as (person,):
        await paired(page, person)
        async with Client(server, mode=mode, extensions=[TasksExtension()]) as client:  # type: ignore[arg-type]
            created = await call_as_task(client, "delete_event", call, legacy=mode == "legacy")
            task = created["task"] if mode == "legacy" else created
            url = task["statusMessage"].split("they open ", 1)[1].split(" , ", 1)[0]
            shown = await person.open(url)
            assert task["statusMessage"].split("the code ", 1)[1][:5] in shown, "the page shows the task's code"
            assert account.get(account.work, "task.ics")[0] == 200
            said = await person.click_and_wait("approve", ("Approved", "not approved", "Refused", "expired"))
            assert said.startswith("Approved"), said
            result = await result_of(client, mode, task["taskId"])
    assert result["isError"] is False
    assert account.get(account.work, "task.ics")[0] == 404
