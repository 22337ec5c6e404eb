"""NTFY_* settings: strict parsing, and main() stopping with exit code 1 on a bad one."""

from __future__ import annotations

import pytest

from ntfy_mcp import main
from ntfy_mcp.errors import ConfigError
from ntfy_mcp.settings import NtfySettings

BASE = {"NTFY_URL": "https://ntfy.example.org/"}


def test_a_full_configuration() -> None:
    settings = NtfySettings.from_env(
        {**BASE, "NTFY_TOKEN": "tk_x", "NTFY_TOPICS": "alerts, backups", "NTFY_TIMEOUT": "5"}
    )
    assert settings.url == "https://ntfy.example.org"
    assert settings.topics == ("alerts", "backups")
    assert settings.default_topic == "alerts"
    assert settings.timeout == 5
    assert "tk_x" not in repr(settings)


def test_basic_auth_and_the_password_stays_out_of_repr() -> None:
    settings = NtfySettings.from_env({**BASE, "NTFY_USERNAME": "phil", "NTFY_PASSWORD": "hunter22"})
    assert settings.username == "phil"
    assert "hunter22" not in repr(settings)
    assert NtfySettings.from_env(BASE).default_topic is None


@pytest.mark.parametrize(
    ("env", "named"),
    [
        ({}, "NTFY_URL is not set"),
        ({"NTFY_URL": "ntfy.example.org"}, "NTFY_URL"),
        ({"NTFY_URL": "ftp://ntfy.example.org"}, "NTFY_URL"),
        ({"NTFY_URL": "https://ntfy.example.org/?x=1"}, "NTFY_URL"),
        ({**BASE, "NTFY_TOKEN": "tk_x", "NTFY_USERNAME": "u", "NTFY_PASSWORD": "p"}, "not both"),
        ({**BASE, "NTFY_USERNAME": "u"}, "NTFY_PASSWORD"),
        ({**BASE, "NTFY_PASSWORD": "p"}, "NTFY_USERNAME"),
        ({**BASE, "NTFY_TOPICS": "alerts,a*"}, "NTFY_TOPICS"),
        ({**BASE, "NTFY_TOPICS": "alerts,alerts"}, "twice"),
        ({**BASE, "NTFY_TIMEOUT": "0"}, "NTFY_TIMEOUT"),
        ({**BASE, "NTFY_TIMEOUT": "soon"}, "NTFY_TIMEOUT"),
    ],
)
def test_bad_settings_name_the_variable(env: dict[str, str], named: str) -> None:
    with pytest.raises(ConfigError, match=named.replace("?", r"\?")):
        NtfySettings.from_env(env)


def test_main_stops_with_exit_code_1_naming_the_variable(monkeypatch, capsys) -> None:
    for name in ("NTFY_URL", "NTFY_TOKEN", "NTFY_USERNAME", "NTFY_PASSWORD", "ELICITATION"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(SystemExit) as caught:
        main()
    assert caught.value.code == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("ntfy-mcp: NTFY_URL is not set")
