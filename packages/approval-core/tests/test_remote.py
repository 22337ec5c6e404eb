"""approval_core.serving.remote: the HTTP settings and their refusals, the two token checks, and the app in
this process.

The app is served by uvicorn inside the test's event loop (a real socket on
127.0.0.1) and reached with the SDK's Streamable HTTP client, so the code is
measured here; tests/test_remote_http.py runs whole server processes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp_http import bearer_transport
from processes import free_port
from token_issuer import IssuerDouble, new_key, token_issuer

from approval_core import ApprovalSettings, SettingsError, serve
from approval_core.serving import remote
from approval_core.serving.bearer import JWKS_COOLDOWN, JWKS_LIFESPAN, JwksKeys, JwtVerifier, StaticTokenVerifier
from approval_core.serving.remote import HttpSettings, describe, http_server, verifier_for
from approval_core.testing import REVISIONS, DialogLog, Revision, accept, approval_of, connect, decline
from core_serving import HTTP, running, settings
from example_server import Example


def test_stdio_is_the_default_and_nothing_else_is_read() -> None:
    assert HttpSettings.from_env({}) == HttpSettings()
    assert HttpSettings.from_env({"MCP_TRANSPORT": "stdio", "MCP_PORT": "nonsense"}).transport == "stdio"


def test_http_defaults_bind_loopback_and_derive_the_public_url_and_allowed_headers() -> None:
    got = settings()
    assert (got.host, got.port, got.path, got.public_url) == ("127.0.0.1", 8000, "/mcp", "http://127.0.0.1:8000/mcp")
    assert got.auth is None
    assert got.workers == 1
    assert "127.0.0.1:8000" in got.allowed_hosts
    assert "localhost:*" in got.allowed_hosts
    assert got.allowed_origins[0] == "http://127.0.0.1:8000"


def test_a_public_url_behind_a_proxy_is_the_allowed_host_and_origin() -> None:
    got = settings(MCP_PUBLIC_URL="https://cal.example.org/mcp", MCP_AUTH_TOKEN_FILE="/run/token", MCP_HOST="::1")
    assert got.auth == "token-file"
    assert "cal.example.org" in got.allowed_hosts
    assert "[::1]:8000" in got.allowed_hosts
    assert "https://cal.example.org" in got.allowed_origins


def test_localhost_is_loopback_and_needs_no_authentication() -> None:
    assert settings(MCP_HOST="localhost").allowed_hosts[:2] == ("localhost:8000", "localhost:*")


def test_explicit_allowed_lists_replace_the_defaults() -> None:
    got = settings(MCP_ALLOWED_HOSTS="a.example:443, b.example", MCP_ALLOWED_ORIGINS="https://a.example")
    assert got.allowed_hosts == ("a.example:443", "b.example")
    assert got.allowed_origins == ("https://a.example",)


def test_jwt_settings_and_scopes() -> None:
    got = settings(
        MCP_AUTH_ISSUER="https://idp.example.org",
        MCP_AUTH_JWKS_URL="https://idp.example.org/jwks",
        MCP_AUTH_REQUIRED_SCOPES="a b",
    )
    assert got.auth == "jwt"
    assert got.required_scopes == ("a", "b")


def test_beyond_loopback_with_authentication_and_several_workers_with_a_store() -> None:
    got = settings(MCP_HOST="0.0.0.0", MCP_AUTH_TOKEN_FILE="/t", MCP_WORKERS="3", APPROVAL_STORE_URL="redis://r:6379/0")  # noqa: S104
    assert (got.host, got.workers, got.store_url_set) == ("0.0.0.0", 3, True)  # noqa: S104


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"MCP_TRANSPORT": "sse"}, "MCP_TRANSPORT must be 'stdio' or 'streamable-http', not 'sse'"),
        ({**HTTP, "MCP_HOST": " "}, "MCP_HOST must not be empty"),
        ({**HTTP, "MCP_PORT": "0"}, "MCP_PORT must be a whole number from 1 to 65535, not '0'"),
        ({**HTTP, "MCP_PORT": "http"}, "MCP_PORT must be a whole number"),
        ({**HTTP, "MCP_PATH": "mcp"}, "MCP_PATH must be a path starting with '/'"),
        ({**HTTP, "MCP_PUBLIC_URL": "cal.example.org/mcp"}, "MCP_PUBLIC_URL must be an absolute http(s) URL"),
        ({**HTTP, "MCP_PUBLIC_URL": "https://cal.example.org/mcp?x=1"}, "without query or fragment"),
        (
            {**HTTP, "MCP_AUTH_TOKEN_FILE": "/t", "MCP_AUTH_ISSUER": "https://i", "MCP_AUTH_JWKS_URL": "https://i/j"},
            "MCP_AUTH_TOKEN_FILE and MCP_AUTH_ISSUER/MCP_AUTH_JWKS_URL exclude each other",
        ),
        ({**HTTP, "MCP_AUTH_ISSUER": "https://i"}, "MCP_AUTH_ISSUER and MCP_AUTH_JWKS_URL go together"),
        (
            {**HTTP, "MCP_AUTH_ISSUER": "https://i", "MCP_AUTH_JWKS_URL": "file:///etc/jwks"},
            "MCP_AUTH_JWKS_URL must be an http(s) URL",
        ),
        ({**HTTP, "MCP_AUTH_REQUIRED_SCOPES": "a"}, "MCP_AUTH_REQUIRED_SCOPES applies to JWTs"),
        ({**HTTP, "MCP_HOST": "0.0.0.0"}, "MCP_HOST=0.0.0.0 listens beyond loopback: set MCP_AUTH_TOKEN_FILE"),  # noqa: S104
        ({**HTTP, "MCP_HOST": "cal.example.org"}, "MCP_HOST=cal.example.org listens beyond loopback"),
        ({**HTTP, "MCP_WORKERS": "0"}, "MCP_WORKERS must be a whole number of at least 1, not '0'"),
        ({**HTTP, "MCP_WORKERS": "2"}, "MCP_WORKERS=2 needs APPROVAL_STORE_URL"),
    ],
)
def test_a_bad_setting_is_refused_naming_it(env: dict[str, str], message: str) -> None:
    with pytest.raises(SettingsError, match=None) as caught:
        HttpSettings.from_env(env)
    assert message in str(caught.value)


def test_serve_exits_1_naming_the_setting(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as caught:
        serve(Example().server, "example-mcp", {**HTTP, "MCP_WORKERS": "2"})
    assert caught.value.code == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("example-mcp: MCP_WORKERS=2 needs APPROVAL_STORE_URL")


def _token_file(tmp_path: Path, text: str, mode: int = 0o600) -> Path:
    path = tmp_path / "token"
    path.write_text(text)
    path.chmod(mode)
    return path


@pytest.mark.parametrize(
    ("text", "mode", "message"),
    [
        ("t" * 40, 0o640, "has mode 640: group and others must have no access"),
        ("short", 0o600, "must hold one token of at least 32 characters"),
        ("t" * 20 + " " + "t" * 20, 0o600, "without spaces"),
    ],
)
def test_a_bad_token_file_is_refused(tmp_path: Path, text: str, mode: int, message: str) -> None:
    path = _token_file(tmp_path, text, mode)
    with pytest.raises(SettingsError) as caught:
        verifier_for(settings(MCP_AUTH_TOKEN_FILE=str(path)))
    assert message in str(caught.value)
    assert str(path) in str(caught.value)
    assert text not in str(caught.value)


def test_a_missing_token_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="cannot be read: FileNotFoundError"):
        verifier_for(settings(MCP_AUTH_TOKEN_FILE=str(tmp_path / "absent")))


@pytest.mark.anyio
async def test_the_static_token_is_compared_whole(tmp_path: Path) -> None:
    token = "k" * 44
    verifier = verifier_for(settings(MCP_AUTH_TOKEN_FILE=str(_token_file(tmp_path, token + "\n"))))
    assert isinstance(verifier, StaticTokenVerifier)
    accepted = await verifier.verify_token(token)
    assert accepted is not None
    assert accepted.resource == "http://127.0.0.1:8000/mcp"
    for wrong in ("", token[:-1], token + "k", token.upper()):
        assert await verifier.verify_token(wrong) is None
    assert verifier_for(settings()) is None


@pytest.fixture(scope="module")
def issuer() -> Any:
    with token_issuer() as running:
        yield running


@pytest.mark.anyio
async def test_a_jwt_is_checked_for_issuer_audience_expiry_and_key(issuer: IssuerDouble) -> None:
    audience = "https://cal.example.org/mcp"
    verifier = JwtVerifier(issuer.issuer, issuer.jwks_url, audience)
    good = await verifier.verify_token(issuer.token([audience, "other"], scope="calendar openid"))
    assert good is not None
    assert good.scopes == ["calendar", "openid"]
    assert good.subject == "willi"
    assert good.resource == audience
    assert good.claims == {"iss": issuer.issuer}
    listed = await verifier.verify_token(issuer.token(audience, scp=["calendar"]))
    assert listed is not None
    assert listed.scopes == ["calendar"]
    for bad in (
        issuer.token("https://cal.example.org/other"),
        issuer.token(audience, expires_in=-5),
        issuer.token(audience, expires_in=None),
        issuer.token(audience, not_before_in=300),
        issuer.token(audience, issuer=issuer.issuer + "/"),
        issuer.token(audience, kid="unknown"),
        issuer.token(audience, subject=None),
        issuer.unsigned_token(audience),
        issuer.hmac_token_with_public_key(audience),
        "a.b.c",
    ):
        assert await verifier.verify_token(bad) is None


@pytest.mark.anyio
async def test_an_unreachable_jwks_refuses_every_token(issuer: IssuerDouble) -> None:
    verifier = JwtVerifier(issuer.issuer, f"http://127.0.0.1:{free_port()}/jwks.json", "https://x.example/mcp")
    assert await verifier.verify_token(issuer.token("https://x.example/mcp")) is None


class Clock:
    """Monotonic seconds that move only when a test says so."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.anyio
async def test_a_key_the_issuer_withdraws_stops_verifying_once_the_set_is_refetched() -> None:
    audience = "https://x.example/mcp"
    clock = Clock()
    with token_issuer() as issuer:
        keys = JwksKeys(issuer.jwks_url, clock=clock)
        verifier = JwtVerifier(issuer.issuer, issuer.jwks_url, audience, keys=keys)
        token = issuer.token(audience)
        assert await verifier.verify_token(token) is not None
        issuer.withdraw()
        clock.now += JWKS_LIFESPAN - 1
        assert await verifier.verify_token(token) is not None, "the fetched set is used for its lifespan"
        clock.now += 1
        assert await verifier.verify_token(token) is None
        assert await verifier.verify_token(issuer.token(audience, subject="someone-else")) is None
        assert keys.fetches == 2


@pytest.mark.anyio
async def test_unknown_kids_and_an_issuer_outage_fetch_the_jwks_once_per_cooldown() -> None:
    audience = "https://x.example/mcp"
    clock = Clock()
    with token_issuer() as issuer:
        keys = JwksKeys(issuer.jwks_url, clock=clock)
        verifier = JwtVerifier(issuer.issuer, issuer.jwks_url, audience, keys=keys)
        assert await verifier.verify_token(issuer.token(audience)) is not None
        for n in range(20):
            assert await verifier.verify_token(issuer.token(audience, kid=f"made-up-{n}")) is None
        assert len(issuer.jwks_requests) == 1
        rotated = new_key()
        issuer.publish(rotated, "test-key-2")
        assert await verifier.verify_token(issuer.token(audience, kid="test-key-2", signing_key=rotated)) is None
        clock.now += JWKS_COOLDOWN
        assert await verifier.verify_token(issuer.token(audience, kid="test-key-2", signing_key=rotated)) is not None
        assert len(issuer.jwks_requests) == 2
        issuer.failing = True
        clock.now += JWKS_LIFESPAN
        for n in range(20):
            assert await verifier.verify_token(issuer.token(audience, kid=f"made-up-{n}")) is None
            assert await verifier.verify_token(issuer.token(audience)) is None
        assert len(issuer.jwks_requests) == 3, "one failed fetch, then the cooldown"
        issuer.failing = False
        clock.now += JWKS_COOLDOWN
        assert await verifier.verify_token(issuer.token(audience)) is not None
        assert len(issuer.jwks_requests) == 4


@pytest.mark.anyio
async def test_a_failed_fetch_for_an_unknown_kid_keeps_the_fresh_key_set() -> None:
    audience = "https://x.example/mcp"
    clock = Clock()
    with token_issuer() as issuer:
        keys = JwksKeys(issuer.jwks_url, clock=clock)
        verifier = JwtVerifier(issuer.issuer, issuer.jwks_url, audience, keys=keys)
        valid = issuer.token(audience)
        assert await verifier.verify_token(valid) is not None
        clock.now += JWKS_COOLDOWN
        issuer.failing = True
        assert await verifier.verify_token(issuer.token(audience, kid="made-up")) is None
        assert len(issuer.jwks_requests) == 2, "the unknown kid did start a fetch, which failed"
        assert await verifier.verify_token(valid) is not None, "the still-fresh set was kept"


@pytest.mark.anyio
@pytest.mark.parametrize("subject", ["", "   "])
async def test_a_jwt_with_an_empty_subject_is_refused(issuer: IssuerDouble, subject: str) -> None:
    audience = "https://x.example/mcp"
    verifier = JwtVerifier(issuer.issuer, issuer.jwks_url, audience)
    assert await verifier.verify_token(issuer.token(audience, subject=subject)) is None
    assert await verifier.verify_token(issuer.token(audience)) is not None


@pytest.mark.anyio
async def test_a_jwt_must_use_the_algorithm_its_key_declares(issuer: IssuerDouble) -> None:
    audience = "https://x.example/mcp"
    verifier = JwtVerifier(issuer.issuer, issuer.jwks_url, audience)
    assert await verifier.verify_token(issuer.token(audience, algorithm="PS256")) is None, "the JWK says RS256"
    assert await verifier.verify_token(issuer.token(audience, algorithm="RS256")) is not None


@pytest.mark.anyio
@pytest.mark.parametrize("revision", REVISIONS)
async def test_in_process_app_with_jwts_serves_dialogs_on_both_revisions(
    issuer: IssuerDouble, revision: Revision
) -> None:
    port = free_port()
    env = {
        "MCP_PORT": str(port),
        "MCP_AUTH_ISSUER": issuer.issuer,
        "MCP_AUTH_JWKS_URL": issuer.jwks_url,
        "MCP_AUTH_REQUIRED_SCOPES": "items",
    }
    configured = settings(**env)
    example = Example()
    async with running(http_server(example.server, configured, verifier_for(configured)), port) as url:
        token = issuer.token(url, scope="items")
        log = DialogLog(decline)
        async with connect(bearer_transport(url, token), revision=revision, answer=log) as client:
            assert (await client.call_tool("list_items", {})).structured_content == {"items": ["a", "b", "c"]}
            refused = await client.call_tool("delete_items", {"book": "b1", "ids": ["a"]})
        assert approval_of(refused)["outcome"] == "declined"
        async with connect(bearer_transport(url, token), revision=revision, answer=DialogLog(accept)) as client:
            done = await client.call_tool("delete_items", {"book": "b1", "ids": ["a"]})
        assert not done.is_error
        assert example.items == {"b", "c"}
        async with httpx2.AsyncClient() as raw:
            denied = await raw.post(
                url, json={}, headers={"Authorization": f"Bearer {issuer.token('https://x.example')}"}
            )
            document = (await raw.get(f"http://127.0.0.1:{port}/.well-known/oauth-protected-resource/mcp")).json()
        assert denied.status_code == 401
        assert document == {
            "resource": url,
            "authorization_servers": [issuer.issuer],
            "scopes_supported": ["items"],
            "bearer_methods_supported": ["header"],
        }


@pytest.mark.anyio
@pytest.mark.parametrize("revision", REVISIONS)
async def test_a_confirm_token_issued_to_one_subject_is_refused_to_another(
    issuer: IssuerDouble, revision: Revision
) -> None:
    port = free_port()
    env = {"MCP_PORT": str(port), "MCP_AUTH_ISSUER": issuer.issuer, "MCP_AUTH_JWKS_URL": issuer.jwks_url}
    configured = settings(**env)
    example = Example(ApprovalSettings(elicitation=False))
    arguments = {"book": "b1", "ids": ["a"]}
    async with running(http_server(example.server, configured, verifier_for(configured)), port) as url:
        willi, mallory = issuer.token(url, subject="willi"), issuer.token(url, subject="mallory")
        async with connect(bearer_transport(url, willi), revision=revision) as client:
            token = approval_of(await client.call_tool("delete_items", arguments))["confirm_token"]
        async with connect(bearer_transport(url, mallory), revision=revision) as client:
            stolen = await client.call_tool("delete_items", {**arguments, "confirm_token": token})
        assert approval_of(stolen)["outcome"] == "token_refused"
        assert "different call" in stolen.content[0].text  # type: ignore[union-attr]
        assert example.items == {"a", "b", "c"}
        async with connect(bearer_transport(url, willi), revision=revision) as client:
            token = approval_of(await client.call_tool("delete_items", arguments))["confirm_token"]
            done = await client.call_tool("delete_items", {**arguments, "confirm_token": token})
        assert not done.is_error, "the subject it was issued to redeems it"
        assert example.items == {"b", "c"}


@pytest.mark.anyio
async def test_a_loopback_app_without_authentication_still_checks_host_and_origin() -> None:
    port = free_port()
    configured = settings(MCP_PORT=str(port))
    where = f"127.0.0.1:{port}/mcp"
    expected = f"Streamable HTTP on {where} (resource http://{where}), NO authentication, 1 worker(s), "
    assert describe(configured) == expected + "approval records in this process"
    async with running(http_server(Example().server, configured, None), port) as url:
        async with connect(bearer_transport(url, None), revision="2026-07-28") as client:
            assert (await client.call_tool("list_items", {})).structured_content == {"items": ["a", "b", "c"]}
        async with httpx2.AsyncClient() as raw:
            headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
            bad_host = await raw.post(url, content=b"{}", headers={**headers, "Host": "evil.example"})
            bad_origin = await raw.post(url, content=b"{}", headers={**headers, "Origin": "http://evil.example"})
        assert (bad_host.status_code, bad_origin.status_code) == (421, 403)


@pytest.mark.anyio
async def test_a_connection_that_never_completes_its_headers_is_closed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Slowloris: partial headers, a line now and then; the server closes the connection, before any token check."""
    monkeypatch.setattr(remote, "HEADERS_TIMEOUT", 0.3)
    port = free_port()
    token = "t" * 40
    configured = settings(MCP_PORT=str(port), MCP_AUTH_TOKEN_FILE=str(_token_file(tmp_path, token)))
    example = Example()
    async with running(http_server(example.server, configured, verifier_for(configured)), port) as url:
        slow = await anyio.connect_tcp("127.0.0.1", port)
        idle = await anyio.connect_tcp("127.0.0.1", port)
        await slow.send(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        with anyio.fail_after(60):
            for n in range(100):
                await anyio.sleep(0.1)
                try:
                    await slow.send(b"X-Slow-%d: x\r\n" % n)
                except (anyio.BrokenResourceError, ConnectionError):
                    break
            else:
                pytest.fail("a connection trickling header lines was kept open for 10 s")
            with pytest.raises((anyio.EndOfStream, ConnectionError)):
                await idle.receive()
        await slow.aclose()
        await idle.aclose()

        async def slow_yes(context: Any, params: Any) -> Any:
            await anyio.sleep(1)  # longer than the deadline: a request in progress is not cut
            return await accept(context, params)

        async with connect(bearer_transport(url, token), revision="2025-11-25", answer=slow_yes) as client:
            await anyio.sleep(0.5)  # an idle keep-alive gap longer than the deadline costs a new connection only
            done = await client.call_tool("delete_items", {"book": "b1", "ids": ["a"]})
        assert not done.is_error
        assert example.items == {"b", "c"}


@pytest.mark.anyio
async def test_a_session_answers_only_the_principal_whose_token_opened_it(issuer: IssuerDouble) -> None:
    """Another subject's valid token with a 2025-11-25 session id: 404 for a call, an answer and a DELETE."""
    port = free_port()
    configured = settings(MCP_PORT=str(port), MCP_AUTH_ISSUER=issuer.issuer, MCP_AUTH_JWKS_URL=issuer.jwks_url)
    async with running(http_server(Example().server, configured, verifier_for(configured)), port) as url:
        owner = {"Authorization": f"Bearer {issuer.token(url, subject='willi')}"}
        other = {"Authorization": f"Bearer {issuer.token(url, subject='mallory')}"}
        base = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
        initialize = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {"elicitation": {}},
                "clientInfo": {"name": "probe", "version": "1"},
            },
        }
        async with httpx2.AsyncClient(timeout=30) as raw:
            opened = await raw.post(url, json=initialize, headers={**base, **owner})
            assert opened.status_code == 200
            session = {"Mcp-Session-Id": opened.headers["mcp-session-id"], "MCP-Protocol-Version": "2025-11-25"}
            ready = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            assert (await raw.post(url, json=ready, headers={**base, **owner, **session})).status_code == 202
            listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
            answer = {"jsonrpc": "2.0", "id": 0, "result": {"action": "accept", "content": {"approve": True}}}
            for body in (listing, answer):
                foreign = await raw.post(url, json=body, headers={**base, **other, **session})
                assert foreign.status_code == 404
            assert (await raw.delete(url, headers={**base, **other, **session})).status_code == 404
            mine = await raw.post(url, json=listing, headers={**base, **owner, **session})
            assert mine.status_code == 200
            assert "delete_items" in mine.text


@pytest.mark.anyio
async def test_a_client_without_the_static_token_is_told_so_not_sent_to_a_sign_in(tmp_path: Path) -> None:
    """With a static token there is no authorization server: the 401, the RFC 8414 paths and RFC 7591
    registration each say that the bearer token is missing or wrong, so a client shows that, not a failed
    client registration; the token still opens the endpoint and nothing else is opened."""
    port = free_port()
    token = "s" * 40
    configured = settings(MCP_PORT=str(port), MCP_AUTH_TOKEN_FILE=str(_token_file(tmp_path, token)))
    example = Example()
    said = "the bearer token is missing or wrong"
    async with (
        running(http_server(example.server, configured, verifier_for(configured)), port) as url,
        httpx2.AsyncClient() as http,
    ):
        base = url.removesuffix("/mcp")
        missing = await http.post(url, json={})
        wrong = await http.post(url, json={}, headers={"Authorization": "Bearer " + "w" * 40})
        metadata = await http.get(f"{base}/.well-known/oauth-authorization-server/mcp")
        openid = await http.get(f"{base}/.well-known/openid-configuration")
        registration = await http.post(f"{base}/register", json={"redirect_uris": ["http://localhost/cb"]})
        resource = await http.get(f"{base}/.well-known/oauth-protected-resource/mcp")
        async with connect(bearer_transport(url, token), revision="2025-11-25") as client:
            listed = await client.call_tool("list_items", {})
    for refused in (missing, wrong):
        assert refused.status_code == 401
        assert said in refused.json()["error_description"]
        challenge = refused.headers["www-authenticate"]
        assert said in challenge
        assert "resource_metadata=" in challenge  # still as the MCP authorization spec requires
        assert int(refused.headers["content-length"]) == len(refused.content)
    assert (metadata.status_code, openid.status_code) == (404, 404)
    assert said in metadata.json()["error_description"]
    assert registration.status_code == 400
    assert registration.json()["error"] == "invalid_client_metadata"
    assert said in registration.json()["error_description"]
    assert "authorization_servers" not in resource.json()
    assert listed.structured_content == {"items": ["a", "b", "c"]}
