"""Each server's MCP Registry entry (``packages/<server>/server.json``) against the registry's rules and the code.

Used by ``tests/test_server_json.py`` and by ``nox -s release``::

    python testing/registry_entry.py

prints one line per problem and exits 1, or prints what it checked and exits 0.

The registry's published schema (``server.schema.json`` of 2025-12-11, JSON Schema draft 7, the URL in
:data:`SCHEMA_URL`) is not kept in this repository; :data:`REGISTRY_RULES` restates, in a schema of its own,
every rule that schema sets on the fields an entry here uses: the required ``name`` (reverse-DNS, exactly one
``/``, 3-200 characters), ``description`` (1-100) and ``version`` (at most 255, no range), ``title`` (1-100), and
for a package its ``registryType``, ``identifier`` and ``transport`` (required), a ``version`` that is not
``latest``, the argument shapes (``named`` with a ``name``) and each environment variable (``name`` required;
``description``, ``default``, ``format`` one of ``string``/``number``/``boolean``/``filepath``, ``isRequired``,
``isSecret``).

What the code decides, checked against the entry:

* ``version`` (and the package's, and the one pinned in ``--from``) is the package's version;
* ``identifier`` is the distribution's name, on PyPI, run by ``uvx`` over stdio;
* ``description`` is the one in the package's pyproject, ``name`` is :data:`NAMESPACE` ``/<server>``, and
  the package's README carries ``mcp-name: <name>`` (how the registry verifies a PyPI package's owner);
* the environment variables are exactly those the server reads: every string constant in approval-core's
  source and the server's own that names a family setting (``ELICITATION``, ``ELICITATION_TIMEOUT``,
  ``TOOLS``, ``APPROVAL_*``, ``MCP_*``, and the server's own prefix, ``CALDAV_*`` for caldav-mcp), names in ``__all__``
  aside. Operating-system variables the servers read (``HOME``, ``XDG_DATA_HOME``) are not settings and
  are not listed;
* each has a description; one that carries a credential (``*_PASSWORD``, ``*_TOKEN``, and
  ``APPROVAL_STORE_URL``, whose URL may hold the Redis password) is secret and no other is;
* a variable the servers share is described the same way in every entry.
"""

from __future__ import annotations

import ast
import json
import re
import sys
import tomllib
from pathlib import Path
from typing import Any

from jsonschema import Draft7Validator

ROOT = Path(__file__).resolve().parents[1]
NAMESPACE = "io.github.mcp-approval-family"
SCHEMA_URL = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
SHARED = re.compile(r"^(ELICITATION|ELICITATION_TIMEOUT|TOOLS|(APPROVAL|MCP)_[A-Z0-9_]+)$")
SECRET = re.compile(r"^([A-Z0-9_]+_(PASSWORD|TOKEN)|APPROVAL_STORE_URL)$")

_ARGUMENT = {
    "type": "object",
    "required": ["type"],
    "properties": {
        "type": {"enum": ["named", "positional"]},
        "name": {"type": "string"},
        "value": {"type": "string"},
        "description": {"type": "string"},
    },
    "if": {"properties": {"type": {"const": "named"}}},
    "then": {"required": ["type", "name"]},
    "else": {"anyOf": [{"required": ["value"]}, {"required": ["valueHint"]}]},
}
REGISTRY_RULES: dict[str, Any] = {
    "$schema": "http://json-schema.org/draft-07/schema#",
    "type": "object",
    "required": ["name", "description", "version"],
    "properties": {
        "$schema": {"type": "string", "format": "uri"},
        "name": {"type": "string", "minLength": 3, "maxLength": 200, "pattern": "^[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+$"},
        "title": {"type": "string", "minLength": 1, "maxLength": 100},
        "description": {"type": "string", "minLength": 1, "maxLength": 100},
        "version": {"type": "string", "maxLength": 255, "not": {"pattern": r"^[\^~<>=]|\.x$|\*"}},
        "packages": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["registryType", "identifier", "transport"],
                "properties": {
                    "registryType": {"type": "string"},
                    "registryBaseUrl": {"type": "string", "format": "uri"},
                    "identifier": {"type": "string"},
                    "version": {"type": "string", "minLength": 1, "not": {"const": "latest"}},
                    "runtimeHint": {"type": "string"},
                    "runtimeArguments": {"type": "array", "items": _ARGUMENT},
                    "packageArguments": {"type": "array", "items": _ARGUMENT},
                    "transport": {
                        "type": "object",
                        "required": ["type"],
                        "properties": {"type": {"enum": ["stdio", "streamable-http", "sse"]}},
                    },
                    "environmentVariables": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["name"],
                            "properties": {
                                "name": {"type": "string"},
                                "description": {"type": "string"},
                                "default": {"type": "string"},
                                "format": {"enum": ["string", "number", "boolean", "filepath"]},
                                "isRequired": {"type": "boolean"},
                                "isSecret": {"type": "boolean"},
                            },
                        },
                    },
                },
            },
        },
    },
}
"""The rules of the registry's published schema that bear on these entries (see the module docstring)."""


def servers() -> list[str]:
    """The server packages of the family (``packages/*-mcp``)."""
    return sorted(p.name for p in (ROOT / "packages").glob("*-mcp") if (p / "pyproject.toml").is_file())


def setting_names(source: Path, pattern: re.Pattern[str]) -> set[str]:
    """Every string constant under ``source`` that matches ``pattern``, except those inside ``__all__``."""
    found: set[str] = set()
    for path in sorted(source.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        exported = {
            id(inner)
            for node in ast.walk(tree)
            if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "__all__" for t in node.targets)
            for inner in ast.walk(node.value)
        }
        for node in ast.walk(tree):
            constant = isinstance(node, ast.Constant) and isinstance(node.value, str)
            if constant and id(node) not in exported and pattern.match(node.value):
                found.add(node.value)
    return found


def read_settings(server: str) -> set[str]:
    """The environment variables ``server`` reads (approval-core's and its own; see the module docstring)."""
    prefix = server.removesuffix("-mcp").upper()
    own = setting_names(ROOT / "packages" / server / "src", re.compile(rf"^{prefix}_[A-Z0-9_]+$"))
    return own | setting_names(ROOT / "packages" / "approval-core" / "src", SHARED)


def entry_problems(server: str) -> list[str]:
    """What is wrong with ``server``'s ``server.json``, one line each (empty when nothing is)."""
    folder = ROOT / "packages" / server
    path = folder / "server.json"
    if not path.is_file():
        return [f"{server}: no server.json in {folder.relative_to(ROOT)}"]
    entry = json.loads(path.read_text(encoding="utf-8"))
    problems = [
        f"{server}: server.json breaks the registry's rules at /{'/'.join(map(str, e.absolute_path))}: {e.message}"
        for e in Draft7Validator(REGISTRY_RULES).iter_errors(entry)
    ]
    project = tomllib.loads((folder / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    version = project["version"]
    expected = {
        "$schema": SCHEMA_URL,
        "name": f"{NAMESPACE}/{server}",
        "description": project["description"],
        "version": version,
    }
    problems += [f"{server}: {k} is {entry.get(k)!r}, not {v!r}" for k, v in expected.items() if entry.get(k) != v]
    if f"mcp-name: {NAMESPACE}/{server}" not in (folder / "README.md").read_text(encoding="utf-8"):
        problems.append(f"{server}: README.md does not carry 'mcp-name: {NAMESPACE}/{server}'")
    packages = entry.get("packages") or [{}]
    if len(packages) != 1:
        problems.append(f"{server}: {len(packages)} packages, expected its one PyPI package")
    package = packages[0]
    wanted = {"registryType": "pypi", "identifier": server, "version": version, "runtimeHint": "uvx"}
    problems += [
        f"{server}: package {k} is {package.get(k)!r}, not {v!r}" for k, v in wanted.items() if package.get(k) != v
    ]
    if package.get("transport") != {"type": "stdio"}:
        problems.append(f"{server}: package transport is {package.get('transport')!r}, not stdio")
    extras = project.get("optional-dependencies") or {}
    pins = [a.get("value") for a in package.get("runtimeArguments") or [] if a.get("name") == "--from"]
    if pins != ([f"{server}[embedded]=={version}"] if "embedded" in extras else []):
        problems.append(f"{server}: uvx --from is {pins!r}: the embedded extra at exactly {version}, when it has one")
    variables = {v.get("name"): v for v in package.get("environmentVariables") or []}
    read = read_settings(server)
    problems += [f"{server}: reads {n} but server.json does not list it" for n in sorted(read - set(variables))]
    problems += [f"{server}: server.json lists {n}, which it does not read" for n in sorted(set(variables) - read)]
    for name, variable in variables.items():
        if not str(variable.get("description") or "").strip():
            problems.append(f"{server}: {name} has no description")
        if variable.get("isSecret") is not bool(SECRET.match(str(name))):
            problems.append(f"{server}: {name} has isSecret {variable.get('isSecret')!r}")
    return problems


def shared_problems() -> list[str]:
    """A variable shared by several servers described differently in their entries."""
    seen: dict[str, tuple[str, dict[str, Any]]] = {}
    problems: list[str] = []
    for server in servers():
        path = ROOT / "packages" / server / "server.json"
        if not path.is_file():
            continue
        for variable in (json.loads(path.read_text(encoding="utf-8")).get("packages") or [{}])[0].get(
            "environmentVariables", []
        ):
            first = seen.setdefault(variable["name"], (server, variable))
            if first[1] != variable:
                problems.append(f"{variable['name']}: described differently by {first[0]} and {server}")
    return problems


def main() -> int:
    """Print every problem of every entry; 1 if there is one."""
    problems = [p for server in servers() for p in entry_problems(server)] + shared_problems()
    for problem in problems:
        print(problem, file=sys.stderr)
    if not problems:
        print(f"server.json of {', '.join(servers())}: the registry's rules and the code agree")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
