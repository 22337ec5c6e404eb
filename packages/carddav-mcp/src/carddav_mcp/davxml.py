"""CardDAV XML: the request bodies that are CardDAV's own, over the WebDAV layer's XML.

Request bodies are small templates (RFC 6352 §8.6 addressbook-query and §8.7
addressbook-multiget, RFC 5689 extended MKCOL of an address book). PROPFIND
and sync-collection bodies, multistatus parsing (``defusedxml``: no DTDs, no
entities) and the one href form (:func:`norm_href`) come from
:mod:`webdav_core.xml` and are re-exported here for the tools.
"""

from __future__ import annotations

from xml.sax.saxutils import escape

from webdav_core.xml import (
    CARDDAV,
    DAV,
    HEADER,
    HREF_SAFE,
    NS_DECL,
    DavResponse,
    MultiStatus,
    norm_href,
    parse_multistatus,
    propfind,
    sync_collection,
)

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

_HEADER = HEADER
_NS_DECL = NS_DECL


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


def mkcol_addressbook(display_name: str) -> str:
    """An extended MKCOL body (RFC 5689) that makes an address book named ``display_name``."""
    return (
        f"{_HEADER}<d:mkcol {_NS_DECL}><d:set><d:prop><d:resourcetype><d:collection/><c:addressbook/>"
        f"</d:resourcetype><d:displayname>{escape(display_name)}</d:displayname></d:prop></d:set></d:mkcol>"
    )
