"""Standing grants: a yes widened on the approval page, with explicit terms, and the check a call makes.

A person who approved a call on the approval page may widen that yes into a
grant (``APPROVAL_GRANTS=true``; the page's part is :mod:`approval_core.page.grants`).
A grant's :class:`GrantTerms` are exact and all must hold for a later call to
act without asking:

* the server, and the tools it names (the approved call's tool, or several);
* the target: under the ``guarded`` profile the one calendar, address book or
  topic the approved call named (a tool that names no single one is never
  covered); under ``every-write`` exactly the request shapes (method,
  collection URL) the approved call sent, and every request of a later call
  must have one of those shapes;
* the principal (over HTTP: client id, issuer, subject; over stdio none);
* at most ``uses`` calls, and none after ``expires`` (at most
  :data:`MAX_GRANT_MINUTES` after it was made).

The passkey signs the terms: the WebAuthn challenge of the page's grant ceremony
is 16 random bytes followed by the SHA-256 of the terms' canonical JSON
(:func:`grant_challenge`), so the terms a grant is made with are the terms the
authenticator signed (:func:`signs`), and nothing without the person's
authenticator can make or widen one.

Where grants are kept and how a use is counted: :mod:`approval_core.asking.grant_book`.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import secrets
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

from approval_core.asking.binding import PRINCIPAL_KEY, Binding, canonical_json
from approval_core.errors import SettingsError

__all__ = [
    "GRANTS_ENV",
    "MAX_GRANT_MINUTES",
    "MAX_GRANT_USES",
    "GrantCall",
    "GrantTerms",
    "grant_challenge",
    "grants_from_env",
    "request_shapes",
    "shape_of",
    "signs",
]

GRANTS_ENV = "APPROVAL_GRANTS"
MAX_GRANT_MINUTES = 480
"""The longest a grant may last, in minutes (8 hours)."""
MAX_GRANT_USES = 50
"""The most calls one grant may allow."""
NONCE_BYTES = 16

Term = Literal["server", "tool", "target", "principal", "expired"]


def grants_from_env(env: Mapping[str, str], page: bool) -> bool:
    """``APPROVAL_GRANTS``: exactly ``true`` or ``false`` (unset: false); true needs the approval page.

    Raises:
        SettingsError: another value, or ``true`` without ``APPROVAL_PAGE=true``.
    """
    raw = env.get(GRANTS_ENV)
    if raw is None or raw == "false":
        return False
    if raw != "true":
        raise SettingsError(
            f"{GRANTS_ENV}={raw!r} is not a valid value: use exactly 'true' (a person may widen a yes on the "
            "approval page into a standing grant) or 'false' (no grants, the default)"
        )
    if not page:
        raise SettingsError(f"{GRANTS_ENV}=true needs APPROVAL_PAGE=true: grants are made on the approval page")
    return True


def request_shapes(target: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """The shapes of the requests an every-write binding's ``target`` lists (its ``requests``: method, URL, ...)."""
    found: object = target.get("requests")
    if not isinstance(found, list):
        return ()
    lines: list[Any] = found  # pyright: ignore[reportUnknownVariableType]
    return tuple(sorted({shape_of(str(line[0]), str(line[1])) for line in lines}))


def shape_of(method: str, url: str) -> tuple[str, str]:
    """A request's shape: its method and the collection it is in (the URL up to its last ``/``, no query)."""
    parts = urlsplit(url)
    path = parts.path[:-1] if parts.path.endswith("/") else parts.path
    return method.upper(), f"{parts.scheme}://{parts.netloc}{path.rsplit('/', 1)[0]}/"


Principal = tuple[str | None, ...] | None


@dataclass(frozen=True, slots=True)
class GrantCall:
    """What a grant's terms are checked against: one guarded call.

    Attributes:
        server, tool: The server's and the tool's names.
        collection: The one calendar, address book or topic the call names (``guarded``), or None.
        shapes: The shapes of the call's requests (``every-write``), sorted; empty under ``guarded``.
        principal: The caller over HTTP (client id, issuer, subject), None over stdio.
        backend: The configured backend (origin, account) the call acts on, or None when the server names none.
            A collection is a path, the same on two servers (every Nextcloud has
            ``/remote.php/dav/calendars/<user>/personal/``), and stdio configurations of one user share the
            file store: so a grant names its backend too.
    """

    server: str
    tool: str
    collection: str | None
    shapes: tuple[tuple[str, str], ...] = ()
    principal: Principal = None
    backend: Principal = None

    @classmethod
    def of(
        cls,
        binding: Binding,
        collection: str | None,
        shapes: Iterable[tuple[str, str]] = (),
        backend: Iterable[str | None] | None = None,
    ) -> GrantCall:
        """The call ``binding`` binds, naming ``collection`` or sending requests of ``shapes``, on ``backend``."""
        found = binding.target.get(PRINCIPAL_KEY)
        caller = None if found is None else tuple(found)
        where = None if backend is None else tuple(backend)
        return cls(binding.server, binding.tool, collection, tuple(sorted(set(shapes))), caller, where)

    def to_json(self) -> str:
        """The call as JSON (what the page reads to offer a grant)."""
        data = {"server": self.server, "tool": self.tool, "collection": self.collection,
                "shapes": [list(s) for s in self.shapes], "principal": self.principal,
                "backend": self.backend}  # fmt: skip
        return json.dumps(data, separators=(",", ":"))

    @classmethod
    def from_json(cls, raw: str) -> GrantCall | None:
        """The call ``raw`` holds, or None when it is not one."""
        try:
            data = json.loads(raw)
            shapes = tuple((str(m), str(c)) for m, c in data["shapes"])
            caller = None if data["principal"] is None else tuple(data["principal"])
            where = None if data.get("backend") is None else tuple(data["backend"])
            return cls(str(data["server"]), str(data["tool"]), data["collection"], shapes, caller, where)
        except (ValueError, TypeError, KeyError, AttributeError):
            return None


@dataclass(frozen=True, slots=True)
class GrantTerms:
    """The exact terms of one grant, as the passkey signs them.

    Attributes:
        server: The server that holds the grant.
        tools: The tools it covers, sorted.
        collection: The one calendar / book / topic (``guarded``), or None.
        shapes: The request shapes it covers (``every-write``), sorted; empty under ``guarded``.
        principal: Whose calls it covers (None over stdio: any process of this user sharing the file store).
        uses: How many calls it allows, 1 to :data:`MAX_GRANT_USES`.
        expires: Wall-clock seconds (UTC epoch, whole) after which it allows nothing.
        backend: The backend (origin, account) the collection is on, or None when the server names none.
    """

    server: str
    tools: tuple[str, ...]
    collection: str | None
    shapes: tuple[tuple[str, str], ...]
    principal: Principal
    uses: int
    expires: int
    backend: Principal = None

    def as_dict(self) -> dict[str, Any]:
        """The terms as a JSON object (what the page shows and posts back)."""
        return {"server": self.server, "tools": list(self.tools), "collection": self.collection,
                "shapes": [list(s) for s in self.shapes], "principal": None if self.principal is None
                else list(self.principal), "uses": self.uses, "expires": self.expires,
                "backend": None if self.backend is None else list(self.backend)}  # fmt: skip

    def to_json(self) -> str:
        """The terms as compact JSON."""
        return json.dumps(self.as_dict(), separators=(",", ":"))

    @classmethod
    def from_dict(cls, data: object) -> GrantTerms | None:
        """The terms ``data`` holds (as :meth:`as_dict` gives them), or None when it holds none."""
        try:
            if not isinstance(data, dict):
                return None
            found: dict[str, Any] = data  # pyright: ignore[reportUnknownVariableType]
            uses, expires = found["uses"], found["expires"]
            if type(uses) is not int or type(expires) is not int:
                return None
            caller, where = found["principal"], found.get("backend")
            return cls(
                server=str(found["server"]),
                tools=tuple(sorted(str(t) for t in found["tools"])),
                collection=None if found["collection"] is None else str(found["collection"]),
                shapes=tuple(sorted((str(m), str(c)) for m, c in found["shapes"])),
                principal=None if caller is None else tuple(None if p is None else str(p) for p in caller),
                uses=uses,
                expires=expires,
                backend=None if where is None else tuple(None if p is None else str(p) for p in where),
            )
        except (TypeError, KeyError, ValueError):
            return None

    @classmethod
    def from_json(cls, raw: str) -> GrantTerms | None:
        """The terms ``raw`` holds, or None."""
        try:
            return cls.from_dict(json.loads(raw))
        except ValueError:
            return None

    @classmethod
    def widen(cls, call: GrantCall, tools: Iterable[str], uses: int, minutes: int, now: float) -> GrantTerms:
        """The terms that widen the approved ``call`` to ``tools``, ``uses`` calls, for ``minutes`` from ``now``.

        Raises:
            ValueError: ``uses`` or ``minutes`` out of range, or no tool; the message names the field and the rule.
        """
        named = tuple(sorted(set(tools)))
        if not named:
            raise ValueError("tools: name at least one tool")
        if not 1 <= uses <= MAX_GRANT_USES:
            raise ValueError(f"uses: a whole number from 1 to {MAX_GRANT_USES}")
        if not 1 <= minutes <= MAX_GRANT_MINUTES:
            raise ValueError(f"minutes: a whole number from 1 to {MAX_GRANT_MINUTES} (8 hours)")
        expires = math.ceil(now) + minutes * 60
        return cls(call.server, named, call.collection, call.shapes, call.principal, uses, expires, call.backend)

    def digest(self) -> bytes:
        """SHA-256 of the terms' canonical JSON (:func:`~approval_core.asking.binding.canonical_json`)."""
        return hashlib.sha256(canonical_json(self.as_dict()).encode("ascii")).digest()

    def refuses(self, call: GrantCall, now: float) -> Term | None:
        """The first term ``call`` falls outside of at ``now``, or None when all hold (uses are counted apart)."""
        if call.server != self.server:
            return "server"
        if call.tool not in self.tools:
            return "tool"
        if self.shapes:
            if not call.shapes or not set(call.shapes) <= set(self.shapes):
                return "target"
        elif call.collection is None or call.shapes or call.collection != self.collection:
            return "target"
        if call.backend != self.backend:
            return "target"
        if call.principal != self.principal:
            return "principal"
        if now >= self.expires:
            return "expired"
        return None


def grant_challenge(terms: GrantTerms) -> bytes:
    """The WebAuthn challenge of a grant: 16 random bytes, then the SHA-256 of ``terms`` (48 bytes)."""
    return secrets.token_bytes(NONCE_BYTES) + terms.digest()


def signs(challenge: bytes, terms: GrantTerms) -> bool:
    """Whether ``challenge`` (as the passkey signed it) holds exactly ``terms``."""
    return len(challenge) == NONCE_BYTES + 32 and hmac.compare_digest(challenge[NONCE_BYTES:], terms.digest())
