"""ntfy-mcp's own settings, read strictly from the environment at startup.

``NTFY_URL``
    Base URL of the ntfy server, ``http://`` or ``https://``, without a user
    name or password in it (those go in the variables below). There is no
    default, so nothing is sent to a public server by accident: without it the
    server starts, lists its tools, and every call says to set it.
``NTFY_TOKEN``
    An ntfy access token (``tk_...``), sent as ``Authorization: Bearer``.
``NTFY_USERNAME`` / ``NTFY_PASSWORD``
    Basic auth instead of a token; both or neither, and never together with
    ``NTFY_TOKEN``. Without any of them the server works anonymously.
``NTFY_TOPICS``
    Comma-separated topic names; the first is the default topic. When set,
    this server publishes and reads only these topics, and refuses to grant
    access rules for any other topic or for a wildcard pattern.
``NTFY_TIMEOUT``
    Seconds one HTTP request to ntfy may take, answer read in full, 1 to 120
    (default 15).
``NTFY_ALLOW_PLAINTEXT``
    ``true`` lets ``NTFY_URL`` be plain ``http://`` to a host that is not this
    machine (default ``false``: refused at start, so credentials never travel
    in clear by accident).
``NTFY_MAX_RESPONSE_BYTES``
    The largest answer read from ntfy, in bytes, 65,536 to 1,073,741,824
    (default 16,777,216 = 16 MiB). A longer answer is refused, not read on.

The approval page's push topic (``APPROVAL_PUSH_URL``, approval-core) is the
person's own channel: ntfy-mcp refuses to start when its tools could read or
publish there (:func:`refuse_the_approval_topic`): when ``NTFY_TOPICS`` lists
that topic, or when ``NTFY_TOPICS`` is unset while the push goes to a topic on
the same ntfy host.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import re
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit

from approval_core.errors import SettingsError
from approval_core.serving.backend_url import refuse_plaintext
from ntfy_mcp.errors import ConfigError

__all__ = ["TOPIC_PATTERN", "NtfySettings", "refuse_the_approval_topic"]

TOPIC_PATTERN = re.compile(r"^[-_A-Za-z0-9]{1,64}$")
"""A topic name (ntfy docs, "Publishing": letters, digits, ``-`` and ``_``, 1 to 64)."""

DEFAULT_TIMEOUT = 15.0
DEFAULT_MAX_RESPONSE_BYTES = 16 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class NtfySettings:
    """Where the ntfy server is and how to authenticate to it.

    Attributes:
        url: Base URL without a trailing slash.
        token: Access token, or None.
        username: Basic-auth user, or None.
        password: Basic-auth password, or None (never logged or shown).
        topics: The allowed topics, first is the default; empty = unbounded.
        timeout: Seconds per HTTP request, answer included.
        max_response_bytes: The largest answer read from ntfy.
    """

    url: str
    token: str | None = None
    username: str | None = None
    password: str | None = None
    topics: tuple[str, ...] = ()
    timeout: float = DEFAULT_TIMEOUT
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES

    def __repr__(self) -> str:
        auth = "token" if self.token else "basic" if self.username else "anonymous"
        return f"NtfySettings(url={self.url!r}, auth={auth}, topics={self.topics!r}, timeout={self.timeout:g})"

    @property
    def default_topic(self) -> str | None:
        """The first of ``NTFY_TOPICS``, or None when it is not set."""
        return self.topics[0] if self.topics else None

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> NtfySettings:
        """Read and check the ``NTFY_*`` variables (see the module docstring).

        Raises:
            ConfigError: ``NTFY_URL`` is missing or not an http(s) URL, a token
                is given together with a username/password, only one of
                username and password is given, a topic in ``NTFY_TOPICS`` is
                not a valid name, or ``NTFY_TIMEOUT`` or ``NTFY_MAX_RESPONSE_BYTES``
                is out of range, or ``NTFY_URL`` is plain ``http://`` to a host that is
                not loopback without ``NTFY_ALLOW_PLAINTEXT=true``
                (:func:`approval_core.serving.backend_url.refuse_plaintext`). No message
                repeats the URL (it may hold a password).
        """
        env = os.environ if environ is None else environ
        url = _url(env.get("NTFY_URL"))
        try:  # plain http:// only to this machine, or with NTFY_ALLOW_PLAINTEXT=true
            refuse_plaintext("NTFY", "NTFY_ALLOW_PLAINTEXT", url, env)
        except SettingsError as exc:
            raise ConfigError(str(exc)) from None
        token = env.get("NTFY_TOKEN") or None
        username = env.get("NTFY_USERNAME") or None
        password = env.get("NTFY_PASSWORD") or None
        if token and (username or password):
            raise ConfigError("set either NTFY_TOKEN or NTFY_USERNAME/NTFY_PASSWORD, not both")
        if bool(username) != bool(password):
            raise ConfigError("NTFY_USERNAME and NTFY_PASSWORD go together: set both or neither")
        return cls(
            url=url,
            token=token,
            username=username,
            password=password,
            topics=_topics(env.get("NTFY_TOPICS")),
            timeout=_timeout(env.get("NTFY_TIMEOUT")),
            max_response_bytes=_max_bytes(env.get("NTFY_MAX_RESPONSE_BYTES")),
        )


_LOOPBACK = "loopback"
_NUMERIC_V4 = re.compile(r"^(0x[0-9a-f]+|[0-9]+)(\.(0x[0-9a-f]+|[0-9]+)){0,3}$")


def _host(url: str) -> str:
    """The host of ``url`` as an address, so two spellings of one host compare equal.

    Lower case, without brackets or a trailing dot, internationalised names
    in their ASCII form (IDNA). An IPv4 address in any form the system's
    resolver takes (``127.1``, ``0x7f.0.0.1``, ``2130706433``: inet_aton,
    as httpx's connection reaches it) becomes its dotted quad; an IPv6
    address its compressed form, an IPv4-mapped one the IPv4 address. Every
    loopback or unspecified address (``127.0.0.0/8``, ``::1``, ``0.0.0.0``,
    ``::``) and every ``localhost`` name is one host: this machine. Ports are
    not part of it (one host may serve ntfy under several).
    """
    host = (urlsplit(url).hostname or "").lower().rstrip(".")
    if not host.isascii():
        with contextlib.suppress(UnicodeError):  # a name IDNA cannot encode stays as written
            host = host.encode("idna").decode("ascii")
    if host == "localhost" or host.endswith(".localhost"):
        return _LOOPBACK
    address: ipaddress.IPv4Address | ipaddress.IPv6Address | None = None
    if _NUMERIC_V4.match(host):
        try:
            address = ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            address = None
    else:
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            address = None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if address is None:
        return host
    if address.is_loopback or address.is_unspecified:
        return _LOOPBACK
    return address.compressed


def _hosts(url: str) -> set[str]:
    """The host of ``url`` as :func:`_host` has it and, for a name, every address it resolves to now.

    A name is a spelling too: this machine's host name, ``ip6-localhost`` or a
    ``*.nip.io`` name reach the same ntfy as the address they resolve to
    (``getaddrinfo``, /etc/hosts first). A name that does not resolve is
    compared as written.
    """
    host = _host(url)
    found = {host}
    if host == _LOOPBACK or _is_address(host):
        return found
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except (OSError, UnicodeError):
        return found
    for info in infos:
        address = str(info[4][0]).split("%", 1)[0]
        found.add(_host(f"http://[{address}]" if ":" in address else f"http://{address}"))
    return found


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def refuse_the_approval_topic(ntfy: NtfySettings, push_url: str | None, push_topic: str | None) -> None:
    """Refuse settings under which ntfy-mcp's tools could reach the approval page's push topic.

    The push carries the links a person opens to approve; a tool that could
    read the topic would hand them to the model, one that could publish there
    could send a person a look-alike. So the topic must be outside what
    ntfy-mcp serves.

    Args:
        ntfy: ntfy-mcp's settings.
        push_url: ``APPROVAL_PUSH_URL`` (approval-core's ``PageSettings.push_url``), or None.
        push_topic: Its topic (``PageSettings.push_topic``), or None.

    Raises:
        ConfigError: ``NTFY_TOPICS`` lists the push topic (on any server: a
            name shared with another server is still refused), or
            ``NTFY_TOPICS`` is unset (every topic) while the push goes to the
            same ntfy host, compared as addresses (:func:`_host`: ``127.1``,
            ``[::1]`` and ``localhost.`` are all this machine; a name also as
            the addresses it resolves to, :func:`_hosts`; scheme and port
            are not compared).
    """
    if push_url is None or push_topic is None:
        return
    if push_topic in ntfy.topics:
        raise ConfigError(
            f"NTFY_TOPICS lists {push_topic!r}, the approval push topic of APPROVAL_PUSH_URL: ntfy-mcp's tools "
            "must not read or publish the person's approval pushes; take it out of NTFY_TOPICS and deny this "
            f"server's ntfy account that topic (ntfy access <user> {push_topic} deny)"
        )
    if not ntfy.topics and _hosts(ntfy.url) & _hosts(push_url):
        raise ConfigError(
            "NTFY_TOPICS is not set, so ntfy-mcp's tools may use every topic of the ntfy server that also carries "
            f"the approval push topic {push_topic!r} (APPROVAL_PUSH_URL): set NTFY_TOPICS to the topics the tools "
            f"may use, without {push_topic!r}"
        )


def _url(raw: str | None) -> str:
    if not raw:
        raise ConfigError(
            "NTFY_URL is not set: give the base URL of your ntfy server, e.g. https://ntfy.example.org "
            "(there is no default, so nothing is sent to a public server by accident)"
        )
    try:
        parts = urlsplit(raw)
        _ = parts.port  # reading the port checks it
    except ValueError:
        raise ConfigError("NTFY_URL is not a URL (its host or port cannot be read)") from None
    if "@" in parts.netloc:
        raise ConfigError(
            "NTFY_URL must not hold a user name or password: put them in NTFY_USERNAME and NTFY_PASSWORD, "
            "or use NTFY_TOKEN"
        )
    if parts.scheme not in {"http", "https"} or not parts.hostname:
        raise ConfigError("NTFY_URL is not an http:// or https:// URL with a host")
    if parts.query or parts.fragment:
        raise ConfigError("NTFY_URL must not have a query or fragment")
    return raw.rstrip("/")


def _topics(raw: str | None) -> tuple[str, ...]:
    if raw is None or not raw.strip():
        return ()
    topics = tuple(name.strip() for name in raw.split(","))
    for name in topics:
        if not TOPIC_PATTERN.match(name):
            raise ConfigError(
                f"NTFY_TOPICS: {name!r} is not a topic name (1-64 letters, digits, '-' or '_'; no wildcards)"
            )
    if len(set(topics)) != len(topics):
        raise ConfigError("NTFY_TOPICS lists a topic twice")
    return topics


def _timeout(raw: str | None) -> float:
    if raw is None:
        return DEFAULT_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not 1 <= value <= 120:
        raise ConfigError(f"NTFY_TIMEOUT={raw!r} is not valid: seconds per request, from 1 to 120")
    return value


def _max_bytes(raw: str | None) -> int:
    if raw is None:
        return DEFAULT_MAX_RESPONSE_BYTES
    value = int(raw) if raw.strip().isdigit() else 0
    if not 65_536 <= value <= 1_073_741_824:
        raise ConfigError(
            f"NTFY_MAX_RESPONSE_BYTES={raw!r} is not valid: the largest answer read from ntfy, "
            "in bytes, from 65536 to 1073741824"
        )
    return value
