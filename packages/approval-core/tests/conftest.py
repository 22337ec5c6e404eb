from __future__ import annotations

import sys
from pathlib import Path

import pytest

# The example server lives beside the tests and is also run as a script over stdio.
sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"
