from __future__ import annotations

import sys
from pathlib import Path

# The example server lives beside the tests and is also run as a script over stdio.
sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "testing"))

from data_folder import own_data_folder  # noqa: F401
