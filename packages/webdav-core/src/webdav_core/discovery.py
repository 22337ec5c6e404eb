"""RFC 6764 discovery: from the configured URL to the current user's principal and home set.

1. PROPFIND the configured URL: a ``current-user-principal`` (RFC 5397) there leads on (``principal``).
2. Otherwise (an error status such as DAViCal's 405 on ``/``, an answer that
   is not a WebDAV multistatus such as the HTML page SOGo's site root leads to,
   or no principal named), PROPFIND the well-known path (RFC 6764 §5, ``/.well-known/carddav``),
   following its redirects on the same origin only (``well-known``).
3. Otherwise the configured URL itself is used (``given URL``).

The principal's home-set property (``Profile.home_set``: RFC 6352 §7.1.1,
RFC 4791 §6.2.1) is the home (all of them, when it lists several). A
principal or home named on another origin is ignored (logged), never reduced
to its path.

A server that answers step 1 without asking for the credentials, naming the
principal ``DAV:unauthenticated`` (RFC 5397 §3, Cyrus on its root), is asked
again once step 2 has been challenged: the password goes only where a 401
asked for it (:class:`~webdav_core.origin.OriginAuth`).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Literal

from webdav_core import xml
from webdav_core.origin import shown
from webdav_core.paths import folder
from webdav_core.session import ConfinedSession
from webdav_core.statuses import raise_for_status
from webdav_core.xml import DAV, DavResponse, norm_href

__all__ = ["Discovery", "discover", "find_home", "find_homes"]

log = logging.getLogger("webdav_core")

Method = Literal["given URL", "principal", "well-known"]


@dataclass(frozen=True)
class Discovery:
    """How the collections were found from the configured URL (RFC 6764 §6, RFC 5397).

    Attributes:
        method: ``principal`` (the configured URL named the current-user-principal),
            ``well-known`` (it did not; the well-known path did), or
            ``given URL`` (no principal anywhere: the configured URL is the collection or the home).
        url: The path of the configured URL.
        well_known: Where the well-known path led (after same-origin redirects), when it was used.
        principal: The principal's path, when one was named.
        home: The (first) home-set path, when one was named.
        homes: Every home-set path named on the origin, in the server's order (``home`` first).
        given_is_collection: With ``given URL``: the configured URL is itself a collection of the
            server's kind (``Profile.collection_type``: a calendar, an address book).
    """

    method: Method
    url: str
    well_known: str | None
    principal: str | None
    home: str | None
    homes: tuple[str, ...] = ()
    given_is_collection: bool = False


def _unauthenticated(response: DavResponse | None) -> bool:
    """Whether ``current-user-principal`` is ``DAV:unauthenticated`` (RFC 5397 §3: no credentials were asked)."""
    return response is not None and response.has_child(DAV, "current-user-principal", (DAV, "unauthenticated"))


def _discovery_props(session: ConfinedSession) -> list[tuple[str, str]]:
    return [(DAV, "resourcetype"), (DAV, "current-user-principal"), session.profile.home_set]


async def probe(session: ConfinedSession, path: str) -> tuple[str, str, DavResponse | None]:
    """PROPFIND Depth 0 at ``path`` for the discovery properties: (what it answered, path that answered, response).

    What it answered is the status (``"404"``), or for a 207 that is no WebDAV multistatus the status and why
    (``"207 that could not be read (...)"``), for the message when nothing is found. An error status is
    returned, not raised (discovery goes on elsewhere), except 401; so is an answer that is not a WebDAV
    multistatus (no response then).

    Raises:
        unauthenticated: 401.
        off_origin / backend: a redirect off the origin or a loop; unreachable, too_large.
    """
    what = f"discovery (PROPFIND {path})"
    answer = await session.exchange(
        "PROPFIND", path, body=xml.propfind(_discovery_props(session)), headers={"Depth": "0"}, what=what,
        xml_answer=False,  # a page that is not XML is no fault here: nothing to find, discovery goes on
    )  # fmt: skip
    answered = norm_href(answer.url) or "/"
    if answer.status_code == 401:
        raise_for_status(answer, what, session.profile)
    media = answer.media_type or ""
    if 200 <= answer.status_code < 300 and media and not media.endswith(("/xml", "+xml")):
        log.info("%s: %s answered, no WebDAV answer; discovery goes on", what, media[:60])
        return f"{answer.status_code} with {media[:60]} that is not a WebDAV XML answer", answered, None
    if answer.status_code != 207:
        return str(answer.status_code), answered, None
    try:
        ms = session.parsed(answer, what)
    except session.profile.errors.backend as exc:
        # HTML, a DTD, other XML: nothing here, discovery goes on (RFC 6764 §6); nothing of it is parsed further
        # (a DTD is refused by the parser before any entity is read).
        log.info("%s: not a WebDAV multistatus (%s); discovery goes on", what, exc)
        return f"207 that is no WebDAV multistatus ({str(exc).removeprefix(what + ': ')})", answered, None
    return "207", answered, (ms.responses[0] if ms.responses else None)


def discovered_path(session: ConfinedSession, name: str, raw: str) -> str | None:
    """A discovered principal or home href as a path, or None (logged) when it points off the configured origin.

    An absolute URL or a scheme-relative ``//host/`` on another server must
    not be reduced to its path: that would widen the scope to whatever path
    it names on this server (``/``). The caller then falls back to the path
    of the configured URL.
    """
    try:
        session.url(raw)
    except session.profile.errors.off_origin:
        log.warning("ignored the %s %s: it is not on %s", name, shown(raw), session.origin_text)
        return None
    return norm_href(raw)


def _principals(session: ConfinedSession, response: DavResponse | None) -> list[str]:
    """The ``current-user-principal`` of a discovery answer, as a path on this origin (or none)."""
    raw = response.raw_hrefs(DAV, "current-user-principal") if response else []
    return [p for p in (discovered_path(session, "current-user-principal", href) for href in raw[:1]) if p]


def _homes(session: ConfinedSession, response: DavResponse | None) -> tuple[str, ...]:
    """The home-set hrefs of an answer that are on the origin, as folder paths, each once."""
    namespace, name = session.profile.home_set
    raw = response.raw_hrefs(namespace, name) if response is not None else []
    found = (discovered_path(session, name, href) for href in raw)
    return tuple(dict.fromkeys(folder(h) for h in found if h))


async def find_homes(session: ConfinedSession, principal: str) -> tuple[str, ...]:
    """The principal's home set (``Profile.home_set``, RFC 6352 §7.1.1 / RFC 4791 §6.2.1); empty when none.

    Raises:
        As :meth:`ConfinedSession.multistatus`: the principal could not be read.
    """
    namespace, name = session.profile.home_set
    ms = await session.multistatus("PROPFIND", principal, xml.propfind([(namespace, name)]), "0", "find the home")
    for response in ms.responses:
        homes = _homes(session, response)
        if homes:
            return homes
    return ()


async def find_home(session: ConfinedSession, principal: str) -> str | None:
    """The principal's (first) home set, or None; see :func:`find_homes`."""
    homes = await find_homes(session, principal)
    return homes[0] if homes else None


async def discover(session: ConfinedSession) -> Discovery:
    """Find the principal and home from the configured URL (see the module docstring).

    Raises:
        unauthenticated: 401 anywhere.
        backend: nothing answered with WebDAV properties (the message says what answered what),
            or a redirect left the origin.
    """
    p = session.profile
    given = norm_href(session.base_url) or "/"
    status, answered, response = await probe(session, given)
    method: Method = "principal"
    well_known: str | None = None
    principal = _principals(session, response)
    if not principal:
        wk_status, wk_answered, wk_response = await probe(session, p.well_known)
        wk_principal = _principals(session, wk_response)
        if _unauthenticated(response) and session.auth.chosen:
            # The configured URL answered without asking for the credentials (RFC 5397 §3); the well-known
            # request was challenged, so they now go with every request: ask the configured URL again.
            status, answered, response = await probe(session, given)
            principal = _principals(session, response)
        if principal:
            pass
        elif wk_principal:
            method, well_known, principal = "well-known", wk_answered, wk_principal
            answered, response = wk_answered, wk_response
        elif response is not None:
            kind = response.has_child(DAV, "resourcetype", p.collection_type)
            return Discovery("given URL", given, None, None, None, (), kind)
        else:
            moved = f" at {wk_answered}" if wk_answered != p.well_known else ""
            raise p.errors.backend(
                f"no {p.collections} could be found from {p.url_setting} (PROPFIND {given} answered HTTP {status}; "
                f"PROPFIND {p.well_known} answered HTTP {wk_status}{moved}; no current-user-principal was named, "
                f"RFC 6764 §6). Set {p.url_setting} to your principal or {p.home_name} URL.",
                int(status[:3]),
            )
    found = folder(principal[0])
    homes = _homes(session, response) if found == answered else ()
    homes = homes or await find_homes(session, found)
    return Discovery(method, given, well_known, found, homes[0] if homes else None, homes)
