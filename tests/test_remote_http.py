"""The family over Streamable HTTP: one caldav-mcp process per authentication mode, against the test Radicale.

* A client with a good bearer token (a static token, or a JWT from the issuer
  double in ``testing/token_issuer.py``) lists the tools, reads, and answers a
  guarded call's dialog (decline: nothing changes; accept: the change happens)
  on both protocol revisions.
* Every refused request (no token, a wrong one, another audience, expired, not
  yet valid, another issuer, a forged signature, ``alg: none``, HMAC keyed
  with the public key, a missing scope, a foreign Origin, a bad Host) gets its
  401/403/421 and runs no tool: the same request with a good token creates an
  event, and after each refused one the calendar holds exactly what it held.
* The protected-resource metadata (RFC 9728) names the resource and the issuer.
* A start that would listen beyond loopback without authentication is refused
  by every server.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import caldav
import httpx2
import pytest
from dav_servers import DavServer
from mcp_http import HttpServer, bearer_transport, served_over_http
from processes import free_port
from token_issuer import IssuerDouble, new_key, token_issuer

from approval_core import ApprovalSettings
from approval_core.testing import REVISIONS, DialogLog, accept, approval_of, connect, decline
from servers import SERVERS, embedded_servers

pytestmark = pytest.mark.anyio

CALENDAR = "/willi/remote/"
SCOPE = "calendar"


@pytest.fixture(scope="module")
def issuer() -> Iterator[IssuerDouble]:
    with token_issuer() as running:
        yield running


@pytest.fixture(scope="module")
def calendar(dav: DavServer) -> str:
    client = caldav.DAVClient(url=dav.url, username="willi", password="secret")
    client.principal().make_calendar(name="Remote", cal_id="remote")
    return CALENDAR


def _backend(dav: DavServer) -> dict[str, str]:
    return {"CALDAV_URL": dav.url, "CALDAV_USERNAME": "willi", "CALDAV_PASSWORD": "secret"}


@pytest.fixture(scope="module")
def static_server(dav: DavServer, calendar: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    work = tmp_path_factory.mktemp("static")
    token = "s3cret-" + "x" * 40
    token_file = work / "token"
    token_file.write_text(token + "\n")
    token_file.chmod(0o600)
    with served_over_http("caldav-mcp", {**_backend(dav), "MCP_AUTH_TOKEN_FILE": str(token_file)}, work) as server:
        yield server.url, token


@pytest.fixture(scope="module")
def jwt_server(
    dav: DavServer, calendar: str, issuer: IssuerDouble, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[HttpServer]:
    env = {
        **_backend(dav),
        "MCP_AUTH_ISSUER": issuer.issuer,
        "MCP_AUTH_JWKS_URL": issuer.jwks_url,
        "MCP_AUTH_REQUIRED_SCOPES": SCOPE,
    }
    with served_over_http("caldav-mcp", env, tmp_path_factory.mktemp("jwt")) as server:
        yield server


@pytest.fixture(params=["static-token", "jwt"])
def served(request: pytest.FixtureRequest) -> tuple[str, str]:
    """(endpoint, good bearer token) of one of the two server processes."""
    if request.param == "static-token":
        return request.getfixturevalue("static_server")
    server: HttpServer = request.getfixturevalue("jwt_server")
    issuer: IssuerDouble = request.getfixturevalue("issuer")
    return server.url, issuer.token(server.url, scope=f"openid {SCOPE}")


def _event(uid: str) -> str:
    return (
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//tests//EN\r\nBEGIN:VEVENT\r\n"
        f"UID:{uid}\r\nDTSTAMP:20261101T000000Z\r\nDTSTART:20261203T090000Z\r\nDTEND:20261203T100000Z\r\n"
        "SUMMARY:Remote review\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
    )


def _dav(dav: DavServer, method: str, path: str, **kwargs: Any) -> httpx2.Response:
    return httpx2.request(method, dav.url.rstrip("/") + path, auth=("willi", "secret"), timeout=30, **kwargs)


def _hrefs(dav: DavServer) -> set[str]:
    response = _dav(dav, "PROPFIND", CALENDAR, headers={"Depth": "1"})
    assert response.status_code == 207, response.status_code
    return {h for h in re.findall(r"<[^>]*href>([^<]+)</", response.text) if h.rstrip("/") != CALENDAR.rstrip("/")}


@pytest.mark.parametrize("revision", REVISIONS)
async def test_a_client_with_a_good_token_lists_reads_and_answers_the_dialog(
    served: tuple[str, str], dav: DavServer, revision: str
) -> None:
    url, token = served
    uid = f"remote-{revision}-{token[-6:]}@example.org"
    assert _dav(dav, "PUT", f"{CALENDAR}{uid}.ics", content=_event(uid)).status_code == 201
    delete = {"calendar": CALENDAR, "id": uid}

    declined = DialogLog(decline)
    async with connect(bearer_transport(url, token), revision=revision, answer=declined) as client:
        assert client.protocol_version == revision
        tools = {tool.name for tool in (await client.list_tools()).tools}
        assert {"list_events", "delete_event"} <= tools
        listed = await client.call_tool(
            "list_events", {"calendar": CALENDAR, "start": "2026-12-01", "end": "2026-12-31"}
        )
        assert uid in {e["id"] for e in listed.structured_content["events"]}
        refused = await client.call_tool("delete_event", delete)
    assert approval_of(refused)["outcome"] == "declined"
    assert len(declined.messages) == 1
    assert _dav(dav, "GET", f"{CALENDAR}{uid}.ics").status_code == 200

    accepted = DialogLog(accept)
    async with connect(bearer_transport(url, token), revision=revision, answer=accepted) as client:
        done = await client.call_tool("delete_event", delete)
    assert not done.is_error, done.content
    assert len(accepted.messages) == 1
    assert _dav(dav, "GET", f"{CALENDAR}{uid}.ics").status_code == 404


def _create_request(uid: str) -> tuple[dict[str, str], bytes]:
    """A self-contained 2026-07-28 ``tools/call`` of ``create_event`` (no session needed), as raw HTTP."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "create_event",
            "arguments": {
                "calendar": CALENDAR,
                "summary": "Should not exist",
                "start": "2026-12-04T09:00:00Z",
                "uid": uid,
            },
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": "create_event",
    }
    return headers, json.dumps(body).encode()


def _bad_tokens(issuer: IssuerDouble, url: str) -> dict[str, tuple[str | None, int]]:
    """Case → (Authorization header value, status expected)."""
    other_key = new_key()
    return {
        "no token": (None, 401),
        "not a bearer": ("Basic d2lsbGk6c2VjcmV0", 401),
        "wrong token": ("Bearer not-a-token", 401),
        "other audience": (f"Bearer {issuer.token('https://other.example.org/mcp', scope=SCOPE)}", 401),
        "audience of the host only": (f"Bearer {issuer.token(url.removesuffix('/mcp'), scope=SCOPE)}", 401),
        "no audience": (f"Bearer {issuer.token(None, scope=SCOPE)}", 401),
        "expired": (f"Bearer {issuer.token(url, scope=SCOPE, expires_in=-120)}", 401),
        "no expiry": (f"Bearer {issuer.token(url, scope=SCOPE, expires_in=None)}", 401),
        "not yet valid": (f"Bearer {issuer.token(url, scope=SCOPE, not_before_in=600)}", 401),
        "other issuer": (f"Bearer {issuer.token(url, scope=SCOPE, issuer='https://evil.example.org')}", 401),
        "forged signature": (f"Bearer {issuer.token(url, scope=SCOPE, signing_key=other_key)}", 401),
        "alg none": (f"Bearer {issuer.unsigned_token(url)}", 401),
        "HMAC keyed with the public key": (f"Bearer {issuer.hmac_token_with_public_key(url)}", 401),
        "missing scope": (f"Bearer {issuer.token(url, scope='openid')}", 403),
    }


def _refused(url: str, authorization: str | None, uid: str, **extra: str) -> httpx2.Response:
    headers, body = _create_request(uid)
    if authorization is not None:
        headers["Authorization"] = authorization
    return httpx2.post(url, headers={**headers, **extra}, content=body, timeout=30)


async def test_refused_requests_get_their_status_and_run_no_tool(
    jwt_server: HttpServer, issuer: IssuerDouble, dav: DavServer
) -> None:
    url = jwt_server.url
    metadata = f"{url.removesuffix('/mcp')}/.well-known/oauth-protected-resource/mcp"
    good = f"Bearer {issuer.token(url, scope=SCOPE)}"
    before = _hrefs(dav)
    cases = {name: (auth, status, {}) for name, (auth, status) in _bad_tokens(issuer, url).items()}
    cases["foreign Origin"] = (good, 403, {"Origin": "https://evil.example.org"})
    cases["bad Host"] = (good, 421, {"Host": "evil.example.org"})
    seen: dict[str, tuple[int, str]] = {}
    for n, (name, (authorization, _, extra)) in enumerate(cases.items()):
        response = _refused(url, authorization, f"refused-{n}@example.org", **extra)
        seen[name] = (response.status_code, response.headers.get("www-authenticate", ""))
    assert {name: status for name, (status, _) in seen.items()} == {name: c[1] for name, c in cases.items()}
    for name, (status, challenge) in seen.items():
        if status == 401:
            assert challenge.startswith("Bearer "), name
            assert 'error="invalid_token"' in challenge, name
            assert f'resource_metadata="{metadata}"' in challenge, name
            assert challenge.endswith(f'scope="{SCOPE}"'), name
    assert 'error="insufficient_scope"' in seen["missing scope"][1]
    assert seen["missing scope"][1].endswith(f'scope="{SCOPE}"')
    assert _hrefs(dav) == before

    control = _refused(url, good, "control-jwt@example.org")
    assert control.status_code == 200, control.text
    assert control.json()["result"].get("isError") is not True
    assert len(_hrefs(dav) - before) == 1


async def test_the_static_token_server_refuses_other_tokens_and_runs_no_tool(
    static_server: tuple[str, str], dav: DavServer
) -> None:
    url, token = static_server
    before = _hrefs(dav)
    statuses = [
        _refused(url, authorization, f"static-refused-{n}@example.org").status_code
        for n, authorization in enumerate([None, "Bearer " + token[:-1], "Bearer " + token + "x", token])
    ]
    assert statuses == [401, 401, 401, 401]
    assert _hrefs(dav) == before
    assert _refused(url, f"Bearer {token}", "control-static@example.org").status_code == 200
    assert len(_hrefs(dav) - before) == 1


async def test_the_protected_resource_metadata_names_the_resource_and_the_issuer(
    jwt_server: HttpServer, issuer: IssuerDouble, static_server: tuple[str, str]
) -> None:
    for url, servers, scopes in ((jwt_server.url, [issuer.issuer], [SCOPE]), (static_server[0], None, None)):
        response = httpx2.get(f"{url.removesuffix('/mcp')}/.well-known/oauth-protected-resource/mcp", timeout=30)
        assert response.status_code == 200
        document = response.json()
        assert document["resource"] == url
        assert document.get("authorization_servers") == servers
        assert document.get("scopes_supported") == scopes
        assert document["bearer_methods_supported"] == ["header"]
        if servers is None:  # a static token: the document says plainly that there is no authorization server
            assert "there is no authorization server" in document["resource_name"]
        else:
            assert "resource_name" not in document


async def test_a_2026_request_without_a_session_is_answered_alone_by_the_stateful_app(
    static_server: tuple[str, str],
) -> None:
    """The app keeps sessions for 2025-11-25, yet a 2026-07-28 request needs none, opens none, ignores one.

    Its ``MCP-Protocol-Version`` header routes it (the SDK's session manager reads
    it before the session table): without the header the same body is a
    2025-11-25 request outside a session, 400.
    """
    url, token = static_server
    headers, _ = _create_request("unused@example.org")
    headers["Mcp-Method"] = "tools/list"
    del headers["Mcp-Name"]
    body = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "tools/list",
        "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            }
        },
    }
    headers["Authorization"] = f"Bearer {token}"
    response = httpx2.post(url, headers=headers, json=body, timeout=30)
    assert response.status_code == 200
    assert "mcp-session-id" not in response.headers
    assert any(tool["name"] == "delete_event" for tool in response.json()["result"]["tools"])
    foreign_session = httpx2.post(url, headers={**headers, "Mcp-Session-Id": "f" * 32}, json=body, timeout=30)
    assert foreign_session.status_code == 200
    del headers["MCP-Protocol-Version"]
    unrouted = httpx2.post(url, headers=headers, json=body, timeout=30)
    assert unrouted.status_code == 400
    assert "Missing session ID" in unrouted.text


def refused_beyond_loopback(server: str, workdir: Path, **settings: str) -> str:
    """Start ``server`` on 0.0.0.0 without authentication (plus ``settings``); its stderr, after exit code 1."""
    env = {
        **os.environ,
        "MCP_TRANSPORT": "streamable-http",
        "MCP_HOST": "0.0.0.0",  # noqa: S104
        "MCP_PORT": str(free_port()),
        **settings,
    }
    for name in ("MCP_AUTH_TOKEN_FILE", "MCP_AUTH_ISSUER", "MCP_AUTH_JWKS_URL", "ELICITATION"):
        env.pop(name, None)
    done = subprocess.run(  # noqa: S603
        [sys.executable, "-m", server.replace("-", "_")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        cwd=workdir,
    )
    assert done.returncode == 1
    assert done.stdout == ""
    return done.stderr


@pytest.mark.parametrize("server", SERVERS)
async def test_every_server_serves_its_tools_over_http(server: str, tmp_path: Path) -> None:
    """Every server's ``main()`` ends in ``approval_core.serve``: asked for HTTP, it serves HTTP, with its tools.

    Started without backend settings (each server starts and lists its tools without them), on 127.0.0.1
    with a static token; the tools listed over HTTP are the ones the server lists in process.
    """
    token = "family-" + "t" * 40
    token_file = tmp_path / "token"
    token_file.write_text(token)
    token_file.chmod(0o600)
    module = importlib.import_module(f"{server.replace('-', '_')}.server")
    expected = {tool.name for tool in await module.build_server(ApprovalSettings()).list_tools()}
    with served_over_http(server, {"MCP_AUTH_TOKEN_FILE": str(token_file)}, tmp_path) as running:
        async with connect(bearer_transport(running.url, token), revision="2025-11-25") as client:
            listed = {tool.name for tool in (await client.list_tools()).tools}
    assert listed == expected


@pytest.mark.parametrize("server", SERVERS)
def test_every_server_refuses_to_listen_beyond_loopback_without_authentication(server: str, tmp_path: Path) -> None:
    assert f"{server}: MCP_HOST=0.0.0.0 listens beyond loopback" in refused_beyond_loopback(server, tmp_path)


@pytest.mark.parametrize("server", embedded_servers())
def test_a_refused_transport_setting_stops_the_server_before_its_embedded_backend_starts(
    server: str, tmp_path: Path
) -> None:
    """The one line a refused start prints is the refusal: no embedded Radicale was started first."""
    prefix = server.split("-")[0].upper()
    stderr = refused_beyond_loopback(
        server, tmp_path, **{f"{prefix}_EMBEDDED": "true", f"{prefix}_EMBEDDED_DIR": str(tmp_path / "data")}
    )
    (line,) = stderr.strip().splitlines()
    assert line.startswith(f"{server}: MCP_HOST=0.0.0.0 listens beyond loopback: set MCP_AUTH_TOKEN_FILE")
    assert not (tmp_path / "data").exists()


@pytest.mark.parametrize(
    ("settings", "named"),
    [
        ({"MCP_TRANSPORT": "http"}, "MCP_TRANSPORT must be 'stdio' or 'streamable-http', not 'http'"),
        ({"MCP_TRANSPORT": "streamable-http", "MCP_WORKERS": "3"}, "MCP_WORKERS=3 needs APPROVAL_STORE_URL"),
        ({"MCP_TRANSPORT": "streamable-http", "MCP_AUTH_TOKEN_FILE": "{loose}"}, "has mode 644"),
    ],
)
def test_a_refused_start_exits_1_naming_the_setting(settings: dict[str, str], named: str, tmp_path: Path) -> None:
    loose = tmp_path / "token"
    loose.write_text("t" * 48)
    loose.chmod(0o644)
    env = {**os.environ, "MCP_PORT": str(free_port()), **{k: v.format(loose=loose) for k, v in settings.items()}}
    env.pop("APPROVAL_STORE_URL", None)
    done = subprocess.run(
        [sys.executable, "-m", "ntfy_mcp"], env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert done.returncode == 1
    assert done.stdout == ""
    assert named in done.stderr
