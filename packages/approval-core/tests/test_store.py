"""The record stores, the key file, the shared-state settings, and a gate whose store cannot be reached.

The store contract (testing/store_contract.py) runs here against the
in-process store; ``integration/test_shared_store.py`` runs the same tests
against a real Redis. A store that cannot be reached is a real one: a
RedisStore pointed at a loopback port where nothing listens.
"""

from __future__ import annotations

import base64
import io
import os
import socket
import stat
import subprocess
import sys
from pathlib import Path

import mcp_types as mt
import pytest
from processes import free_port
from store_contract import (  # noqa: F401  (collected: the contract, run against the in-process store)
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

from approval_core import ApprovalSettings, KeyRing, MemoryStore, RedisStore, StateSealer, StoreUnavailable
from approval_core.errors import SettingsError
from approval_core.records.keys import SDK_STATE_PURPOSE, STATE_SEAL_PURPOSE, main, read_key_file, rotate_key_file
from approval_core.records.store import redacted_url
from approval_core.serving.startup import load_settings_or_exit
from approval_core.testing import approval_of, asked_here_approved_there, call_once, connect, ticked
from example_server import Example

pytestmark = pytest.mark.anyio

FP = "f" * 64
ARGS = {"book": "/b/", "ids": ["a"]}


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def store(clock: FakeClock) -> MemoryStore:
    return MemoryStore(clock=clock)


def key_file(folder: Path, *keys: bytes, mode: int = 0o600, name: str = "keys") -> Path:
    path = folder / name
    path.write_text("# test keys\n\n" + "".join(base64.b64encode(k).decode() + "\n" for k in keys))
    path.chmod(mode)
    return path


def nowhere() -> str:
    """A Redis URL on a loopback port where nothing listens: connecting is refused at once."""
    return f"redis://127.0.0.1:{free_port()}/0"


# ---------------------------------------------------------------- in-process store


async def test_the_in_process_store_stays_bounded(clock: FakeClock) -> None:
    store = MemoryStore(capacity=2, clock=clock)
    for secret in ("one", "two", "three"):
        await store.put("token", secret, FP, 300)
    assert len(store) == 2
    assert await store.take("token", "one") is None
    assert await store.take("token", "three") == (FP, False)
    await store.aclose()


# ---------------------------------------------------------------- Redis that cannot be reached


async def test_an_unreachable_redis_raises_store_unavailable_on_every_operation() -> None:
    store = RedisStore(nowhere(), "demo-mcp")
    with pytest.raises(StoreUnavailable, match="could not record a token"):
        await store.put("token", "t", FP, 300)
    with pytest.raises(StoreUnavailable, match="could not spend a state"):
        await store.take("state", "n")
    await store.aclose()


async def test_a_redis_that_accepts_but_never_answers_raises_store_unavailable() -> None:
    """A listening socket nobody reads from: the connection opens, no reply ever comes."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        store = RedisStore(f"redis://127.0.0.1:{silent.getsockname()[1]}/0", "demo-mcp", timeout=0.5)
        with pytest.raises(StoreUnavailable, match="the approval store"):
            await store.put("token", "t", FP, 300)
        with pytest.raises(StoreUnavailable, match="the approval store"):
            await store.take("token", "t")
        await store.aclose()


def test_a_redis_store_never_shows_its_password() -> None:
    store = RedisStore("redis://app:s3cret@127.0.0.1:6390/2", "demo-mcp")
    assert "s3cret" not in repr(store)
    assert redacted_url("rediss://app:s3cret@cache.example.org:6390/0") == "rediss://app:***@cache.example.org:6390/0"
    assert redacted_url("redis://127.0.0.1:6379/0") == "redis://127.0.0.1:6379/0"
    with pytest.raises(ValueError, match="positive"):
        RedisStore("redis://127.0.0.1/0", "demo-mcp", timeout=0)


def test_a_redis_key_holds_the_server_name_and_a_digest_never_the_secret() -> None:
    key = RedisStore("redis://127.0.0.1/0", "demo-mcp").key("token", "the-secret")
    assert key.startswith("approval-core:demo-mcp:token:")
    assert "the-secret" not in key
    assert len(key.rsplit(":", 1)[1]) == 64


# ---------------------------------------------------------------- the gate without its store


@pytest.mark.parametrize(
    ("revision", "elicitation", "path"), [("2026-07-28", "true", "input_required"), ("2025-11-25", "false", "token")]
)
async def test_a_guarded_call_without_its_store_is_refused_and_nothing_runs(
    revision, elicitation, path, tmp_path: Path
) -> None:
    settings = ApprovalSettings.from_env(
        {
            "ELICITATION": elicitation,
            "APPROVAL_STORE_URL": nowhere(),
            "APPROVAL_KEY_FILE": str(key_file(tmp_path, os.urandom(32))),
        }
    )
    ex = Example(settings)
    async with connect(ex.server, revision=revision, answer=ticked if revision == "2026-07-28" else None) as client:
        if revision == "2026-07-28":
            result = await call_once(client, "delete_items", ARGS)
        else:
            result = await client.call_tool("delete_items", {**ARGS, "confirm_token": "anything-at-all"})
        assert isinstance(result, mt.CallToolResult)
        assert result.is_error
        assert approval_of(result) == {"outcome": "store_unavailable", "path": path, "changed": False}
        text = result.content[0]
        assert isinstance(text, mt.TextContent)
        assert "could not reach its approval store" in text.text
        assert "Nothing was changed." in text.text
        listing = await client.call_tool("list_items", {})
        assert not listing.is_error
    assert ex.items == {"a", "b", "c"}
    await ex.gate.store.aclose()


# ---------------------------------------------------------------- two replicas sharing records and keys


async def test_a_question_from_one_gate_is_answered_through_another_once(tmp_path: Path) -> None:
    settings = ApprovalSettings.from_env({"APPROVAL_KEY_FILE": str(key_file(tmp_path, os.urandom(32)))})
    shared = MemoryStore()
    one, two = Example(settings, store=shared), Example(settings, store=shared)
    async with (
        connect(one.server, revision="2026-07-28", answer=ticked) as first,
        connect(two.server, revision="2026-07-28", answer=ticked) as second,
    ):
        spent = await asked_here_approved_there(first, second, "delete_items", ARGS)
        two.items.add("a")
        replay = await call_once(first, "delete_items", ARGS, answer=ticked, request_state=spent)
        assert isinstance(replay, mt.InputRequiredResult)  # a fresh question, nothing run
    assert (one.items, two.items) == ({"a", "b", "c"}, {"a", "b", "c"})


async def test_a_question_asked_before_a_rotation_is_answered_after_it_on_both_seals(tmp_path: Path) -> None:
    old_key, new_key = os.urandom(32), os.urandom(32)
    before = ApprovalSettings.from_env({"APPROVAL_KEY_FILE": str(key_file(tmp_path, old_key, name="before"))})
    after = ApprovalSettings.from_env({"APPROVAL_KEY_FILE": str(key_file(tmp_path, new_key, old_key, name="after"))})
    shared = MemoryStore()
    old_replica, new_replica = Example(before, store=shared), Example(after, store=shared)
    async with (
        connect(old_replica.server, revision="2026-07-28", answer=ticked) as first,
        connect(new_replica.server, revision="2026-07-28", answer=ticked) as second,
    ):
        await asked_here_approved_there(first, second, "delete_items", ARGS)
        asked_new = await call_once(second, "delete_items", {"book": "/b/", "ids": ["b"]})
        assert isinstance(asked_new, mt.InputRequiredResult)
        refused = await call_once(
            first, "delete_items", {"book": "/b/", "ids": ["b"]}, answer=ticked, request_state=asked_new.request_state
        )
        assert isinstance(refused, mt.InputRequiredResult)  # the old replica lacks the new key: asked again
    assert (old_replica.items, new_replica.items) == ({"a", "b", "c"}, {"b", "c"})


async def test_without_a_shared_key_another_gate_asks_again(tmp_path: Path) -> None:
    shared = MemoryStore()
    one, two = Example(store=shared), Example(store=shared)
    async with (
        connect(one.server, revision="2026-07-28", answer=ticked) as first,
        connect(two.server, revision="2026-07-28", answer=ticked) as second,
    ):
        asked = await call_once(first, "delete_items", ARGS)
        assert isinstance(asked, mt.InputRequiredResult)
        again = await call_once(second, "delete_items", ARGS, answer=ticked, request_state=asked.request_state)
        assert isinstance(again, mt.InputRequiredResult)
    assert two.items == {"a", "b", "c"}


# ---------------------------------------------------------------- key file and rotation


async def test_a_state_sealed_before_a_rotation_opens_after_it(tmp_path: Path) -> None:
    path = key_file(tmp_path, os.urandom(32))
    before = read_key_file(path)
    after = rotate_key_file(path)
    assert after.keys[1] == before.keys[0]
    assert len(after.keys) == 2
    store = MemoryStore()
    old_key = before.derive(STATE_SEAL_PURPOSE)[0]
    state = await StateSealer("demo-mcp", key=old_key, store=store).seal("delete", FP)
    current, *previous = after.derive(STATE_SEAL_PURPOSE)
    rotated = StateSealer("demo-mcp", key=current, previous_keys=previous, store=store)
    assert (await rotated.open(state, "delete", FP)).ok
    fresh = await rotated.seal("delete", FP)
    assert (await StateSealer("demo-mcp", key=old_key, store=store).open(fresh, "delete", FP)).reason == "seal"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_each_purpose_gets_its_own_key() -> None:
    ring = KeyRing((os.urandom(32), os.urandom(48)))
    seal, sdk = ring.derive(STATE_SEAL_PURPOSE), ring.derive(SDK_STATE_PURPOSE)
    assert len(seal) == len(sdk) == 2
    assert all(len(k) == 32 for k in (*seal, *sdk))
    assert not set(seal) & set(sdk)
    assert not set(seal) & set(ring.keys)
    assert "<2 keys>" in repr(ring)


def test_a_key_file_accepts_standard_and_url_safe_base64_and_comments(tmp_path: Path) -> None:
    raw = bytes(range(250, 256)) + os.urandom(30)
    path = tmp_path / "keys"
    url_safe, standard = base64.urlsafe_b64encode(raw).decode().rstrip("="), base64.b64encode(raw[::-1]).decode()
    path.write_text(f"# current\n{url_safe}\n\n  # previous\n{standard}\n")
    path.chmod(0o400)
    assert read_key_file(path).keys == (raw, raw[::-1])


@pytest.mark.parametrize(
    ("content", "mode", "message"),
    [
        (None, 0o600, "cannot be read"),
        ("# nothing\n\n", 0o600, "holds no key"),
        ("not base64 at all!\n", 0o600, "line 1 is not base64"),
        (base64.b64encode(b"x" * 31).decode(), 0o600, "line 1 holds 31 bytes; a key must be at least 32"),
        (base64.b64encode(b"x" * 32).decode(), 0o640, "has mode 0640: a key file must not be open to group or others"),
        (base64.b64encode(b"x" * 32).decode(), 0o604, "has mode 0604"),
        ("\udcff", 0o600, "not a text file"),
        (base64.b64encode(bytes(32)).decode(), 0o600, "line 1 is not a random key"),
        (base64.b64encode(b"\xff" * 64).decode(), 0o600, "line 1 is not a random key"),
        (base64.b64encode(b"0123456789abcd" * 4).decode(), 0o600, "line 1 is not a random key"),
        (base64.b64encode(bytes(range(40))).decode(), 0o600, "line 1 is not a random key"),
        (base64.b64encode(bytes(range(200, 0, -5))).decode(), 0o600, "line 1 is not a random key"),
        (
            "# current\n" + base64.b64encode(os.urandom(32)).decode() + "\n" + base64.b64encode(bytes(32)).decode(),
            0o600,
            "line 3 is not a random key",
        ),
    ],
)
def test_a_bad_key_file_is_refused_naming_the_file_and_the_rule(tmp_path: Path, content, mode, message) -> None:
    path = tmp_path / "keys"
    if content is not None:
        path.write_bytes(content.encode("utf-8", "surrogateescape"))
        path.chmod(mode)
    with pytest.raises(SettingsError) as caught:
        read_key_file(path)
    assert f"APPROVAL_KEY_FILE='{path}'" in str(caught.value)
    assert message in str(caught.value)


def test_a_folder_is_not_a_key_file(tmp_path: Path) -> None:
    folder = tmp_path / "keys"
    folder.mkdir(mode=0o700)
    with pytest.raises(SettingsError, match="is not a regular file"):
        read_key_file(folder)


def test_the_key_command_makes_and_rotates_a_private_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "approval.keys"
    assert main(["new", str(path)]) == 0
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    first = read_key_file(path).keys
    assert len(first) == 1
    assert len(first[0]) == 32
    assert main(["new", str(path)]) == 1
    assert "exists; use 'rotate'" in capsys.readouterr().err
    assert main(["rotate", str(path)]) == 0
    assert main(["rotate", str(path), "--keep", "2"]) == 0
    keys = read_key_file(path).keys
    assert len(keys) == 3
    assert keys[2] == first[0]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert main(["rotate", str(path), "--keep", "0"]) == 0
    assert len(read_key_file(path).keys) == 1
    assert main(["rotate", str(path), "--keep", "-1"]) == 1
    assert main(["rotate", str(tmp_path / "missing")]) == 1
    assert [p.name for p in tmp_path.iterdir()] == ["approval.keys"]  # no temporary file left


def test_the_key_command_runs_as_the_package_without_a_warning_and_names_a_missing_folder(tmp_path: Path) -> None:
    """``python -m approval_core keys ...``: one line on stderr, no RuntimeWarning, no traceback."""
    made = subprocess.run(  # noqa: S603
        [sys.executable, "-W", "error", "-m", "approval_core", "keys", "new", str(tmp_path / "k")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert made.returncode == 0, made.stderr
    assert made.stderr.strip().splitlines() == [f"{tmp_path / 'k'}: new key file, one current key"]
    missing = tmp_path / "nodir" / "k"
    failed = subprocess.run(  # noqa: S603
        [sys.executable, "-m", "approval_core", "keys", "new", str(missing)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert failed.returncode == 1
    assert failed.stderr.strip().splitlines() == [f"{missing}: cannot be written: No such file or directory"]
    wrong = subprocess.run(  # noqa: S603
        [sys.executable, "-m", "approval_core", "new", str(missing)], capture_output=True, text=True, check=False
    )
    assert wrong.returncode == 2
    assert "usage: python -m approval_core keys" in wrong.stderr


# ---------------------------------------------------------------- settings


def test_the_store_and_key_settings_are_read(tmp_path: Path) -> None:
    path = key_file(tmp_path, os.urandom(32), os.urandom(32))
    settings = ApprovalSettings.from_env(
        {"APPROVAL_STORE_URL": "rediss://u:p@cache:6380/3", "APPROVAL_KEY_FILE": str(path)}
    )
    assert settings.store_url == "rediss://u:p@cache:6380/3"
    assert settings.key_ring is not None
    assert len(settings.key_ring.keys) == 2
    assert ApprovalSettings.from_env({"MCP_TRANSPORT": "streamable-http"}) == ApprovalSettings()
    only_keys = ApprovalSettings.from_env({"APPROVAL_KEY_FILE": str(path)})
    assert only_keys.store_url is None
    assert only_keys.key_ring is not None


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("http://cache:6379/0", "APPROVAL_STORE_URL has scheme 'http': use redis://"),
        ("cache:6379", "APPROVAL_STORE_URL has scheme 'cache'"),
        ("", "APPROVAL_STORE_URL has scheme none"),
        ("redis:///0", "APPROVAL_STORE_URL names no host"),
        ("redis://cache:99999/0", "APPROVAL_STORE_URL is not a valid URL"),
        ("redis://cache:0/0", "APPROVAL_STORE_URL has port 0"),
        ("redis://cache:6379/zero", "APPROVAL_STORE_URL names database 'zero', not a number"),
    ],
)
def test_a_bad_store_url_is_refused(tmp_path: Path, url: str, message: str) -> None:
    env = {"APPROVAL_STORE_URL": url, "APPROVAL_KEY_FILE": str(key_file(tmp_path, os.urandom(32)))}
    with pytest.raises(SettingsError) as caught:
        ApprovalSettings.from_env(env)
    assert message in str(caught.value)


def test_a_store_url_without_a_key_file_stops_the_server() -> None:
    out = io.StringIO()
    with pytest.raises(SystemExit) as stopped:
        load_settings_or_exit("demo-mcp", {"APPROVAL_STORE_URL": "redis://:pw@127.0.0.1:6379/0"}, out)
    assert stopped.value.code == 1
    line = out.getvalue()
    assert line.startswith("demo-mcp: APPROVAL_STORE_URL is set but APPROVAL_KEY_FILE is not")
    assert "python -m approval_core keys new FILE" in line
    assert "pw" not in line


def test_an_empty_key_file_setting_or_an_open_key_file_stops_the_server(tmp_path: Path) -> None:
    out = io.StringIO()
    with pytest.raises(SystemExit):
        load_settings_or_exit("demo-mcp", {"APPROVAL_KEY_FILE": ""}, out)
    assert "APPROVAL_KEY_FILE is set but empty" in out.getvalue()
    path = key_file(tmp_path, os.urandom(32), mode=0o644)
    with pytest.raises(SystemExit):
        load_settings_or_exit("demo-mcp", {"APPROVAL_KEY_FILE": str(path)}, out)
    assert "has mode 0644" in out.getvalue()


async def test_an_answer_to_one_server_does_not_approve_another_sharing_its_key_file_and_store(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One key file and one store for two different servers (as ntfy-mcp and caldav-mcp might share): no crossing."""
    import example_server

    settings = ApprovalSettings.from_env({"APPROVAL_KEY_FILE": str(key_file(tmp_path, os.urandom(32)))})
    shared = MemoryStore()
    mine = Example(settings, store=shared)
    monkeypatch.setattr(example_server, "NAME", "other-mcp")
    theirs = Example(settings, store=shared)
    assert theirs.server.name == "other-mcp"
    async with (
        connect(mine.server, revision="2026-07-28", answer=ticked) as first,
        connect(theirs.server, revision="2026-07-28", answer=ticked) as second,
    ):
        asked = await call_once(first, "delete_items", ARGS)
        assert isinstance(asked, mt.InputRequiredResult)
        crossed = await call_once(second, "delete_items", ARGS, answer=ticked, request_state=asked.request_state)
        assert isinstance(crossed, mt.InputRequiredResult)  # a fresh question of its own; nothing ran
    assert (mine.items, theirs.items) == ({"a", "b", "c"}, {"a", "b", "c"})
