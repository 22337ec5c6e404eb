"""WebDAV XML: PROPFIND and sync-collection bodies, and multistatus answers read safely.

No answer is parsed with a DTD: ``defusedxml`` refuses DTDs, entity
declarations and external references, and the faster C parser reads only an
answer that cannot hold one (:func:`parse_multistatus`), so a server cannot
make the parser fetch anything or expand an entity bomb. Hrefs are normalised to one
percent-encoded path form (:func:`norm_href`) so the same resource always has
the same id, whichever spelling a server used.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import quote, unquote, urlsplit
from xml.etree.ElementTree import Element, fromstring
from xml.sax.saxutils import escape

import defusedxml.ElementTree as SafeET
from defusedxml import DTDForbidden, EntitiesForbidden, ExternalReferenceForbidden

__all__ = [
    "CALDAV",
    "CARDDAV",
    "DAV",
    "HEADER",
    "HREF_SAFE",
    "NS_DECL",
    "DavResponse",
    "MultiStatus",
    "norm_href",
    "parse_multistatus",
    "propfind",
    "qname",
    "sync_collection",
]

DAV = "DAV:"
CARDDAV = "urn:ietf:params:xml:ns:carddav"
CALDAV = "urn:ietf:params:xml:ns:caldav"
CS = "http://calendarserver.org/ns/"
_PREFIXES = {DAV: "d", CARDDAV: "c", CS: "cs", CALDAV: "cal"}
HEADER = '<?xml version="1.0" encoding="utf-8"?>\n'
"""The XML declaration every request body starts with."""
NS_DECL = " ".join(f'xmlns:{prefix}="{namespace}"' for namespace, prefix in _PREFIXES.items())
"""The namespace declarations of a request body: ``d`` DAV, ``c`` CardDAV, ``cs`` CalendarServer, ``cal`` CalDAV."""
HREF_SAFE = "/@:+!$&'()*,;=~-._"
"""Characters kept unescaped in a canonical path (RFC 3986 §3.3 pchar, and the slash)."""

_PLAIN_PATH = re.compile(r"/(?!/)[A-Za-z0-9._~/-]*")
"""A path of unreserved characters only (RFC 3986 §2.3): already in the one form, nothing to decode."""


def norm_href(href: str) -> str:
    """The path of ``href`` (absolute URL or path) in one percent-encoded form (RFC 3986 §6.2.2)."""
    href = href.strip()
    if _PLAIN_PATH.fullmatch(href):
        return href  # what the general rule gives for it, without its cost (a listing has thousands)
    return quote(unquote(urlsplit(href).path), safe=HREF_SAFE)


def qname(name: tuple[str, str]) -> str:
    """``prefix:local`` of a (namespace, local name) pair, with the prefixes of :data:`NS_DECL`."""
    namespace, local = name
    return f"{_PREFIXES[namespace]}:{local}"


def propfind(names: list[tuple[str, str]]) -> str:
    """A PROPFIND body asking for ``names`` (namespace, local name) — RFC 4918 §9.1."""
    props = "".join(f"<{qname(n)}/>" for n in names)
    return f"{HEADER}<d:propfind {NS_DECL}><d:prop>{props}</d:prop></d:propfind>"


def sync_collection(token: str | None) -> str:
    """A sync-collection REPORT body (RFC 6578 §3.2), depth 1, without ``DAV:limit``."""
    tok = f"<d:sync-token>{escape(token)}</d:sync-token>" if token else "<d:sync-token/>"
    return (
        f"{HEADER}<d:sync-collection {NS_DECL}>{tok}<d:sync-level>1</d:sync-level>"
        "<d:prop><d:getetag/></d:prop></d:sync-collection>"
    )


@dataclass
class DavResponse:
    """One ``DAV:response`` of a multistatus (RFC 4918 §14.24).

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
        return [norm_href(h) for h in self.raw_hrefs(namespace, local)]

    def raw_hrefs(self, namespace: str, local: str) -> list[str]:
        """The ``DAV:href`` values inside a found property as the server wrote them (paths or URLs)."""
        element = self.props.get(f"{{{namespace}}}{local}")
        if element is None:
            return []
        return [h.text.strip() for h in element.iter(f"{{{DAV}}}href") if h.text]


@dataclass
class MultiStatus:
    """A parsed 207 answer: its responses and, for sync-collection, the new token (RFC 6578 §6.4)."""

    responses: list[DavResponse]
    sync_token: str | None = None


def _status_code(element: Element | None) -> int | None:
    if element is None or not element.text:
        return None
    parts = element.text.split()
    return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else None


_DECLARED = re.compile(rb"""\s*<\?xml[^>]*?encoding\s*=\s*["']([A-Za-z0-9._-]+)""")
_PLAIN_ENCODINGS = frozenset({b"utf-8", b"utf8", b"us-ascii", b"ascii"})


def _parsed(body: bytes) -> Element:
    """The root of ``body``: by Python's C parser where the body can hold no DTD, else by ``defusedxml``.

    Entities are declared, and external references made, only in a DTD
    (XML 1.0 §2.8). A body in UTF-8 or ASCII (starting with ``<``, no other
    encoding declared, no NUL byte as UTF-16 and UTF-32 have) that does not
    hold ``<!DOCTYPE`` holds none, and the C parser reads it several times faster than
    ``defusedxml``'s (which calls Python for every element); any other body
    goes to ``defusedxml``, which refuses a DTD.
    """
    declared = _DECLARED.match(body)
    plain = body.lstrip()[:1] == b"<" and (declared is None or declared.group(1).lower() in _PLAIN_ENCODINGS)
    if plain and b"<!DOCTYPE" not in body and b"\x00" not in body:
        return fromstring(body)  # noqa: S314 - a body that cannot hold a DTD (checked above) declares no entity
    return SafeET.fromstring(body, forbid_dtd=True)


_PLAIN_TAG = re.compile(r"(\{[A-Za-z0-9!#$%&'()*+,\-./:;=?@_~]{0,200}\})?[A-Za-z_][A-Za-z0-9._-]{0,64}")
"""An element's name as ElementTree writes it (``{namespace}local``) that an error may repeat: no space, quote,
bracket or control character, so it cannot read as a sentence (the family's plain-name rule)."""


def _tag_shown(tag: str) -> str:
    """``tag`` when of :data:`_PLAIN_TAG`'s shape, else a description: the server chose it, and errors reach a model."""
    if _PLAIN_TAG.fullmatch(tag):
        return tag
    return "an element whose name holds a space, a quote or another character no WebDAV element name has"


def parse_multistatus(body: bytes) -> MultiStatus:
    """Parse a 207 Multi-Status body (RFC 4918 §13) without resolving entities.

    Raises:
        ValueError: the body is not well-formed XML, declares any DTD (RFC 4918 §20.6: none is ever
            needed), or is not a multistatus
            (the session turns it into the server's BackendError).
    """
    try:
        root = _parsed(body)
    except (DTDForbidden, EntitiesForbidden, ExternalReferenceForbidden) as exc:
        raise ValueError("it declares a DTD (<!DOCTYPE>), which is never parsed (entity expansion is refused)") from exc
    except SafeET.ParseError as exc:
        raise ValueError(f"malformed XML ({exc})") from exc
    except Exception as exc:
        raise ValueError(f"unreadable XML ({type(exc).__name__})") from exc
    if root.tag != f"{{{DAV}}}multistatus":
        raise ValueError(f"expected a DAV:multistatus, got {_tag_shown(root.tag)}")
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
