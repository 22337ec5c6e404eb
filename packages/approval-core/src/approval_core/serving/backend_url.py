"""Whether a backend URL may be used without TLS: plain ``http://`` only to this machine, unless allowed.

Every server of the family sends its backend credentials (Basic authentication, a bearer token) with each
request. Over plain ``http://`` to another host they travel in clear. So a server refuses to start with a
backend URL ``http://<host>`` whose host is not a loopback address, unless the operator says so with
``<PREFIX>_ALLOW_PLAINTEXT=true`` (``CALDAV_``, ``CARDDAV_``, ``NTFY_``): a private network, a sidecar, a
TLS-terminating proxy on the same host under another name.

The host is compared as an address (:func:`loopback_host`): ``127.0.0.0/8``, ``::1``, an IPv4-mapped
loopback address (``::ffff:127.0.0.1``), and ``localhost`` or a name under ``.localhost`` (RFC 6761 §6.3:
always the loopback). A name that merely resolves to 127.0.0.1 today is not trusted to do so tomorrow.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from urllib.parse import urlsplit

from approval_core.errors import SettingsError

__all__ = ["loopback_host", "loopback_url", "refuse_plaintext"]


def loopback_host(host: str) -> bool:
    """Whether ``host`` (a URL's host, brackets and a trailing dot allowed) is a loopback address or name."""
    name = host.strip("[]").rstrip(".").lower()
    if name == "localhost" or name.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(name.partition("%")[0])
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped.is_loopback
    return address.is_loopback


def loopback_url(url: str) -> bool:
    """Whether ``url``'s host is a loopback address or name (:func:`loopback_host`); False when it has none."""
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return False
    return bool(host) and loopback_host(host or "")


def refuse_plaintext(prefix: str, variable: str, url: str | None, environ: Mapping[str, str]) -> bool:
    """Refuse ``<PREFIX>_URL`` over plain ``http://`` to a host that is not loopback, unless allowed.

    Args:
        prefix: The server's variable prefix (``CALDAV``, ``CARDDAV``, ``NTFY``).
        variable: The server's setting that allows plain HTTP, ``<PREFIX>_ALLOW_PLAINTEXT``, named in full
            in the server's own settings module (where the list of the settings it reads is taken from).
        url: The configured backend URL, or None when it is not set.
        environ: The environment, for ``<PREFIX>_ALLOW_PLAINTEXT``.

    Returns:
        Whether ``<PREFIX>_ALLOW_PLAINTEXT=true`` was given.

    Raises:
        SettingsError: ``<PREFIX>_ALLOW_PLAINTEXT`` is set to anything but ``true`` or ``false``; or the URL is
            ``http://`` to a host that is not loopback and plain HTTP is not allowed. The message names both
            variables, never the URL (it might hold a password).
    """
    raw = environ.get(variable)
    if raw not in (None, "true", "false"):
        raise SettingsError(
            f"{variable}={raw!r} is not a valid value: use exactly 'true' (allow plain http:// to another host) "
            "or 'false' (the default)"
        )
    allowed = raw == "true"
    if url is None or allowed:
        return allowed
    try:
        scheme = urlsplit(url).scheme.lower()
    except ValueError:
        return allowed  # the server's own URL check says what is wrong with it
    if scheme == "http" and not loopback_url(url):
        raise SettingsError(
            f"{prefix}_URL uses plain http:// to a host that is not this machine, so the credentials would travel "
            f"unencrypted: use https://, or set {variable}=true if the network between them is private"
        )
    return allowed
