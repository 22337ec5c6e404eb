"""webdav-core's tests: the repository's ``testing/`` folder (the real servers' launchers) on ``sys.path``.

approval-core's pytest plugin does the same in a workspace run; in a virtualenv holding only
webdav-core (``nox -s tests``) it is not installed.
"""

import sys
from pathlib import Path

TESTING = Path(__file__).resolve().parents[3] / "testing"
if TESTING.is_dir() and str(TESTING) not in sys.path:
    sys.path.insert(0, str(TESTING))
