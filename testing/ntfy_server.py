"""A real ntfy server for the tests, built from its Go module and started on 127.0.0.1.

Test support for the ntfy-mcp suite (a conftest puts this folder on
``sys.path``). Nothing here is a double: it is ntfy itself.

Where the binary comes from, in this order:

1. ``NTFY_SERVER_BINARY``: a path to an ntfy binary built elsewhere (for a
   machine whose Go module proxy will not serve ``heckel.io/ntfy/v2``).
   Its version is read from ``ntfy --help``'s ``VERSION`` line or the file
   name (``ntfy-2.16.0``).
2. The cache: ``.cache/ntfy/ntfy-<version>`` at the repository root (git-ignored),
   the newest version found there.
3. A build: ``go list -m -versions heckel.io/ntfy/v2`` picks the newest
   version >= :data:`MIN_VERSION`; ``go mod download -json`` fetches it; the
   module is copied to a writable folder, the two placeholder files its
   Makefile creates for CLI-only builds are created (``server/site/app.html``,
   ``server/docs/index.html``; the web app and docs are not in the module),
   and ``go build`` writes the binary into the cache. A plain ``go install``
   cannot work: the module's go.mod has a ``replace`` directive.

Any failure raises :class:`NtfyUnavailable` with the exact command and its
output, so a test fails with the reason rather than being skipped.

A running server (:func:`ntfy_server`) has an auth file with one admin user,
a message cache file, an attachment folder, ``deny-all`` default access, and
127.0.0.1 exempt from the per-visitor request limit (the suite and the
benchmark send many requests from there).
"""

from __future__ import annotations

import base64
import contextlib
import http.client
import json
import os
import re
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from processes import free_port, started

__all__ = [
    "MIN_VERSION",
    "MODULE",
    "NtfyServer",
    "NtfyUnavailable",
    "find_or_build_binary",
    "ntfy_server",
]

MODULE = "heckel.io/ntfy/v2"
MIN_VERSION = (2, 16, 0)
ROOT = Path(__file__).resolve().parents[1]
CACHE = ROOT / ".cache" / "ntfy"
STARTUP_SECONDS = 30.0
GO_SECONDS = 900.0
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


def _parse_version(text: str) -> tuple[int, int, int] | None:
    match = _VERSION.search(text)
    if match is None:
        return None
    major, minor, patch = (int(part) for part in match.groups())
    return major, minor, patch


def _run(argv: list[str], *, cwd: Path | None = None, env: dict[str, str] | None = None, timeout: float) -> str:
    full_env = {**os.environ, **(env or {})}
    try:
        done = subprocess.run(  # noqa: S603 - fixed argv, our own tools
            argv, cwd=cwd, env=full_env, capture_output=True, text=True, timeout=timeout, check=False
        )
    except FileNotFoundError as exc:
        raise NtfyUnavailable(f"cannot run {argv[0]!r}: {exc}") from exc
    except subprocess.TimeoutExpired as exc:
        raise NtfyUnavailable(f"`{' '.join(argv)}` did not finish within {timeout:g} s") from exc
    if done.returncode != 0:
        raise NtfyUnavailable(
            f"`{' '.join(argv)}` failed with exit code {done.returncode}:\n{done.stderr.strip() or done.stdout.strip()}"
        )
    return done.stdout


def _binary_version(binary: Path) -> tuple[int, int, int]:
    version = _parse_version(binary.name)
    if version is None:
        version = _parse_version(_run([str(binary), "--help"], timeout=60).split("VERSION", 1)[-1])
    if version is None:
        raise NtfyUnavailable(f"cannot tell the version of {binary} (name it ntfy-<version>)")
    return version


def _cached() -> Path | None:
    found = [(v, p) for p in CACHE.glob("ntfy-*") if p.is_file() and (v := _parse_version(p.name)) is not None]
    return max(found)[1] if found else None


def _pick_version(workdir: Path) -> str:
    out = _run(["go", "list", "-m", "-versions", MODULE], cwd=workdir, timeout=GO_SECONDS)
    usable = [v for v in out.split()[1:] if (parsed := _parse_version(v)) and parsed >= MIN_VERSION and "-" not in v]
    if not usable:
        raise NtfyUnavailable(f"the Go module proxy lists no {MODULE} version >= 2.16: {out.strip()!r}")
    return max(usable, key=lambda v: _parse_version(v) or (0, 0, 0))


def _build(workdir: Path) -> Path:
    version = _pick_version(workdir)
    info = json.loads(_run(["go", "mod", "download", "-json", f"{MODULE}@{version}"], cwd=workdir, timeout=GO_SECONDS))
    if "Dir" not in info:
        raise NtfyUnavailable(f"go mod download gave no module folder: {info.get('Error', info)}")
    source = workdir / "ntfy"
    shutil.copytree(info["Dir"], source)
    for path in [source, *source.rglob("*")]:  # the module cache is read-only
        path.chmod(path.stat().st_mode | stat.S_IWUSR)
    for placeholder in ("server/site/app.html", "server/docs/index.html"):
        (source / placeholder).parent.mkdir(parents=True, exist_ok=True)
        (source / placeholder).touch()
    CACHE.mkdir(parents=True, exist_ok=True)
    target = CACHE / f"ntfy-{version.lstrip('v')}"
    partial = target.with_suffix(".partial")
    _run(
        ["go", "build", "-o", str(partial), "-ldflags", f"-X main.version={version.lstrip('v')}", "."],
        cwd=source,
        env={"CGO_ENABLED": "1", "GOFLAGS": "-mod=mod -buildvcs=false"},
        timeout=GO_SECONDS,
    )
    partial.replace(target)
    return target


def find_or_build_binary() -> Path:
    """The ntfy binary to test against (see the module docstring for the order).

    Raises:
        NtfyUnavailable: with the exact failing command and its output.
    """
    explicit = os.environ.get("NTFY_SERVER_BINARY")
    if explicit:
        path = Path(explicit)
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise NtfyUnavailable(f"NTFY_SERVER_BINARY={explicit!r} is not an executable file")
        return path
    cached = _cached()
    if cached is not None:
        return cached
    with tempfile.TemporaryDirectory(prefix="ntfy-build-") as tmp:
        try:
            return _build(Path(tmp))
        except NtfyUnavailable as exc:
            raise NtfyUnavailable(f"could not build the ntfy server from {MODULE}: {exc}") from exc


def _healthy(port: int) -> bool:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
    try:
        conn.request("GET", "/v1/health")
        return conn.getresponse().status == http.HTTPStatus.OK
    finally:
        conn.close()


@contextlib.contextmanager
def ntfy_server(workdir: Path, binary: Path | None = None) -> Iterator[NtfyServer]:
    """Run ntfy on 127.0.0.1 with an auth file, an admin user and a cache file; stop it after.

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
        "--visitor-request-limit-exempt-hosts", "127.0.0.1",
        "--log-level", "warn",
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
