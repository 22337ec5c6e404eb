"""Several worker processes serving one socket (``MCP_WORKERS`` > 1)."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import uvicorn

__all__ = ["serve_workers"]


def serve_workers(http: uvicorn.Server, count: int) -> None:  # pragma: no cover - forks; not measurable in-process
    """Bind once, fork ``count`` children serving the one socket, forward SIGTERM/SIGINT, exit 1 if a child failed.

    Forked rather than spawned: the children inherit the built server
    (uvicorn's own ``workers=`` needs an import string to rebuild it).
    """
    sock = http.config.bind_socket()
    children: list[int] = []
    for _ in range(count):
        pid = os.fork()
        if pid == 0:
            code = 0
            try:
                http.run(sockets=[sock])
            except BaseException:
                code = 1
            os._exit(code)
        children.append(pid)
    sock.close()

    def stop(_signum: int, _frame: object) -> None:
        for child in children:
            with contextlib.suppress(ProcessLookupError):
                os.kill(child, signal.SIGTERM)

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    failed = False
    for child in children:
        try:
            _, status = os.waitpid(child, 0)
        except ChildProcessError:
            continue
        failed = failed or os.waitstatus_to_exitcode(status) != 0
    if failed:
        sys.exit(1)
