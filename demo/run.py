"""The newcomer's first run: the servers, driven by a real MCP client, against servers started here.

Runs caldav-mcp and carddav-mcp as an MCP client would (subprocesses over
stdio), each on its embedded backend (``CALDAV_EMBEDDED=true``,
``CARDDAV_EMBEDDED=true``: a Radicale on 127.0.0.1 inside the server, which
makes a calendar and an address book on first start), with the data kept in
a temporary folder; then walks through reading, creating and deleting.
Deleting asks: the approval dialog is printed in this terminal and you
answer it. ``--yes`` answers every dialog with a tick, for
unattended runs; ``--no`` declines every dialog.

ntfy-mcp joins when an ntfy binary is at hand (``NTFY_SERVER_BINARY`` or the
tests' cache, see README); the Go module proxy here does not serve ntfy, so
without one the demo says so and leaves it out.

Run: ``uv run python demo/run.py`` (or ``--yes``).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.client import Client
from mcp.client.session import ClientRequestContext
from mcp.client.stdio import StdioServerParameters

ROOT = Path(__file__).resolve().parents[1]


def say(text: str = "") -> None:
    """Print a line at once (the demo talks while subprocesses run)."""
    print(text, flush=True)


def dialog_answerer(mode: str):
    """An elicitation callback that shows the dialog here and takes the person's answer."""

    async def answer(context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
        say("\n  ┌─ the server asks ─────────────────────────────────────────")
        for line in params.message.splitlines():
            say(f"  │ {line}")
        say("  └────────────────────────────────────────────────────────────")
        if mode == "ask":
            try:
                reply = await anyio.to_thread.run_sync(input, "  Make this change? [y/N] ")
            except EOFError:  # no terminal to answer from (stdin closed or redirected): the safe answer
                reply = "n"
                say("\n  (no answer can be read from stdin: treated as no; use --yes or --no for unattended runs)")
        else:
            reply = "y" if mode == "yes" else "n"
            say(f"  Make this change? [y/N] {reply}   (answered by --{mode})")
        ticked = reply.strip().lower() in {"y", "yes"}
        return types.ElicitResult(action="accept", content={"approve": ticked})

    return answer


async def call(client: Client, tool: str, args: dict[str, Any]) -> dict[str, Any] | None:
    """Call a tool, show what it answered, and return its structured content (None on an error)."""
    say(f"\n→ {tool} {args}")
    result = await client.call_tool(tool, args)
    text = result.content[0].text if result.content else ""
    lines = text.splitlines()
    shown = "\n".join(lines[:12]) + (f"\n… ({len(lines) - 12} more lines)" if len(lines) > 12 else "")
    say(("  ✗ " if result.is_error else "  ✓ ") + shown.replace("\n", "\n    "))
    return None if result.is_error else result.structured_content


def server(module: str, env: dict[str, str]) -> StdioServerParameters:
    """How to start one of the servers over stdio, with only the given backend settings."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("CALDAV_", "CARDDAV_", "NTFY_", "ELICITATION"))}
    return StdioServerParameters(command=sys.executable, args=["-m", module], env={**base, **env})


async def calendars(data: Path, answer: Any) -> None:
    """caldav-mcp on its embedded backend: list, create a weekly series, list it, delete it (asks), list again."""
    env = {"CALDAV_EMBEDDED": "true", "CALDAV_EMBEDDED_DIR": str(data / "calendars")}
    say("\n=== caldav-mcp: a calendar ===")
    async with Client(server("caldav_mcp", env), mode="legacy", elicitation_callback=answer) as client:
        listed = await call(client, "list_calendars", {})
        calendar = listed["calendars"][0]["id"] if listed else "/me/calendar/"
        created = await call(
            client,
            "create_event",
            {
                "calendar": calendar,
                "summary": "Team stand-up",
                "start": "2026-12-07T09:30:00",
                "end": "2026-12-07T09:45:00",
                "tzid": "Europe/Berlin",
                "rrule": "FREQ=WEEKLY;COUNT=8",
            },
        )
        await call(client, "list_events", {"calendar": calendar, "start": "2026-12-01", "end": "2027-01-01"})
        if created:
            await call(client, "delete_event", {"calendar": calendar, "id": created["id"], "scope": "series"})
        await call(client, "list_events", {"calendar": calendar, "start": "2026-12-01", "end": "2027-01-01"})


async def contacts(data: Path, answer: Any) -> None:
    """carddav-mcp on its embedded backend: create a contact, delete it (asks), list the book."""
    env = {"CARDDAV_EMBEDDED": "true", "CARDDAV_EMBEDDED_DIR": str(data / "contacts")}
    say("\n=== carddav-mcp: an address book ===")
    async with Client(server("carddav_mcp", env), mode="legacy", elicitation_callback=answer) as client:
        books = await call(client, "list_address_books", {})
        book = books["address_books"][0]["id"] if books and books.get("address_books") else "/me/contacts/"
        created = await call(
            client,
            "create_contact",
            {
                "address_book": book,
                "fields": {"fn": "Ada Lovelace", "emails": [{"value": "ada@example.org"}]},
            },
        )
        if created:
            await call(client, "delete_contact", {"contact_ids": [created["id"]]})
        await call(client, "list_contacts", {"address_book": book})


async def run(mode: str) -> None:
    """The whole walk-through; ``mode`` is ask, yes or no."""
    answer = dialog_answerer(mode)
    with tempfile.TemporaryDirectory(prefix="mcp-demo-") as tmp:
        say(f"Each server runs its embedded Radicale on 127.0.0.1, keeping its data under {tmp}")
        await calendars(Path(tmp), answer)
        await contacts(Path(tmp), answer)
    binary = os.environ.get("NTFY_SERVER_BINARY") or next(iter(sorted((ROOT / ".cache" / "ntfy").glob("ntfy-*"))), None)
    say("\n=== ntfy-mcp ===")
    if binary is None:
        say("  no ntfy binary at hand (NTFY_SERVER_BINARY unset, none cached): left out. See README.")
    else:
        say(f"  an ntfy binary is at hand ({binary}); run `uv run pytest -m real_ntfy` to exercise it.")
    say("\nDone: everything above ran against real servers on 127.0.0.1, and is gone with the temporary folder.")
    say("To keep calendars and contacts of your own this way: docs/clients.md (CALDAV_EMBEDDED, CARDDAV_EMBEDDED).")


def main() -> None:
    """Command line: ``--yes`` / ``--no`` answer every dialog; by default you are asked."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    choice = parser.add_mutually_exclusive_group()
    choice.add_argument("--yes", action="store_true", help="tick every approval dialog (unattended)")
    choice.add_argument("--no", action="store_true", help="decline every approval dialog (unattended)")
    args = parser.parse_args()
    anyio.run(run, "yes" if args.yes else "no" if args.no else "ask")


if __name__ == "__main__":
    main()
