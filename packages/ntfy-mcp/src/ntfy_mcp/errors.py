"""The exceptions of ntfy-mcp, one tree rooted in :class:`NtfyMcpError`.

::

    NtfyMcpError                      anything this package raises on purpose
    ├── ConfigError                   NTFY_* environment is missing or wrong (startup)
    ├── InputError                    a tool argument breaks a rule (names the field)
    ├── OutsideAllowedTopics          a topic is not in NTFY_TOPICS, or a wildcard grant while it is set
    ├── ChangedMeanwhile              what a dialog was built from changed before the answer came
    └── BackendError                  ntfy could not do what was asked
        ├── NtfyRejected              ntfy answered with its JSON error {"code","http","error"}
        ├── NtfyUnavailable           no answer, a timeout, a 5xx, or a reply that is not ntfy's
        └── UnsupportedServer         the server is too old for the operation (ntfy < 2.16)

Backend errors are raised only by :mod:`ntfy_mcp.client`, the one place where
HTTP replies become these exceptions, and by :mod:`ntfy_mcp.outputs`, where a
message in a reply whose value is not of its field's type is refused (the
field named, never the value). Tools let them propagate: the error
boundary (``approval_core.install_error_boundary``, installed in
:func:`ntfy_mcp.server.build_server`) turns every ``NtfyMcpError`` into a tool
error with exactly its text; no message ever carries a password or an access
token.
"""

from __future__ import annotations

__all__ = [
    "BackendError",
    "ChangedMeanwhile",
    "ConfigError",
    "InputError",
    "NtfyMcpError",
    "NtfyRejected",
    "NtfyUnavailable",
    "OutsideAllowedTopics",
    "UnsupportedServer",
]


class NtfyMcpError(Exception):
    """Base of every error ntfy-mcp raises on purpose."""


class ConfigError(NtfyMcpError):
    """The ``NTFY_*`` environment is missing or inconsistent; the message names the variable."""


class InputError(NtfyMcpError):
    """A tool argument breaks a rule; the message names the field and the rule."""


class OutsideAllowedTopics(NtfyMcpError):
    """A topic outside ``NTFY_TOPICS``, or a wildcard access rule while ``NTFY_TOPICS`` is set."""


class ChangedMeanwhile(NtfyMcpError):
    """What an approval was given for changed between reading it and the answer; nothing was done.

    A notification's newest revision, or a user's role and access rules.
    """


class BackendError(NtfyMcpError):
    """ntfy could not do what was asked."""


class NtfyRejected(BackendError):
    """ntfy answered with an error document (ntfy docs, "Error codes").

    Attributes:
        status: The HTTP status (e.g. 403).
        code: ntfy's five-digit error code (e.g. 40301), or 0 when absent.
        reason: ntfy's ``error`` text (never contains a credential), as
            ``approval_core.serving.stored_text.name_in_text`` shows it: fenced unless a plain name.
        meaning: What the status means for the caller, e.g. for 403 that the
            account is not allowed, for 401 that the credentials were not accepted.
    """

    def __init__(self, status: int, code: int, reason: str, meaning: str = "ntfy refused the request") -> None:
        self.status = status
        self.code = code
        self.reason = reason
        self.meaning = meaning
        super().__init__(f"{meaning} (HTTP {status}, code {code}): {reason}")


class NtfyUnavailable(BackendError):
    """ntfy did not answer usefully: connection refused, a timeout, a 5xx, or not ntfy's JSON."""


class UnsupportedServer(BackendError):
    """The server cannot do this safely: revising, clearing and deleting need ntfy 2.16 or newer."""
