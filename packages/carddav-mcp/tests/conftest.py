"""Fixtures: the real Radicale and Xandikos on 127.0.0.1, and fresh address books per test.

Each server is started once per session; every test gets two new address
books on it, and a carddav-mcp limited (CARDDAV_ADDRESSBOOKS) to those two.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest

sys.path.insert(0, str(Path(__file__).parent))

import dav_servers

from approval_core import ApprovalSettings
from carddav_mcp import davxml
from carddav_mcp.server import build_server
from carddav_mcp.settings import CardDavSettings

# Test modules import this file's helpers as ``carddav_conftest``: a name of this package's own, so that
# running several packages' tests in one pytest run cannot hand them another package's conftest.
sys.modules.setdefault("carddav_conftest", sys.modules[__name__])

USER = "willi"


@pytest.fixture(scope="session")
def radicale_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dav_servers.DavServer]:
    with dav_servers.radicale(tmp_path_factory.mktemp("radicale"), {USER: "secret"}) as server:
        yield server


@pytest.fixture(scope="session")
def xandikos_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dav_servers.DavServer]:
    with dav_servers.xandikos(tmp_path_factory.mktemp("xandikos")) as server:
        yield server


@dataclass
class Dav:
    """One DAV server, two fresh books on it, and how to reach them."""

    kind: str
    settings: CardDavSettings
    book: str
    other: str
    http: httpx.Client

    def put(self, book: str, name: str, text: str) -> str:
        href = f"{book}{name}"
        response = self.http.put(href, content=text.encode(), headers={"Content-Type": "text/vcard"})
        assert response.status_code in {201, 204}, response.text
        return href

    def get(self, href: str) -> str:
        response = self.http.get(href)
        assert response.status_code == 200, href
        return response.text

    def exists(self, href: str) -> bool:
        return self.http.get(href).status_code == 200

    def server(self, settings: ApprovalSettings | None = None, **changes: Any) -> Any:
        carddav = CardDavSettings(**{**self.settings.__dict__, **changes})
        return build_server(settings or ApprovalSettings(), carddav)


def _dav(kind: str, server: dav_servers.DavServer) -> Iterator[Dav]:
    if kind == "radicale":
        home = f"/{USER}/"
        settings = CardDavSettings(url=f"{server.url}{USER}/", username=USER, password=server.users[USER])
        http = httpx.Client(base_url=server.url, auth=(USER, server.users[USER]))
    else:
        home = f"/{USER}/contacts/"
        headers = server.headers_for(USER)
        settings = CardDavSettings(url=f"{server.url}{USER}/contacts/", extra_headers=headers)
        http = httpx.Client(base_url=server.url, headers=headers)
    names = [f"b{uuid.uuid4().hex[:10]}" for _ in range(2)]
    for name in names:
        body = davxml.mkcol_addressbook(name).encode()
        response = http.request("MKCOL", f"{home}{name}/", content=body, headers={"Content-Type": "application/xml"})
        assert response.status_code == 201, response.text
    settings = CardDavSettings(**{**settings.__dict__, "addressbooks": frozenset(names)})
    try:
        yield Dav(kind, settings, f"{home}{names[0]}/", f"{home}{names[1]}/", http)
    finally:
        http.close()


@pytest.fixture(params=["radicale", "xandikos"])
def dav(request: pytest.FixtureRequest) -> Iterator[Dav]:
    """Both servers, one after the other."""
    server = request.getfixturevalue(f"{request.param}_server")
    yield from _dav(request.param, server)


@pytest.fixture
def radicale(radicale_server: dav_servers.DavServer) -> Iterator[Dav]:
    """Radicale only (for tests that need one server)."""
    yield from _dav("radicale", radicale_server)


def vcard(*lines: str, version: str = "3.0") -> str:
    """A vCard from property lines."""
    body = "".join(f"{line}\r\n" for line in lines)
    return f"BEGIN:VCARD\r\nVERSION:{version}\r\n{body}END:VCARD\r\n"
