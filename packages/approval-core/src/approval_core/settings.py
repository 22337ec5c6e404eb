"""The approval settings, read strictly from the environment.

Two variables, both unprefixed so that one export reaches every server of the
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
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass

from approval_core.errors import SettingsError

__all__ = [
    "DEFAULT_DIALOG_TIMEOUT",
    "ELICITATION_ENV",
    "TIMEOUT_ENV",
    "ApprovalSettings",
]

ELICITATION_ENV = "ELICITATION"
TIMEOUT_ENV = "ELICITATION_TIMEOUT"
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
    """

    elicitation: bool = True
    dialog_timeout: float = DEFAULT_DIALOG_TIMEOUT

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> ApprovalSettings:
        """Read the settings from ``environ`` (default: ``os.environ``).

        Raises:
            SettingsError: ``ELICITATION`` is set to anything but ``true`` or
                ``false``, or ``ELICITATION_TIMEOUT`` is not a number of
                seconds in range. The message names the variable and the
                valid values.
        """
        env = os.environ if environ is None else environ
        return cls(
            elicitation=_parse_flag(env.get(ELICITATION_ENV)),
            dialog_timeout=_parse_timeout(env.get(TIMEOUT_ENV)),
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
    if raw is None:
        return DEFAULT_DIALOG_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (MIN_DIALOG_TIMEOUT <= value <= MAX_DIALOG_TIMEOUT):
        raise SettingsError(
            f"{TIMEOUT_ENV}={raw!r} is not valid: give the seconds a dialog may wait for an answer, "
            f"a number from {MIN_DIALOG_TIMEOUT:g} to {MAX_DIALOG_TIMEOUT:g} (default {DEFAULT_DIALOG_TIMEOUT:g})"
        )
    return value
