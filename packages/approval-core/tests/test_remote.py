"""approval_core.remote: the HTTP settings and their refusals, the two token checks, and the app in this process.

The app is served by uvicorn inside the test's event loop (a real socket on
127.0.0.1) and reached with the SDK's Streamable HTTP client, so the code is
measured here; tests/test_remote_http.py runs whole server processes.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
import uvicorn
from mcp_http import bearer_transport
from processes import free_port
from token_issuer import IssuerDouble, token_issuer

from approval_core import SettingsError, serve
from approval_core.remote import HttpSettings, JwtVerifier, StaticTokenVerifier, describe, http_server, verifier_for
from approval_core.testing import REVISIONS, DialogLog, Revision, accept, approval_of, connect, decline
from example_server import Example

HTTP = {"MCP_TRANSPORT": "streamable-http"}


def settings(**env: str) -> HttpSettings:
    return HttpSettings.from_env({**HTTP, **env})


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
        issuer.unsigned_token(audience),
        issuer.hmac_token_with_public_key(audience),
        "a.b.c",
    ):
        assert await verifier.verify_token(bad) is None


@pytest.mark.anyio
async def test_an_unreachable_jwks_refuses_every_token(issuer: IssuerDouble) -> None:
    verifier = JwtVerifier(issuer.issuer, f"http://127.0.0.1:{free_port()}/jwks.json", "https://x.example/mcp")
    assert await verifier.verify_token(issuer.token("https://x.example/mcp")) is None


@contextlib.asynccontextmanager
async def running(server: uvicorn.Server, port: int) -> AsyncIterator[str]:
    async with anyio.create_task_group() as group:
        group.start_soon(server.serve)
        while not server.started:  # noqa: ASYNC110 - uvicorn sets a flag, it has no event to wait on
            await anyio.sleep(0.02)
        try:
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            server.should_exit = True


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
async def test_a_loopback_app_without_authentication_still_checks_host_and_origin() -> None:
    port = free_port()
    configured = settings(MCP_PORT=str(port))
    where = f"127.0.0.1:{port}/mcp"
    assert (
        describe(configured) == f"Streamable HTTP on {where} (resource http://{where}), NO authentication, 1 worker(s)"
    )
    async with running(http_server(Example().server, configured, None), port) as url:
        async with connect(bearer_transport(url, None), revision="2026-07-28") as client:
            assert (await client.call_tool("list_items", {})).structured_content == {"items": ["a", "b", "c"]}
        async with httpx2.AsyncClient() as raw:
            headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
            bad_host = await raw.post(url, content=b"{}", headers={**headers, "Host": "evil.example"})
            bad_origin = await raw.post(url, content=b"{}", headers={**headers, "Origin": "http://evil.example"})
        assert (bad_host.status_code, bad_origin.status_code) == (421, 403)
