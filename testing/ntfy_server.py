"""A real ntfy server for the tests, built from source and started on 127.0.0.1.

Test support for the ntfy-mcp suite and its benchmark (a conftest puts this
folder on ``sys.path``). Nothing here is a double: it is ntfy itself.

Where the binary comes from, in this order (:func:`find_or_build_binary`):

1. ``NTFY_SERVER_BINARY``: a path to an ntfy binary built elsewhere.
2. The cache: a binary built before from the source kit, in
   ``${XDG_CACHE_HOME:-~/.cache}/mcp-approval-family/ntfy/<kit SHA-256>/ntfy``
   (outside the clone, so a second run or a fresh clone on the same machine
   does not build again).
3. The Go module ``heckel.io/ntfy/v2``, where the module proxy serves a
   version >= 2.16 (``go list -m -versions``, given :data:`MODULE_LIST_SECONDS`;
   a refusal such as HTTP 403 is logged on stderr and the next source tried).
   Built as in 4. and cached under ``module-<version>/ntfy``.
4. The source kit: ``NTFY_SOURCE_KIT`` (the kit's folder or its tarball), else
   ``<repository root>/../shared/ntfy/``. Its tarball's SHA-256 must equal
   :data:`KIT_SHA256` (committed here) before anything is unpacked; it is
   unpacked into a temporary folder (the kit itself may be read-only), built
   with the kit's own ``build-ntfy.sh`` (Go and gcc needed; about 100 s with a
   warm Go module cache, 5 to 6 minutes of CPU without), and the binary is
   written into the cache atomically (a temporary name, then a rename) while
   holding ``build.lock`` in the cache folder, so two processes building at
   once build once.

While it builds (or waits for another process's build), what it is doing goes
to ``progress`` (:func:`find_or_build_binary`; default: stderr): the build
script's own lines as they come, and every :data:`HEARTBEAT_SECONDS` a line
with the time spent so far, so a long first build never looks hung. The pytest
fixtures pass a function that writes past pytest's output capture
(``testing/terminal.py``).

A build has no deadline: on a machine whose cores are busy with other work a
first build can take many times the figures above, and stopping it would
only make the next run start again. It runs in a process group of its own
(``testing/processes.py``), so whatever ends the wait (an interrupt, the
build script failing) stops the script's ``go build`` with it.

Any failure raises :class:`NtfyUnavailable` with the exact command and its
output, so a test fails with the reason rather than being skipped.

A running server (:func:`ntfy_server`) has an auth file with one admin user,
a message cache file, an attachment folder, ``deny-all`` default access, and
127.0.0.1 exempt from the per-visitor request limit (the suite and the
benchmark send many requests from there) unless the caller asks otherwise.
"""

from __future__ import annotations

import base64
import contextlib
import contextvars
import fcntl
import hashlib
import http.client
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from processes import free_port, run_in_group, spawn, started, stop_group

__all__ = [
    "KIT_SHA256",
    "MIN_VERSION",
    "MODULE",
    "NtfyServer",
    "NtfyUnavailable",
    "find_or_build_binary",
    "ntfy_server",
]

MODULE = "heckel.io/ntfy/v2"
MIN_VERSION = (2, 16, 0)
"""The first ntfy with message revisions; the Go module is used only from here on."""
ROOT = Path(__file__).resolve().parents[1]
KIT_TARBALL = "ntfy-2.13.0-src-kit.tar.gz"
KIT_SHA256 = "72701aff21d87004f0a51099afa2392269122ab6d9dd13e901ceec026f23f1c2"
"""SHA-256 of :data:`KIT_TARBALL`, checked before the kit is unpacked (see ``shared/ntfy/README.md``)."""
KIT_VERSION = "2.13.0"
KIT_COMMIT = "81a486adc11fe24efcbedefb28ae946028597c2f"
STARTUP_SECONDS = 30.0
DOWNLOAD_SECONDS = 900.0
"""The limit for fetching the Go module's sources (``go mod download``); a build itself has none."""
MODULE_LIST_SECONDS = 60.0
HEARTBEAT_SECONDS = 15.0
"""While a build runs silently, a line saying how long it has been running goes out this often (seconds)."""
ADMIN_USER = "admin"
ADMIN_PASSWORD = "admin-password-for-tests"  # noqa: S105 - a throwaway server on loopback


class NtfyUnavailable(RuntimeError):
    """No ntfy binary could be found or built, or the server did not start; the message says why."""


@dataclass(frozen=True)
class NtfyServer:
    """A running ntfy server.

    Attributes:
        url: Base URL, e.g. ``http://127.0.0.1:41234`` (no trailing slash).
        version: The server's version as a tuple, e.g. ``(2, 13, 0)``.
        admin_user: Name of the admin user in its auth file.
        admin_password: That user's password.
        binary: The executable that runs it.
        workdir: Its cache, auth and attachment files.
    """

    url: str
    version: tuple[int, int, int]
    admin_user: str
    admin_password: str
    binary: Path
    workdir: Path

    @property
    def supports_sequences(self) -> bool:
        """Whether this server has the update / clear / delete routes (ntfy >= 2.16)."""
        return self.version >= MIN_VERSION

    def admin_headers(self) -> dict[str, str]:
        """An ``Authorization`` header for the admin user."""
        raw = f"{self.admin_user}:{self.admin_password}".encode()
        return {"Authorization": "Basic " + base64.b64encode(raw).decode()}

    def add_user(self, name: str, password: str, role: str = "user") -> None:
        """Create a user with the ntfy CLI against this server's auth file."""
        _run(
            [str(self.binary), "user", "--auth-file", str(self.workdir / "auth.db"), "add", f"--role={role}", name],
            env={"NTFY_PASSWORD": password},
            timeout=60,
        )


_VERSION = re.compile(r"v?(\d+)\.(\d+)\.(\d+)")
_HELP_VERSION = re.compile(r"^ntfy (\d+\.\d+\.\d+)", re.MULTILINE)


def _parse_version(text: str) -> tuple[int, int, int] | None:
    match = _VERSION.search(text)
    if match is None:
        return None
    major, minor, patch = (int(part) for part in match.groups())
    return major, minor, patch


def _to_stderr(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


_PROGRESS: contextvars.ContextVar[Callable[[str], None]] = contextvars.ContextVar("ntfy_progress", default=_to_stderr)


def _say(text: str) -> None:
    """One line of progress, ``ntfy_server: <text>``, to the sink :func:`find_or_build_binary` was given."""
    _PROGRESS.get()(f"ntfy_server: {text}")


def _run_showing(argv: list[str], *, cwd: Path, what: str, env: dict[str, str] | None = None) -> None:
    """Run a build: ``argv`` in a process group of its own, each output line passed to :func:`_say` as it comes.

    Every :data:`HEARTBEAT_SECONDS` without a line, a line says how many seconds ``what`` has taken so far.
    There is no deadline: a first build on a busy machine takes as long as it takes, and says so as it goes.
    Whatever ends this wait early (an interrupt, a failure here) stops the whole group, so no ``go build``
    started by a build script lives on.

    Raises:
        NtfyUnavailable: the command cannot be started, or exits non-zero (with its last 40 lines).
    """
    try:
        process = spawn(
            argv,
            cwd=cwd,
            env={**os.environ, **(env or {})},
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            bufsize=1,
        )
    except FileNotFoundError as exc:
        raise NtfyUnavailable(f"cannot run {argv[0]!r}: {exc}") from exc
    assert process.stdout is not None
    lines: list[str] = []
    new_line = threading.Condition()

    def read(stream: IO[str]) -> None:
        for line in stream:
            with new_line:
                lines.append(line.rstrip())
                new_line.notify()
        with new_line:
            new_line.notify()

    reader = threading.Thread(target=read, args=(process.stdout,), daemon=True)
    reader.start()
    try:
        started_at = time.monotonic()
        shown = 0
        last = started_at
        while True:
            with new_line:
                if len(lines) == shown and reader.is_alive():
                    new_line.wait(timeout=min(1.0, HEARTBEAT_SECONDS))
                elif len(lines) == shown:  # output closed: wait for the exit without spinning
                    with contextlib.suppress(subprocess.TimeoutExpired):
                        process.wait(timeout=min(1.0, HEARTBEAT_SECONDS))
                fresh = lines[shown:]
                shown = len(lines)
            now = time.monotonic()
            for line in fresh:
                _say(f"{what}: {line}")
                last = now
            if process.poll() is not None:
                if reader.is_alive():  # what the script left running still holds its output open: it goes too
                    stop_group(process, seconds=2)
                    reader.join(timeout=10)
                with new_line:
                    for line in lines[shown:]:
                        _say(f"{what}: {line}")
                break
            if now - last >= HEARTBEAT_SECONDS:
                _say(f"{what}: still running, {now - started_at:.0f} s so far")
                last = now
    finally:
        stop_group(process, seconds=2)  # the build's own children too, whether it ended or was interrupted
        process.stdout.close()
    if process.returncode != 0:
        tail = "\n".join(lines[-40:])
        raise NtfyUnavailable(f"`{' '.join(argv)}` failed with exit code {process.returncode}:\n{tail}")


def _run(argv: list[str], *, cwd: Path | None = None, env: dict[str, str] | None = None, timeout: float) -> str:
    full_env = {**os.environ, **(env or {})}
    try:
        done = run_in_group(argv, cwd=cwd, env=full_env, timeout=timeout)  # on a timeout, its whole group stops
    except FileNotFoundError as exc:
        raise NtfyUnavailable(f"cannot run `{' '.join(argv)}` ({argv[0]} is not on PATH?): {exc}") from exc
    except subprocess.TimeoutExpired as exc:
        raise NtfyUnavailable(f"`{' '.join(argv)}` did not finish within {timeout:g} s") from exc
    if done.returncode != 0:
        raise NtfyUnavailable(
            f"`{' '.join(argv)}` failed with exit code {done.returncode}:\n{done.stderr.strip() or done.stdout.strip()}"
        )
    return done.stdout


def _binary_version(binary: Path) -> tuple[int, int, int]:
    """The version from ``ntfy --help`` (its line ``ntfy 2.13.0 (commit)...``), else from the file name."""
    match = _HELP_VERSION.search(_run([str(binary), "--help"], timeout=60))
    version = _parse_version(match.group(1)) if match else _parse_version(binary.name)
    if version is None:
        raise NtfyUnavailable(f"cannot tell the version of {binary} (its --help names none; name it ntfy-<version>)")
    return version


def cache_root() -> Path:
    """``${XDG_CACHE_HOME:-~/.cache}/mcp-approval-family/ntfy``: built binaries, one folder per source."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "mcp-approval-family" / "ntfy"


def kit_location() -> Path:
    """The source kit's tarball: ``NTFY_SOURCE_KIT`` (folder or tarball), else ``ROOT/../shared/ntfy``."""
    named = os.environ.get("NTFY_SOURCE_KIT")
    place = Path(named) if named else ROOT.parent / "shared" / "ntfy"
    return place / KIT_TARBALL if place.is_dir() else place


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as stream:
        for block in iter(lambda: stream.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@contextlib.contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """Hold ``folder/build.lock`` (an exclusive flock), so concurrent builders build once."""
    folder.mkdir(parents=True, exist_ok=True)
    with (folder / "build.lock").open("w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            _say(f"another process is building ntfy into {folder}; waiting for it to finish")
            fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _install(built: Path, target: Path) -> Path:
    """Copy ``built`` to ``target`` atomically (a temporary name in the same folder, then a rename)."""
    partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
    shutil.copy2(built, partial)
    partial.chmod(0o755)
    partial.replace(target)
    return target


def _cached() -> Path | None:
    for candidate in (cache_root() / KIT_SHA256 / "ntfy", *sorted(cache_root().glob("module-*/ntfy"), reverse=True)):
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    return None


def _module_version(workdir: Path) -> str:
    out = _run(["go", "list", "-m", "-versions", MODULE], cwd=workdir, timeout=MODULE_LIST_SECONDS)
    usable = [v for v in out.split()[1:] if (parsed := _parse_version(v)) and parsed >= MIN_VERSION and "-" not in v]
    if not usable:
        raise NtfyUnavailable(f"the Go module proxy lists no {MODULE} version >= 2.16: {out.strip()!r}")
    return max(usable, key=lambda v: _parse_version(v) or (0, 0, 0))


def _placeholders(source: Path) -> None:
    # The web app and docs are embedded with go:embed; a command-line build gets empty placeholders.
    for placeholder in ("server/site/app.html", "server/docs/index.html"):
        (source / placeholder).parent.mkdir(parents=True, exist_ok=True)
        (source / placeholder).touch()


def _build_from_module(workdir: Path) -> Path:
    version = _module_version(workdir)
    target = cache_root() / f"module-{version.lstrip('v')}" / "ntfy"
    with _locked(target.parent):
        if target.is_file():
            return target
        info = json.loads(
            _run(["go", "mod", "download", "-json", f"{MODULE}@{version}"], cwd=workdir, timeout=DOWNLOAD_SECONDS)
        )
        if "Dir" not in info:
            raise NtfyUnavailable(f"go mod download gave no module folder: {info.get('Error', info)}")
        source = workdir / "ntfy"
        shutil.copytree(info["Dir"], source)
        for path in [source, *source.rglob("*")]:  # the module cache is read-only
            path.chmod(path.stat().st_mode | stat.S_IWUSR)
        _placeholders(source)
        _say(f"building ntfy {version} from the Go module {MODULE}, once; the binary is kept in {target.parent}")
        _run_showing(
            ["go", "build", "-o", "ntfy", "-ldflags", f"-X main.version={version.lstrip('v')}", "."],
            cwd=source,
            what="go build",
            env={"CGO_ENABLED": "1", "GOFLAGS": "-mod=mod -buildvcs=false"},
        )
        return _install(source / "ntfy", target)


def _build_from_kit(workdir: Path) -> Path:
    tarball = kit_location()
    if not tarball.is_file():
        raise NtfyUnavailable(f"no source kit at {tarball} (set NTFY_SOURCE_KIT to the folder holding {KIT_TARBALL})")
    found = _sha256(tarball)
    if found != KIT_SHA256:
        raise NtfyUnavailable(f"{tarball} has SHA-256 {found}, not the {KIT_SHA256} this project expects")
    script = tarball.parent / "build-ntfy.sh"
    if not script.is_file():
        raise NtfyUnavailable(f"the source kit at {tarball.parent} has no build-ntfy.sh")
    target = cache_root() / KIT_SHA256 / "ntfy"
    with _locked(target.parent):
        if target.is_file():  # built by another process while this one waited for the lock
            return target
        _say(
            f"building ntfy {KIT_VERSION} from {tarball}, once: about 2 minutes with a warm Go module cache, "
            f"5 to 6 minutes of CPU without; the binary is kept in {target.parent}"
        )
        with tarfile.open(tarball) as archive:
            _extract(archive, workdir)
        source = workdir / "ntfy-src"
        if not source.is_dir():
            raise NtfyUnavailable(f"{tarball} did not unpack to ntfy-src/")
        _run_showing(["bash", str(script), str(source), KIT_VERSION, KIT_COMMIT], cwd=workdir, what="build")
        _say(f"built {target}")
        return _install(source / "ntfy", target)


def _extract(archive: tarfile.TarFile, workdir: Path) -> None:
    """Unpack ``archive`` into ``workdir`` with the ``data`` filter (no links out, no absolute paths, no devices).

    ``extractall(filter=...)`` exists from Python 3.11.4 (and 3.12) on; before that (Debian 12 ships 3.11.2)
    every member is checked here the same way before anything is written.
    """
    if hasattr(tarfile, "data_filter"):
        archive.extractall(workdir, filter="data")
        return
    root = workdir.resolve()
    for member in archive.getmembers():
        target = (workdir / member.name).resolve()
        unsafe = member.isdev() or member.issym() or member.islnk() or member.name.startswith("/")
        if unsafe or not target.is_relative_to(root):
            raise NtfyUnavailable(f"the source kit holds {member.name!r}, which would unpack outside {workdir}")
    archive.extractall(workdir)  # noqa: S202 - every member was checked above


def find_or_build_binary(progress: Callable[[str], None] | None = None) -> Path:
    """The ntfy binary to test against (see the module docstring for the order).

    Args:
        progress: Where each line about a build (or the wait for another process's build) goes, as it
            happens; default: stderr.

    Raises:
        NtfyUnavailable: every source failed; the message gives each one's reason.
    """
    reset = _PROGRESS.set(progress) if progress is not None else None
    try:
        return _find_or_build()
    finally:
        if reset is not None:
            _PROGRESS.reset(reset)


def _find_or_build() -> Path:
    explicit = os.environ.get("NTFY_SERVER_BINARY")
    if explicit:
        path = Path(explicit)
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise NtfyUnavailable(f"NTFY_SERVER_BINARY={explicit!r} is not an executable file")
        return path
    cached = _cached()
    if cached is not None:
        return cached
    reasons: list[str] = []
    for name, build in (("the Go module " + MODULE, _build_from_module), ("the source kit", _build_from_kit)):
        with tempfile.TemporaryDirectory(prefix="ntfy-build-") as tmp:
            try:
                return build(Path(tmp))
            except NtfyUnavailable as exc:
                _say(f"could not build from {name}: {exc}")
                reasons.append(f"from {name}: {exc}")
    raise NtfyUnavailable("could not build the ntfy server:\n" + "\n".join(reasons))


def _healthy(port: int) -> bool:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
    try:
        conn.request("GET", "/v1/health")
        return conn.getresponse().status == http.HTTPStatus.OK
    finally:
        conn.close()


@contextlib.contextmanager
def ntfy_server(
    workdir: Path, binary: Path | None = None, *, exempt_loopback: bool = True, extra: Sequence[str] = ()
) -> Iterator[NtfyServer]:
    """Run ntfy on 127.0.0.1 with an auth file, an admin user and a cache file; stop it after.

    Args:
        workdir: Where its files go.
        binary: The binary (default: :func:`find_or_build_binary`).
        exempt_loopback: Exempt 127.0.0.1 from ntfy's per-visitor request limit.
        extra: More ``ntfy serve`` options, e.g. ``["--visitor-request-limit-burst", "3"]``.

    Raises:
        NtfyUnavailable: no binary, or the server did not become healthy.
    """
    binary = binary or find_or_build_binary()
    version = _binary_version(binary)
    workdir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    auth_file = workdir / "auth.db"
    argv = [
        str(binary), "serve",
        "--listen-http", f"127.0.0.1:{port}",
        "--base-url", url,
        "--cache-file", str(workdir / "cache.db"),
        "--auth-file", str(auth_file),
        "--auth-default-access", "deny-all",
        "--attachment-cache-dir", str(workdir / "attachments"),
        *(["--visitor-request-limit-exempt-hosts", "127.0.0.1"] if exempt_loopback else []),
        "--log-level", "warn",
        *extra,
    ]  # fmt: skip
    _run([*argv[:2], "--help"], timeout=60)  # fails early, with the reason, on a broken binary
    with started(
        argv,
        name="ntfy",
        port=port,
        workdir=workdir,
        log=workdir / "ntfy.log",
        ready=lambda: _healthy(port),
        error=NtfyUnavailable,
        seconds=STARTUP_SECONDS,
    ):
        server = NtfyServer(url, version, ADMIN_USER, ADMIN_PASSWORD, binary, workdir)
        server.add_user(ADMIN_USER, ADMIN_PASSWORD, role="admin")
        yield server


if __name__ == "__main__":  # build ahead of a first test run: `uv run python testing/ntfy_server.py`
    print(find_or_build_binary())
