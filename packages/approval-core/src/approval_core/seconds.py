"""Reading one number of seconds from the environment, strictly (shared by the family's settings)."""

from __future__ import annotations

import math

from approval_core.errors import SettingsError

__all__ = ["seconds_in_range"]


def seconds_in_range(name: str, raw: str | None, what: str, low: float, high: float, default: float) -> float:
    """``raw`` (the value of the variable ``name``) as seconds in ``[low, high]``, or ``default`` when unset.

    Raises:
        SettingsError: ``raw`` is not a number in range; the message names the variable, ``what`` it is
            (``"the seconds a dialog may wait for an answer"``), the range and the default.
    """
    if raw is None:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (low <= value <= high):
        raise SettingsError(
            f"{name}={raw!r} is not valid: give {what}, a number from {low:g} to {high:g} (default {default:g})"
        )
    return value
