"""Read-only views: what a form dialog's question touches, on the approval page, for the person only.

A form dialog (a pushed ``elicitation/create``, or ``input_required``) may
carry no text read from a backend: its message is a channel an assistant can
read. When the approval page is set up, the dialog instead gets one line of
the server's own, ``See what this changes: <link>``, to a view on the page
that shows the dialog's words and what the change touches as stored
(:class:`~approval_core.page.stored.StoredView`).

A view:

* is addressed by 128 random bits (``secrets.token_urlsafe(16)``), the only
  thing its link carries: nothing stored is in the message itself;
* needs no passkey and changes nothing: it has no buttons and no POST route;
  the answer is given in the dialog;
* is bound to the pending question (its binding fingerprint) and lives as
  long as it: the dialog's timeout for a pushed form, the sealed state's
  lifetime for ``input_required``; when the question is answered, asked
  afresh or abandoned, the view is closed and shows nothing stored any more.

The link is added to the form's message only, never to the text the
approval binds (:data:`~approval_core.asking.binding.DIALOG_KEY`), so a
2026-07-28 retry, whose dialog has no link, still matches its fingerprint.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable

from approval_core.asking.answers import LINK_LABEL
from approval_core.asking.binding import Binding
from approval_core.asking.dialog import Question
from approval_core.page.pending import PendingApproval
from approval_core.page.stored import StoredView
from approval_core.records.store import RecordStore

__all__ = ["LINK_LABEL", "ReadOnlyViews", "with_link"]


def with_link(message: str, link: str | None) -> str:
    """A form dialog's ``message`` with the view's link as its last line (unchanged without a link)."""
    return message if link is None else f"{message}\n\n{LINK_LABEL} {link}"


class ReadOnlyViews:
    """Opens, finds and closes the read-only views of one server's form dialogs (see the module docstring).

    Args:
        store: The gate's record store (shared by replicas through Redis).
        server_name: The server whose views these are.
        clock: Wall-clock seconds (tests).

    Every method may raise :class:`~approval_core.records.store.StoreUnavailable`.
    """

    def __init__(self, store: RecordStore, server_name: str, *, clock: Callable[[], float] = time.time) -> None:
        self.store = store
        self.server_name = server_name
        self._clock = clock

    async def open(
        self, binding: Binding, dialog: Question, stored: StoredView | None, ttl: float, *, alone: bool = True
    ) -> PendingApproval:
        """A new view of the question ``binding`` / ``dialog``, alive ``ttl`` seconds.

        With ``alone`` (a 2026-07-28 question asked afresh) the earlier view of the same fingerprint is closed;
        without it (a pushed dialog) an earlier view stays, since the same call made twice at once has two
        dialogs open, each with its own view, closed by its id (:meth:`close`).
        """
        if alone:
            await self.close(binding.fingerprint)
        now = self._clock()
        record = PendingApproval(
            id=secrets.token_urlsafe(16),
            code="",
            server=self.server_name,
            tool=binding.tool,
            fingerprint=binding.fingerprint,
            headline=dialog.headline(),
            consequence=dialog.consequence,
            caller_values=dialog.shown_values(),
            created=now,
            expires=now + ttl,
            stored=None if stored is None else stored.to_json(),
        )
        await self.store.write("view", record.id, record.to_json(), ttl, only_new=True)
        await self.store.write("view-of", binding.fingerprint, record.id, ttl, only_new=False)
        return record

    async def get(self, view_id: str) -> PendingApproval | None:
        """The live view under ``view_id``, or None (never opened, closed, or expired)."""
        raw = await self.store.read("view", view_id)
        record = None if not raw else PendingApproval.from_json(raw)
        if record is None or record.id != view_id or record.server != self.server_name:
            return None
        return record if record.expires > self._clock() else None

    async def close(self, fingerprint: str, view_id: str | None = None) -> None:
        """Close a view of the question ``fingerprint`` (it was answered, asked afresh or abandoned).

        ``view_id`` names the view (a pushed dialog closes its own); without it, the newest view opened for
        ``fingerprint`` is closed.
        """
        newest = await self.store.read("view-of", fingerprint)
        closing = view_id or newest
        if closing:
            await self.store.write("view", closing, "", 1.0, only_new=False)
        if newest and newest == closing:
            await self.store.write("view-of", fingerprint, "", 1.0, only_new=False)
