"""The family's pytest plugin, registered as a ``pytest11`` entry point of approval-core.

Active in every pytest run where approval-core is installed, so a package's
``tests/conftest.py`` holds only its own fixtures. It gives:

* the ``anyio_backend`` fixture (``"asyncio"``), which every family test marked
  ``@pytest.mark.anyio`` needs;
* a user data folder of the run's own (``XDG_DATA_HOME``, a new temporary
  folder removed at the end), so what servers keep there by default (the
  file store of single-use records over stdio, the undo journal and its
  key, an embedded server's data)
  is neither read from nor left in the person's own folder, and two runs on
  one machine never share it;
* the repository's ``testing/`` folder on ``sys.path`` (found from pytest's
  rootdir), where the launchers of the real backends live
  (``dav_servers``: Radicale and Xandikos; ``ntfy_server``: ntfy), so tests
  import them by name.

A module of its own, outside ``approval_core``: pytest imports plugins before
coverage starts, and importing ``approval_core`` this early would hide its
module-level lines from the coverage measurement.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile

import pytest

__all__ = ["anyio_backend", "pytest_load_initial_conftests", "pytest_unconfigure"]

_DATA_HOME: list[str] = []


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    """Give the run its own user data folder, and put ``<rootdir>/testing`` on ``sys.path`` when it exists.

    Both happen before any conftest is imported, so every server a test starts (in this process or as a
    subprocess, which inherits the environment) sees the run's folder.
    """
    if not _DATA_HOME:
        _DATA_HOME.append(tempfile.mkdtemp(prefix="family-tests-data-"))
        os.environ["XDG_DATA_HOME"] = _DATA_HOME[0]
    testing = early_config.rootpath / "testing"
    if testing.is_dir() and str(testing) not in sys.path:
        sys.path.insert(0, str(testing))


@pytest.fixture
def anyio_backend() -> str:
    """The async backend for ``@pytest.mark.anyio`` tests: asyncio, the one the MCP SDK runs on."""
    return "asyncio"


def pytest_unconfigure(config: pytest.Config) -> None:
    """Remove the run's user data folder."""
    while _DATA_HOME:
        shutil.rmtree(_DATA_HOME.pop(), ignore_errors=True)
