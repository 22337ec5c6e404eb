"""langchain-mcp-adapters over stdio redeems a confirm token although it starts a process per call.

Its default ``get_tools()`` opens a new session, so a new server process, for every tool
call. The adapter is built on the MCP SDK 1.x and cannot live in the workspace's
environment (SDK 2.x), so it runs from its own locked project,
``testing/interop/langchain`` (``uv run --project ... --locked``; the first run installs
it from PyPI into uv's cache). The example server is this environment's.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.stdio

ROOT = Path(__file__).resolve().parents[3]
PROJECT = ROOT / "testing" / "interop" / "langchain"
SCRIPT = str(Path(__file__).with_name("example_server.py"))


def test_the_langchain_adapter_redeems_a_token_across_two_server_processes(tmp_path: Path) -> None:
    uv = shutil.which("uv")
    if uv is None:
        pytest.fail("uv is not on PATH: install uv (https://docs.astral.sh/uv/), which runs the adapter's project")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ELICITATION", "APPROVAL_", "MCP_"))}
    env["XDG_DATA_HOME"] = str(tmp_path)
    server = {"command": sys.executable, "args": [SCRIPT], "env": env}
    client_env = {k: v for k, v in os.environ.items() if k not in {"VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT"}}
    run = subprocess.run(  # noqa: S603 - uv, the locked project of this repository, our own server
        [
            uv,
            "run",
            "--project",
            str(PROJECT),
            "--locked",
            "--quiet",
            "python",
            str(PROJECT / "client.py"),
            json.dumps(server),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env=client_env,
    )
    assert run.returncode == 0, f"the adapter's client failed (uv sync of {PROJECT} needs PyPI):\n{run.stderr[-3000:]}"
    seen = json.loads(run.stdout.strip().splitlines()[-1])
    assert "delete_items was not run" in seen["first"]
    assert 'confirm_token="' in seen["first"]
    assert "was not run" not in seen["second"]
    assert '{"items":["b","c"]}' in seen["second"]  # redeemed in the second process: "a" is gone there
    assert '{"items":["a","b","c"]}' in seen["listed"]  # a third process, starting from a, b, c again
    assert (tmp_path / "approval-core" / "records" / "example-mcp.sqlite3").exists()
