from __future__ import annotations

import sys
from pathlib import Path

# The example server lives beside the tests and is also run as a script over stdio.
sys.path.insert(0, str(Path(__file__).parent))
