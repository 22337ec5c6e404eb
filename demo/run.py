"""The newcomer's first run: every server, driven by a real MCP client, against real backends started here.

An MCP client in this script starts each server the way Claude Code or
Claude Desktop would (a subprocess over stdio) and makes the calls an
assistant would make:

* caldav-mcp and carddav-mcp on their embedded backend
  (``CALDAV_EMBEDDED=true``, ``CARDDAV_EMBEDDED=true``: a Radicale on
  127.0.0.1 inside the server, which makes a calendar and an address book on
  its first start);
* ntfy-mcp against a real ntfy server started for the demo on 127.0.0.1, the
  binary the tests use (``testing/ntfy_server.py``: ``NTFY_SERVER_BINARY``,
  else the one the tests built and cached, else built once from the source
  kit, which takes minutes the first time and shows its progress here).

All the data is kept in a temporary folder, removed at the end. The calls
that cannot be undone ask you first: the server's dialog is drawn in this
terminal and you answer ``y`` (approve) or ``n`` (decline, as a client's
Decline button does). ``--yes`` approves every dialog, ``--no`` declines
every one. What each server answers, and what its audit log notes, is told
in words.

Run: ``uv run python demo/run.py`` (or with ``--yes`` / ``--no``).
Exit status 0 when every server took part; 1 when one could not be started
(the reason is printed and the others still run).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections.abc import Awaitable, Callable
from contextlib import ExitStack
from pathlib import Path
from typing import IO, Any

import anyio
import mcp_types as types
from mcp.client import Client
from mcp.client.session import ClientRequestContext
from mcp.client.stdio import StdioServerParameters, stdio_client

from approval_core.asking.results import approval_outcome

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "testing"))

from ntfy_server import NtfyUnavailable, find_or_build_binary, ntfy_server  # noqa: E402

WINDOW = ("2026-12-01", "2027-01-01")
YEAR_ENTRIES = 1_200
"""The listing window of the calendar part: December 2026 (start inclusive, end exclusive)."""

COMPONENTS = {"VEVENT": "events", "VTODO": "tasks", "VJOURNAL": "journal entries"}
"""The iCalendar component names a calendar supports, in words."""

ACCOUNT = "{name} ({role})"
EVERYONE = "* (everyone without an account: the rules for anonymous access)"

OUTCOMES = {
    "declined": "you declined, so the server did not do it; nothing was changed",
    "cancelled": "you closed the dialog without answering, so the server did not do it; nothing was changed",
    "unticked": "the box was left unticked, which counts as no; nothing was changed",
    "timed_out": "nobody answered in time, so the server did not do it; nothing was changed",
}
"""A refusal's outcome (``_meta["approval-core/approval"]["outcome"]``) in words."""

AUDIT = {
    "asked": "asked you",
    "approved": "you approved",
    "declined": "you declined",
    "cancelled": "you closed the dialog",
    "unticked": "the box was left unticked",
    "timed_out": "no answer in time",
    "token_issued": "handed out a confirm token instead of asking",
    "token_redeemed": "took a confirm token",
    "token_refused": "refused a confirm token",
    "refused": "refused the call",
}
"""Audit events (docs/approval.md, "Audit log") in words; any other event is shown by its name."""


def say(text: str = "") -> None:
    """Print a line at once (the demo talks while subprocesses run)."""
    print(text, flush=True)


def dialog_answerer(mode: str) -> Callable[[ClientRequestContext, types.ElicitRequestParams], Awaitable[Any]]:
    """An elicitation callback that draws the dialog here and returns the person's answer.

    ``mode``: ``ask`` (read y or n from stdin; no stdin counts as n), ``yes`` or ``no``. y accepts with
    the box ticked; n declines, as a client's Decline button does.
    """

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
        if reply.strip().lower() in {"y", "yes"}:
            return types.ElicitResult(action="accept", content={"approve": True})
        return types.ElicitResult(action="decline")

    return answer


class Talk:
    """One server's conversation: makes calls, says what came back, and tells its log lines in words."""

    def __init__(self, client: Client, log: Path) -> None:
        self.client = client
        self.log = log
        self.read_up_to = 0

    async def call(
        self, doing: str, tool: str, args: dict[str, Any], *, progress: bool = False
    ) -> dict[str, Any] | None:
        """Call ``tool`` saying ``doing`` first; return its structured content, or None when it did not act.

        With ``progress``, the call asks for progress notifications and says each one as it comes.
        """
        say(f"\n→ {doing}   [{tool}]")

        async def told(done: float, total: float | None, message: str | None) -> None:
            say(f"  … {done:g}" + (f" of {total:g}" if total is not None else "") + f" {message or ''}".rstrip())

        result = await self.client.call_tool(tool, args, progress_callback=told if progress else None)
        self.tell_log()
        if not result.is_error:
            return result.structured_content or {}
        outcome = (approval_outcome(result) or {}).get("outcome")
        if outcome in OUTCOMES:
            say(f"  ✗ Not done: {OUTCOMES[outcome]}.")
        else:
            text = result.content[0].text if result.content and isinstance(result.content[0], types.TextContent) else ""
            say(f"  ✗ The server refused: {text}")
        return None

    def tell_log(self) -> None:
        """What the server wrote to its log (stderr) since the last look, in words."""
        with self.log.open(encoding="utf-8", errors="replace") as stream:
            stream.seek(self.read_up_to)
            fresh = stream.read()
            self.read_up_to = stream.tell()
        for line in fresh.splitlines():
            prefix = "approval_core.audit: approval "
            if line.startswith(prefix):
                try:
                    record = json.loads(line.removeprefix(prefix))
                except json.JSONDecodeError:
                    say(f"  (server log: {line})")
                    continue
                event = AUDIT.get(record.get("event", ""), record.get("event", "?"))
                say(f"  (the server's audit log notes for {record.get('tool')}: {event})")
            elif line.strip():
                say(f"  (server log: {line})")


def stdio(module: str, env: dict[str, str], log: IO[str]) -> Any:
    """The stdio transport to one server (``python -m module``) with only the given backend settings.

    The server's stderr (its log) goes to ``log``; the demo reads it back and tells it in words.
    """
    base = {k: v for k, v in os.environ.items() if not k.startswith(("CALDAV_", "CARDDAV_", "NTFY_", "ELICITATION"))}
    params = StdioServerParameters(command=sys.executable, args=["-m", module], env={**base, **env})
    return stdio_client(params, errlog=log)


def day_and_time(start: str | None, end: str | None) -> str:
    """``2026-12-07T09:30:00+01:00`` and its end as ``2026-12-07 09:30-09:45``."""
    if not start:
        return "(no start)"
    day, _, clock = start.partition("T")
    end_clock = (end or "").partition("T")[2][:5]
    return f"{day} {clock[:5]}-{end_clock}" if clock else day


def year_of_entries(folder: Path) -> None:
    """Write YEAR_ENTRIES one-hour entries over 2027 into the embedded calendar's storage, as Radicale keeps them.

    One ``.ics`` file each, so that the demo has a long read to show.
    """
    calendar = folder / "collection-root" / "me" / "calendar"
    calendar.mkdir(parents=True, mode=0o700)
    for path in (folder, folder / "collection-root", folder / "collection-root" / "me"):
        path.chmod(0o700)
    props = {
        "tag": "VCALENDAR",
        "D:displayname": "Calendar",
        "C:supported-calendar-component-set": "VEVENT,VTODO,VJOURNAL",
    }
    (calendar / ".Radicale.props").write_text(json.dumps(props))
    for i in range(YEAR_ENTRIES):
        day = f"2027{1 + i % 12:02d}{1 + i % 28:02d}"
        hour = 8 + i % 9
        (calendar / f"year-{i}.ics").write_text(
            "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//demo//EN\r\nBEGIN:VEVENT\r\n"
            f"UID:year-{i}@demo\r\nDTSTAMP:20261101T000000Z\r\nDTSTART:{day}T{hour:02d}0000Z\r\n"
            f"DTEND:{day}T{hour:02d}5900Z\r\nSUMMARY:Appointment {i}\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n",
            newline="",
        )


async def calendars(data: Path, answer: Any) -> None:
    """caldav-mcp on its embedded backend: list, create a weekly series, list it, delete it (asks), list again.

    Then a long read (a year of YEAR_ENTRIES entries) that reports its progress.
    """
    year_of_entries(data / "calendars")
    env = {"CALDAV_EMBEDDED": "true", "CALDAV_EMBEDDED_DIR": str(data / "calendars")}
    say("\n=== caldav-mcp: a calendar ===")
    with (data / "caldav-mcp.log").open("w+") as log:
        transport = stdio("caldav_mcp", env, log)
        async with Client(transport, mode="legacy", elicitation_callback=answer) as client:
            talk = Talk(client, Path(log.name))
            talk.tell_log()
            listed = await talk.call("Which calendars are there?", "list_calendars", {})
            found = (listed or {}).get("calendars", [])
            for entry in found:
                kinds = ", ".join(COMPONENTS.get(c, c) for c in entry["components"])
                say(f"  ✓ A calendar called {entry['name']!r} (id {entry['id']}), for {kinds}.")
            calendar = found[0]["id"] if found else "/me/calendar/"

            summary = "Team stand-up"
            args = {"calendar": calendar, "summary": summary, "start": "2026-12-07T09:30:00",
                    "end": "2026-12-07T09:45:00", "tzid": "Europe/Berlin", "rrule": "FREQ=WEEKLY;COUNT=8"}  # fmt: skip
            created = await talk.call(
                f"Add {summary!r}, Mondays 09:30-09:45 Berlin time, 8 weeks from 7 December", "create_event", args
            )
            if created:
                say(f"  ✓ Created: a weekly series of 8 (id {created['id']}).")

            async def listing() -> None:
                events = await talk.call(f"What is on from {WINDOW[0]} to {WINDOW[1]}?", "list_events",
                                         {"calendar": calendar, "start": WINDOW[0], "end": WINDOW[1]})  # fmt: skip
                if events is None:
                    return
                items = events.get("events", [])
                say(f"  ✓ {len(items)} event(s) in December 2026" + (":" if items else "."))
                for item in items:
                    say(f"      {day_and_time(item['start'], item['end'])}  {item.get('summary') or '(no title)'}")

            await listing()
            if created:
                deleted = await talk.call(
                    "Delete the whole series",
                    "delete_event",
                    {"calendar": calendar, "id": created["id"], "scope": "series"},
                )
                if deleted is not None:
                    say("  ✓ Deleted: the series and all its occurrences.")
            await listing()

            year = await talk.call(
                f"What is on in the whole of 2027? (a long read: {YEAR_ENTRIES:,} entries; the server says how far "
                "it has come)",
                "list_events",
                {"calendar": calendar, "start": "2027-01-01", "end": "2028-01-01", "limit": 3},
                progress=True,
            )
            if year is not None:
                say(f"  ✓ The first {len(year.get('events', []))} of them; the rest page by page with the cursor.")


async def contacts(data: Path, answer: Any) -> None:
    """carddav-mcp on its embedded backend: create a contact, delete it (asks), list the book."""
    env = {"CARDDAV_EMBEDDED": "true", "CARDDAV_EMBEDDED_DIR": str(data / "contacts")}
    say("\n=== carddav-mcp: an address book ===")
    with (data / "carddav-mcp.log").open("w+") as log:
        transport = stdio("carddav_mcp", env, log)
        async with Client(transport, mode="legacy", elicitation_callback=answer) as client:
            talk = Talk(client, Path(log.name))
            talk.tell_log()
            books = await talk.call("Which address books are there?", "list_address_books", {})
            found = (books or {}).get("address_books", [])
            for entry in found:
                say(f"  ✓ An address book called {entry['display_name']!r} (id {entry['id']}).")
            book = found[0]["id"] if found else "/me/contacts/"
            fields = {"fn": "Ada Lovelace", "emails": [{"value": "ada@example.org"}]}
            created = await talk.call(
                "Add Ada Lovelace, ada@example.org", "create_contact", {"address_book": book, "fields": fields}
            )
            if created:
                say(f"  ✓ Created the contact (id {created['id']}).")
                deleted = await talk.call("Delete that contact", "delete_contact", {"contact_ids": [created["id"]]})
                if deleted is not None:
                    say("  ✓ Deleted the contact.")
            listed = await talk.call("Who is in the address book now?", "list_contacts", {"address_book": book})
            if listed is not None:
                people = listed.get("contacts", [])
                say(f"  ✓ {len(people)} contact(s)" + (":" if people else ": the address book is empty."))
                for person in people:
                    emails = ", ".join(person.get("emails") or []) or "no e-mail address"
                    say(f"      {person.get('fn') or '(no name)'} <{emails}>")


async def notifications(data: Path, answer: Any) -> None:
    """ntfy-mcp against a real ntfy: publish, read back, add an account (asks), remove it (asks), list accounts.

    Raises:
        NtfyUnavailable: no ntfy binary could be found or built, or the server did not start.
    """
    say("\n=== ntfy-mcp: push notifications ===")
    binary = find_or_build_binary(progress=lambda line: say(f"  {line}"))
    with ntfy_server(data / "ntfy", binary) as ntfy, (data / "ntfy-mcp.log").open("w+") as log:
        say(f"  A real ntfy {'.'.join(map(str, ntfy.version))} runs on {ntfy.url}; ntfy-mcp uses its admin account.")
        topic = "demo-alerts"
        env = {"NTFY_URL": ntfy.url, "NTFY_USERNAME": ntfy.admin_user, "NTFY_PASSWORD": ntfy.admin_password,
               "NTFY_TOPICS": topic}  # fmt: skip
        async with Client(stdio("ntfy_mcp", env, log), mode="legacy", elicitation_callback=answer) as client:
            talk = Talk(client, Path(log.name))
            talk.tell_log()
            sent = await talk.call(
                f"Send 'Backup finished' to the topic {topic}",
                "publish_message",
                {"topics": [topic], "title": "Backup finished", "message": "All 3 disks copied."},
            )
            if sent is not None:
                say(f"  ✓ Sent to {topic}: every phone subscribed to it gets the notification.")
            listed = await talk.call(f"What was sent to {topic}?", "list_messages", {"topics": [topic]})
            if listed is not None:
                messages = listed.get("messages", [])
                say(f"  ✓ {len(messages)} message(s):")
                for message in messages:
                    say(f"      {message.get('title') or '(no title)'}: {message.get('message') or ''}")

            async def accounts() -> None:
                users = await talk.call("Which accounts does this ntfy have?", "list_users", {})
                if users is not None:
                    names = [ACCOUNT.format(**u) if u["name"] != "*" else EVERYONE for u in users.get("users", [])]
                    say(f"  ✓ {len(names)} account(s): {', '.join(names)}.")

            created = await talk.call(
                "Give a guest an account", "create_user", {"username": "guest", "password": "a-guest-password"}
            )
            if created is not None:
                say("  ✓ Created the account guest.")
            await accounts()
            if created is not None:
                deleted = await talk.call("Remove the guest's account again", "delete_user", {"username": "guest"})
                if deleted is not None:
                    say("  ✓ Removed the account guest.")
                await accounts()


async def run(mode: str) -> int:
    """The whole walk-through; ``mode`` is ask, yes or no. Returns the exit status (1: a server was left out)."""
    answer = dialog_answerer(mode)
    status = 0
    with ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="mcp-demo-")))
        say(f"Everything below runs on 127.0.0.1, with its data under {tmp} (removed at the end).")
        await calendars(tmp, answer)
        await contacts(tmp, answer)
        try:
            await notifications(tmp, answer)
        except NtfyUnavailable as exc:
            say(f"\n  ntfy-mcp was left out: no ntfy server could be had.\n  {exc}")
            say("  See README.md, 'The real ntfy in the tests', for what the build needs.")
            status = 1
    say("\nDone: every call above went to a real server on 127.0.0.1; the data is gone with the temporary folder.")
    say("To keep calendars and contacts of your own this way: docs/clients.md (CALDAV_EMBEDDED, CARDDAV_EMBEDDED).")
    return status


def main() -> None:
    """Command line: ``--yes`` / ``--no`` answer every dialog; by default you are asked."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    choice = parser.add_mutually_exclusive_group()
    choice.add_argument("--yes", action="store_true", help="approve every dialog (unattended)")
    choice.add_argument("--no", action="store_true", help="decline every dialog (unattended)")
    args = parser.parse_args()
    sys.exit(anyio.run(run, "yes" if args.yes else "no" if args.no else "ask"))


if __name__ == "__main__":
    main()
