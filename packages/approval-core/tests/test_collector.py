"""Start-up with the cyclic garbage collector paused: resumed as found, what was built frozen, nothing leaked."""

from __future__ import annotations

import gc
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp.server.mcpserver import MCPServer

import approval_core.serving.remote as remote
import approval_core.serving.startup as startup
from approval_core import collector_paused, run


@pytest.fixture(autouse=True)
def collector_as_found() -> Iterator[None]:
    """Each test leaves the collector running and nothing frozen, whatever it did."""
    yield
    gc.unfreeze()
    gc.enable()


def test_the_collector_rests_in_the_block_and_resumes_after() -> None:
    gc.enable()
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0


def test_a_collector_that_was_off_stays_off() -> None:
    gc.disable()
    with collector_paused(freeze=True):
        assert not gc.isenabled()
    assert not gc.isenabled()
    assert gc.get_freeze_count() > 0


def test_freeze_moves_what_was_built_out_of_every_later_collection() -> None:
    gc.enable()
    with collector_paused(freeze=True):
        built = [{"tool": n} for n in range(1000)]
    assert gc.get_freeze_count() >= len(built)
    assert all(gc.get_referrers(b) for b in built[:3])  # still alive and referenced, only no longer walked
    assert gc.isenabled()


def test_a_failed_start_freezes_nothing_and_resumes_the_collector() -> None:
    gc.enable()
    with pytest.raises(RuntimeError), collector_paused(freeze=True):
        raise RuntimeError("the build failed")
    assert gc.isenabled()
    assert gc.get_freeze_count() == 0


def test_run_builds_with_the_collector_paused_then_serves_it_running(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, Any] = {}

    def build(_: object) -> MCPServer[Any]:
        seen["building"] = gc.isenabled()
        return MCPServer("collector-test")

    def serve(server: MCPServer[Any], name: str) -> None:
        seen["serving"] = (gc.isenabled(), gc.get_freeze_count() > 0, server.name, name)

    monkeypatch.setattr(remote, "serve", serve)
    monkeypatch.setattr(startup, "configure_logging", lambda: None)  # the test run's own logging stays
    gc.enable()
    run("collector-test", lambda: (build, None))
    assert seen == {"building": False, "serving": (True, True, "collector-test", "collector-test")}


SERVERS = sorted(p.name.replace("-", "_") for p in Path(__file__).parents[2].glob("*-mcp") if (p / "src").is_dir())
"""Every server package of the workspace, a new one included."""


def test_every_server_is_found() -> None:
    assert {"caldav_mcp", "carddav_mcp", "ntfy_mcp"} <= set(SERVERS)


@pytest.mark.parametrize("package", SERVERS)
@pytest.mark.parametrize("before", ["gc.enable()", "gc.disable()"])
def test_importing_a_server_leaves_the_collector_as_it_was(package: str, before: str) -> None:
    code = f"import gc; {before}; was = gc.isenabled(); import {package}; "
    code += "print(gc.isenabled() == was, gc.get_freeze_count())"
    done = subprocess.run(  # noqa: S603 - our own interpreter
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.split() == ["True", "0"]


@pytest.mark.parametrize("package", SERVERS)
def test_what_a_server_import_made_waits_in_the_oldest_generation(package: str) -> None:
    # Left in the youngest generation, the ~130,000 objects of the import would all be walked by the resumed
    # collector's first pass (about 40 ms, at every start); moved to the oldest one, only a full collection,
    # which the collector starts only when its young survivors outgrow it, would walk them.
    code = (
        f"import gc; import {package}; print(len(gc.get_objects(0)) + len(gc.get_objects(1)), len(gc.get_objects(2)))"
    )
    done = subprocess.run(  # noqa: S603 - our own interpreter
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    young, old = map(int, done.stdout.split())
    assert young < 5_000, f"{young} objects of {package}'s import left to the young generations"
    assert old > 50_000, old


@pytest.mark.parametrize("package", SERVERS)
def test_a_server_and_the_sdk_load_with_the_collector_at_rest(package: str) -> None:
    # Each server's package pauses the collector before anything imports the SDK: no collection runs while
    # it loads (about 100,000 objects; with the collector running, the SDK alone starts about 180). A few may
    # run outside the pause: while Python compiles the package's own __init__ (no bytecode cache yet, as in
    # a fresh clone), and the one the resumed collector may run at once.
    code = (
        "import gc; runs = []; gc.callbacks.append(lambda phase, info: phase == 'start' and runs.append(1)); "
        f"import {package}; import mcp; print(len(runs) < 10, len(runs))"
    )
    done = subprocess.run(  # noqa: S603 - our own interpreter
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.split()[0] == "True", f"{done.stdout.split()[1]} collections while {package} loaded"
