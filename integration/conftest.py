"""Every DAV server the project is tried against, started on 127.0.0.1, for the smoke suite.

Radicale and Xandikos come from PyPI; DAViCal, Cyrus and SOGo from Debian's packages
(installed as root when missing, see ``testing/dav_servers.py``). A server that cannot be
started fails its tests with the reason; nothing is skipped. This folder is not
in the default test paths: ``nox -s integration`` runs it.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx2 as httpx
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "testing"))

import dav_servers

SERVERS = ["radicale", "xandikos", "davical", "cyrus", "sogo"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@dataclass
class Target:
    """One running server, seen as a user of the two DAV servers would configure it.

    Attributes:
        kind: radicale, xandikos, davical, cyrus or sogo.
        url: CALDAV_URL / CARDDAV_URL: the server's root (discovery finds the rest).
        username, password: The account (Xandikos: header authentication instead).
        headers: Extra headers (Xandikos' X-Remote-User).
        calendar: A calendar id (collection path) of the account.
        book: An address-book id of the account.
        timings: Seconds per start-up step.
    """

    kind: str
    url: str
    username: str
    password: str
    calendar: str
    book: str
    headers: dict[str, str] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)


def _make(
    server: dav_servers.DavServer, user: str, password: str, headers: dict[str, str], home: str
) -> tuple[str, str]:
    """A fresh calendar and address book under ``home`` (MKCALENDAR, extended MKCOL)."""
    auth = (user, password) if not headers else None
    name = uuid.uuid4().hex[:8]
    with httpx.Client(base_url=server.url, auth=auth, headers=headers) as http:
        cal = http.request("MKCALENDAR", f"{home}cal{name}/")
        assert cal.status_code == 201, cal.text
        book = (
            '<?xml version="1.0"?><d:mkcol xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:carddav"><d:set><d:prop>'
            "<d:resourcetype><d:collection/><c:addressbook/></d:resourcetype></d:prop></d:set></d:mkcol>"
        )
        made = http.request("MKCOL", f"{home}book{name}/", content=book, headers={"Content-Type": "application/xml"})
        assert made.status_code == 201, made.text
    return f"{home}cal{name}/", f"{home}book{name}/"


@pytest.fixture(scope="session", params=SERVERS)
def target(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Target]:
    kind = request.param
    workdir = tmp_path_factory.mktemp(kind)
    if kind == "radicale":
        with dav_servers.radicale(workdir, {"willi": "secret"}) as server:
            calendar, book = _make(server, "willi", "secret", {}, "/willi/")
            yield Target(kind, server.url, "willi", "secret", calendar, book)
    elif kind == "xandikos":
        with dav_servers.xandikos(workdir) as server:
            headers = server.headers_for("willi")
            # --defaults: the principal's first request creates its calendar and address book.
            assert (
                httpx.request("PROPFIND", f"{server.url}willi/", headers={**headers, "Depth": "0"}).status_code == 207
            )
            calendar, book = "/willi/calendars/calendar/", "/willi/contacts/addressbook/"
            yield Target(kind, server.url, "willi", "unused", calendar, book, headers)
    elif kind == "cyrus":
        with dav_servers.cyrus(workdir, {"willi": "secret"}) as server:
            # Cyrus provisions each user's homes with a calendar and an address book named Default.
            calendar, book = "/dav/calendars/user/willi/Default/", "/dav/addressbooks/user/willi/Default/"
            yield Target(kind, server.url, "willi", "secret", calendar, book, {}, dict(server.timings))
    elif kind == "sogo":
        with dav_servers.sogo(workdir, {"willi": "secret"}) as server:
            # SOGo makes each user's calendar and address book named personal on first use.
            calendar, book = "/SOGo/dav/willi/Calendar/personal/", "/SOGo/dav/willi/Contacts/personal/"
            yield Target(kind, server.url, "willi", "secret", calendar, book, {}, dict(server.timings))
    else:
        with dav_servers.davical(workdir, {"willi": "secret"}) as server:
            home = "/davical/caldav.php/willi/"
            yield Target(
                kind, server.url, "willi", "secret", f"{home}calendar/", f"{home}addresses/", {}, dict(server.timings)
            )
