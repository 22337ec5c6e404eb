"""What a tool call did: requests at the backend's HTTP level, changes in a folder, the gate's audit events.

Test helpers (re-exported by :mod:`approval_core.testing`), so a family test
can compare what a call did (:func:`http_effects`) with what its server
declares (``guards.EFFECTS``, :func:`effects_problems`), and read what the
gate decided (:class:`AuditRecorder`).
"""

from __future__ import annotations

import hashlib
import http.client
import http.server
import json
import logging
import os
import threading
import urllib.parse
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import httpx2

from approval_core.policy import Effect
from approval_core.records.audit import AUDIT_LOGGER

__all__ = [
    "SAFE_METHODS",
    "AuditRecorder",
    "Change",
    "FolderRecorder",
    "HttpRecorder",
    "Recorder",
    "effects_problems",
    "http_effects",
]

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "PROPFIND", "REPORT", "SEARCH"})
"""HTTP methods that only read (RFC 9110 §9.2.1 safe methods, and WebDAV's PROPFIND / REPORT)."""


@dataclass(frozen=True)
class Change:
    """One change a tool call was seen to make (or, for HTTP, to ask for) at its backend.

    Attributes:
        what: For HTTP: ``"<METHOD> <path>"`` and the answer's status; for a folder: the file's relative path.
        effects: The effects it may be: any one of them explains it (an unconditional HTTP ``PUT`` may create
            or replace; a ``POST`` may do anything a write can; a ``MOVE`` creates and removes); one effect when
            the recorder can tell.
        done: Whether the backend accepted it (HTTP 2xx; always true for a file seen changed).
    """

    what: str
    effects: frozenset[Effect]
    done: bool = True


def http_effects(method: str, headers: Mapping[str, str]) -> frozenset[Effect]:
    """The effects an HTTP request may have, by its method and preconditions.

    ``PUT`` with ``If-None-Match: *`` creates, with ``If-Match`` replaces (RFC 9110 §13.1); ``DELETE`` removes;
    ``MOVE`` creates at the destination and removes the source, ``COPY`` and ``MKCOL`` / ``MKCALENDAR`` create
    (RFC 4918 §9, RFC 4791 §5.3.1); an unconditional ``PUT`` creates or replaces, ``PATCH`` / ``PROPPATCH``
    replace, and a ``POST`` may be any write, a send included (what it does is the resource's business).
    Safe methods (:data:`SAFE_METHODS`) read.
    """
    method = method.upper()
    lowered = {key.lower(): value for key, value in headers.items()}
    if method in SAFE_METHODS:
        return frozenset({Effect.READS})
    if method == "PUT" and lowered.get("if-none-match", "").strip() == "*":
        return frozenset({Effect.CREATES})
    if method == "PUT" and "if-match" in lowered:
        return frozenset({Effect.REPLACES})
    if method == "PUT":
        return frozenset({Effect.CREATES, Effect.REPLACES, Effect.SENDS})
    if method == "DELETE":
        return frozenset({Effect.REMOVES})
    if method == "MOVE":
        return frozenset({Effect.CREATES, Effect.REMOVES})
    if method in {"MKCOL", "MKCALENDAR", "COPY"}:
        return frozenset({Effect.CREATES})
    if method in {"PATCH", "PROPPATCH"}:
        return frozenset({Effect.REPLACES})
    return frozenset({Effect.CREATES, Effect.REPLACES, Effect.REMOVES, Effect.SENDS})


class _HopByHop:
    names = frozenset({"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade"})


class HttpRecorder:
    """A recording reverse proxy on 127.0.0.1 in front of a real HTTP backend (not a double: it forwards all).

    Point the server under test at :attr:`url` instead of the backend's URL; every request is forwarded
    unchanged (the ``Host`` header included, so the backend's links lead back through the proxy) and its
    method, path, preconditions and answer's status are kept. :meth:`mark` and :meth:`changes_since` give
    what one tool call asked the backend to change::

        with HttpRecorder(radicale.url) as recorder:
            server = build_server(settings, CalDAVSettings(recorder.url, "willi", "secret"))
            mark = recorder.mark()
            ...  # one tool call
            changes = recorder.changes_since(mark)  # [] for a call that only read

    A server that takes an httpx2 transport can be watched without a proxy: give it
    ``recorder.transport(inner)`` (no ``upstream`` needed then).

    Args:
        upstream: The backend's base URL (``http://127.0.0.1:<port>``; a path in it is ignored), or None to
            record only through :meth:`transport`.

    Raises:
        ValueError: ``upstream`` is not an ``http://`` URL with a host.
    """

    def __init__(self, upstream: str | None = None) -> None:
        self._upstream: tuple[str, int] | None = None
        if upstream is not None:
            parsed = urllib.parse.urlsplit(upstream)
            if parsed.scheme != "http" or parsed.hostname is None:
                raise ValueError(f"upstream: an http:// URL with a host is needed, not {upstream!r}")
            self._upstream = (parsed.hostname, parsed.port or 80)
        self.seen: list[tuple[str, str, frozenset[Effect], int]] = []
        self._lock = threading.Lock()
        self._httpd: http.server.ThreadingHTTPServer | None = None
        self.url = ""

    def note(self, method: str, path: str, headers: Mapping[str, str], status: int) -> None:
        """Record one request (the proxy and :meth:`transport` call this)."""
        with self._lock:
            self.seen.append((method, path, http_effects(method, headers), status))

    def transport(self, inner: httpx2.AsyncBaseTransport) -> httpx2.AsyncBaseTransport:
        """``inner`` wrapped so that every request through it is recorded here (then forwarded unchanged)."""
        recorder = self

        class Recording(httpx2.AsyncBaseTransport):
            async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
                response = await inner.handle_async_request(request)
                recorder.note(request.method, request.url.path, dict(request.headers.items()), response.status_code)
                return response

            async def aclose(self) -> None:
                await inner.aclose()

        return Recording()

    def __enter__(self) -> HttpRecorder:
        recorder = self
        if self._upstream is None:
            return self
        upstream_address = self._upstream

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet: nothing goes to stderr for each request."""

            def forward(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                headers = {k: v for k, v in self.headers.items() if k.lower() not in _HopByHop.names}
                upstream = http.client.HTTPConnection(*upstream_address, timeout=30)
                try:
                    upstream.request(self.command, self.path, body=body, headers=headers)
                    answer = upstream.getresponse()
                    content = answer.read()
                    status, reason, answer_headers = answer.status, answer.reason, answer.getheaders()
                finally:
                    upstream.close()
                recorder.note(self.command, urllib.parse.urlsplit(self.path).path, dict(self.headers.items()), status)
                self.send_response(status, reason)
                for key, value in answer_headers:
                    if key.lower() not in _HopByHop.names and key.lower() != "content-length":
                        self.send_header(key, value)
                self.send_header("Content-Length", str(len(content)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(content)

            def __getattr__(self, name: str) -> Any:
                if name.startswith("do_"):
                    return self.forward
                raise AttributeError(name)

        self._httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._httpd.server_address[1]}"
        threading.Thread(target=self._httpd.serve_forever, name="http-recorder", daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._httpd is None:
            return
        self._httpd.shutdown()
        self._httpd.server_close()

    def mark(self) -> int:
        """A position in the record: pass it to :meth:`changes_since`."""
        with self._lock:
            return len(self.seen)

    def changes_since(self, mark: int) -> list[Change]:
        """Every request since ``mark`` that was not a safe method, as a :class:`Change`."""
        with self._lock:
            seen = self.seen[mark:]
        return [
            Change(f"{method} {path} -> {status}", effects, 200 <= status < 300)
            for method, path, effects, status in seen
            if effects != frozenset({Effect.READS})
        ]

    def listed_problems(self, listed: Sequence[tuple[str, str]], changes: Sequence[Change]) -> list[str]:
        """What differs between the changing requests a dialog listed and the ones this recorder then saw.

        Args:
            listed: ``(METHOD, absolute URL)`` of each request line, in the dialog's order.
            changes: What :meth:`changes_since` gave for the call.

        Returns:
            One sentence when ``METHOD path`` of the two differ, in order; empty when they agree.
        """
        shown = [f"{method.upper()} {urllib.parse.urlsplit(url).path}" for method, url in listed]
        sent = [change.what.split(" -> ")[0] for change in changes]
        return [] if shown == sent else [f"the dialog listed {shown}, the call sent {sent}"]


class FolderRecorder:
    """Watches a folder a local backend keeps its data in: each file created, replaced or removed.

    :meth:`mark` takes a snapshot (each file's SHA-256); :meth:`changes_since` compares the folder with it. A
    file written to a temporary name and renamed over the old one counts once, as replaced.

    Args:
        root: The folder (every file under it, at any depth, is watched).
    """

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)

    def __enter__(self) -> FolderRecorder:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def mark(self) -> dict[str, str]:
        """A snapshot: relative path -> SHA-256 of the content."""
        return {
            str(path.relative_to(self.root)): hashlib.sha256(path.read_bytes()).hexdigest()
            for path in sorted(self.root.rglob("*"))
            if path.is_file()
        }

    def changes_since(self, mark: dict[str, str]) -> list[Change]:
        """The files created, replaced or removed since ``mark`` (a :meth:`mark` snapshot)."""
        now = self.mark()
        changes = [Change(name, frozenset({Effect.CREATES})) for name in sorted(now.keys() - mark.keys())]
        changes += [Change(name, frozenset({Effect.REMOVES})) for name in sorted(mark.keys() - now.keys())]
        changes += [
            Change(name, frozenset({Effect.REPLACES}))
            for name in sorted(now.keys() & mark.keys())
            if now[name] != mark[name]
        ]
        return changes

    def listed_problems(self, listed: Sequence[tuple[str, str]], changes: Sequence[Change]) -> list[str]:
        """What differs between the changing requests a dialog listed and the files this recorder saw change.

        A local backend lists each change as a request on the file's ``file://`` URL (``DELETE
        file:///data/a.txt``). Each listed URL must be a file under :attr:`root`, and the files listed must
        be the files changed (a snapshot cannot tell the order of changes, or a file changed twice, so
        neither is compared), each change one its method may make (:func:`http_effects`: a ``DELETE`` removes, a
        ``PUT`` creates or replaces).

        Args:
            listed: ``(METHOD, absolute URL)`` of each request line, in the dialog's order.
            changes: What :meth:`changes_since` gave for the call.

        Returns:
            One sentence per difference; empty when they agree.
        """
        problems: list[str] = []
        expected: dict[str, frozenset[Effect]] = {}
        root = self.root.resolve()
        for method, url in listed:
            parts = urllib.parse.urlsplit(url)
            path = Path(urllib.request.url2pathname(parts.path)).resolve() if parts.scheme == "file" else None
            if path is None or not path.is_relative_to(root):
                problems.append(f"the dialog listed {method} {url}, which is no file under {self.root}")
                continue
            relative = str(path.relative_to(root))
            expected[relative] = expected.get(relative, frozenset()) | http_effects(method, {})
        seen = {change.what: change.effects for change in changes}
        if sorted(expected) != sorted(seen):
            problems.append(f"the dialog listed {sorted(expected)}, the call changed {sorted(seen)}")
        problems += [
            f"{name}: {'/'.join(sorted(seen[name]))}, which no request the dialog listed for it makes"
            for name in sorted(expected.keys() & seen.keys())
            if not seen[name] & expected[name]
        ]
        return problems


Recorder = HttpRecorder | FolderRecorder


def effects_problems(declared: frozenset[Effect], changes: Sequence[Change]) -> list[str]:
    """What is wrong with ``changes`` (seen over one or more calls of one tool) for a tool declaring ``declared``.

    A tool that declares only :attr:`Effect.READS` may change nothing; any other tool may make only changes
    one of its declared effects explains, and must be seen making at least one (a declared change that never
    happens is a declaration to correct, or a scenario that does not exercise the tool). What is sent to
    others is out of a backend's view: :attr:`Effect.SENDS` explains a change but is never required.

    Returns:
        One sentence per problem; empty when the declaration and the behaviour agree.
    """
    changing = declared - {Effect.READS}
    if not changing:
        return [f"declared read-only, but asked for {change.what}" for change in changes]
    problems = [
        f"{change.what} may only be {'/'.join(sorted(change.effects))}, and none of these is declared "
        f"({', '.join(sorted(declared))})"
        for change in changes
        if not change.effects & declared
    ]
    if not [change for change in changes if change.done]:
        problems.append(f"declares {', '.join(sorted(changing))}, but changed nothing at the backend")
    return problems


class AuditRecorder(logging.Handler):
    """Collects the audit events of the gates in this process (logger ``approval_core.records.audit``) while entered.

    ``events`` holds each line's JSON as a dict (``event``, ``server``, ``tool``, ``path``, ``fp``,
    ``reason``), oldest first; :meth:`of` picks one tool's event names, :meth:`wait` waits for one.
    """

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.events: list[dict[str, str]] = []
        self._news: anyio.Event | None = None

    def emit(self, record: logging.LogRecord) -> None:
        """Keep one audit line (called by :mod:`logging`, in the thread that logged it)."""
        message = record.getMessage()
        if message.startswith("approval "):
            self.events.append(json.loads(message.removeprefix("approval ")))
            if self._news is not None:
                self._news.set()

    def of(self, tool: str, since: int = 0) -> list[str]:
        """The event names logged for ``tool`` from index ``since`` of :attr:`events` on."""
        return [e["event"] for e in self.events[since:] if e["tool"] == tool]

    async def wait(self, tool: str, event: str) -> None:
        """Return once ``event`` was logged for ``tool`` by a gate on this event loop (bound it with a deadline)."""
        while event not in self.of(tool):
            self._news = anyio.Event()
            await self._news.wait()

    def __enter__(self) -> AuditRecorder:
        logging.getLogger(AUDIT_LOGGER).addHandler(self)
        return self

    def __exit__(self, *exc: object) -> None:
        logging.getLogger(AUDIT_LOGGER).removeHandler(self)
