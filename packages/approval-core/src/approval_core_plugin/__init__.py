"""The family's pytest plugin, registered as a ``pytest11`` entry point of approval-core.

Active in every pytest run where approval-core is installed, so a package's
``tests/conftest.py`` holds only its own fixtures. It gives:

* the ``anyio_backend`` fixture (``"asyncio"``), which every family test marked
  ``@pytest.mark.anyio`` needs;
* the repository's ``testing/`` folder on ``sys.path`` (found from pytest's
  rootdir), where the launchers of the real backends live
  (``dav_servers``: Radicale and Xandikos; ``ntfy_server``: ntfy), so tests
  import them by name.

A module of its own, outside ``approval_core``: pytest imports plugins before
coverage starts, and importing ``approval_core`` this early would hide its
module-level lines from the coverage measurement.
"""

from __future__ import annotations

import sys

import pytest

__all__ = ["anyio_backend", "pytest_load_initial_conftests"]


@pytest.hookimpl(tryfirst=True)
def pytest_load_initial_conftests(early_config: pytest.Config) -> None:
    """Put ``<rootdir>/testing`` on ``sys.path`` when the folder exists, before any conftest is imported."""
    testing = early_config.rootpath / "testing"
    if testing.is_dir() and str(testing) not in sys.path:
        sys.path.insert(0, str(testing))


@pytest.fixture
def anyio_backend() -> str:
    """The async backend for ``@pytest.mark.anyio`` tests: asyncio, the one the MCP SDK runs on."""
    return "asyncio"
