"""WebDAV / CardDAV XML: request bodies, and multistatus answers read safely.

Request bodies are small templates (RFC 4918 PROPFIND, RFC 6352 §8.6
addressbook-query and §8.7 addressbook-multiget, RFC 6578 sync-collection,
RFC 5689 extended MKCOL). Answers are parsed with ``defusedxml``, so a
server cannot make the parser fetch external entities or expand entity bombs.
Hrefs are normalised to one percent-encoded path form (:func:`norm_href`) so
the same card always has the same id, whichever spelling a server used.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import quote, unquote, urlsplit
from xml.etree.ElementTree import Element
from xml.sax.saxutils import escape

import defusedxml.ElementTree as SafeET

__all__ = [
    "CARDDAV",
    "DAV",
    "HREF_SAFE",
    "DavResponse",
    "MultiStatus",
    "addressbook_query",
    "addressbook_text_query",
    "mkcol_addressbook",
    "multiget",
    "norm_href",
    "parse_multistatus",
    "propfind",
    "sync_collection",
]

DAV = "DAV:"
CARDDAV = "urn:ietf:params:xml:ns:carddav"
CS = "http://calendarserver.org/ns/"
_PREFIXES = {DAV: "d", CARDDAV: "c", CS: "cs"}
_HEADER = '<?xml version="1.0" encoding="utf-8"?>\n'
_NS_DECL = f'xmlns:d="{DAV}" xmlns:c="{CARDDAV}" xmlns:cs="{CS}"'
HREF_SAFE = "/@:+!$&'()*,;=~-._"
"""Characters kept unescaped in a canonical path (RFC 3986 §3.3 pchar, and the slash)."""


_PLAIN_PATH = re.compile(r"/(?!/)[A-Za-z0-9._~/-]*")
"""A path of unreserved characters only (RFC 3986 §2.3): already in the one form, nothing to decode."""


def norm_href(href: str) -> str:
    """The path of ``href`` (absolute URL or path) in one percent-encoded form."""
    href = href.strip()
    if _PLAIN_PATH.fullmatch(href):
        return href  # what the general rule gives for it, without its cost (a listing has thousands)
    return quote(unquote(urlsplit(href).path), safe=HREF_SAFE)


def _q(name: tuple[str, str]) -> str:
    namespace, local = name
    return f"{_PREFIXES[namespace]}:{local}"


def _props(names: list[tuple[str, str]]) -> str:
    return "".join(f"<{_q(n)}/>" for n in names)


def propfind(names: list[tuple[str, str]]) -> str:
    """A PROPFIND body asking for ``names`` (namespace, local name) — RFC 4918 §9.1."""
    return f"{_HEADER}<d:propfind {_NS_DECL}><d:prop>{_props(names)}</d:prop></d:propfind>"


def _address_data(properties: list[str] | None) -> str:
    if not properties:
        return "<c:address-data/>"
    inner = "".join(f'<c:prop name="{escape(p)}"/>' for p in properties)
    return f"<c:address-data>{inner}</c:address-data>"


def multiget(hrefs: list[str], properties: list[str] | None = None) -> str:
    """An addressbook-multiget REPORT body (RFC 6352 §8.7) for ``hrefs``.

    ``properties`` asks for only those vCard properties; servers may (and
    Radicale and Xandikos do) send the whole card anyway.
    """
    refs = "".join(f"<d:href>{escape(h)}</d:href>" for h in hrefs)
    return (
        f"{_HEADER}<c:addressbook-multiget {_NS_DECL}><d:prop><d:getetag/>{_address_data(properties)}</d:prop>"
        f"{refs}</c:addressbook-multiget>"
    )


def addressbook_query(prop_filters: list[tuple[str, str]], *, anyof: bool = False) -> str:
    """An addressbook-query REPORT body (RFC 6352 §8.6): cards whose property equals a value.

    Args:
        prop_filters: (vCard property name, exact text) pairs.
        anyof: Match a card when any filter matches (default: all must).
    """
    test = "anyof" if anyof else "allof"
    filters = "".join(
        f'<c:prop-filter name="{escape(name)}"><c:text-match collation="i;unicode-casemap" '
        f'match-type="equals">{escape(text)}</c:text-match></c:prop-filter>'
        for name, text in prop_filters
    )
    return (
        f"{_HEADER}<c:addressbook-query {_NS_DECL}><d:prop><d:getetag/><c:address-data/></d:prop>"
        f'<c:filter test="{test}">{filters}</c:filter></c:addressbook-query>'
    )


def addressbook_text_query(names: list[str], text: str, *, address_data: bool = True) -> str:
    """An addressbook-query REPORT body (RFC 6352 §8.6, §10.5.4): cards where any of ``names`` contains ``text``.

    Each property gets a ``prop-filter`` with a ``text-match`` of match-type
    ``contains`` in the ``i;unicode-casemap`` collation (RFC 4790, RFC 5051),
    joined by ``test="anyof"``.

    Args:
        names: vCard property names (``FN``, ``EMAIL`` ...).
        text: The text to look for.
        address_data: Ask for the cards' text (``CARDDAV:address-data``) besides
            their ETags; False asks for ETags only.
    """
    filters = "".join(
        f'<c:prop-filter name="{escape(name)}"><c:text-match collation="i;unicode-casemap" '
        f'match-type="contains">{escape(text)}</c:text-match></c:prop-filter>'
        for name in names
    )
    data = "<c:address-data/>" if address_data else ""
    return (
        f"{_HEADER}<c:addressbook-query {_NS_DECL}><d:prop><d:getetag/>{data}</d:prop>"
        f'<c:filter test="anyof">{filters}</c:filter></c:addressbook-query>'
    )


def sync_collection(token: str | None) -> str:
    """A sync-collection REPORT body (RFC 6578 §3.2), depth 1, without ``DAV:limit``."""
    tok = f"<d:sync-token>{escape(token)}</d:sync-token>" if token else "<d:sync-token/>"
    return (
        f"{_HEADER}<d:sync-collection {_NS_DECL}>{tok}<d:sync-level>1</d:sync-level>"
        "<d:prop><d:getetag/></d:prop></d:sync-collection>"
    )


def mkcol_addressbook(display_name: str) -> str:
    """An extended MKCOL body (RFC 5689) that makes an address book named ``display_name``."""
    return (
        f"{_HEADER}<d:mkcol {_NS_DECL}><d:set><d:prop><d:resourcetype><d:collection/><c:addressbook/>"
        f"</d:resourcetype><d:displayname>{escape(display_name)}</d:displayname></d:prop></d:set></d:mkcol>"
    )


@dataclass
class DavResponse:
    """One ``DAV:response`` of a multistatus.

    Attributes:
        href: Normalised path (see :func:`norm_href`).
        status: The response-level HTTP status, or the status of the found
            properties (200), or 404 when the resource is gone.
        props: Found properties by Clark name (``{DAV:}getetag``).
        raw: The ``DAV:href`` as the server wrote it (a path or an absolute
            URL), for checking where it points before it is used.
    """

    href: str
    status: int
    props: dict[str, Element] = field(default_factory=lambda: {})
    raw: str = ""

    def text(self, namespace: str, local: str) -> str | None:
        """The text of a found property, stripped; None when absent."""
        element = self.props.get(f"{{{namespace}}}{local}")
        if element is None or element.text is None:
            return None
        return element.text.strip()

    def has_child(self, namespace: str, local: str, child: tuple[str, str]) -> bool:
        """Whether a found property contains the element ``child`` (e.g. resourcetype/addressbook)."""
        element = self.props.get(f"{{{namespace}}}{local}")
        return element is not None and element.find(f".//{{{child[0]}}}{child[1]}") is not None

    def hrefs(self, namespace: str, local: str) -> list[str]:
        """The ``DAV:href`` values inside a found property, normalised."""
        element = self.props.get(f"{{{namespace}}}{local}")
        if element is None:
            return []
        return [norm_href(h.text) for h in element.iter(f"{{{DAV}}}href") if h.text]

    def raw_hrefs(self, namespace: str, local: str) -> list[str]:
        """The ``DAV:href`` values inside a found property as the server wrote them (paths or URLs)."""
        element = self.props.get(f"{{{namespace}}}{local}")
        if element is None:
            return []
        return [h.text.strip() for h in element.iter(f"{{{DAV}}}href") if h.text]


@dataclass
class MultiStatus:
    """A parsed 207 answer: its responses and, for sync-collection, the new token."""

    responses: list[DavResponse]
    sync_token: str | None = None


def _status_code(element: Element | None) -> int | None:
    if element is None or not element.text:
        return None
    parts = element.text.split()
    return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None


def parse_multistatus(body: bytes) -> MultiStatus:
    """Parse a 207 Multi-Status body (RFC 4918 §13) without resolving entities.

    Raises:
        ValueError: the body is not XML or not a multistatus (the client
            turns it into a BackendError).
    """
    try:
        root = SafeET.fromstring(body)
    except Exception as exc:
        raise ValueError(f"unreadable XML ({type(exc).__name__})") from exc
    if root.tag != f"{{{DAV}}}multistatus":
        raise ValueError(f"expected a DAV:multistatus, got {root.tag}")
    responses: list[DavResponse] = []
    for node in root.findall(f"{{{DAV}}}response"):
        href_node = node.find(f"{{{DAV}}}href")
        if href_node is None or not href_node.text:
            continue
        found: dict[str, Element] = {}
        status = _status_code(node.find(f"{{{DAV}}}status"))
        for propstat in node.findall(f"{{{DAV}}}propstat"):
            code = _status_code(propstat.find(f"{{{DAV}}}status"))
            prop = propstat.find(f"{{{DAV}}}prop")
            if code == 200 and prop is not None:
                found.update({child.tag: child for child in prop})
                status = status or 200
        responses.append(DavResponse(norm_href(href_node.text), status or 200, found, href_node.text.strip()))
    token_node = root.find(f"{{{DAV}}}sync-token")
    token = token_node.text.strip() if token_node is not None and token_node.text else None
    return MultiStatus(responses, token)
