"""``python -m approval_core keys ...`` (the key file), ``... pair ...`` (a passkey) and ``... tool-schemas ...``.

A package entry point rather than ``python -m approval_core.records.keys``, because the
package's ``__init__`` imports :mod:`approval_core.records.keys`, and running an
already imported module as ``__main__`` makes Python warn on every run.
"""

from __future__ import annotations

import sys

USAGE = (
    "usage: python -m approval_core keys {new,rotate} FILE [--keep N] | python -m approval_core pair [--help]"
    " | python -m approval_core tool-schemas [--check] [PACKAGE...]"
)

if __name__ == "__main__":  # pragma: no cover - exercised through a subprocess in the tests
    argv = sys.argv[1:]
    if argv[:1] == ["keys"]:
        from approval_core.records.keys import main

        raise SystemExit(main(argv[1:]))
    if argv[:1] == ["pair"]:
        from approval_core.page.pairing import main as pair

        raise SystemExit(pair(argv[1:]))
    if argv[:1] == ["tool-schemas"]:
        from approval_core.serving.tool_schemas import main as tool_schemas

        raise SystemExit(tool_schemas(argv[1:]))
    print(USAGE, file=sys.stderr)
    raise SystemExit(2)
