from __future__ import annotations

import itertools
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import caldav
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import httpx
from dav_servers import DavServer, radicale, xandikos

from approval_core import ApprovalSettings
from caldav_mcp.server import build_server
from caldav_mcp.settings import CalDAVSettings

_names = itertools.count()


@pytest.fixture(scope="session")
def radicale_server(tmp_path_factory) -> Iterator[DavServer]:
    with radicale(tmp_path_factory.mktemp("radicale"), {"willi": "secret", "other": "secret"}) as server:
        yield server


@pytest.fixture(scope="module")
def xandikos_pair(tmp_path_factory) -> Iterator[DavServer]:
    """Xandikos (RFC 6638 scheduling) with principals alice and bob, addresses ``mailto:<name>@example.org``."""
    with xandikos(tmp_path_factory.mktemp("xandikos")) as server:
        for user in ("alice", "bob"):
            body = (
                '<?xml version="1.0"?><d:propertyupdate xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:caldav">'
                f"<d:set><d:prop><c:calendar-user-address-set><d:href>mailto:{user}@example.org</d:href>"
                "</c:calendar-user-address-set></d:prop></d:set></d:propertyupdate>"
            )
            response = httpx.request(
                "PROPPATCH",
                f"{server.url}{user}/",
                content=body,
                headers={**server.headers_for(user), "Content-Type": "application/xml"},
            )
            assert response.status_code == 207
        yield server


@dataclass
class Account:
    """A Radicale account with fresh calendars for one test."""

    server: DavServer
    dav: caldav.DAVClient
    work: str
    home: str
    tasks_only: str

    def settings(self, **extra: Any) -> CalDAVSettings:
        return CalDAVSettings(self.server.url, "willi", "secret", **extra)

    def build(self, approval: ApprovalSettings | None = None, **extra: Any):
        return build_server(approval or ApprovalSettings(), self.settings(**extra))

    def put(self, calendar: str, name: str, ics: str) -> None:
        response = self.dav.put(self.server.url.rstrip("/") + calendar + name, ics, {"Content-Type": "text/calendar"})
        assert response.status in (201, 204), response.status

    def get(self, calendar: str, name: str) -> tuple[int, str]:
        response = self.dav.request(self.server.url.rstrip("/") + calendar + name, "GET")
        return response.status, response.raw if isinstance(response.raw, str) else response.raw.decode()


@pytest.fixture
def account(radicale_server: DavServer) -> Account:
    dav = caldav.DAVClient(url=radicale_server.url, username="willi", password="secret")
    principal = dav.principal()
    n = next(_names)
    work = principal.make_calendar(name=f"Work {n}", cal_id=f"work{n}")
    home = principal.make_calendar(name=f"Home {n}", cal_id=f"home{n}")
    tasks = principal.make_calendar(name=f"Tasks {n}", cal_id=f"tasks{n}", supported_calendar_component_set=["VTODO"])
    return Account(
        radicale_server,
        dav,
        f"/willi/{work.url.path.rsplit('/', 2)[-2]}/",
        f"/willi/{home.url.path.rsplit('/', 2)[-2]}/",
        f"/willi/{tasks.url.path.rsplit('/', 2)[-2]}/",
    )
