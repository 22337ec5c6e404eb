"""Declared effects (approval_core.Effect) and the recorders that watch what a call does at its backend."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from approval_core import Effect, Guard, GuardTable, GuardTableError, Mismatch, effects
from approval_core.testing import Change, FolderRecorder, HttpRecorder, effects_problems, http_effects


def test_effects_are_a_frozen_set_of_known_effects() -> None:
    assert effects("reads", Effect.SENDS) == frozenset({Effect.READS, Effect.SENDS})


@pytest.mark.parametrize(("declared", "match"), [((), "at least one effect"), (("overwrites",), "the effects are")])
def test_an_empty_or_unknown_declaration_is_refused(declared: tuple[str, ...], match: str) -> None:
    with pytest.raises(GuardTableError, match=match):
        effects(*declared)


def test_a_tool_may_have_two_mismatches_of_different_kinds_but_not_the_same_twice() -> None:
    table = GuardTable(
        {"t": Guard.always()},
        [Mismatch("t", "guarded-not-destructive", "r"), Mismatch("t", "changes-not-destructive", "s")],
    )
    assert table.mismatch("t", "changes-not-destructive") == Mismatch("t", "changes-not-destructive", "s")
    assert table.mismatch("t", "destructive-not-guarded") is None
    with pytest.raises(GuardTableError, match="twice"):
        GuardTable({"t": Guard.always()}, [Mismatch("t", "changes-not-destructive", "r")] * 2)


@pytest.mark.parametrize(
    ("method", "headers", "expected"),
    [
        ("PROPFIND", {}, {Effect.READS}),
        ("get", {}, {Effect.READS}),
        ("PUT", {"If-None-Match": "*"}, {Effect.CREATES}),
        ("PUT", {"if-match": '"1"'}, {Effect.REPLACES}),
        ("PUT", {}, {Effect.CREATES, Effect.REPLACES, Effect.SENDS}),
        ("DELETE", {}, {Effect.REMOVES}),
        ("MKCALENDAR", {}, {Effect.CREATES}),
        ("PROPPATCH", {}, {Effect.REPLACES}),
        ("MOVE", {}, {Effect.CREATES, Effect.REMOVES}),
        ("POST", {}, {Effect.CREATES, Effect.REPLACES, Effect.REMOVES, Effect.SENDS}),
    ],
)
def test_http_requests_are_read_by_method_and_precondition(method: str, headers: dict[str, str], expected) -> None:
    assert http_effects(method, headers) == expected


def test_a_folder_recorder_sees_files_created_replaced_and_removed(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("a")
    (tmp_path / "b.md").write_text("b")
    with FolderRecorder(tmp_path) as recorder:
        mark = recorder.mark()
        assert recorder.changes_since(mark) == []
        (tmp_path / "a.md").write_text("a, changed")
        (tmp_path / "b.md").unlink()
        (tmp_path / "sub").mkdir()
        (tmp_path / "sub" / "c.md").write_text("c")
        changes = recorder.changes_since(mark)
    assert changes == [
        Change("sub/c.md", frozenset({Effect.CREATES})),
        Change("b.md", frozenset({Effect.REMOVES})),
        Change("a.md", frozenset({Effect.REPLACES})),
    ]


def test_a_folder_recorder_compares_listed_file_urls_with_the_files_that_changed(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("a")
    (tmp_path / "b.txt").write_text("b")
    a_url, b_url = (tmp_path / "a.txt").as_uri(), (tmp_path / "b.txt").as_uri()
    with FolderRecorder(tmp_path) as recorder:
        mark = recorder.mark()
        (tmp_path / "a.txt").unlink()
        (tmp_path / "b.txt").write_text("b, replaced")
        changes = recorder.changes_since(mark)
        assert recorder.listed_problems([("PUT", b_url), ("DELETE", a_url)], changes) == [], "order is not compared"
        assert recorder.listed_problems([("DELETE", a_url)], changes) == [
            "the dialog listed ['a.txt'], the call changed ['a.txt', 'b.txt']"
        ]
        assert recorder.listed_problems([("DELETE", a_url), ("DELETE", b_url)], changes) == [
            "b.txt: replaces, which no request the dialog listed for it makes"
        ]
        outside = (tmp_path.parent / "elsewhere.txt").as_uri()
        assert recorder.listed_problems([("DELETE", outside)], []) == [
            f"the dialog listed DELETE {outside}, which is no file under {tmp_path}"
        ]
        assert recorder.listed_problems([("DELETE", "https://dav.example.org/a.txt")], [])[0].endswith(
            f"which is no file under {tmp_path}"
        )


def test_an_http_recorder_compares_method_and_path_in_order() -> None:
    recorder = HttpRecorder()
    changes = [Change("DELETE /a -> 204", frozenset({Effect.REMOVES})), Change("PUT /b -> 201", frozenset())]
    listed = [("DELETE", "http://127.0.0.1:1/a"), ("PUT", "http://127.0.0.1:1/b")]
    assert recorder.listed_problems(listed, changes) == []
    assert recorder.listed_problems(listed[::-1], changes) == [
        "the dialog listed ['PUT /b', 'DELETE /a'], the call sent ['DELETE /a', 'PUT /b']"
    ]


class _Upstream(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:
        pass

    def answer(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        content = f"{self.command} {self.path} {body.decode()} host={self.headers['Host']}".encode()
        self.send_response(404 if self.path == "/missing" else 200)
        self.send_header("Content-Length", str(len(content)))
        self.send_header("X-Seen", "yes")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(content)

    do_GET = do_PUT = do_DELETE = do_PROPFIND = do_HEAD = answer


@pytest.fixture
def upstream() -> Iterator[str]:
    """A plain HTTP server on 127.0.0.1 that echoes each request (the backend behind the proxy)."""
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Upstream)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_the_http_recorder_forwards_everything_and_keeps_what_changes(upstream: str) -> None:
    with HttpRecorder(upstream) as recorder, httpx2.Client(base_url=recorder.url) as http:
        mark = recorder.mark()
        read = http.request("PROPFIND", "/cal/?depth=1")
        assert http.head("/cal/").status_code == 200
        written = http.put("/cal/a.ics", content=b"BEGIN", headers={"If-Match": '"1"'})
        missing = http.delete("/missing")
        changes = recorder.changes_since(mark)
    assert read.text == f"PROPFIND /cal/?depth=1  host={recorder.url.removeprefix('http://')}"
    assert written.text.startswith("PUT /cal/a.ics BEGIN")
    assert written.headers["X-Seen"] == "yes"
    assert missing.status_code == 404
    assert changes == [
        Change("PUT /cal/a.ics -> 200", frozenset({Effect.REPLACES})),
        Change("DELETE /missing -> 404", frozenset({Effect.REMOVES}), done=False),
    ]


def test_the_http_recorder_refuses_an_upstream_it_cannot_reach() -> None:
    with pytest.raises(ValueError, match="upstream"):
        HttpRecorder("https://dav.example.org/")


@pytest.mark.anyio
async def test_the_http_recorder_watches_an_httpx2_transport() -> None:
    inner = httpx2.MockTransport(lambda request: httpx2.Response(201 if request.method == "POST" else 200))
    with HttpRecorder() as recorder:
        async with httpx2.AsyncClient(transport=recorder.transport(inner), base_url="http://backend.invalid") as http:
            await http.get("/topic/json")
            await http.post("/", content=b"{}")
        assert recorder.changes_since(0) == [Change("POST / -> 201", http_effects("POST", {}))]


def test_changes_are_judged_against_what_is_declared() -> None:
    replaced = Change("PUT /a -> 204", frozenset({Effect.REPLACES}))
    refused = Change("PUT /a -> 412", frozenset({Effect.REPLACES}), done=False)
    assert effects_problems(frozenset({Effect.READS}), []) == []
    read_only = frozenset({Effect.READS})
    assert effects_problems(read_only, [replaced]) == ["declared read-only, but asked for PUT /a -> 204"]
    assert effects_problems(frozenset({Effect.REPLACES, Effect.SENDS}), [replaced]) == []
    assert effects_problems(frozenset({Effect.CREATES}), [replaced]) == [
        "PUT /a -> 204 may only be replaces, and none of these is declared (creates)"
    ]
    assert effects_problems(frozenset({Effect.REPLACES}), [refused]) == [
        "declares replaces, but changed nothing at the backend"
    ]
