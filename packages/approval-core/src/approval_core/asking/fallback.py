"""Where nobody can be asked in a dialog and no approval page is set up: token, strict refusal, no store.

The two-call token, the strict profile's refusal, and the refusal when the
record store cannot be reached.

What the token proves, and no more: the call was made twice with the same
arguments (:mod:`approval_core.asking.tokens`). Every text here says so, and says
why nobody was asked.
"""

from __future__ import annotations

from typing import Literal

from approval_core.asking.binding import Binding
from approval_core.asking.decisions import NOTHING_CHANGED, Approved, Decision, NotApproved, PathName
from approval_core.asking.dialog import Question
from approval_core.asking.results import refusal
from approval_core.asking.tokens import Redemption, TokenStore
from approval_core.records.audit import audit
from approval_core.records.store import StoreUnavailable

__all__ = ["TOKEN_REFUSED_TEXT", "Fallback", "NoAskReason"]

NoAskReason = Literal["switched_off", "client_cannot_ask", "no_channel"]
"""Why no dialog could be shown: the server's flag, the client, or the connection."""

TOKEN_REFUSED_TEXT = {
    Redemption.UNKNOWN: (
        "it was not issued by this server (or by a replica sharing its approval store), or it was already used"
    ),
    Redemption.EXPIRED: "it expired",
    Redemption.OTHER_CALL: "it was issued for a different call, and a token fits only the exact call it came with",
}


class Fallback:
    """The refusals of one server's gate where nobody can be asked in a dialog.

    Args:
        server_name: The server's name (in every text and the audit).
        tokens: The gate's confirm-token store.
    """

    def __init__(self, server_name: str, tokens: TokenStore) -> None:
        self.server_name = server_name
        self.tokens = tokens

    def store_unavailable(self, binding: Binding, path: PathName, exc: StoreUnavailable) -> NotApproved:
        """The refusal when the record store cannot be reached (outcome ``store_unavailable``): nothing approved."""
        self._audit("store_unavailable", binding, path, str(exc))
        advice = (
            "The store refused this server's credentials: whoever runs the server must fix APPROVAL_STORE_URL; "
            "trying again will not help."
            if exc.lasting
            else "Try again in a moment."
        )
        text = (
            f"{binding.tool} was not run: {self.server_name} could not reach its approval store, where every "
            "question and confirm token is recorded so that it can be used only once, and it never approves a "
            f"change without that record. {advice} {NOTHING_CHANGED}"
        )
        data = {"outcome": "store_unavailable", "path": path, "changed": False}
        return NotApproved(path, "store_unavailable", refusal(text, data))

    def why_nobody_asked(self, reason: NoAskReason) -> str:
        """One sentence: why no person was asked (the server's flag, the client, or the connection)."""
        if reason == "switched_off":
            return (
                f"{self.server_name} was started with the approval dialog switched off "
                "(ELICITATION=false), so nobody was asked."
            )
        if reason == "client_cannot_ask":
            return "This client cannot ask the user directly (it declared no form elicitation), so nobody was asked."
        return "This connection cannot carry a question to the user, so nobody was asked."

    def refuse(self, binding: Binding, reason: NoAskReason) -> NotApproved:
        """The strict profile's refusal where no dialog can be shown (outcome ``refused``)."""
        self._audit("refused", binding, "strict", reason)
        text = (
            f"{binding.tool} was not run. {self.why_nobody_asked(reason)} {self.server_name} makes this change "
            "only after a person confirms it, in a dialog or on its approval page, so it refuses where neither can "
            "be shown. The way out: whoever runs the server sets up the approval page (APPROVAL_PAGE=true) and "
            "pairs a passkey with it (python -m approval_core pair), so the person approves there from any "
            f"client; or use a client that can show a form dialog. {NOTHING_CHANGED}"
        )
        data = {"outcome": "refused", "path": "strict", "reason": reason, "changed": False}
        return NotApproved("strict", "refused", refusal(text, data))

    async def token(
        self, binding: Binding, dialog: Question, confirm_token: str | None, reason: NoAskReason
    ) -> Decision:
        """Redeem ``confirm_token`` for this call, or refuse and issue a new token.

        Raises:
            StoreUnavailable: the record store cannot be asked.
        """
        refused = ""
        if confirm_token is not None:
            redemption = await self.tokens.redeem(confirm_token, binding.fingerprint)
            if redemption is Redemption.ACCEPTED:
                self._audit("token_redeemed", binding, "token", reason)
                return Approved("token", binding.fingerprint)
            self._audit("token_refused", binding, "token", redemption.value)
            refused = f"The confirm_token given was refused: {TOKEN_REFUSED_TEXT[redemption]}. "
        issued = await self.tokens.issue(binding.fingerprint)
        self._audit("token_issued", binding, "token", reason)
        minutes = issued.ttl / 60
        text = (
            f"{binding.tool} was not run. {refused}{self.why_nobody_asked(reason)}\n\n"
            f"What this call would do:\n\n{dialog.render()}\n\n"
            f'To go ahead, repeat exactly the same call with confirm_token="{issued.token}" within '
            f"{minutes:g} minutes. The token proves only that the call was made twice with the same "
            f"arguments; it does not show that a person approved it. {NOTHING_CHANGED}"
        )
        outcome = "token_refused" if refused else "token_issued"
        data = {
            "outcome": outcome,
            "path": "token",
            "reason": reason,
            "confirm_token": issued.token,
            "expires_in_seconds": issued.ttl,
            "changed": False,
        }
        return NotApproved("token", outcome, refusal(text, data))

    def _audit(self, event: str, binding: Binding, path: PathName, reason: str | None = None) -> None:
        audit(event, server=self.server_name, tool=binding.tool, path=path, fp=binding.fingerprint, reason=reason)
