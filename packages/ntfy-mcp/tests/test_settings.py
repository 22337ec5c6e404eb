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


def test_main_stops_with_exit_code_1_on_a_bad_value(monkeypatch, capsys) -> None:
    for name in ("NTFY_TOKEN", "NTFY_USERNAME", "NTFY_PASSWORD", "ELICITATION"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NTFY_URL", "https://ntfy.example.org")
    monkeypatch.setenv("NTFY_TIMEOUT", "forever")
    with pytest.raises(SystemExit) as caught:
        main()
    assert caught.value.code == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("ntfy-mcp: NTFY_TIMEOUT='forever' is not valid")


@pytest.mark.parametrize(
    "url",
    [
        "https://phil:hunter22-secret@ntfy.example.org",
        "https://:hunter22-secret@ntfy.example.org/",
        "ftp://phil:hunter22-secret@ntfy.example.org",
        "https://phil:hunter22-secret@ntfy.example.org:99999/",
    ],
)
def test_a_password_in_ntfy_url_is_refused_and_never_repeated(url: str, monkeypatch, capsys) -> None:
    for name in ("NTFY_TOKEN", "NTFY_USERNAME", "NTFY_PASSWORD", "ELICITATION", "NTFY_TIMEOUT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NTFY_URL", url)
    with pytest.raises(SystemExit) as caught:
        main()
    assert caught.value.code == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert "hunter22-secret" not in err
    assert "NTFY_URL" in err


def test_userinfo_in_ntfy_url_points_to_the_credential_variables() -> None:
    with pytest.raises(ConfigError, match="NTFY_USERNAME and NTFY_PASSWORD, or use NTFY_TOKEN"):
        NtfySettings.from_env({"NTFY_URL": "https://phil:pw@ntfy.example.org"})


@pytest.mark.parametrize(("raw", "ok"), [("65536", True), ("1024", False), ("lots", False), ("1073741825", False)])
def test_the_answer_size_limit_is_a_checked_setting(raw: str, ok: bool) -> None:
    env = {**BASE, "NTFY_MAX_RESPONSE_BYTES": raw}
    if ok:
        assert NtfySettings.from_env(env).max_response_bytes == int(raw)
    else:
        with pytest.raises(ConfigError, match="NTFY_MAX_RESPONSE_BYTES"):
            NtfySettings.from_env(env)
    assert NtfySettings.from_env(BASE).max_response_bytes == 16 * 1024 * 1024
