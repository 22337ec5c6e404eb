"""The approval page mounted on a Streamable HTTP endpoint: its origin, Host and Origin checks as browsers send them.

Browsers leave the default port out of ``Host`` and ``Origin``
(``https://mcp.example.org``, never ``:443``) and write host names in lower
case, whatever ``MCP_PUBLIC_URL`` spells. The app is the one
``approval_core.serving.remote.build_http_app`` serves, asked through httpx2's ASGI
transport (no socket: ``Host`` can then be any name).
"""

from __future__ import annotations

import re
from pathlib import Path

import httpx2
import pytest
from processes import free_port

from approval_core import ApprovalSettings, Binding, CallerValue, Dialog, operation
from approval_core.page.approval_page import ApprovalPage
from approval_core.page.settings import PageSettings
from approval_core.serving.remote import HttpSettings, build_http_app, serve
from example_server import Example

pytestmark = pytest.mark.anyio


def served(public_url: str, folder: Path) -> tuple[httpx2.AsyncClient, ApprovalPage]:
    example = Example(ApprovalSettings(page=PageSettings(passkeys_file=folder / "passkeys.json")))
    settings = HttpSettings.from_env({"MCP_TRANSPORT": "streamable-http", "MCP_PUBLIC_URL": public_url})
    app = build_http_app(example.server, settings, None)
    page = example.gate.page
    assert page is not None
    return httpx2.AsyncClient(transport=httpx2.ASGITransport(app=app), base_url="http://asgi"), page


@pytest.mark.parametrize(
    ("public_url", "origin", "hosts"),
    [
        ("https://mcp.example.org:443/mcp", "https://mcp.example.org", ["mcp.example.org", "mcp.example.org:443"]),
        ("http://LocalHost:80/mcp", "http://localhost", ["localhost", "localhost:80"]),
        ("https://MCP.Example.org:8443/mcp", "https://mcp.example.org:8443", ["mcp.example.org:8443"]),
    ],
)
async def test_the_page_answers_under_the_host_and_origin_a_browser_sends(
    public_url: str, origin: str, hosts: list[str], tmp_path: Path
) -> None:
    client, page = served(public_url, tmp_path)
    assert page.party is not None
    assert page.party.origin == origin
    binding = Binding("example-mcp", "delete_items", {"ids": ["a"]})
    record = await page.book.open(
        binding, Dialog(operation("delete {count} item(s)", count=1), "Gone.", [CallerValue("Book", "b")])
    )
    assert page.url_of(record).startswith(origin + "/approval/a/")
    async with client:
        for host in hosts:
            shown = await client.get(f"/approval/a/{record.id}", headers={"Host": host})
            assert shown.status_code == 200, (host, shown.text)
        csrf = re.search(r'data-csrf="([^"]+)"', shown.text)
        assert csrf is not None
        # A POST from the page itself passes the Origin and CSRF checks: it is refused only for want of a passkey.
        asked = await client.post(
            f"/approval/a/{record.id}/options",
            json={},
            headers={
                "Host": hosts[0],
                "Origin": origin,
                "X-CSRF-Token": csrf.group(1),
                "Sec-Fetch-Site": "same-origin",
            },
        )
        assert asked.status_code == 409, asked.text
        assert "no passkey is paired" in asked.json()["message"]
        for foreign in ("evil.example", "mcp.example.org.evil.example"):
            assert (await client.get(f"/approval/a/{record.id}", headers={"Host": foreign})).status_code == 421
        elsewhere = await client.post(
            f"/approval/a/{record.id}/options",
            json={},
            headers={"Host": hosts[0], "Origin": "https://evil.example", "X-CSRF-Token": csrf.group(1)},
        )
        assert elsewhere.status_code == 403, elsewhere.text


def test_an_ip_address_in_the_public_url_stops_the_server_with_one_line_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The default MCP_PUBLIC_URL is http://127.0.0.1:<port>/mcp: no passkey can be bound to it."""
    example = Example(ApprovalSettings(page=PageSettings(passkeys_file=tmp_path / "passkeys.json")))
    environ = {"MCP_TRANSPORT": "streamable-http", "MCP_PORT": str(free_port())}
    with pytest.raises(SystemExit) as stopped:
        serve(example.server, "example-mcp", environ)
    assert stopped.value.code == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert len(err.splitlines()) == 1, err
    assert err.startswith(f"example-mcp: MCP_PUBLIC_URL=http://127.0.0.1:{environ['MCP_PORT']}/mcp cannot serve")
    assert "not an IP address" in err


def test_a_page_port_over_http_stops_the_server_with_one_line_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """APPROVAL_PAGE_PORT is the loopback page's port over stdio; over HTTP the page is on the endpoint's origin."""
    env = {"APPROVAL_PAGE": "true", "APPROVAL_PAGE_PORT": "8123", "APPROVAL_PASSKEYS_FILE": str(tmp_path / "p.json")}
    example = Example(ApprovalSettings.from_env(env))
    port = free_port()
    environ = {
        "MCP_TRANSPORT": "streamable-http",
        "MCP_PORT": str(port),
        "MCP_PUBLIC_URL": f"http://localhost:{port}/mcp",
    }
    with pytest.raises(SystemExit) as stopped:
        serve(example.server, "example-mcp", environ)
    assert stopped.value.code == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert len(err.splitlines()) == 1, err
    assert err.startswith("example-mcp: APPROVAL_PAGE_PORT applies to stdio only")
