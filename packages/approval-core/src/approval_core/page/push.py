"""A push to the person's own ntfy topic for each pending approval (``APPROVAL_PUSH_URL``).

ntfy has no end-to-end encryption: whoever runs the ntfy server, and anyone
allowed to read the topic, reads the push. So it carries only the server's
name, the tool's name, the code and a ``view`` action opening the approval
page (ntfy docs, "Publishing": JSON publishing, action buttons); never a
caller's value or anything read from a backend. Opening the page approves
nothing: approving needs the paired passkey.

The push also carries the operation in the server's own words and counts
(the dialog's headline), so a person approving from another device can see
that the page asks the same thing as the push.

A push that fails is logged on stderr and otherwise ignored: the refusal the
tool returns carries the same link and code, so the person is never left
without them.
"""

from __future__ import annotations

import logging
from pathlib import Path

__all__ = ["PUSH_TIMEOUT", "Push"]

PUSH_TIMEOUT = 5.0
"""Seconds one push may take in all."""

_logger = logging.getLogger("approval_core.push")


class Push:
    """Publishes to one ntfy topic.

    Args:
        url: The topic URL (``https://ntfy.example.org/<topic>``), checked by
            :class:`~approval_core.page.settings.PageSettings`.
        token_file: A file holding an ntfy access token, or None; read on each push.
    """

    def __init__(self, url: str, token_file: Path | None = None) -> None:
        base, _, topic = url.rstrip("/").rpartition("/")
        self.base = base
        self.topic = topic
        self.token_file = token_file

    def _headers(self) -> dict[str, str]:
        if self.token_file is None:
            return {}
        token = self.token_file.read_text(encoding="utf-8").strip()
        return {"Authorization": f"Bearer {token}"}

    async def send(self, title: str, message: str, page_url: str | None) -> bool:
        """Publish one message (title and text are the server's own words); True when ntfy accepted it."""
        import httpx  # here, not at the top: a server's start (up to its first tool list) never pushes

        body: dict[str, object] = {"topic": self.topic, "title": title, "message": message, "priority": 4}
        if page_url is not None:
            body["actions"] = [{"action": "view", "label": "Open the approval page", "url": page_url, "clear": True}]
        try:
            async with httpx.AsyncClient(timeout=PUSH_TIMEOUT, follow_redirects=False) as client:
                reply = await client.post(self.base + "/", json=body, headers=self._headers())
        except (httpx.HTTPError, OSError) as exc:
            _logger.warning("the approval push to %s could not be sent (%s)", self.topic, type(exc).__name__)
            return False
        if reply.status_code != 200:
            _logger.warning("the approval push to %s was refused with HTTP %s", self.topic, reply.status_code)
            return False
        return True

    async def pending(self, server: str, headline: str, code: str, page_url: str) -> bool:
        """Announce a pending approval: the server, the operation in its own words and counts, the code, a link.

        The headline is the dialog's first line (:meth:`~approval_core.Dialog.headline`): the server's template
        filled only with numbers it computed, never a caller's value or backend text. Seeing it on the phone
        lets the person check that the page they approve on asks the same thing.
        """
        return await self.send(f"{server} asks for your approval", f"{headline} (code {code})", page_url)

    async def paired(self, server: str) -> bool:
        """Announce that a passkey was added to the approval page."""
        return await self.send(
            "A passkey was added to your approval page",
            f"Paired through {server}. If this was not you, remove it from the passkey file.",
            None,
        )

    async def left_out(self, server: str, count: int, path: Path) -> bool:
        """Warn that ``count`` entries of the passkey file at ``path`` approve nothing (no valid vouch)."""
        return await self.send(
            "A passkey in your approval page's file approves nothing",
            f"{server} ignores {count} passkey(s) in {path}: not added by pairing, or their vouch does not verify. "
            "If you did not change that file, something on this machine wrote to it.",
            None,
        )

    async def first_changed(self, server: str, path: Path) -> bool:
        """Announce that the first passkey in ``path`` (the one every other must chain from) is new to this machine."""
        return await self.send(
            "Your approval page has a new first passkey",
            f"{server} found a first passkey in {path} it had not seen there before. If you did not pair it "
            "or replace that file, something on this machine did: delete the file and pair again.",
            None,
        )
