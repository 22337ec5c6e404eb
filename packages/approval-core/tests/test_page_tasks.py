"""A call waiting for the approval page as an MCP task (approval_core.serving.tasks), on both revisions.

The SDK client declares tasks as each revision has it: on 2026-07-28 the ``io.modelcontextprotocol/tasks``
extension (:class:`~approval_core.testing.tasks.TasksExtension`), on 2025-11-25 a ``task`` in the
``tools/call`` params. Decisions are written as the page writes them after a verified passkey (an approval)
or through the page's own HTTP route (a denial, which needs no passkey), as in ``test_approval_page.py``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import mcp_types as mt
import pytest
from mcp.client import Client
from mcp.server.auth.middleware.auth_context import auth_context_var
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken
from mcp.shared.exceptions import MCPError
from mcp_http import bearer_transport
from processes import free_port
from token_issuer import IssuerDouble, token_issuer

from approval_core import ApprovalSettings
from approval_core.page.path import denied
from approval_core.page.pending import PendingApproval
from approval_core.page.settings import PageSettings
from approval_core.serving.remote import http_server, verifier_for
from approval_core.serving.tasks import IMMEDIATE_RESPONSE_KEY, RELATED_TASK_KEY, TASKS_EXTENSION, install_page_tasks
from approval_core.testing.tasks import TasksExtension, call_as_task, raw_request, task_request
from core_serving import running
from core_serving import settings as http_settings
from example_server import Example
from test_approval_page import DELETE, ORIGIN, Clock, _page_client, _paired_file, _post

pytestmark = pytest.mark.anyio

ASKING = ("delete_items", "grant", "update_item")
MODES = ["legacy", "2026-07-28"]


def tasked_example(tmp_path: Path, **gate: Any) -> Example:
    settings = ApprovalSettings(page=PageSettings(passkeys_file=_paired_file(tmp_path / "passkeys.json")))
    example = Example(settings, **gate)
    assert example.gate.page is not None
    example.gate.page.bind(ORIGIN)
    install_page_tasks(example.server, example.gate, ASKING)
    install_page_tasks(example.server, example.gate, ASKING)  # idempotent
    return example


def tasks_client(example: Example, mode: str, extension: TasksExtension | None = None) -> Client:
    return Client(example.server, mode=mode, extensions=[extension or TasksExtension()])  # type: ignore[arg-type]


def _task(created: dict[str, Any], mode: str) -> dict[str, Any]:
    return created["task"] if mode == "legacy" else created


async def _record(example: Example, task: dict[str, Any]) -> PendingApproval:
    assert example.gate.page is not None
    pid = task["statusMessage"].split(" , ")[0].rsplit("/", 1)[1]
    record = await example.gate.page.book.get(pid)
    assert record is not None
    return record


async def _final(client: Client, mode: str, task_id: str) -> tuple[dict[str, Any], mt.CallToolResult]:
    """The task's state and its result, as each revision gives them (2025-11-25: ``tasks/result``)."""
    state = await task_request(client, "tasks/get", task_id)
    if mode == "legacy":
        result = await task_request(client, "tasks/result", task_id)
        assert result["_meta"][RELATED_TASK_KEY] == {"taskId": task_id}
    else:
        result = state["result"]
    return state, mt.CallToolResult.model_validate(result, by_name=False)


def _text(result: mt.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, mt.TextContent)
    return block.text


@pytest.mark.parametrize("mode", MODES)
async def test_a_call_waiting_for_the_page_is_a_task_that_acts_once_when_approved(tmp_path: Path, mode: str) -> None:
    example = tasked_example(tmp_path)
    async with tasks_client(example, mode) as client:
        created = await call_as_task(client, "delete_items", DELETE, legacy=mode == "legacy")
        task = _task(created, mode)
        assert task["status"] == "working"
        assert set(task) >= {"taskId", "createdAt", "lastUpdatedAt"}
        assert ("ttlMs" in task and "pollIntervalMs" in task) if mode != "legacy" else ("ttl" in task)
        if mode == "legacy":
            assert task["taskId"] in created["_meta"][IMMEDIATE_RESPONSE_KEY]
        else:
            assert created["resultType"] == "task"
        record = await _record(example, task)
        assert record.code in task["statusMessage"]
        assert example.items == {"a", "b", "c"}
        waiting = await task_request(client, "tasks/get", task["taskId"])
        assert waiting["status"] == "working"
        assert example.items == {"a", "b", "c"}

        assert example.gate.page is not None
        await example.gate.page.book.decide(record, "approve")
        state, result = await _final(client, mode, task["taskId"])
        assert state["status"] == "completed"
        assert not result.is_error
        assert result.structured_content == {"items": ["b", "c"]}
        assert example.items == {"b", "c"}

        example.items.add("a")  # the same call, on the same version, made again: it asks anew
        example.version -= 1
        again = _task(await call_as_task(client, "delete_items", DELETE, legacy=mode == "legacy"), mode)
        assert (await _record(example, again)).id != record.id
        assert (await task_request(client, "tasks/get", task["taskId"]))["status"] == "completed"
        assert example.items == {"a", "b", "c"}, "an approval acts once, whatever is asked afterwards"


@pytest.mark.parametrize("mode", MODES)
async def test_a_denial_on_the_page_ends_the_task_with_todays_refusal(tmp_path: Path, mode: str) -> None:
    example = tasked_example(tmp_path)
    async with tasks_client(example, mode) as client:
        task = _task(await call_as_task(client, "delete_items", DELETE, legacy=mode == "legacy"), mode)
        record = await _record(example, task)
        async with _page_client(example) as http:
            assert (await _post(http, example, record, {"choice": "deny"})).status_code == 200
        state, result = await _final(client, mode, task["taskId"])
    assert state["status"] == ("failed" if mode == "legacy" else "completed")
    assert result.is_error
    assert _text(result) == _text(denied("delete_items", record.code).result)  # type: ignore[arg-type]
    assert (result.meta or {})["approval-core/approval"]["outcome"] == "declined"
    assert example.items == {"a", "b", "c"}


@pytest.mark.parametrize("mode", MODES)
async def test_an_expired_approval_ends_the_task_with_a_refusal(tmp_path: Path, mode: str) -> None:
    clock = Clock()
    example = tasked_example(tmp_path, clock=clock)
    async with tasks_client(example, mode) as client:
        task = _task(await call_as_task(client, "delete_items", DELETE, legacy=mode == "legacy"), mode)
        record = await _record(example, task)
        clock.now += 301
        assert example.gate.page is not None
        await example.gate.page.book.decide(record, "approve")  # a decision written late is never used
        state, result = await _final(client, mode, task["taskId"])
    assert state["status"] == ("failed" if mode == "legacy" else "completed")
    assert result.is_error
    assert (result.meta or {})["approval-core/approval"]["outcome"] == "expired"
    assert record.code in _text(result)
    assert example.items == {"a", "b", "c"}


@pytest.mark.parametrize("mode", MODES)
async def test_cancelling_the_task_withdraws_the_approval(tmp_path: Path, mode: str) -> None:
    example = tasked_example(tmp_path)
    async with tasks_client(example, mode) as client:
        task = _task(await call_as_task(client, "delete_items", DELETE, legacy=mode == "legacy"), mode)
        record = await _record(example, task)
        cancelled = await task_request(client, "tasks/cancel", task["taskId"])
        if mode == "legacy":
            assert cancelled["status"] == "cancelled"
            with pytest.raises(MCPError) as again:
                await task_request(client, "tasks/cancel", task["taskId"])
            assert again.value.error.code == -32602
        else:
            assert cancelled["resultType"] == "complete"
            assert "status" not in cancelled
        assert example.gate.page is not None
        verdict = await example.gate.page.book.decide(record, "approve")  # a tap after the cancel
        assert (verdict.taken, verdict.decided) == (False, "deny")
        state = await task_request(client, "tasks/get", task["taskId"])
        assert state["status"] == "cancelled"
        fresh = _task(await call_as_task(client, "delete_items", DELETE, legacy=mode == "legacy"), mode)
        assert (await _record(example, fresh)).id != record.id, "the same call made again asks anew"
    assert example.items == {"a", "b", "c"}


@pytest.mark.parametrize("mode", MODES)
async def test_cancelling_a_task_whose_approval_a_plain_call_used_does_not_claim_it_was_withdrawn(
    tmp_path: Path, mode: str
) -> None:
    """The identical call made plainly used the approval and acted: the cancelled task says so, truthfully."""
    example = tasked_example(tmp_path)
    async with tasks_client(example, mode) as client:
        task = _task(await call_as_task(client, "delete_items", DELETE, legacy=mode == "legacy"), mode)
        record = await _record(example, task)
        assert example.gate.page is not None
        await example.gate.page.book.decide(record, "approve")
        plain = await client.call_tool("delete_items", DELETE)
        assert not plain.is_error
        assert example.items == {"b", "c"}
        await task_request(client, "tasks/cancel", task["taskId"])
        state = await task_request(client, "tasks/get", task["taskId"])
        said = None
        if mode == "legacy":
            said = mt.CallToolResult.model_validate(await task_request(client, "tasks/result", task["taskId"]))
    assert state["status"] == "cancelled"
    assert "withdrawn" not in state["statusMessage"], "the approval was used, not withdrawn"
    assert "used by another identical delete_items call" in state["statusMessage"]
    if said is not None:
        assert "withdrawn" not in _text(said)
        assert "used by another identical call" in _text(said)
        assert (said.meta or {})["approval-core/approval"]["outcome"] == "used_elsewhere"


async def test_a_task_whose_own_call_runs_long_is_not_told_another_call_used_its_approval(tmp_path: Path) -> None:
    """A tasks/get arriving after the settling request's claim lapsed (120 s) waits for the call's own outcome."""
    from approval_core.serving.tasks import PageTasks

    clock = Clock()
    example = tasked_example(tmp_path, clock=clock)
    (tasks,) = [m for m in example.server.middleware if isinstance(m, PageTasks)]
    check, meanwhile = example.gate.check, list[Any]()

    async def slow_check(*args: Any, **kwargs: Any) -> Any:
        decision = await check(*args, **kwargs)
        if decision.approved and not meanwhile:  # the backend is slow: another tasks/get comes 121 s later
            clock.now += 121
            task = await tasks.book.get(created["taskId"])
            meanwhile.append(await tasks.settle(None, task))  # type: ignore[arg-type]
        return decision

    example.gate.check = slow_check  # type: ignore[method-assign]
    async with tasks_client(example, "2026-07-28") as client:
        created = await call_as_task(client, "delete_items", DELETE, legacy=False)
        record = await _record(example, created)
        assert example.gate.page is not None
        await example.gate.page.book.decide(record, "approve")
        state = await task_request(client, "tasks/get", created["taskId"])
    assert example.items == {"b", "c"}, "the task's own call ran once"
    assert meanwhile == [None], "the later request waited: it neither called again nor settled the task"
    result = mt.CallToolResult.model_validate(state["result"], by_name=False)
    assert not result.is_error, _text(result)


async def test_a_task_whose_own_call_lost_its_answer_says_the_outcome_is_unknown(tmp_path: Path) -> None:
    """The request making the task's call died after it began: once the approval expired, the task says so."""
    from approval_core.serving.tasks import PageTasks

    clock = Clock()
    example = tasked_example(tmp_path, clock=clock)
    (tasks,) = [m for m in example.server.middleware if isinstance(m, PageTasks)]
    async with tasks_client(example, "2026-07-28") as client:
        created = await call_as_task(client, "delete_items", DELETE, legacy=False)
        record = await _record(example, created)
        assert example.gate.page is not None
        await example.gate.page.book.decide(record, "approve")
        task = await tasks.book.get(created["taskId"])
        assert task is not None
        assert await tasks.book.claim(task)
        await tasks.book.start(task)  # ...and the request died here, its call's answer lost
        await example.gate.page.book.spend(record)
        clock.now = record.expires + 1
        state = await task_request(client, "tasks/get", created["taskId"])
    result = mt.CallToolResult.model_validate(state["result"], by_name=False)
    assert result.is_error
    assert "not known" in _text(result)
    assert (result.meta or {})["approval-core/approval"]["outcome"] == "outcome_unknown"


@pytest.mark.parametrize("mode", MODES)
async def test_a_client_that_does_not_declare_tasks_gets_todays_refusal(tmp_path: Path, mode: str) -> None:
    example = tasked_example(tmp_path)
    async with Client(example.server, mode=mode) as client:  # type: ignore[arg-type]
        result = await client.call_tool("delete_items", DELETE)
        assert result.is_error
        assert (result.meta or {})["approval-core/approval"]["outcome"] == "approval_pending"
        if mode != "legacy":
            with pytest.raises(MCPError) as refused:
                await raw_request(client, "tasks/get", {"taskId": "x"})
            assert refused.value.error.code == -32021
    assert example.items == {"a", "b", "c"}


@pytest.mark.parametrize("mode", MODES)
async def test_a_call_that_does_not_wait_for_the_page_is_answered_as_before(tmp_path: Path, mode: str) -> None:
    example = tasked_example(tmp_path)
    async with tasks_client(example, mode) as client:
        listed = await call_as_task(client, "list_items", {}, legacy=mode == "legacy")
        assert listed["structuredContent"] == {"items": ["a", "b", "c"]}, "a tool that never asks: no task"
        missing = await call_as_task(client, "delete_items", {"book": "b", "ids": ["z"]}, legacy=mode == "legacy")
        if mode == "legacy":  # 2025-11-25 gives a task once one was asked for: here already ended
            assert missing["task"]["status"] == "failed"
            assert "task" in missing["_meta"][IMMEDIATE_RESPONSE_KEY]
            ended = await task_request(client, "tasks/result", missing["task"]["taskId"])
        else:
            ended = missing
        assert ended["isError"] is True
        assert "no such item" in ended["content"][0]["text"]
        with pytest.raises(MCPError) as unknown:
            await task_request(client, "tasks/get", "no-such-task")
        assert unknown.value.error.code == -32602


async def test_2026_07_28_tasks_result_does_not_exist_and_update_is_acknowledged(tmp_path: Path) -> None:
    example = tasked_example(tmp_path)
    async with tasks_client(example, "2026-07-28") as client:
        task = await call_as_task(client, "delete_items", DELETE, legacy=False)
        acknowledged = await task_request(client, "tasks/update", task["taskId"])
        assert acknowledged["resultType"] == "complete"
        assert "status" not in acknowledged
        with pytest.raises(MCPError) as gone:
            await task_request(client, "tasks/result", task["taskId"])
        assert gone.value.error.code == -32601


async def test_the_server_declares_tasks_as_each_revision_has_them(tmp_path: Path) -> None:
    example = tasked_example(tmp_path)
    async with Client(example.server, mode="legacy") as client:
        assert client.session.initialize_result is not None
        declared = client.session.initialize_result.capabilities.tasks
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert declared is not None
    assert declared.requests is not None
    assert declared.requests.tools is not None
    assert declared.requests.tools.call is not None
    assert declared.cancel is not None
    assert declared.list is None
    optional = {name for name, tool in tools.items() if tool.execution and tool.execution.task_support == "optional"}
    assert optional == set(ASKING)
    async with Client(example.server, mode="2026-07-28") as client:
        discovered = await client.session.send_discover("2026-07-28")
    assert TASKS_EXTENSION in discovered["capabilities"]["extensions"]
    assert "tasks" not in discovered["capabilities"]


async def test_2025_11_25_tasks_result_waits_for_the_decision_and_the_status_is_notified(tmp_path: Path) -> None:
    example = tasked_example(tmp_path)
    extension = TasksExtension()
    results: list[dict[str, Any]] = []
    async with tasks_client(example, "legacy", extension) as client:
        task = (await call_as_task(client, "delete_items", DELETE, legacy=True))["task"]
        record = await _record(example, task)

        async def wait_for_result() -> None:
            results.append(await task_request(client, "tasks/result", task["taskId"]))

        async with anyio.create_task_group() as group:
            group.start_soon(wait_for_result)
            assert (await task_request(client, "tasks/get", task["taskId"]))["status"] == "working"
            assert example.gate.page is not None
            await example.gate.page.book.decide(record, "approve")
        with anyio.fail_after(10):
            await extension.notified.wait()
    (result,) = results
    assert result["isError"] is False
    assert result["_meta"][RELATED_TASK_KEY] == {"taskId": task["taskId"]}
    assert example.items == {"b", "c"}
    (status,) = extension.statuses
    assert (status.task_id, status.status) == (task["taskId"], "completed")


@pytest.mark.parametrize("mode", MODES)
async def test_requests_arriving_together_settle_the_task_once(tmp_path: Path, mode: str) -> None:
    example = tasked_example(tmp_path)
    acted: list[str] = []
    async with tasks_client(example, mode) as client:
        task = _task(await call_as_task(client, "delete_items", DELETE, legacy=mode == "legacy"), mode)
        record = await _record(example, task)
        assert example.gate.page is not None
        await example.gate.page.book.decide(record, "approve")
        version = example.version

        async def ask() -> None:
            await task_request(client, "tasks/get", task["taskId"])
            acted.append("asked")

        async with anyio.create_task_group() as group:
            for _ in range(4):
                group.start_soon(ask)
        _, result = await _final(client, mode, task["taskId"])
    assert len(acted) == 4
    assert not result.is_error
    assert example.version == version + 1, "the delete ran exactly once"
    assert example.items == {"b", "c"}


@pytest.mark.parametrize("mode", MODES)
async def test_a_task_id_reads_nothing_for_another_principal(tmp_path: Path, mode: str) -> None:
    example = tasked_example(tmp_path)

    def signed_in(client_id: str) -> Any:
        token = AccessToken(token="t", client_id=client_id, scopes=[], subject=client_id, claims={"iss": "https://id"})
        return auth_context_var.set(AuthenticatedUser(token))

    alice = signed_in("alice")
    try:
        async with tasks_client(example, mode) as client:
            task = _task(await call_as_task(client, "delete_items", DELETE, legacy=mode == "legacy"), mode)
            assert (await task_request(client, "tasks/get", task["taskId"]))["status"] == "working"
    finally:
        auth_context_var.reset(alice)
    mallory = signed_in("mallory")
    try:
        async with tasks_client(example, mode) as client:
            for method in ("tasks/get", "tasks/cancel"):
                with pytest.raises(MCPError) as refused:
                    await task_request(client, method, task["taskId"])
                assert refused.value.error.code == -32602
    finally:
        auth_context_var.reset(mallory)
    record = await _record(example, task)
    assert example.gate.page is not None
    assert await example.gate.page.book.decision(record.id) is None, "another principal's cancel withdrew nothing"


@pytest.fixture(scope="module")
def issuer() -> Any:
    with token_issuer() as running_issuer:
        yield running_issuer


@pytest.mark.parametrize("mode", MODES)
async def test_over_streamable_http_a_task_is_read_only_by_the_subject_that_made_it(
    tmp_path: Path, issuer: IssuerDouble, mode: str
) -> None:
    port = free_port()
    public = f"http://localhost:{port}/mcp"
    configured = http_settings(
        MCP_PORT=str(port), MCP_PUBLIC_URL=public, MCP_AUTH_ISSUER=issuer.issuer, MCP_AUTH_JWKS_URL=issuer.jwks_url
    )
    settings = ApprovalSettings(page=PageSettings(passkeys_file=_paired_file(tmp_path / "passkeys.json")))
    example = Example(settings)
    install_page_tasks(example.server, example.gate, ASKING)
    async with running(http_server(example.server, configured, verifier_for(configured)), port):
        willi, mallory = issuer.token(public, subject="willi"), issuer.token(public, subject="mallory")
        extensions = [TasksExtension()]
        async with Client(bearer_transport(public, willi), mode=mode, extensions=extensions) as client:  # type: ignore[arg-type]
            task = _task(await call_as_task(client, "delete_items", DELETE, legacy=mode == "legacy"), mode)
            assert task["statusMessage"].startswith(
                f"delete_items waits for the person's decision: they open {public[:-4]}"
            )
        async with Client(bearer_transport(public, mallory), mode=mode, extensions=extensions) as client:  # type: ignore[arg-type]
            with pytest.raises(MCPError) as refused:
                await task_request(client, "tasks/get", task["taskId"])
            assert refused.value.error.code == -32602
        record = await _record(example, task)
        assert example.gate.page is not None
        await example.gate.page.book.decide(record, "approve")
        async with Client(bearer_transport(public, willi), mode=mode, extensions=extensions) as client:  # type: ignore[arg-type]
            state, result = await _final(client, mode, task["taskId"])
    assert not result.is_error
    assert state["status"] == "completed"
    assert example.items == {"b", "c"}
