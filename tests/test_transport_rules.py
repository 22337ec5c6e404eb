"""Transport rules at start, for every server, through its console script (exit code and stderr).

* ``<PREFIX>_URL`` with plain ``http://`` to a host that is not loopback stops the server (exit 1) unless
  ``<PREFIX>_ALLOW_PLAINTEXT=true``; loopback hosts, compared as addresses, start;
* a key file holding a key that is plainly not random (all zero bytes) stops the server.
"""

from __future__ import annotations

import base64
import os
import subprocess
import sys
from pathlib import Path

import pytest

from approval_core.serving.backend_url import loopback_host, loopback_url
from servers import SERVERS, import_name


def prefix(name: str) -> str:
    return name.removesuffix("-mcp").upper()


def start(name: str, **env: str) -> subprocess.CompletedProcess[str]:
    """Start the console script with ``env`` and an empty stdin: a server that starts ends at once, exit 0."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("CALDAV_", "CARDDAV_", "NTFY_", "APPROVAL_"))}
    script = f"from {import_name(name)}.server import main\nmain()\n"
    return subprocess.run(  # noqa: S603 - our own interpreter
        [sys.executable, "-c", script], env={**base, **env}, stdin=subprocess.DEVNULL, capture_output=True,
        text=True, timeout=120, check=False,
    )  # fmt: skip


def backend(name: str, url: str) -> dict[str, str]:
    p = prefix(name)
    return {f"{p}_URL": url, f"{p}_USERNAME": "willi", f"{p}_PASSWORD": "secret"}


@pytest.mark.stdio
@pytest.mark.parametrize("name", SERVERS)
def test_plain_http_to_another_host_stops_the_server_unless_allowed(name: str) -> None:
    p = prefix(name)
    refused = start(name, **backend(name, "http://192.0.2.7:8080/dav/"))  # TEST-NET-1: nothing listens
    assert refused.returncode == 1, refused.stderr
    line = refused.stderr.strip().splitlines()[-1]
    assert line.startswith(f"{name}: {p}_URL uses plain http:// to a host that is not this machine"), line
    assert f"{p}_ALLOW_PLAINTEXT=true" in line
    assert "192.0.2.7" not in refused.stderr
    assert "secret" not in refused.stderr
    allowed = start(name, **backend(name, "http://192.0.2.7:8080/dav/"), **{f"{p}_ALLOW_PLAINTEXT": "true"})
    assert allowed.returncode == 0, allowed.stderr
    bad_flag = start(name, **backend(name, "https://dav.example.org/"), **{f"{p}_ALLOW_PLAINTEXT": "yes"})
    assert bad_flag.returncode == 1
    assert f"{p}_ALLOW_PLAINTEXT='yes' is not a valid value" in bad_flag.stderr


@pytest.mark.stdio
@pytest.mark.parametrize("name", SERVERS)
@pytest.mark.parametrize("url", ["http://127.0.0.1:9/", "http://[::1]:9/", "http://localhost:9/", "https://192.0.2.7/"])
def test_loopback_or_https_starts(name: str, url: str) -> None:
    done = start(name, **backend(name, url))
    assert done.returncode == 0, done.stderr


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True), ("127.8.9.10", True), ("::1", True), ("[::1]", True), ("::ffff:127.0.0.1", True),
        ("localhost", True), ("LOCALHOST.", True), ("dav.localhost", True), ("0:0:0:0:0:0:0:1", True),
        ("127.0.0.1.nip.io", False), ("localhost.example.org", False), ("10.0.0.1", False), ("::ffff:10.0.0.1", False),
        ("0.0.0.0", False), ("::", False)  # noqa: S104 - a host to judge, not one to bind, ("192.0.2.7", False), ("", False),
    ],
)  # fmt: skip
def test_loopback_is_decided_on_the_address(host: str, loopback: bool) -> None:
    assert loopback_host(host) is loopback
    if host:
        bracketed = f"[{host.strip('[]')}]" if ":" in host else host
        assert loopback_url(f"http://{bracketed}:80/x") is loopback


@pytest.mark.stdio
@pytest.mark.parametrize("name", SERVERS)
def test_a_key_file_of_zero_bytes_stops_the_server(name: str, tmp_path: Path) -> None:
    keys = tmp_path / "approval.keys"
    keys.write_text(base64.b64encode(bytes(32)).decode() + "\n")
    keys.chmod(0o600)
    done = start(name, APPROVAL_KEY_FILE=str(keys))
    assert done.returncode == 1, done.stderr
    assert "line 1 is not a random key" in done.stderr
