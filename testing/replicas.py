"""Several replicas of one MCP server over Streamable HTTP, each its own process on 127.0.0.1.

Each replica is the server's console script (``caldav-mcp``...) from the
virtualenv that runs the tests, started with ``MCP_TRANSPORT=streamable-http``
on its own free port and the settings the test gives (the backend, the
authentication, ``APPROVAL_STORE_URL``, ``APPROVAL_KEY_FILE``...). Nothing
else of the test's environment reaches it. A replica that exits or does not
answer HTTP in time raises :class:`ReplicaDidNotStart` with its output.

A test may stop, start or restart one replica (:meth:`Replicas.restart`): the
same port and settings, a new process (nothing it held in memory survives).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from processes import answers_http, free_port, spawn, stop_group

__all__ = ["Replica", "ReplicaDidNotStart", "Replicas", "replicas", "script"]

STARTUP_SECONDS = 60.0
MCP_PATH = "/mcp"


class ReplicaDidNotStart(RuntimeError):
    """A replica exited or did not answer HTTP in time; the message carries its output."""


def script(name: str) -> Path:
    """The console script ``name`` of the virtualenv running the tests (``.venv/bin/caldav-mcp``).

    Raises:
        ReplicaDidNotStart: no such script (the package is not installed: ``uv sync --all-packages``).
    """
    found = Path(sys.executable).parent / name
    if not found.is_file():
        raise ReplicaDidNotStart(f"no console script {found}: install the workspace with `uv sync --all-packages`")
    return found


@dataclass
class Replica:
    """One replica: its name in the proxy, its port, its settings and (while it runs) its process.

    Attributes:
        name: ``r1``, ``r2``... (the proxy's server name; ``X-Backend`` carries it).
        port: Its 127.0.0.1 port.
        env: The whole environment it starts with.
        log: Its stderr and stdout, appended over restarts.
        process: The running process, None while stopped.
        starts: How many times it was started.
    """

    name: str
    port: int
    env: dict[str, str]
    log: Path
    process: subprocess.Popen[bytes] | None = None
    starts: int = 0

    @property
    def url(self) -> str:
        """Its own MCP endpoint, bypassing any proxy."""
        return f"http://127.0.0.1:{self.port}{MCP_PATH}"


@dataclass
class Replicas:
    """The running replicas of one server.

    Attributes:
        command: The server's console script.
        members: Each replica, in order.
    """

    command: Path
    members: list[Replica] = field(default_factory=lambda: [])

    @property
    def names(self) -> list[str]:
        """The replicas' names, in order."""
        return [r.name for r in self.members]

    def __getitem__(self, name: str) -> Replica:
        return next(r for r in self.members if r.name == name)

    def start(self, name: str) -> None:
        """Start replica ``name`` and wait until it answers HTTP.

        Raises:
            ReplicaDidNotStart: it exited (its output attached) or gave no HTTP answer within 60 s.
        """
        replica = self[name]
        assert replica.process is None, f"{name} is already running"
        with replica.log.open("ab") as out:
            out.write(f"--- start {replica.starts + 1}\n".encode())
            out.flush()
            process = spawn(
                [str(self.command)], stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, env=replica.env
            )
        replica.process, replica.starts = process, replica.starts + 1
        deadline = time.monotonic() + STARTUP_SECONDS
        while not answers_http(replica.port, "GET", MCP_PATH):
            if process.poll() is not None:
                replica.process = None
                raise ReplicaDidNotStart(
                    f"{self.command.name} {name} exited with {process.returncode}:\n"
                    + replica.log.read_text(errors="replace")[-4000:]
                )
            if time.monotonic() >= deadline:
                self.stop(name)
                raise ReplicaDidNotStart(
                    f"{self.command.name} {name} gave no HTTP answer on port {replica.port} within "
                    f"{STARTUP_SECONDS:g} s:\n" + replica.log.read_text(errors="replace")[-4000:]
                )
            time.sleep(0.05)

    def stop(self, name: str) -> None:
        """Stop replica ``name`` (SIGTERM, then SIGKILL after 10 s); nothing when it is not running."""
        replica = self[name]
        process, replica.process = replica.process, None
        if process is None:
            return
        stop_group(process)

    def restart(self, name: str) -> None:
        """Stop replica ``name`` and start a new process with the same port and settings."""
        self.stop(name)
        self.start(name)

    def log_text(self) -> str:
        """Every replica's output, for a failing test's message."""
        return "\n".join(f"== {r.name}\n{r.log.read_text(errors='replace')[-3000:]}" for r in self.members)


def base_env(settings: Mapping[str, str]) -> dict[str, str]:
    """``PATH``, ``HOME``, ``XDG_DATA_HOME`` when set, and ``settings``: none of the test's own settings leaks in.

    ``XDG_DATA_HOME`` is the run's own data folder (the family's pytest plugin, ``nox -s bench``): without it a
    replica would keep its records and undo journal in the person's own folder, shared with every other run.
    """
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/")}
    if os.environ.get("XDG_DATA_HOME"):
        env["XDG_DATA_HOME"] = os.environ["XDG_DATA_HOME"]
    return {**env, **settings}


@contextlib.contextmanager
def replicas(
    workdir: Path,
    server: str,
    count: int,
    settings: Mapping[str, str],
    *,
    public_url: str | None = None,
    ports: list[int] | None = None,
) -> Iterator[Replicas]:
    """Start ``count`` replicas of console script ``server`` with ``settings``; stop them all after.

    Each gets ``MCP_TRANSPORT=streamable-http``, ``MCP_HOST=127.0.0.1``, its own ``MCP_PORT`` and
    ``MCP_PUBLIC_URL`` (``public_url``: the proxy's URL when they sit behind one; default each one's own).

    Raises:
        ReplicaDidNotStart: one of them did not start (the others are stopped).
    """
    workdir.mkdir(parents=True, exist_ok=True)
    chosen = ports or [free_port() for _ in range(count)]
    group = Replicas(script(server))
    for index, port in enumerate(chosen, start=1):
        name = f"r{index}"
        env = base_env(
            {
                **settings,
                "MCP_TRANSPORT": "streamable-http",
                "MCP_HOST": "127.0.0.1",
                "MCP_PORT": str(port),
                "MCP_PUBLIC_URL": public_url or f"http://127.0.0.1:{port}{MCP_PATH}",
            }
        )
        group.members.append(Replica(name, port, env, workdir / f"{name}.log"))
    try:
        for name in group.names:
            group.start(name)
        yield group
    finally:
        for name in group.names:
            group.stop(name)
