"""The approval page mounted on a Streamable HTTP endpoint: its origin, Host and Origin checks as browsers send them.

Browsers leave the default port out of ``Host`` and ``Origin``
(``https://mcp.example.org``, never ``:443``) and write host names in lower
case, whatever ``MCP_PUBLIC_URL`` spells. The app is the one
``approval_core.remote.build_http_app`` serves, asked through httpx2's ASGI
transport (no socket: ``Host`` can then be any name).
"""

from __future__ import annotations

import re
from pathlib import Path

import httpx2
import pytest

from approval_core import ApprovalSettings, Binding, CallerValue, Dialog, operation
from approval_core.page import ApprovalPage
from approval_core.page_settings import PageSettings
from approval_core.remote import HttpSettings, build_http_app
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
