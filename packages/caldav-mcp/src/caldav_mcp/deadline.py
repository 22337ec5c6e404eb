"""One deadline for a whole request in this thread: every socket operation waits at most what is left of it.

httpx's timeouts bound each read; a server that drips its answer a byte at a
time would never trip them. :func:`deadline_of` sets a deadline for the
thread; its socket backend makes every connect, read and write wait at
most what is left of it, so a slow server cannot reset it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import httpcore2
import httpx2 as httpx

__all__ = ["deadline_at", "deadline_of", "deadline_transport"]


_deadline = threading.local()


@contextmanager
def deadline_of(seconds: float) -> Iterator[None]:
    """Let every socket operation of this thread, until the block ends, finish within ``seconds`` from now."""
    outer = getattr(_deadline, "at", None)
    _deadline.at = time.monotonic() + seconds if outer is None else min(outer, time.monotonic() + seconds)
    try:
        yield
    finally:
        _deadline.at = outer


def _left(timeout: float | None, error: type[Exception]) -> float | None:
    """``timeout`` cut to what is left of this thread's deadline; ``error`` when nothing is left."""
    at: float | None = getattr(_deadline, "at", None)
    if at is None:
        return timeout
    left = at - time.monotonic()
    if left <= 0:
        raise error("the deadline of this request has passed")
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore2.NetworkStream):
    """A socket stream whose every read and write waits at most what is left of the request's deadline."""

    def __init__(self, inner: httpcore2.NetworkStream) -> None:
        self._inner = inner

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _left(timeout, httpcore2.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _left(timeout, httpcore2.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(self, ssl_context: Any, server_hostname: str | None = None, timeout: float | None = None) -> Any:
        return _DeadlineStream(
            self._inner.start_tls(ssl_context, server_hostname, _left(timeout, httpcore2.ConnectTimeout))
        )

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _DeadlineBackend(httpcore2.NetworkBackend):
    """httpcore's socket backend, with connects and streams bounded by the request's deadline."""

    def __init__(self) -> None:
        self._inner = httpcore2.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.NetworkStream:
        stream = self._inner.connect_tcp(
            host, port, _left(timeout, httpcore2.ConnectTimeout), local_address, socket_options
        )
        return _DeadlineStream(stream)

    def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Iterable[Any] | None = None
    ) -> httpcore2.NetworkStream:  # pragma: no cover - never configured
        raise httpcore2.ConnectError("caldav-mcp connects over TCP only")

    def sleep(self, seconds: float) -> None:  # pragma: no cover - retries are off
        time.sleep(seconds)


def deadline_transport() -> httpx.HTTPTransport:
    """Httpx's own transport over :class:`_DeadlineBackend` (its connection pool, its exception mapping)."""
    transport = httpx.HTTPTransport()
    transport._pool = httpcore2.ConnectionPool(
        ssl_context=httpx.create_ssl_context(),
        max_connections=100,
        max_keepalive_connections=20,
        keepalive_expiry=5.0,
        network_backend=_DeadlineBackend(),
    )
    return transport


def deadline_at() -> float | None:
    """The monotonic time this thread's current request must end by, or None outside :func:`deadline_of`."""
    return getattr(_deadline, "at", None)
