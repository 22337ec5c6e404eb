"""The approval settings, read strictly from the environment.

The variables are unprefixed so that one export reaches every server of the
family in the same environment:

``ELICITATION``
    Unset or exactly ``true``: guarded tools ask through an MCP elicitation
    dialog. Exactly ``false``: they fall back to the two-call confirm token.
    Anything else (``1``, ``off``, ``yes``, ``TRUE``, an empty string) is an
    error: it is the only variable of the family that defaults to on, so a typo
    that silently fell back to the default would leave the dialog running while
    the operator believed it was off. Matching is case-sensitive on purpose:
    there is exactly one spelling of each value.

``ELICITATION_TIMEOUT``
    Seconds a pushed dialog (protocol 2025-11-25) may stay unanswered before
    the change is abandoned. A decimal number in ``[5, 3600]``; default
    :data:`DEFAULT_DIALOG_TIMEOUT` (90 s), chosen to expire before the 120 s
    idle limit that common load balancers and gateways apply to a quiet
    connection, so an answer can never arrive after the caller was cut off.

``APPROVAL_PROFILE``
    Unset or ``guarded``: each server's guard table says which tools ask
    (the default). ``every-write``: every tool that changes data asks first,
    the dialog lists the exact requests the call will send, and a client that
    cannot show a form is refused outright, never given a confirm token
    (seed 004; :mod:`approval_core.every_write.profile`). ``read-only``: only the
    tools whose declared effects change nothing are served
    (:mod:`approval_core.serving.selection`). Anything else is an error naming
    the three values.

``TOOLS``
    A comma list of tool names, prefixes ending in ``*``, and either after
    ``-`` to leave tools out (``list_*,get_*,create_event``): only those tools
    are served. An entry that matches no tool stops the server when it starts
    (:class:`~approval_core.presets.ToolSelection`).

``APPROVAL_STORE_URL``
    Unset: single-use records (confirm tokens, state nonces) live in this
    process, or, over stdio (``MCP_TRANSPORT`` unset or ``stdio``), in an
    owner-only file in the user's data folder shared by that user's server
    processes (:mod:`approval_core.records.file_store`), so a client that
    starts a process per call can redeem a token. ``redis://[user:pass@]host:port/db`` or ``rediss://...``: they
    live in that Redis, shared by every replica (see
    :mod:`approval_core.records.store`). Requires ``APPROVAL_KEY_FILE``.

``APPROVAL_KEY_FILE``
    A key file shared by the replicas (see :mod:`approval_core.records.keys`): the
    sealing keys of approval-core's state and of the SDK's ``requestState``
    are derived from it. Unset: random keys made at start, per process.

``APPROVAL_GRANTS``
    Exactly ``true``: a person who approved a call on the approval page may
    widen that yes there into a standing grant (these tools, this target, at
    most N uses, at most 8 hours), signed with the passkey
    (:mod:`approval_core.asking.grants`). Unset or ``false``: no grants. Needs
    ``APPROVAL_PAGE=true``; any other value stops the server.

``APPROVAL_UNDO_DAYS``
    Days the undo journal keeps what a guarded change removed, so it can be
    put back (:mod:`approval_core.records.journal`). A whole number in
    ``[0, 90]`` written in plain digits; default 7; ``0`` keeps nothing (the
    dialogs then say that a change cannot be undone). Anything else (``7d``,
    ``-1``, ``07``, an empty string) is an error naming the rule.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from approval_core.asking.grants import GRANTS_ENV, grants_from_env
from approval_core.errors import SettingsError
from approval_core.page.settings import PageSettings
from approval_core.presets import TOOLS_ENV, ToolSelection
from approval_core.records.file_store import default_record_folder
from approval_core.records.keys import KEY_FILE_ENV, KeyRing, read_key_file
from approval_core.seconds import seconds_in_range

__all__ = [
    "DEFAULT_DIALOG_TIMEOUT",
    "ELICITATION_ENV",
    "GRANTS_ENV",
    "KEY_FILE_ENV",
    "PROFILES",
    "PROFILE_ENV",
    "STORE_URL_ENV",
    "TIMEOUT_ENV",
    "TOOLS_ENV",
    "UNDO_DAYS_ENV",
    "ApprovalSettings",
]

ELICITATION_ENV = "ELICITATION"
TIMEOUT_ENV = "ELICITATION_TIMEOUT"
STORE_URL_ENV = "APPROVAL_STORE_URL"
PROFILE_ENV = "APPROVAL_PROFILE"
UNDO_DAYS_ENV = "APPROVAL_UNDO_DAYS"
DEFAULT_UNDO_DAYS = 7
MAX_UNDO_DAYS = 90
PROFILES = ("guarded", "every-write", "read-only")
"""The values of ``APPROVAL_PROFILE``; the first is the default."""
Profile = Literal["guarded", "every-write", "read-only"]
STORE_SCHEMES = ("redis", "rediss")
DEFAULT_DIALOG_TIMEOUT = 90.0
MIN_DIALOG_TIMEOUT = 5.0
MAX_DIALOG_TIMEOUT = 3600.0


@dataclass(frozen=True, slots=True)
class ApprovalSettings:
    """How guarded tools ask, as configured for this process.

    Attributes:
        elicitation: True to ask through a dialog; False to use the two-call
            confirm token for every guarded call (the guard stays on).
        dialog_timeout: Seconds a pushed dialog may stay unanswered (float).
        store_url: The Redis URL of the shared record store, or None for the
            in-process store.
        key_ring: The keys of ``APPROVAL_KEY_FILE``, or None for random
            per-process keys.
        page: The approval page's settings (``APPROVAL_PAGE=true``), or None
            for no page (:mod:`approval_core.page.settings`).
        profile: ``guarded`` (the guard tables decide), ``every-write``
            (every tool that changes data asks; seed 004) or ``read-only``
            (only the tools that change nothing are served).
        record_folder: Where the owner-only file store keeps the records
            (over stdio without ``store_url``), or None for this process.
        tools: ``TOOLS``: which tools are served, or None for all of them.
        grants: ``APPROVAL_GRANTS=true``: yeses may be widened into standing grants on the page.
        undo_days: Days the undo journal keeps a guarded change's pre-image; 0: none kept.
    """

    elicitation: bool = True
    dialog_timeout: float = DEFAULT_DIALOG_TIMEOUT
    store_url: str | None = None
    key_ring: KeyRing | None = None
    page: PageSettings | None = None
    profile: Profile = "guarded"
    record_folder: Path | None = None
    tools: ToolSelection | None = None
    grants: bool = False
    undo_days: int = DEFAULT_UNDO_DAYS

    @property
    def every_write(self) -> bool:
        """True under ``APPROVAL_PROFILE=every-write``."""
        return self.profile == "every-write"

    @property
    def read_only(self) -> bool:
        """True under ``APPROVAL_PROFILE=read-only``."""
        return self.profile == "read-only"

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ApprovalSettings:
        """Read the settings from ``environ`` (default: ``os.environ``).

        Raises:
            SettingsError: ``APPROVAL_PROFILE`` is not ``guarded``,
                ``every-write`` or ``read-only``; ``TOOLS`` is empty or has an
                entry that is not a tool name or prefix; ``ELICITATION`` is set to anything but ``true`` or
                ``false``, or ``ELICITATION_TIMEOUT`` is not a number of
                seconds in range; ``APPROVAL_STORE_URL`` is not a
                ``redis://`` or ``rediss://`` URL with a host, or is set
                without ``APPROVAL_KEY_FILE``; the key file is unreadable,
                open to group or others, or holds a key shorter than 32
                bytes; an ``APPROVAL_PAGE*`` or ``APPROVAL_PUSH*`` value
                breaks its rule; ``APPROVAL_GRANTS`` is not ``true`` or ``false``, or ``true`` without
                the page; ``APPROVAL_UNDO_DAYS`` is not a whole number of days in ``[0, 90]``. The
                message names the variable and the rule.
        """
        env = os.environ if environ is None else environ
        page = PageSettings.from_env(env)
        store_url = _parse_store_url(env.get(STORE_URL_ENV))
        key_file = env.get(KEY_FILE_ENV)
        if key_file == "":
            raise SettingsError(f"{KEY_FILE_ENV} is set but empty: give the path of the key file, or unset it")
        if store_url is not None and key_file is None:
            raise SettingsError(
                f"{STORE_URL_ENV} is set but {KEY_FILE_ENV} is not: replicas that share records must share "
                "the sealing keys too (make one with: python -m approval_core keys new FILE)"
            )
        return cls(
            elicitation=_parse_flag(env.get(ELICITATION_ENV)),
            dialog_timeout=_parse_timeout(env.get(TIMEOUT_ENV)),
            store_url=store_url,
            key_ring=None if key_file is None else read_key_file(key_file),
            page=page,
            profile=_parse_profile(env.get(PROFILE_ENV)),
            record_folder=default_record_folder(env)
            if store_url is None and env.get("MCP_TRANSPORT", "stdio") == "stdio"
            else None,
            tools=ToolSelection.parse(env.get(TOOLS_ENV)),
            grants=grants_from_env(env, page is not None),
            undo_days=_parse_undo_days(env.get(UNDO_DAYS_ENV)),
        )


def _parse_store_url(raw: str | None) -> str | None:
    if raw is None:
        return None
    rule = "use redis://[user:pass@]host:port/db or rediss://... (TLS), or unset it for the in-process store"
    try:
        parts = urlsplit(raw)
        port = parts.port
        path = parts.path
    except ValueError:
        raise SettingsError(f"{STORE_URL_ENV} is not a valid URL: {rule}") from None
    scheme = parts.scheme.lower()
    if scheme not in STORE_SCHEMES:
        shown = f"{scheme!r}" if scheme else "none"
        raise SettingsError(f"{STORE_URL_ENV} has scheme {shown}: {rule}")
    if not parts.hostname:
        raise SettingsError(f"{STORE_URL_ENV} names no host: {rule}")
    if port == 0:
        raise SettingsError(f"{STORE_URL_ENV} has port 0: {rule}")
    database = path.strip("/")
    if database and not database.isdigit():
        raise SettingsError(f"{STORE_URL_ENV} names database {database!r}, not a number: {rule}")
    return raw


def _parse_profile(raw: str | None) -> Profile:
    if raw is None or raw == "guarded":
        return "guarded"
    if raw == "every-write":
        return "every-write"
    if raw == "read-only":
        return "read-only"
    raise SettingsError(
        f"{PROFILE_ENV}={raw!r} is not a valid value: use exactly 'guarded' (each server's guard table decides "
        "which tools ask, the default), 'every-write' (every tool that changes data asks first) or 'read-only' "
        "(only the tools that read are served)"
    )


def _parse_flag(raw: str | None) -> bool:
    if raw is None or raw == "true":
        return True
    if raw == "false":
        return False
    raise SettingsError(
        f"{ELICITATION_ENV}={raw!r} is not a valid value: use exactly 'true' (ask through a dialog, "
        "the default) or 'false' (fall back to the two-call confirm token)"
    )


def _parse_timeout(raw: str | None) -> float:
    what = "the seconds a dialog may wait for an answer"
    return seconds_in_range(TIMEOUT_ENV, raw, what, MIN_DIALOG_TIMEOUT, MAX_DIALOG_TIMEOUT, DEFAULT_DIALOG_TIMEOUT)


def _parse_undo_days(raw: str | None) -> int:
    if raw is None:
        return DEFAULT_UNDO_DAYS
    if not (raw.isascii() and raw.isdigit()) or (len(raw) > 1 and raw[0] == "0") or int(raw) > MAX_UNDO_DAYS:
        raise SettingsError(
            f"{UNDO_DAYS_ENV}={raw!r} is not a valid value: give a whole number of days from 0 to {MAX_UNDO_DAYS} in "
            f"plain digits (how long a guarded change can be undone; default {DEFAULT_UNDO_DAYS}; 0 keeps nothing)"
        )
    return int(raw)
