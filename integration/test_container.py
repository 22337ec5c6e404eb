"""The container image of the HTTP deployment (deploy/Containerfile), built here and run (issue 34 §1).

The image is built from Debian's packages with Debian's podman (testing/container.py: debootstrap base,
the wheels ``nox -s release`` makes, ``--pull=never``). Each of its servers is started from it with a
static bearer token read from a file, and must list its tools over Streamable HTTP with that token and
refuse a request without it; the server runs as the image's own unprivileged user.
"""

from __future__ import annotations

import importlib
import json
import secrets
from pathlib import Path

import httpx2 as httpx
import pytest
import yaml
from container import IMAGE, LIMITS, USER_ID, built_image, podman, served_from_image
from mcp.client import Client
from mcp_http import bearer_transport

from approval_core import ApprovalSettings

pytestmark = [pytest.mark.anyio, pytest.mark.container]

BACKENDS = {
    "caldav-mcp": {"CALDAV_URL": "http://127.0.0.1:9/", "CALDAV_USERNAME": "you", "CALDAV_PASSWORD": "secret"},
    "carddav-mcp": {"CARDDAV_URL": "http://127.0.0.1:9/", "CARDDAV_USERNAME": "you", "CARDDAV_PASSWORD": "secret"},
    "ntfy-mcp": {"NTFY_URL": "http://127.0.0.1:9/"},
}
"""Where each server's backend would be: listing tools contacts none (a new server needs its row)."""
SERVERS = sorted(p.name for p in (Path(__file__).resolve().parents[1] / "packages").glob("*-mcp"))


@pytest.fixture(scope="module")
def image(tmp_path_factory: pytest.TempPathFactory) -> str:
    return built_image(tmp_path_factory.mktemp("image"))


def test_the_image_runs_as_an_unprivileged_user_and_serves_http_by_default(image: str) -> None:
    found = json.loads(podman("image", "inspect", image).stdout)[0]["Config"]
    assert found["User"] == f"{USER_ID}:{USER_ID}"
    assert "MCP_TRANSPORT=streamable-http" in found["Env"]
    assert found["Entrypoint"] == ["/usr/local/bin/mcp-entrypoint"]
    assert found["Cmd"] == ["caldav-mcp"]
    scripts = podman(
        "run", *LIMITS, "--rm", "--network=none", "--entrypoint", "/bin/ls", image, "/opt/mcp/bin"
    ).stdout.split()
    assert set(SERVERS) <= set(scripts)


@pytest.mark.parametrize("name", SERVERS)
async def test_each_server_lists_its_tools_with_the_token_and_refuses_without_it(
    image: str, name: str, tmp_path: Path
) -> None:
    token = secrets.token_urlsafe(24)
    expected = importlib.import_module(f"{name.replace('-', '_')}.server").build_server(ApprovalSettings())
    names = sorted(tool.name for tool in await expected.list_tools())
    with served_from_image(name, BACKENDS[name], token, tmp_path) as (url, _log):
        refused = httpx.post(url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, timeout=30)
        wrong = httpx.post(
            url, json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, timeout=30,
            headers={"Authorization": "Bearer not-the-token"},
        )  # fmt: skip
        async with Client(bearer_transport(url, token)) as client:
            listed = sorted(tool.name for tool in (await client.list_tools()).tools)
        user = podman("exec", f"mcp-test-{url.split(':')[2].split('/')[0]}", "id", "-u").stdout.strip()
    assert refused.status_code == 401
    assert "Bearer" in refused.headers.get("www-authenticate", "")
    assert wrong.status_code == 401
    assert listed == names
    assert user == str(USER_ID)


async def test_a_secret_setting_is_read_from_its_file(image: str, tmp_path: Path) -> None:
    password = tmp_path / "caldav-password"
    password.write_text("from-a-file\n")
    env = {k: v for k, v in BACKENDS["caldav-mcp"].items() if k != "CALDAV_PASSWORD"}
    env["CALDAV_PASSWORD_FILE"] = "/run/secrets/caldav-password"
    both = podman(
        "run", *LIMITS, "--rm", "--network=none", "-e", "CALDAV_PASSWORD=x",
        "-e", "CALDAV_PASSWORD_FILE=/nowhere", IMAGE,
    )  # fmt: skip
    assert both.returncode == 1
    assert "both CALDAV_PASSWORD and CALDAV_PASSWORD_FILE are set" in both.stderr
    shown = podman(
        "run", *LIMITS, "--rm", "--network=none", "-v", f"{password}:/run/secrets/caldav-password:ro",
        "-e", "CALDAV_PASSWORD_FILE=/run/secrets/caldav-password", "--user", "0", IMAGE,
        "sh", "-c", 'test "$CALDAV_PASSWORD" = from-a-file && test -z "${CALDAV_PASSWORD_FILE:-}" && echo read',
    )  # fmt: skip
    assert shown.stdout.strip() == "read", shown.stderr


def test_the_compose_file_runs_three_replicas_behind_haproxy_with_redis_and_file_secrets() -> None:
    root = Path(__file__).resolve().parents[1] / "deploy"
    compose = yaml.safe_load((root / "compose.yaml").read_text())
    services = compose["services"]
    replicas = sorted(name for name in services if name.startswith("caldav-"))
    assert replicas == ["caldav-1", "caldav-2", "caldav-3"]
    assert {"redis", "haproxy"} <= set(services)
    for name in replicas:
        service = services[name]
        assert service["build"]["target"] == "servers"
        assert service["environment"]["MCP_AUTH_TOKEN_FILE"].startswith("/run/secrets/")
        assert "CALDAV_PASSWORD" not in service["environment"], "secrets come from files"
        assert set(service["secrets"]) <= set(compose["secrets"])
    config = (root / "haproxy.cfg").read_text()
    assert [f"{name}:8000" in config for name in replicas] == [True] * 3
    assert "stick match req.hdr(mcp-session-id)" in config
    assert services["haproxy"]["ports"] == ["127.0.0.1:8080:8080"]
