"""One structured line on stderr for each approval decision.

Logger ``approval_core.records.audit``, level INFO, message ``approval {json}`` with
the keys ``event``, ``server``, ``tool``, ``path``, ``fp`` (the first 12 hex
digits of the binding fingerprint) and, for refusals, ``reason`` (a code
word). Never an argument value, a token, a state or backend text.

Events: ``asked``, ``approved``, ``declined``, ``cancelled``, ``unticked``,
``invalid_answer``, ``client_error``, ``timed_out``, ``caller_gone``, ``token_issued``,
``token_redeemed``, ``token_refused``, ``state_refused``, ``refused``; on the approval page's path also
``page_opened``, ``page_pending``, ``not_paired`` and ``set_approved`` (one line per call of a set the person
approved with one passkey yes, when it is approved; its ``approved`` line follows when the call acts); for
standing grants (path ``grant``, ``reason`` the grant's id) ``grant_made``, ``grant_used``, ``grant_revoked``,
``grant_ended``.
"""

from __future__ import annotations

import json
import logging

__all__ = ["AUDIT_LOGGER", "audit"]

AUDIT_LOGGER = "approval_core.audit"
_logger = logging.getLogger(AUDIT_LOGGER)
# The audit trail is on by default, whatever level a server gives the root logger (carddav-mcp
# keeps the root at WARNING to silence per-request lines): the records still reach the root's
# stderr handler. An operator who wants it off sets this logger's level above INFO.
_logger.setLevel(logging.INFO)


def audit(event: str, *, server: str, tool: str, path: str, fp: str, reason: str | None = None) -> None:
    """Log one decision (see the module docstring for the fields)."""
    record: dict[str, str] = {"event": event, "server": server, "tool": tool, "path": path, "fp": fp[:12]}
    if reason is not None:
        record["reason"] = reason
    _logger.info("approval %s", json.dumps(record, separators=(",", ":")))
