"""The container image of deploy/Containerfile, built here from Debian's packages, and a server run from it.

``built_image(workdir)`` makes what the image needs and builds it with Debian's podman:

1. podman, runc and debootstrap, installed with apt-get when missing (as root; otherwise the failure
   names the command);
2. the Debian base (``deploy/base-image.sh``: debootstrap, then ``podman import``), made once and kept
   as :data:`BASE` (about 160 MB; ``podman rmi`` it to rebuild);
3. the wheels and ``constraints.txt`` as ``nox -s release`` makes them (``uv build --all-packages``,
   ``uv export``), and every other dependency's wheel (``pip download`` into ``dist/wheels/``, on this
   machine, whose certificate store the build's Debian lacks), in a build context of their own beside a
   copy of ``deploy/``;
4. ``podman build --pull=never`` of the ``servers`` target, tagged :data:`IMAGE`, offline: no image
   registry and no package index is asked for anything.

``served_from_image(...)`` runs one server from it on the host's network (``--network=host``), on a free
port of 127.0.0.1, with the bearer token mounted as a file owned by the image's user, until the port
answers.

Every podman command runs the containers with ``runc`` and with limits no higher than this machine's
(:data:`PODMAN_RUN`): on a machine with cgroup v1 (this one), Debian's ``crun`` refuses to start a container
("cgroups in hybrid mode not supported"), and podman's default open-files limit (1048576) is above what a
process may set here ("setrlimit RLIMIT_NOFILE: Operation not permitted").
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterator, Mapping
from pathlib import Path

from processes import answers_http, free_port, started

__all__ = ["BASE", "IMAGE", "LIMITS", "ContainerUnavailable", "built_image", "podman", "served_from_image"]

ROOT = Path(__file__).resolve().parents[1]
BASE = "localhost/mcp-approval-family/debian:bookworm"
IMAGE = "localhost/mcp-approval-family/servers:test"
USER_ID = 10001
"""The image's user (deploy/Containerfile)."""
BUILD_SECONDS = 1800
START_SECONDS = 120.0
RUNTIME = ("--runtime", "runc")
"""Given before every podman command (see the module docstring)."""
LIMITS = ("--ulimit", "nofile=1024:1024", "--ulimit", "nproc=4096:4096")
"""Given to every ``podman run`` and ``podman build``."""


class ContainerUnavailable(RuntimeError):
    """podman, debootstrap, the base or the image could not be had; the message says which step failed."""


def _run(argv: list[str], what: str, *, cwd: Path | None = None, timeout: float = BUILD_SECONDS) -> str:
    done = subprocess.run(  # noqa: S603 - our own commands
        argv, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
    )
    if done.returncode != 0:
        raise ContainerUnavailable(f"{what} failed ({' '.join(argv)}):\n{(done.stdout + done.stderr)[-4000:]}")
    return done.stdout


def _tools() -> None:
    missing = [tool for tool in ("podman", "runc", "debootstrap") if shutil.which(tool) is None]
    if not missing:
        return
    command = ["apt-get", "install", "-y", "-qq", *missing]
    if os.geteuid() != 0:
        raise ContainerUnavailable(f"{', '.join(missing)} missing: run `{' '.join(command)}` as root")
    _run(["apt-get", "update", "-qq"], "apt-get update")
    _run(["nice", "-n", "19", *command], f"installing {', '.join(missing)}")


def podman(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run ``podman args...`` and return what it did (not checked)."""
    found = shutil.which("podman")
    if found is None:
        raise ContainerUnavailable("podman is missing: run `apt-get install -y podman` as root")
    return subprocess.run(  # noqa: S603 - podman with our arguments
        [found, *RUNTIME, *args], capture_output=True, text=True, timeout=timeout, check=False
    )


def built_image(workdir: Path) -> str:
    """Build :data:`IMAGE` (see the module docstring) in ``workdir``; return its name.

    Raises:
        ContainerUnavailable: a step failed; the message names it and carries its output.
    """
    _tools()
    if podman("image", "exists", BASE).returncode != 0:
        _run(["nice", "-n", "19", "sh", str(ROOT / "deploy" / "base-image.sh"), BASE], "the Debian base image")
    context = workdir / "context"
    dist = context / "dist"
    shutil.copytree(ROOT / "deploy", context / "deploy")
    _run(["uv", "build", "--quiet", "--all-packages", "--out-dir", str(dist)], "uv build", cwd=ROOT)
    export = ["uv", "export", "--quiet", "--locked", "--all-packages", "--no-emit-workspace", "--no-hashes"]
    constraints = str(dist / "constraints.txt")
    _run([*export, "--no-header", "--no-dev", "--all-extras", "--output-file", constraints], "uv export", cwd=ROOT)
    download = ["uv", "run", "--no-project", "--with", "pip", "python", "-m", "pip", "download", "--quiet"]
    download += ["--disable-pip-version-check", "--only-binary=:all:", "--dest", str(dist / "wheels")]
    _run([*download, "-r", constraints], "downloading the dependencies' wheels (pip download)", cwd=ROOT)
    # A dependency for another Python than this machine's (Debian 12's is 3.11.2: async-timeout, for
    # python_full_version < '3.11.3') is fetched too, on its own; one that has no wheel for Linux is left out.
    for line in Path(constraints).read_text().splitlines():
        pinned, _, marker = line.partition(";")
        if "python_full_version" in marker or "python_version" in marker:
            subprocess.run(  # noqa: S603 - uv with our arguments; a failure leaves that wheel out, as said
                [*download, "--no-deps", pinned.strip()], cwd=ROOT, capture_output=True, timeout=600, check=False
            )
    build = ["nice", "-n", "19", "podman", *RUNTIME, "build", *LIMITS, "--pull=never", "--network=host"]
    build += ["--target", "servers"]
    containerfile = str(context / "deploy" / "Containerfile")
    _run([*build, "--build-arg", f"BASE={BASE}", "-f", containerfile, "-t", IMAGE, str(context)], "podman build")
    return IMAGE


@contextlib.contextmanager
def served_from_image(
    command: str, env: Mapping[str, str], token: str | None, workdir: Path
) -> Iterator[tuple[str, Path]]:
    """Run ``command`` (``caldav-mcp``...) from :data:`IMAGE` until it answers; yield its MCP URL and log.

    ``token`` is written to a file owned by the image's user (mode 0400) and mounted at
    ``/run/secrets/mcp-token`` (``MCP_AUTH_TOKEN_FILE``); ``env`` adds settings.

    Raises:
        ContainerUnavailable: the container exited or did not answer in time (its output attached).
    """
    port = free_port()
    name = f"mcp-test-{port}"
    argv = ["podman", *RUNTIME, "run", *LIMITS, "--rm", "--name", name, "--network=host", "-e", f"MCP_PORT={port}"]
    argv += ["-e", "MCP_HOST=127.0.0.1"]
    if token is not None:
        secret = workdir / f"mcp-token-{port}"
        secret.write_text(token + "\n")
        os.chown(secret, USER_ID, USER_ID)
        secret.chmod(0o400)
        argv += ["-v", f"{secret}:/run/secrets/mcp-token:ro", "-e", "MCP_AUTH_TOKEN_FILE=/run/secrets/mcp-token"]
    for key, value in env.items():
        argv += ["-e", f"{key}={value}"]
    log = workdir / f"{name}.log"
    try:
        with started(
            [*argv, IMAGE, command],
            name=f"{command} in {IMAGE}",
            port=port,
            workdir=workdir,
            log=log,
            ready=lambda: answers_http(port, "GET", "/.well-known/oauth-protected-resource/mcp"),
            error=ContainerUnavailable,
            seconds=START_SECONDS,
        ):
            yield f"http://127.0.0.1:{port}/mcp", log
    finally:
        podman("rm", "--force", "--ignore", name)
