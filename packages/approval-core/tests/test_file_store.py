"""The owner-only file store: the record contract, its modes, when it is chosen, and a token across processes.

The store contract (testing/store_contract.py) runs here against a :class:`FileStore` in a
test folder. Then the choice of store from the environment, the folder and file modes,
and the case it exists for: a client that starts the server anew for every call (here the
SDK's own stdio client, one process per call) redeems in the second process the token the
first one issued. ``test_langchain_adapter.py`` does the same with langchain-mcp-adapters.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest
from mcp.client.stdio import StdioServerParameters, stdio_client
from store_contract import (  # noqa: F401  (collected: the contract, run against the file store)
    FakeClock,
    test_a_note_is_kept_under_its_space_only,
    test_a_note_past_its_ttl_reads_as_absent_and_may_be_written_anew,
    test_a_note_reads_back_any_number_of_times_and_only_new_never_changes_it,
    test_a_record_is_kept_under_its_space_only,
    test_a_record_is_taken_once,
    test_a_record_past_its_ttl_is_taken_as_expired,
    test_a_secret_never_issued_is_not_found,
    test_an_existing_record_is_never_overwritten,
    test_of_concurrent_only_new_writes_exactly_one_wins,
    test_of_concurrent_takes_exactly_one_gets_the_record,
)

from approval_core import ApprovalSettings, StoreUnavailable
from approval_core.records.file_store import FileStore, default_record_folder
from approval_core.testing import approval_of, connect
from example_server import Example

pytestmark = pytest.mark.anyio

SCRIPT = str(Path(__file__).with_name("example_server.py"))
ARGS = {"book": "/books/work/", "ids": ["a"]}


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def store(tmp_path: Path, clock: FakeClock) -> FileStore:
    return FileStore(tmp_path / "records", "example-mcp", clock=clock)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


async def test_the_folder_and_the_file_are_made_owner_only(tmp_path: Path) -> None:
    store = FileStore(tmp_path / "data" / "records", "caldav-mcp:0123456789ab")
    await store.put("token", "t", "f" * 64, 300)
    assert store.path == tmp_path / "data" / "records" / "caldav-mcp-0123456789ab.sqlite3"
    assert mode(store.path.parent) == 0o700
    assert mode(store.path) == 0o600


async def test_a_secret_is_kept_only_as_its_digest(store: FileStore) -> None:
    secret = "a-confirm-token-of-24-ch"
    await store.put("token", secret, "f" * 64, 300)
    assert secret.encode() not in store.path.read_bytes()


@pytest.mark.parametrize("what", ["folder", "file"])
async def test_a_folder_or_file_open_to_others_is_refused(tmp_path: Path, what: str) -> None:
    store = FileStore(tmp_path / "records", "example-mcp")
    await store.put("token", "t", "f" * 64, 300)
    (store.path.parent if what == "folder" else store.path).chmod(0o755 if what == "folder" else 0o644)
    with pytest.raises(StoreUnavailable, match=f"record {what} .* is open to group or others") as caught:
        await store.take("token", "t")
    assert caught.value.lasting


async def test_a_folder_that_cannot_be_made_is_refused_naming_the_file(tmp_path: Path) -> None:
    (tmp_path / "plain-file").write_text("")
    store = FileStore(tmp_path / "plain-file" / "records", "example-mcp")
    with pytest.raises(StoreUnavailable, match=r"the record file .*example-mcp\.sqlite3 cannot be opened"):
        await store.put("token", "t", "f" * 64, 300)


async def test_two_stores_on_one_file_share_every_record(tmp_path: Path) -> None:
    first, second = (FileStore(tmp_path, "example-mcp") for _ in range(2))
    await first.put("token", "issued-here", "f" * 64, 300)
    assert await second.take("token", "issued-here") == ("f" * 64, False)
    assert await first.take("token", "issued-here") is None
    other = FileStore(tmp_path, "carddav-mcp")
    await first.put("token", "caldav-only", "f" * 64, 300)
    assert await other.take("token", "caldav-only") is None


@pytest.mark.parametrize(
    ("env", "folder"),
    [
        ({"XDG_DATA_HOME": "/x/data"}, Path("/x/data/approval-core/records")),
        ({"XDG_DATA_HOME": "relative", "HOME": "/home/u"}, Path("/home/u/.local/share/approval-core/records")),
        ({"HOME": "/home/u"}, Path("/home/u/.local/share/approval-core/records")),
    ],
)
def test_the_default_folder_is_in_the_users_data_folder(env: dict[str, str], folder: Path) -> None:
    if sys.platform != "linux":
        pytest.fail("the expected folders are Linux's (XDG); run this test on Linux")
    assert default_record_folder(env) == folder


@pytest.mark.parametrize(
    ("env", "chosen"),
    [
        ({}, True),
        ({"MCP_TRANSPORT": "stdio"}, True),
        ({"MCP_TRANSPORT": "streamable-http"}, False),
    ],
)
def test_over_stdio_the_records_go_to_the_file_store(env: dict[str, str], chosen: bool, tmp_path: Path) -> None:
    settings = ApprovalSettings.from_env({"XDG_DATA_HOME": str(tmp_path), **env})
    assert settings.record_folder == (tmp_path / "approval-core" / "records" if chosen else None)
    store = Example(settings).gate.store
    assert type(store).__name__ == ("FileStore" if chosen else "MemoryStore")


def over_stdio(data: Path) -> StdioServerParameters:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ELICITATION", "APPROVAL_", "MCP_"))}
    return StdioServerParameters(command=sys.executable, args=[SCRIPT], env={**env, "XDG_DATA_HOME": str(data)})


@pytest.mark.stdio
async def test_a_token_issued_by_one_process_is_redeemed_by_the_next(tmp_path: Path) -> None:
    async with connect(stdio_client(over_stdio(tmp_path)), revision="2025-11-25") as client:
        first = await client.call_tool("delete_items", ARGS)
    token = approval_of(first)["confirm_token"]
    assert first.is_error
    async with connect(stdio_client(over_stdio(tmp_path)), revision="2025-11-25") as client:
        second = await client.call_tool("delete_items", {**ARGS, "confirm_token": token})
    assert not second.is_error, second.content
    assert second.structured_content == {"items": ["b", "c"]}
    async with connect(stdio_client(over_stdio(tmp_path)), revision="2025-11-25") as client:
        third = await client.call_tool("delete_items", {**ARGS, "confirm_token": token})
    assert third.is_error  # single use across processes too
    assert approval_of(third)["confirm_token"] != token
    assert mode(tmp_path / "approval-core" / "records" / "example-mcp.sqlite3") == 0o600
