"""NTFY_* settings: strict parsing, and main() stopping with exit code 1 on a bad one."""

from __future__ import annotations

import socket

import pytest

from approval_core import ApprovalSettings
from ntfy_mcp import main
from ntfy_mcp.errors import ConfigError
from ntfy_mcp.settings import NtfySettings, refuse_the_approval_topic

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


# ---------------------------------------------------------------------------- the approval push topic

PUSH = "https://ntfy.example.org/approvals-willi"


def push_of(url: str = PUSH) -> tuple[str, str | None]:
    """``(push_url, push_topic)`` as approval-core reads them from APPROVAL_PAGE=true + APPROVAL_PUSH_URL."""
    page = ApprovalSettings.from_env(
        {"APPROVAL_PAGE": "true", "APPROVAL_PUSH_URL": url, "APPROVAL_PASSKEYS_FILE": "/nonexistent/passkeys.json"}
    ).page
    assert page is not None
    assert page.push_url is not None
    return page.push_url, page.push_topic


@pytest.mark.parametrize(
    ("topics", "push", "named"),
    [
        ("alerts,approvals-willi", PUSH, "NTFY_TOPICS lists 'approvals-willi'"),
        ("approvals-willi", "https://push.example.net/approvals-willi", "NTFY_TOPICS lists 'approvals-willi'"),
        (None, PUSH, "NTFY_TOPICS is not set"),
        (None, "http://NTFY.example.org:8080/approvals-willi", "NTFY_TOPICS is not set"),
    ],
)
def test_a_topic_list_that_reaches_the_approval_push_topic_is_refused(
    topics: str | None, push: str, named: str
) -> None:
    env = {**BASE, **({"NTFY_TOPICS": topics} if topics is not None else {})}
    with pytest.raises(ConfigError, match=named) as refused:
        refuse_the_approval_topic(NtfySettings.from_env(env), *push_of(push))
    assert "approvals-willi" in str(refused.value)


@pytest.mark.parametrize(
    ("topics", "push"),
    [
        ("alerts,backups", PUSH),  # a bounded list without the push topic
        (None, "https://push.example.net/approvals-willi"),  # unbounded, but the push is on another ntfy host
    ],
)
def test_a_topic_list_that_keeps_off_the_approval_push_topic_is_accepted(topics: str | None, push: str) -> None:
    env = {**BASE, **({"NTFY_TOPICS": topics} if topics is not None else {})}
    refuse_the_approval_topic(NtfySettings.from_env(env), *push_of(push))
    refuse_the_approval_topic(NtfySettings.from_env(BASE), None, None)  # no push at all


def test_loopback_names_are_one_host() -> None:
    local = NtfySettings.from_env({"NTFY_URL": "http://localhost:2586"})
    with pytest.raises(ConfigError, match="NTFY_TOPICS is not set"):
        refuse_the_approval_topic(local, *push_of("http://127.0.0.1:2586/approvals-willi"))


SAME_HOST = [
    # every spelling of this machine is one host
    ("http://localhost:2586", "http://127.1:2586/approvals-willi"),
    ("http://127.0.0.1:2586", "http://[::1]:2586/approvals-willi"),
    ("http://[::1]:2586", "http://localhost.:2586/approvals-willi"),
    ("http://LOCALHOST", "http://127.0.0.1/approvals-willi"),
    ("http://127.0.0.1", "http://0x7f.0.0.1/approvals-willi"),
    ("http://127.0.0.1", "http://2130706433/approvals-willi"),
    ("http://127.0.0.1", "http://0177.0.0.1/approvals-willi"),
    ("http://127.0.0.1", "http://127.0.0.2/approvals-willi"),
    ("http://127.0.0.1", "http://[::ffff:127.0.0.1]/approvals-willi"),
    ("http://127.0.0.1", "http://[0:0:0:0:0:0:0:1]/approvals-willi"),
    ("http://0.0.0.0:2586", "http://localhost:2586/approvals-willi"),
    ("http://ntfy.localhost", "http://localhost/approvals-willi"),
    # one remote host, spelt differently
    ("https://ntfy.example.org", "https://NTFY.Example.ORG./approvals-willi"),
    ("https://ntfy.example.org", "https://ntfy.example.org:443/approvals-willi"),
    ("http://ntfy.example.org", "http://ntfy.example.org:80/approvals-willi"),
    ("https://ntfy.example.org:8443", "http://ntfy.example.org/approvals-willi"),
    ("http://10.0.0.1", "http://10.1/approvals-willi"),
    ("http://[2001:db8::1]", "http://[2001:DB8:0:0::1]/approvals-willi"),
    ("http://192.0.2.7", "http://[::ffff:192.0.2.7]/approvals-willi"),
    ("https://xn--bcher-kva.example", "https://BÜCHER.example/approvals-willi"),
]


PLAIN = {"NTFY_ALLOW_PLAINTEXT": "true"}
"""These tests compare hosts; plain http:// to a host that is not this machine is allowed for them."""


@pytest.mark.parametrize(("ntfy", "push"), SAME_HOST)
def test_one_host_spelt_two_ways_is_one_host(ntfy: str, push: str) -> None:
    """Hosts are compared as addresses: loopbacks, IPv4 shorthands, IPv6 forms, case, a trailing dot, ports."""
    with pytest.raises(ConfigError, match="NTFY_TOPICS is not set"):
        refuse_the_approval_topic(NtfySettings.from_env({"NTFY_URL": ntfy, **PLAIN}), *push_of(push))


@pytest.mark.parametrize(
    ("ntfy", "push"),
    [
        ("http://10.0.0.1", "http://10.0.0.2/approvals-willi"),
        ("http://[2001:db8::1]", "http://[2001:db8::2]/approvals-willi"),
        ("https://ntfy.example.org", "https://ntfy.example.org.evil.test/approvals-willi"),
        ("http://127.0.0.1", "http://127.0.0.1.invalid/approvals-willi"),  # a name that resolves to nothing (RFC 6761)
        ("https://cafe.example", "https://cafe.example.org/approvals-willi"),
    ],
)
def test_other_hosts_stay_other_hosts(ntfy: str, push: str) -> None:
    refuse_the_approval_topic(NtfySettings.from_env({"NTFY_URL": ntfy, **PLAIN}), *push_of(push))


def test_a_name_that_resolves_to_the_push_host_is_that_host() -> None:
    """This machine's host name (in /etc/hosts, resolving to a loopback or its own address) is the push's host."""
    name = socket.gethostname()
    addresses = {info[4][0] for info in socket.getaddrinfo(name, None)}
    assert addresses, f"the host name {name!r} does not resolve; add it to /etc/hosts"
    address = sorted(addresses)[0]
    push = f"http://[{address}]:2586/approvals-willi" if ":" in address else f"http://{address}:2586/approvals-willi"
    with pytest.raises(ConfigError, match="NTFY_TOPICS is not set"):
        refuse_the_approval_topic(NtfySettings.from_env({"NTFY_URL": f"http://{name}:2586", **PLAIN}), *push_of(push))
    with pytest.raises(ConfigError, match="NTFY_TOPICS is not set"):
        refuse_the_approval_topic(
            NtfySettings.from_env({"NTFY_URL": push.rsplit("/", 1)[0]}), *push_of(f"http://{name}:2586/approvals-willi")
        )


@pytest.mark.parametrize("topics", ["alerts,approvals-willi", None])
def test_main_refuses_to_serve_the_approval_push_topic_with_one_line_and_exit_1(
    topics: str | None, monkeypatch, capsys, tmp_path
) -> None:
    for name in ("NTFY_TOKEN", "NTFY_USERNAME", "NTFY_PASSWORD", "ELICITATION", "NTFY_TIMEOUT", "NTFY_TOPICS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NTFY_URL", "https://ntfy.example.org")
    if topics is not None:
        monkeypatch.setenv("NTFY_TOPICS", topics)
    monkeypatch.setenv("APPROVAL_PAGE", "true")
    monkeypatch.setenv("APPROVAL_PUSH_URL", PUSH)
    monkeypatch.setenv("APPROVAL_PASSKEYS_FILE", str(tmp_path / "passkeys.json"))
    with pytest.raises(SystemExit) as caught:
        main()
    assert caught.value.code == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert len(err.splitlines()) == 1, err
    assert err.startswith("ntfy-mcp: NTFY_TOPICS")
    assert "APPROVAL_PUSH_URL" in err
    assert "approvals-willi" in err


@pytest.mark.parametrize("url", ["https://ntfy.example.org/", None])
def test_main_builds_with_the_collector_paused_and_serves_what_it_built_frozen(
    url: str | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As approval_core.run does for the other servers (approval-core's test_collector.py): both of main's
    # ways to serve, with NTFY_URL and without it.
    import gc

    import ntfy_mcp.server as server_module

    for name in ("NTFY_URL", "NTFY_TOKEN", "NTFY_USERNAME", "NTFY_PASSWORD", "NTFY_TOPICS", "ELICITATION"):
        monkeypatch.delenv(name, raising=False)
    if url is not None:
        monkeypatch.setenv("NTFY_URL", url)
    seen: dict[str, object] = {}
    build = server_module.build_server

    def building(*args: object, **kwargs: object) -> object:
        seen["building"] = gc.isenabled()
        return build(*args, **kwargs)  # type: ignore[arg-type]

    def serving(server: object, name: str) -> None:
        seen["serving"] = (gc.isenabled(), gc.get_freeze_count() > 0, name)

    monkeypatch.setattr(server_module, "build_server", building)
    monkeypatch.setattr(server_module, "serve", serving)
    monkeypatch.setattr(server_module, "configure_logging", lambda: None)
    gc.enable()
    try:
        main()
    finally:
        gc.unfreeze()
        gc.enable()
    assert seen == {"building": False, "serving": (True, True, "ntfy-mcp")}
