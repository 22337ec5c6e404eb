"""A data folder of the test session's own, so no test writes into the user's (the undo journal and its key)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True, scope="session")
def own_data_folder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """``XDG_DATA_HOME`` set to a fresh folder for the whole session (servers over stdio inherit it)."""
    patch = pytest.MonkeyPatch()
    patch.setenv("XDG_DATA_HOME", str(tmp_path_factory.mktemp("data")))
    yield
    patch.undo()
