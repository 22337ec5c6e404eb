"""carddav-mcp's console entry as a stdio server for a test, pointed at a test's Radicale or Xandikos.

A helper module of this package's tests, named with the package's ``carddav_`` prefix so that it cannot
collide with another package's helper when several packages' tests run in one process
(``tests/test_test_modules.py``).
"""

from __future__ import annotations

import os
import sys

from carddav_conftest import Dav
from mcp.client.stdio import StdioServerParameters


def params(dav: Dav, **env: str) -> StdioServerParameters:
    """``python -m carddav_mcp`` configured for ``dav``'s address books; ``env`` adds or overrides variables."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("CARDDAV_", "ELICITATION"))}
    settings = dav.settings
    base |= {
        "CARDDAV_URL": settings.url or "",
        "CARDDAV_USERNAME": settings.username or "",
        "CARDDAV_PASSWORD": settings.password or "",
        "CARDDAV_ADDRESSBOOKS": ",".join(sorted(settings.addressbooks)),
    }
    return StdioServerParameters(command=sys.executable, args=["-m", "carddav_mcp"], env={**base, **env})
