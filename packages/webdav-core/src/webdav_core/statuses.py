"""The one translation of an HTTP error status (RFC 9110 §15) into a server's error, in its words."""

from __future__ import annotations

from typing import NoReturn

from webdav_core.answer import Answer
from webdav_core.errors import ERROR_BODY_BYTES
from webdav_core.profile import Profile

__all__ = ["raise_for_status"]


def raise_for_status(answer: Answer, what: str, profile: Profile) -> NoReturn:
    """Translate an error status (RFC 9110 §15) into the server's error, in its words.

    Args:
        answer: An answer with a status of 300 or more.
        what: What was being done (``"read /u/book/"``), the start of the message.
        profile: The server's names and exception classes.

    Raises:
        unauthenticated: 401.  forbidden: 403.  not_found: 404, 410.
        conflict: 409, or a body naming a UID conflict (RFC 4791 §5.3.2.1, RFC 6352 §6.3.2.1).
        precondition_failed: 412 without one of ``profile.data_preconditions`` in the body.
        rejected: 400, 415, 422, or 412 naming a data precondition.
        backend: anything else (a 3xx without a Location included).
    """
    status = answer.status_code
    text = answer.content[:ERROR_BODY_BYTES].decode("utf-8", errors="replace")
    errors, item = profile.errors, profile.item
    if status == 401:
        raise errors.unauthenticated(
            f"{what}: the {profile.server} refused these credentials (401); check {profile.credential_settings}.",
            status,
        )
    if status == 403:
        raise errors.forbidden(
            f"{what}: the {profile.server} answered 403 Forbidden: this account may not do that there (the "
            f"credentials were accepted; for example, {profile.collections} shared with it read-only). "
            "Nothing was changed.",
            status,
        )
    if status in {404, 410}:
        raise errors.not_found(f"{what}: the {profile.server} answered {status}: it is not there (any more).", status)
    if status == 409 or "uid-conflict" in text:
        raise errors.conflict(
            f"{what}: the {profile.server} reported a conflict ({status}); a {item} with that UID may exist.", status
        )
    named = any(name in text for name in profile.data_preconditions)
    if status == 412 and not named:
        raise errors.precondition_failed(
            f"{what}: the {item} changed on the server since it was read (412 Precondition Failed). "
            "Nothing was written. Read it again and decide on the current version (nothing was changed by this call).",
            status,
        )
    if status in {400, 412, 415, 422}:
        raise errors.rejected(f"{what}: the server refused the {profile.data_name} as invalid ({status}).", status)
    raise errors.backend(f"{what}: the {profile.server} answered HTTP {status}.", status)
