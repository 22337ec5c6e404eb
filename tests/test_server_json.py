"""Each server's MCP Registry entry (server.json) keeps to the registry's rules and to the code (issue 34 §1).

The checks live in ``testing/registry_entry.py`` (``nox -s release`` runs them too); here they run per
server, and the rules themselves are shown to refuse what the registry refuses.
"""

from __future__ import annotations

import copy
import json

import pytest
from jsonschema import Draft7Validator
from registry_entry import REGISTRY_RULES, ROOT, entry_problems, read_settings, shared_problems

from servers import SERVERS


@pytest.mark.parametrize("name", SERVERS)
def test_the_registry_entry_keeps_to_the_registrys_rules_and_to_the_code(name: str) -> None:
    assert entry_problems(name) == []


def test_a_setting_the_servers_share_is_described_alike_in_every_entry() -> None:
    assert shared_problems() == []


def test_the_settings_read_are_found_in_the_source() -> None:
    assert {"CALDAV_URL", "CALDAV_PASSWORD", "ELICITATION", "APPROVAL_STORE_URL", "MCP_TRANSPORT"} <= read_settings(
        "caldav-mcp"
    )
    assert not {n for n in read_settings("ntfy-mcp") if n.startswith(("CALDAV_", "CARDDAV_"))}
    assert "APPROVAL_META_KEY" not in read_settings("ntfy-mcp")  # a Python name in __all__, not a setting


BROKEN = [
    ("name", "caldav-mcp", "does not match"),
    ("description", "x" * 101, "is too long"),
    ("title", "", "should be non-empty"),
    ("version", "^0.1.0", "should not be valid"),
]


@pytest.mark.parametrize(("field", "value", "said"), BROKEN)
def test_the_rules_refuse_what_the_registry_refuses(field: str, value: str, said: str) -> None:
    entry = json.loads((ROOT / "packages" / "ntfy-mcp" / "server.json").read_text())
    entry[field] = value
    errors = [e.message for e in Draft7Validator(REGISTRY_RULES).iter_errors(entry)]
    assert any(said in e for e in errors), errors


def test_the_rules_refuse_a_package_without_transport_or_at_latest_and_a_bad_variable() -> None:
    entry = json.loads((ROOT / "packages" / "ntfy-mcp" / "server.json").read_text())
    for change, said in [
        (lambda p: p.pop("transport"), "'transport' is a required property"),
        (lambda p: p.update(version="latest"), "should not be valid"),
        (lambda p: p["environmentVariables"][0].update(format="url"), "is not one of"),
        (lambda p: p["environmentVariables"][0].pop("name"), "'name' is a required property"),
    ]:
        broken = copy.deepcopy(entry)
        change(broken["packages"][0])
        errors = [e.message for e in Draft7Validator(REGISTRY_RULES).iter_errors(broken)]
        assert any(said in e for e in errors), errors
