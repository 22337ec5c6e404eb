"""The newcomer's first run: the servers, driven by a real MCP client, against servers started here.

Starts a Radicale on 127.0.0.1 with a throw-away account, a calendar and an
address book in a temporary folder; then runs caldav-mcp and carddav-mcp as
an MCP client would (subprocesses over stdio) and walks through reading,
creating and deleting. Deleting asks: the approval dialog is printed in this
terminal and you answer it. ``--yes`` answers every dialog with a tick, for
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
import httpx
import mcp_types as types
from mcp.client import Client
from mcp.client.session import ClientRequestContext
from mcp.client.stdio import StdioServerParameters

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "testing"))

from dav_servers import radicale  # noqa: E402

USER, PASSWORD = "demo", "demo-password"


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
            reply = await anyio.to_thread.run_sync(input, "  Make this change? [y/N] ")
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
    shown = text if len(text) < 600 else text[:600] + " …"
    say(("  ✗ " if result.is_error else "  ✓ ") + shown.replace("\n", "\n    "))
    return None if result.is_error else result.structured_content


def server(module: str, env: dict[str, str]) -> StdioServerParameters:
    """How to start one of the servers over stdio, with only the given backend settings."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("CALDAV_", "CARDDAV_", "NTFY_", "ELICITATION"))}
    return StdioServerParameters(command=sys.executable, args=["-m", module], env={**base, **env})


async def calendars(url: str, answer: Any) -> None:
    """caldav-mcp: list, create a weekly series, list it, delete it (asks), list again."""
    env = {"CALDAV_URL": url, "CALDAV_USERNAME": USER, "CALDAV_PASSWORD": PASSWORD}
    say("\n=== caldav-mcp: a calendar ===")
    async with Client(server("caldav_mcp", env), mode="legacy", elicitation_callback=answer) as client:
        listed = await call(client, "list_calendars", {})
        calendar = listed["calendars"][0]["id"] if listed else f"/{USER}/demo/"
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


async def contacts(url: str, answer: Any) -> None:
    """carddav-mcp: create a contact, delete it (asks), list the book."""
    env = {"CARDDAV_URL": url, "CARDDAV_USERNAME": USER, "CARDDAV_PASSWORD": PASSWORD}
    say("\n=== carddav-mcp: an address book ===")
    async with Client(server("carddav_mcp", env), mode="legacy", elicitation_callback=answer) as client:
        books = await call(client, "list_address_books", {})
        book = books["address_books"][0]["id"] if books and books.get("address_books") else f"/{USER}/contacts/"
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


def prepare(url: str) -> None:
    """One calendar and one address book for the demo account (Radicale starts with none)."""
    auth = (USER, PASSWORD)
    mkcalendar = (
        '<?xml version="1.0" encoding="utf-8"?><C:mkcalendar xmlns:D="DAV:" xmlns:C="urn:ietf:params:xml:ns:caldav">'
        "<D:set><D:prop><D:displayname>Demo</D:displayname></D:prop></D:set></C:mkcalendar>"
    )
    mkcol = (
        '<?xml version="1.0" encoding="utf-8"?><D:mkcol xmlns:D="DAV:" xmlns:CR="urn:ietf:params:xml:ns:carddav">'
        "<D:set><D:prop><D:resourcetype><D:collection/><CR:addressbook/></D:resourcetype>"
        "<D:displayname>Contacts</D:displayname></D:prop></D:set></D:mkcol>"
    )
    with httpx.Client(auth=auth, headers={"Content-Type": "application/xml"}) as http:
        http.request("MKCALENDAR", f"{url}{USER}/demo/", content=mkcalendar).raise_for_status()
        http.request("MKCOL", f"{url}{USER}/contacts/", content=mkcol).raise_for_status()


async def run(mode: str) -> None:
    """The whole walk-through; ``mode`` is ask, yes or no."""
    answer = dialog_answerer(mode)
    with tempfile.TemporaryDirectory(prefix="mcp-demo-") as tmp, radicale(Path(tmp), {USER: PASSWORD}) as dav:
        say(f"Radicale is serving a throw-away account on {dav.url}")
        prepare(dav.url)
        await calendars(dav.url, answer)
        await contacts(dav.url, answer)
    binary = os.environ.get("NTFY_SERVER_BINARY") or next(iter(sorted((ROOT / ".cache" / "ntfy").glob("ntfy-*"))), None)
    say("\n=== ntfy-mcp ===")
    if binary is None:
        say("  no ntfy binary at hand (NTFY_SERVER_BINARY unset, none cached): left out. See README.")
    else:
        say(f"  an ntfy binary is at hand ({binary}); run `uv run pytest -m real_ntfy` to exercise it.")
    say("\nDone: everything above ran against real servers on 127.0.0.1, and is gone with the temporary folder.")


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
