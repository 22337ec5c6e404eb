"""The ELICITATION flag, the dialog timeout, and the startup line."""

from __future__ import annotations

import io
import subprocess
import sys

import pytest

from approval_core import (
    DEFAULT_DIALOG_TIMEOUT,
    ApprovalSettings,
    SettingsError,
    announce,
    load_settings_or_exit,
    startup_line,
)

LINE = "demo-mcp: ELICITATION=false — guarded tools fall back to the two-call token"


@pytest.mark.parametrize(
    ("env", "expected"), [({}, True), ({"ELICITATION": "true"}, True), ({"ELICITATION": "false"}, False)]
)
def test_the_flag_has_exactly_two_spellings(env, expected) -> None:
    assert ApprovalSettings.from_env(env).elicitation is expected


@pytest.mark.parametrize("raw", ["1", "0", "off", "on", "yes", "no", "TRUE", "False", "", " true", "true "])
def test_anything_else_is_an_error_naming_both_values(raw) -> None:
    with pytest.raises(SettingsError) as caught:
        ApprovalSettings.from_env({"ELICITATION": raw})
    message = str(caught.value)
    assert "ELICITATION" in message
    assert "'true'" in message
    assert "'false'" in message


def test_the_default_timeout_expires_before_a_120_second_idle_limit() -> None:
    assert ApprovalSettings.from_env({}).dialog_timeout == DEFAULT_DIALOG_TIMEOUT == 90
    assert ApprovalSettings.from_env({"ELICITATION_TIMEOUT": "45.5"}).dialog_timeout == 45.5


@pytest.mark.parametrize("raw", ["0", "4.9", "3601", "nan", "inf", "ninety", ""])
def test_a_bad_timeout_is_an_error(raw) -> None:
    with pytest.raises(SettingsError, match="ELICITATION_TIMEOUT"):
        ApprovalSettings.from_env({"ELICITATION_TIMEOUT": raw})


def test_the_startup_line_is_printed_only_when_switched_off() -> None:
    assert startup_line("demo-mcp", ApprovalSettings()) is None
    assert startup_line("demo-mcp", ApprovalSettings(elicitation=False)) == LINE
    quiet, loud = io.StringIO(), io.StringIO()
    announce("demo-mcp", ApprovalSettings(), quiet)
    announce("demo-mcp", ApprovalSettings(elicitation=False), loud)
    assert quiet.getvalue() == ""
    assert loud.getvalue() == LINE + "\n"


def test_load_settings_or_exit_prints_the_line_once_and_returns() -> None:
    err = io.StringIO()
    settings = load_settings_or_exit("demo-mcp", {"ELICITATION": "false"}, err)
    assert settings.elicitation is False
    assert err.getvalue() == LINE + "\n"


def test_load_settings_or_exit_stops_with_code_1(capsys) -> None:
    err = io.StringIO()
    with pytest.raises(SystemExit) as caught:
        load_settings_or_exit("demo-mcp", {"ELICITATION": "off"}, err)
    assert caught.value.code == 1
    assert err.getvalue().startswith("demo-mcp: ELICITATION='off' is not a valid value")
    assert capsys.readouterr().out == ""


def test_load_settings_or_exit_defaults_to_stderr(capsys, monkeypatch) -> None:
    monkeypatch.setenv("ELICITATION", "false")
    load_settings_or_exit("demo-mcp")
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == LINE + "\n"


def test_configure_logging_keeps_library_chatter_out_and_the_audit_trail_in() -> None:
    script = (
        "import logging\n"
        "from approval_core import configure_logging\n"
        "from approval_core.records.audit import audit\n"
        "configure_logging()\n"
        "logging.getLogger('httpx2').info('GET https://ntfy.example/secret-topic/json?search=x')\n"
        "logging.getLogger('radicale').warning('a warning that should show')\n"
        "audit('asked', server='s', tool='t', path='dialog', fp='0123456789abcdef')\n"
        "print('stdout is for the protocol')\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60)  # noqa: S603
    assert done.stdout == "stdout is for the protocol\n"
    assert done.stderr.splitlines() == [
        "radicale: a warning that should show",
        'approval_core.audit: approval {"event":"asked","server":"s","tool":"t","path":"dialog","fp":"0123456789ab"}',
    ]


def test_backend_settings_are_returned_or_the_server_stops_with_the_problem() -> None:
    import io

    from approval_core import SettingsError, backend_settings_or_exit

    assert backend_settings_or_exit("demo-mcp", lambda: {"url": "http://x"}, SettingsError) == {"url": "http://x"}

    def bad() -> dict[str, str]:
        raise SettingsError("DEMO_URL: an http(s) URL is needed, not 'ftp://x'")

    stream = io.StringIO()
    with pytest.raises(SystemExit) as caught:
        backend_settings_or_exit("demo-mcp", bad, (ValueError, SettingsError), stream)
    assert caught.value.code == 1
    assert stream.getvalue() == "demo-mcp: DEMO_URL: an http(s) URL is needed, not 'ftp://x'\n"
    with pytest.raises(KeyError):
        backend_settings_or_exit("demo-mcp", lambda: {}["missing"], SettingsError)


@pytest.mark.parametrize(
    ("raw", "profile"), [(None, "guarded"), ("guarded", "guarded"), ("every-write", "every-write")]
)
def test_the_profile_has_two_values_and_guarded_is_the_default(raw, profile) -> None:
    env = {} if raw is None else {"APPROVAL_PROFILE": raw}
    assert ApprovalSettings.from_env(env).profile == profile


@pytest.mark.parametrize("raw", ["", "every_write", "Every-Write", "strict", "guarded "])
def test_any_other_profile_stops_the_server_naming_the_two_values(raw) -> None:
    err = io.StringIO()
    with pytest.raises(SystemExit) as stopped:
        load_settings_or_exit("demo-mcp", {"APPROVAL_PROFILE": raw}, err)
    assert stopped.value.code == 1
    assert "APPROVAL_PROFILE" in err.getvalue()
    assert "'guarded'" in err.getvalue()
    assert "'every-write'" in err.getvalue()


def test_the_startup_line_names_the_every_write_profile() -> None:
    on = ApprovalSettings(profile="every-write")
    assert startup_line("demo-mcp", on) == (
        "demo-mcp: APPROVAL_PROFILE=every-write — every tool that changes data asks first; "
        "a client that cannot show a form is refused"
    )
    off = ApprovalSettings(profile="every-write", elicitation=False)
    assert startup_line("demo-mcp", off) == (
        "demo-mcp: APPROVAL_PROFILE=every-write — every tool that changes data asks first; "
        "ELICITATION=false, so every change is refused"
    )
