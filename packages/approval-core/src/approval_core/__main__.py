"""``python -m approval_core keys new FILE | keys rotate FILE [--keep N]``: the key-file command.

A package entry point rather than ``python -m approval_core.keys``, because the
package's ``__init__`` imports :mod:`approval_core.keys`, and running an
already imported module as ``__main__`` makes Python warn on every run.
"""

from __future__ import annotations

import sys

from approval_core.keys import main

if __name__ == "__main__":  # pragma: no cover - exercised through a subprocess in the tests
    argv = sys.argv[1:]
    if argv[:1] != ["keys"]:
        print("usage: python -m approval_core keys {new,rotate} FILE [--keep N]", file=sys.stderr)
        raise SystemExit(2)
    raise SystemExit(main(argv[1:]))
