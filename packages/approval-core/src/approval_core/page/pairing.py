"""``python -m approval_core pair``: pair a passkey with the approval page, started by the person in a terminal.

Nothing a server prints at start pairs or approves: pairing begins only here,
outside any MCP client. The command keeps the digests of a one-time secret
and of a code in the passkey file (valid
:data:`~approval_core.page.passkeys.PAIRING_TTL` seconds), gives the link that
carries the secret, and shows the code, which the person types into the page:
the link alone pairs nothing, so a link seen by anyone else (in a browser's
tab list, a process's command line) is of no use to them.

* by default it serves the pairing page itself on ``http://localhost:<port>``
  (``--port``, default one free on both loopbacks; exit 1 when the port is
  taken on ``127.0.0.1`` or ``::1``, since a program there could read the
  code typed into the page), opens the link in the browser (unless
  ``--no-browser``), and waits until a passkey is paired (exit 0) or the link
  expires (exit 1). The passkey's rp id is ``localhost``, so it approves on
  the page of every server of the family on this machine;
* with ``--page-url https://mcp.example.org/approval`` it only prints the
  link into that deployment's page, which reads the same passkey file
  (``APPROVAL_PASSKEYS_FILE``, shared by its replicas).

Once a passkey is paired, adding another needs a yes from a paired one on the
pairing page, and is announced by the push (``APPROVAL_PUSH_URL``) when set.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import webbrowser
from pathlib import Path

import anyio

from approval_core.errors import SettingsError
from approval_core.page.approval_page import ApprovalPage
from approval_core.page.loopback import LoopbackTaken, running_page
from approval_core.page.passkeys import PAIRING_TTL, PasskeyFile, default_passkeys_path
from approval_core.page.settings import PASSKEYS_FILE_ENV, PUSH_TOKEN_FILE_ENV, PUSH_URL_ENV, PageSettings
from approval_core.records.store import MemoryStore

__all__ = ["main"]

_NAME = "approval_core pair"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m approval_core pair", description="Pair a passkey with the approval page."
    )
    parser.add_argument("--file", type=Path, help=f"the passkey file (default ${PASSKEYS_FILE_ENV}, else the user's)")
    parser.add_argument("--port", type=int, default=0, help="loopback port of the pairing page (default: a free one)")
    parser.add_argument("--page-url", help="a deployment's approval page (https://host/approval): only print its link")
    parser.add_argument("--no-browser", action="store_true", help="print the link without opening a browser")
    return parser


def main(argv: list[str]) -> int:
    """Run the command; return its exit code.

    0 paired or link printed; 1 the link expired, or the port is taken on a loopback; 2 bad use.
    """
    args = _parser().parse_args(argv)
    named = os.environ.get(PASSKEYS_FILE_ENV)
    path: Path = args.file or (Path(named) if named else default_passkeys_path())
    passkeys = PasskeyFile(path)
    try:
        secret, code = passkeys.start_pairing(time.time())
    except (SettingsError, OSError) as exc:
        print(f"{_NAME}: {exc}", file=sys.stderr)
        return 2
    if args.page_url:
        base = str(args.page_url).rstrip("/")
        print(f"Open this link within {PAIRING_TTL / 60:g} minutes to pair a passkey: {base}/pair/{secret}")
        print(_code_line(code), flush=True)
        return 0
    push_url = os.environ.get(PUSH_URL_ENV)
    token_file = os.environ.get(PUSH_TOKEN_FILE_ENV)
    settings = PageSettings(
        passkeys_file=path, push_url=push_url, push_token_file=Path(token_file) if token_file else None
    )
    try:
        return anyio.run(_serve, ApprovalPage("approval-core", settings, MemoryStore()), secret, code, args)
    except LoopbackTaken as exc:
        print(f"{_NAME}: {exc.strerror}; nothing was paired", file=sys.stderr)
        return 1


def _code_line(code: str) -> str:
    return f"Then type this code on the page: {code} (it is shown only here; never give it to an assistant)"


async def _serve(page: ApprovalPage, secret: str, code: str, args: argparse.Namespace) -> int:
    done = anyio.Event()
    page.on_paired = done.set
    async with running_page(page, args.port):
        link = page.pairing_url(secret)
        print(f"Open this link within {PAIRING_TTL / 60:g} minutes to pair a passkey: {link}", flush=True)
        print(_code_line(code), flush=True)
        if not args.no_browser:
            webbrowser.open(link)
        with anyio.move_on_after(PAIRING_TTL):
            await done.wait()
        await anyio.sleep(0.5)  # let the page's last answer reach the browser
    if done.is_set():
        print(f"Paired. The passkey file is {page.passkeys.path}.", flush=True)
        return 0
    print("The pairing link expired; nothing was paired.", file=sys.stderr)
    return 1
