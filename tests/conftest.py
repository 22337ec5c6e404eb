"""Shared by the family tests: the servers found in ``packages/*-mcp`` and the real backends they talk to.

Each backend is started once per session on 127.0.0.1 (``testing/``): Radicale for the DAV servers, the
real ntfy (a cached build, see ``testing/ntfy_server.py``; fails, never skips, when it cannot be had).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

from dav_servers import DavServer, radicale  # noqa: E402
from ntfy_server import NtfyServer, find_or_build_binary, ntfy_server  # noqa: E402
from terminal import on_terminal  # noqa: E402


@pytest.fixture(scope="session")
def dav(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DavServer]:
    """A real Radicale on 127.0.0.1 with the user willi (password secret)."""
    with radicale(tmp_path_factory.mktemp("radicale"), {"willi": "secret"}) as server:
        yield server


@pytest.fixture(scope="session")
def real_ntfy(tmp_path_factory: pytest.TempPathFactory, pytestconfig: pytest.Config) -> Iterator[NtfyServer]:
    """The real ntfy on 127.0.0.1, with an admin account; a first build's progress is shown on the terminal."""
    binary = find_or_build_binary(progress=on_terminal(pytestconfig))
    with ntfy_server(tmp_path_factory.mktemp("ntfy"), binary) as server:
        yield server


@pytest.fixture
def ntfy_standin() -> Any:
    """ntfy-mcp's STAND-IN (a double, see ``tests/scenarios.py``), fresh for each test."""
    from scenarios import AccountsStandIn, StandIn

    standin = AccountsStandIn()
    return StandIn(standin, standin.transport)
