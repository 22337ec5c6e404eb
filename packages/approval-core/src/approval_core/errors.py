"""The exceptions approval-core raises.

The tree::

    ApprovalError                 base of everything raised here
    ├── SettingsError             an environment variable has a value this family does not accept
    ├── BindingError              a binding target holds a value that has no canonical form
    ├── DialogError               a dialog was built from something other than the server's own words
    └── GuardTableError           a tool name is missing from, or doubled in, a guard table

None of these is an answer from a person: a declined, cancelled or unanswered
dialog is not an exception, it is a :class:`approval_core.NotApproved` decision.
These are programming or configuration errors, raised before anything is asked.
"""

from __future__ import annotations

__all__ = ["ApprovalError", "BindingError", "DialogError", "GuardTableError", "SettingsError"]


class ApprovalError(Exception):
    """Base class of every exception raised by approval-core."""


class SettingsError(ApprovalError):
    """An environment variable holds a value this family does not accept.

    The message names the variable and every valid value; it never repeats a
    secret. Servers turn it into exit code 1 before serving
    (see :func:`approval_core.load_settings_or_exit`).
    """


class BindingError(ApprovalError):
    """A binding target contains a value with no canonical form.

    Raised for non-finite floats, mapping keys that are not strings, and types
    the fingerprint does not know (the message gives the path, e.g.
    ``target.members[2]``).
    """


class DialogError(ApprovalError):
    """A dialog was built in a way that could carry text the server did not write.

    Raised when an operation template names a field that has no count, a count
    is not an integer, or a label or consequence is empty.
    """


class GuardTableError(ApprovalError):
    """A tool is not in the guard table, or a table row is malformed."""
