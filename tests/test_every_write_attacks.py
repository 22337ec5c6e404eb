"""Attacks on APPROVAL_PROFILE=every-write over Streamable HTTP with two principals .

ntfy-mcp runs as its own process over HTTP, authenticating JWTs from the issuer double; two subjects share it.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import httpx2
import mcp_types as types
import pytest
from mcp_http import HttpServer, bearer_transport, served_over_http
from ntfy_server import NtfyServer
from token_issuer import IssuerDouble, token_issuer

from approval_core.testing import DialogLog, call_once, connect, ticked

pytestmark = pytest.mark.anyio
SCOPE = "notify"


@pytest.fixture(scope="module")
def issuer() -> Iterator[IssuerDouble]:
    with token_issuer() as running:
        yield running


@pytest.fixture(scope="module")
def ntfy_over_http(
    real_ntfy: NtfyServer, issuer: IssuerDouble, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[HttpServer]:
    env = {
        "NTFY_URL": real_ntfy.url,
        "NTFY_USERNAME": real_ntfy.admin_user,
        "NTFY_PASSWORD": real_ntfy.admin_password,
        "APPROVAL_PROFILE": "every-write",
        "MCP_AUTH_ISSUER": issuer.issuer,
        "MCP_AUTH_JWKS_URL": issuer.jwks_url,
        "MCP_AUTH_REQUIRED_SCOPES": SCOPE,
    }
    with served_over_http("ntfy-mcp", env, tmp_path_factory.mktemp("ntfy-http")) as server:
        yield server


def published(ntfy: NtfyServer, topic: str) -> list[str]:
    response = httpx2.get(
        f"{ntfy.url}/{topic}/json", params={"poll": "1", "since": "all"}, headers=ntfy.admin_headers()
    )
    return [line for line in response.text.splitlines() if line.strip()]


async def test_one_principals_question_is_not_answered_by_another(
    ntfy_over_http: HttpServer, issuer: IssuerDouble, real_ntfy: NtfyServer
) -> None:
    """the principal is bound into every-write's fingerprint too."""
    url = ntfy_over_http.url
    alice = issuer.token(url, scope=SCOPE, subject="alice")
    mallory = issuer.token(url, scope=SCOPE, subject="mallory")
    topic = f"http-{uuid.uuid4().hex[:8]}"
    args = {"topics": [topic], "message": "from alice"}
    async with connect(bearer_transport(url, alice), revision="2026-07-28", answer=DialogLog()) as client:
        asked = await call_once(client, "publish_message", args)
    assert isinstance(asked, types.InputRequiredResult), asked
    async with connect(bearer_transport(url, mallory), revision="2026-07-28", answer=DialogLog()) as client:
        replay = await call_once(client, "publish_message", args, answer=ticked, request_state=asked.request_state)
    assert isinstance(replay, types.InputRequiredResult), replay
    assert published(real_ntfy, topic) == []
    async with connect(bearer_transport(url, alice), revision="2026-07-28", answer=DialogLog()) as client:
        done = await call_once(client, "publish_message", args, answer=ticked, request_state=asked.request_state)
    # mallory's attempt spent nothing of alice's (her state opens for her) -- or, if the SDK envelope
    # refused mallory's replay, alice's state is still unspent: either way alice's own answer runs.
    assert isinstance(done, types.CallToolResult), done
    assert not done.is_error, done
    assert len(published(real_ntfy, topic)) == 1
