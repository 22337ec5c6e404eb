"""The real-ntfy launcher: where the binary comes from, and the exact reason when none can be had (never a skip)."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import ntfy_server
import pytest


@pytest.fixture
def empty_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("NTFY_SERVER_BINARY", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path / "cache" / "mcp-approval-family" / "ntfy"


def test_the_cache_is_outside_the_clone_keyed_by_the_kits_sha256(empty_cache: Path) -> None:
    assert ntfy_server.cache_root() == empty_cache
    assert ntfy_server.ROOT not in empty_cache.parents


def test_a_cached_build_is_used_without_building(empty_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cached = empty_cache / ntfy_server.KIT_SHA256 / "ntfy"
    cached.parent.mkdir(parents=True)
    cached.write_text("#!/bin/sh\n")
    cached.chmod(0o755)
    monkeypatch.setattr(ntfy_server, "_build_from_kit", lambda _: pytest.fail("built although cached"))
    assert ntfy_server.find_or_build_binary() == cached


def test_without_module_or_kit_every_reason_is_given(
    empty_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GOPROXY", "off")
    monkeypatch.setenv("NTFY_SOURCE_KIT", str(tmp_path / "no-kit"))
    with pytest.raises(ntfy_server.NtfyUnavailable) as caught:
        ntfy_server.find_or_build_binary()
    text = str(caught.value)
    assert text.startswith("could not build the ntfy server")
    assert "go list -m -versions heckel.io/ntfy/v2" in text
    if shutil.which("go") is not None:  # Go's own answer; without Go, the next test's reason
        assert "GOPROXY=off" in text or "module lookup disabled" in text
    else:
        assert "cannot run `go list -m -versions heckel.io/ntfy/v2` (go is not on PATH?)" in text
    assert f"no source kit at {tmp_path / 'no-kit'}" in text


def test_without_go_on_path_the_command_that_could_not_run_is_named(
    empty_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path / "no-tools"))
    monkeypatch.setenv("NTFY_SOURCE_KIT", str(tmp_path / "no-kit"))
    with pytest.raises(ntfy_server.NtfyUnavailable) as caught:
        ntfy_server.find_or_build_binary()
    text = str(caught.value)
    assert "cannot run `go list -m -versions heckel.io/ntfy/v2` (go is not on PATH?)" in text
    assert f"no source kit at {tmp_path / 'no-kit'}" in text


def test_a_kit_whose_sha256_differs_is_refused_before_unpacking(
    empty_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kit = tmp_path / "kit"
    kit.mkdir()
    (kit / ntfy_server.KIT_TARBALL).write_bytes(b"not the kit")
    (kit / "build-ntfy.sh").write_text("exit 99\n")
    monkeypatch.setenv("NTFY_SOURCE_KIT", str(kit))
    monkeypatch.setattr(ntfy_server, "_build_from_module", _refused)
    with pytest.raises(ntfy_server.NtfyUnavailable, match="not the 72701aff"):
        ntfy_server.find_or_build_binary()
    assert not (empty_cache / ntfy_server.KIT_SHA256 / "ntfy").exists()


def _refused(_: Path) -> Path:
    raise ntfy_server.NtfyUnavailable("stand-in for a module proxy answering 403")


def test_two_builders_at_once_build_once(empty_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Both wait on build.lock; the second finds the first one's binary and builds nothing."""
    builds: list[int] = []
    target = empty_cache / ntfy_server.KIT_SHA256 / "ntfy"

    def fake_kit_build(workdir: Path) -> Path:
        with ntfy_server._locked(target.parent):
            if target.is_file():
                return target
            builds.append(threading.get_ident())
            built = workdir / "ntfy"
            built.write_text("#!/bin/sh\n")
            return ntfy_server._install(built, target)

    monkeypatch.setattr(ntfy_server, "_build_from_module", _refused)
    monkeypatch.setattr(ntfy_server, "_build_from_kit", fake_kit_build)
    found: list[Path] = []
    threads = [threading.Thread(target=lambda: found.append(ntfy_server.find_or_build_binary())) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert found == [target, target]
    assert len(builds) == 1
    assert os.access(target, os.X_OK)
    assert [p.name for p in target.parent.iterdir() if p.name.endswith(".partial")] == []


def test_an_explicit_binary_that_is_not_there_is_reported(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("NTFY_SERVER_BINARY", str(tmp_path / "ntfy"))
    with pytest.raises(ntfy_server.NtfyUnavailable, match="is not an executable file"):
        ntfy_server.find_or_build_binary()


def test_the_version_comes_from_the_binarys_help(tmp_path: Path) -> None:
    fake = tmp_path / "ntfy"
    fake.write_text("#!/bin/sh\necho 'usage'\necho 'ntfy 2.13.0 (81a486a), runtime go1.26'\n")
    fake.chmod(0o755)
    assert ntfy_server._binary_version(fake) == (2, 13, 0)
    assert shutil.which("sh")


def test_a_builds_lines_and_a_heartbeat_reach_the_progress_sink_as_they_come(
    empty_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A long silent step still says how long it has run, so a first build never looks hung."""
    monkeypatch.setattr(ntfy_server, "HEARTBEAT_SECONDS", 0.3)
    built = tmp_path / "ntfy"

    def slow_build(workdir: Path) -> Path:
        script = "echo 'deps downloaded after 1s'; sleep 1.2; echo 'built after 2s'"
        ntfy_server._run_showing(["bash", "-c", script], cwd=workdir, what="build")
        built.write_text("#!/bin/sh\n")
        built.chmod(0o755)
        return built

    monkeypatch.setattr(ntfy_server, "_build_from_module", _refused)
    monkeypatch.setattr(ntfy_server, "_build_from_kit", slow_build)
    seen: list[tuple[float, str]] = []
    start = time.monotonic()
    found = ntfy_server.find_or_build_binary(progress=lambda line: seen.append((time.monotonic() - start, line)))
    assert found == built
    lines = [line for _, line in seen]
    assert lines[0].startswith("ntfy_server: could not build from the Go module")
    assert "ntfy_server: build: deps downloaded after 1s" in lines
    assert lines[-1] == "ntfy_server: build: built after 2s"
    heartbeats = [at for at, line in seen if line.startswith("ntfy_server: build: still running, ")]
    assert heartbeats, lines
    first_line_at = next(at for at, line in seen if line.endswith("deps downloaded after 1s"))
    assert first_line_at < 1.0  # shown when printed, not when the build ends


def test_a_failed_build_step_gives_its_exit_code_and_last_lines(tmp_path: Path) -> None:
    with pytest.raises(ntfy_server.NtfyUnavailable, match=r"failed with exit code 3:\ngo: no gcc") as caught:
        ntfy_server._run_showing(["bash", "-c", "echo 'go: no gcc'; exit 3"], cwd=tmp_path, what="build")
    assert "bash -c" in str(caught.value)


def test_a_process_waiting_for_another_ones_build_says_so(empty_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = empty_cache / ntfy_server.KIT_SHA256 / "ntfy"

    def build_under_lock(workdir: Path) -> Path:
        with ntfy_server._locked(target.parent):
            return target

    monkeypatch.setattr(ntfy_server, "_build_from_module", _refused)
    monkeypatch.setattr(ntfy_server, "_build_from_kit", build_under_lock)
    target.parent.mkdir(parents=True)
    seen: list[str] = []
    with (target.parent / "build.lock").open("w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # another process's build
        waiter = threading.Thread(target=lambda: ntfy_server.find_or_build_binary(progress=seen.append))
        waiter.start()
        deadline = time.monotonic() + 10
        while not any("waiting" in line for line in seen) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert waiter.is_alive()
        fcntl.flock(held, fcntl.LOCK_UN)
    waiter.join(timeout=10)
    assert not waiter.is_alive()
    assert f"ntfy_server: another process is building ntfy into {target.parent}; waiting for it to finish" in seen


def test_the_progress_shows_on_the_terminal_while_pytest_captures_output(tmp_path: Path) -> None:
    """A session fixture's lines through testing/terminal.py reach pytest's own output, before the test's result."""
    (tmp_path / "test_slow_fixture.py").write_text(
        "import sys, pytest\n"
        f"sys.path.insert(0, {str(ntfy_server.ROOT / 'testing')!r})\n"
        "from terminal import on_terminal\n"
        "@pytest.fixture(scope='session')\n"
        "def slow(pytestconfig):\n"
        "    on_terminal(pytestconfig)('ntfy_server: build: still running, 15 s so far')\n"
        "    print('captured, not shown')\n"
        "def test_it(slow):\n"
        "    assert True\n"
    )
    done = subprocess.run(  # noqa: S603 - our own interpreter
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--rootdir", str(tmp_path), str(tmp_path)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ntfy_server: build: still running, 15 s so far" in done.stdout
    assert "captured, not shown" not in done.stdout


@pytest.mark.parametrize("with_filter", [True, False])
def test_the_kit_unpacks_safely_with_or_without_tarfiles_data_filter(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, with_filter: bool
) -> None:
    """Python before 3.11.4 (Debian 12's 3.11.2) has no ``extractall(filter=...)``: the members are checked by hand."""
    import io
    import tarfile

    if not with_filter:
        monkeypatch.delattr(tarfile, "data_filter", raising=False)  # absent before Python 3.11.4

    def kit(names: list[str]) -> tarfile.TarFile:
        buffer = io.BytesIO()
        with tarfile.open(fileobj=buffer, mode="w") as made:
            for name in names:
                info = tarfile.TarInfo(name)
                info.size = 2
                made.addfile(info, io.BytesIO(b"ok"))
        buffer.seek(0)
        return tarfile.open(fileobj=buffer)

    good = tmp_path / "good"
    good.mkdir()
    with kit(["ntfy-src/go.mod", "ntfy-src/server/server.go"]) as archive:
        ntfy_server._extract(archive, good)  # pyright: ignore[reportPrivateUsage]
    assert (good / "ntfy-src" / "server" / "server.go").read_text() == "ok"
    bad = tmp_path / "bad"
    bad.mkdir()
    with kit(["ntfy-src/../../escaped"]) as archive, pytest.raises((ntfy_server.NtfyUnavailable, tarfile.TarError)):
        ntfy_server._extract(archive, bad)  # pyright: ignore[reportPrivateUsage]
    assert not (tmp_path / "escaped").exists()
