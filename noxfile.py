"""Sessions for the whole family: lint, typecheck, tests per package, bench.

Every session syncs its own virtualenv from the committed uv.lock, so what
runs here is what CI and users get.
"""

from __future__ import annotations

from pathlib import Path

import nox

ROOT = Path(__file__).parent
PACKAGES = sorted(p.name for p in (ROOT / "packages").iterdir() if (p / "pyproject.toml").is_file())
TESTED = [name for name in PACKAGES if any((ROOT / "packages" / name / "tests").glob("test_*.py"))]
IMPORT_NAMES = {name: name.replace("-", "_") for name in PACKAGES}

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
    sync(session, "--all-packages", "--group", "lint")
    session.run("pyright")


@nox.session
@nox.parametrize("package", TESTED)
def tests(session: nox.Session, package: str) -> None:
    """One package's tests, in a virtualenv holding only that package and its dependencies."""
    sync(session, "--package", package, "--group", "test")
    floor = "95" if package == "approval-core" else "85"
    session.run(
        "pytest",
        f"packages/{package}/tests",
        f"--cov={IMPORT_NAMES[package]}",
        f"--cov-fail-under={floor}",
        *session.posargs,
    )


@nox.session(name="family")
def family(session: nox.Session) -> None:
    """The cross-package checks in tests/, with every package installed."""
    sync(session, "--all-packages", "--group", "test")
    session.run("pytest", "tests", "--no-cov", *session.posargs)


@nox.session
def integration(session: nox.Session) -> None:
    """Every test against real servers: Radicale, Xandikos and ntfy, started on 127.0.0.1.

    Fails, never skips, when one of them cannot be started. ntfy is built from its Go module
    unless NTFY_SERVER_BINARY names a binary (see testing/ntfy_server.py).
    """
    sync(session, "--all-packages", "--group", "test")
    session.run(
        "pytest",
        "packages/caldav-mcp/tests",
        "packages/carddav-mcp/tests",
        "packages/ntfy-mcp/tests",
        "-m",
        "",
        "--no-cov",
        *session.posargs,
    )


BENCHMARKS = sorted(
    str(p.relative_to(ROOT))
    for pattern in ("packages/*/benchmarks/bench_*.py", "benchmarks/bench_*.py")
    for p in ROOT.glob(pattern)
)


@nox.session
def bench(session: nox.Session) -> None:
    """Every ``packages/*/benchmarks/bench_*.py`` and ``benchmarks/bench_*.py``, each printing its figures.

    ``nox -s bench -- NAME`` runs only the benchmark files whose path contains NAME.
    """
    sync(session, "--all-packages", "--group", "test")
    chosen = [path for path in BENCHMARKS if not session.posargs or any(arg in path for arg in session.posargs)]
    if not chosen:
        session.error(f"no benchmark matches {session.posargs}; have {BENCHMARKS}")
    for path in chosen:
        session.run("python", path)


@nox.session
def docs(session: nox.Session) -> None:
    """The documentation site: ``mkdocs build --strict`` into ``site/``; any warning fails."""
    sync(session, "--only-group", "docs")
    session.run("mkdocs", "build", "--strict", "--site-dir", str(ROOT / "site"))
