"""The page owns its port on both loopbacks: a program on ``[::1]`` or ``127.0.0.1`` at that port stops it.

A browser reaches ``localhost`` on either address (Chromium tries ``[::1]``
first), so a program holding the page's port on one of them would be "the
page" for every browser that went there. The server over stdio (a real
subprocess) and ``python -m approval_core pair`` refuse to start then; with
both free, both addresses serve the page.
"""

from __future__ import annotations

import contextlib
import errno
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from mcp.client.stdio import StdioServerParameters

from approval_core import ApprovalPage, running_page
from approval_core.page.loopback import LoopbackTaken, bind_loopbacks
from approval_core.page.passkeys import PasskeyFile
from approval_core.page.settings import PageSettings
from approval_core.records.store import MemoryStore
from approval_core.testing import connect

pytestmark = pytest.mark.anyio

SCRIPT = str(Path(__file__).with_name("example_server.py"))


def _family(host: str) -> int:
    return socket.AF_INET6 if ":" in host else socket.AF_INET


@contextlib.contextmanager
def squatting(host: str) -> Iterator[int]:
    """A listener on ``host`` at a port that is free on the other loopback; yields the port."""
    port = free_port()
    squatter = socket.socket(_family(host), socket.SOCK_STREAM)
    if host == "::":
        squatter.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    squatter.bind((host, port))
    squatter.listen(8)
    try:
        yield port
    finally:
        squatter.close()


def free_port() -> int:
    """A port free on both loopbacks a moment ago."""
    socks = bind_loopbacks(0)
    port = socks[0].getsockname()[1]
    for sock in socks:
        sock.close()
    return port


def _env(passkeys: Path, port: int) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ELICITATION", "APPROVAL_"))}
    return {**base, "APPROVAL_PAGE": "true", "APPROVAL_PASSKEYS_FILE": str(passkeys), "APPROVAL_PAGE_PORT": str(port)}


def _where(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def test_this_machine_has_both_loopbacks() -> None:
    """The tests below mean what they say only where ``::1`` exists (``ip -6 addr`` shows it on ``lo``)."""
    socks = bind_loopbacks(0)
    try:
        assert sorted(s.getsockname()[0] for s in socks) == ["127.0.0.1", "::1"]
        assert len({s.getsockname()[1] for s in socks}) == 1, "one port on both"
    finally:
        for sock in socks:
            sock.close()


@pytest.mark.stdio
@pytest.mark.parametrize("host", ["::1", "127.0.0.1"])
def test_a_listener_on_either_loopback_stops_the_stdio_server(host: str, tmp_path: Path) -> None:
    with squatting(host) as port:
        run = subprocess.run(  # noqa: S603 - our own interpreter and script
            [sys.executable, SCRIPT],
            env=_env(tmp_path / "passkeys.json", port),
            input="",
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert run.returncode == 1, run.stderr
    assert run.stdout == ""
    assert f"example-mcp: the approval page cannot listen on {_where(host, port)}: another program" in run.stderr
    assert "Traceback" not in run.stderr


@pytest.mark.stdio
@pytest.mark.parametrize("host", ["::1", "127.0.0.1"])
def test_a_listener_on_either_loopback_stops_the_pairing_command(host: str, tmp_path: Path) -> None:
    passkeys = tmp_path / "passkeys.json"
    with squatting(host) as port:
        run = subprocess.run(  # noqa: S603 - our own interpreter
            [sys.executable, "-m", "approval_core", "pair", "--file", str(passkeys), "--port", str(port)],
            input="",
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert run.returncode == 1, run.stderr
    assert "pair/" not in run.stdout, "no link was given out"
    assert f"cannot listen on {_where(host, port)}: another program listens there" in run.stderr
    assert "nothing was paired" in run.stderr
    assert PasskeyFile(passkeys).passkeys("localhost") == []


@pytest.mark.parametrize("host", ["::1", "127.0.0.1", "::", "0.0.0.0"])  # noqa: S104 - a squatter's choice
async def test_the_page_in_process_refuses_a_taken_port(host: str, tmp_path: Path) -> None:
    """A squatter on an exact loopback or on a wildcard address (``[::]`` dual-stack, ``0.0.0.0``) alike."""
    page = ApprovalPage("example-mcp", PageSettings(passkeys_file=tmp_path / "p.json"), MemoryStore())
    with squatting(host) as port, pytest.raises(LoopbackTaken, match=rf"cannot listen on .*:{port}: another prog"):
        async with running_page(page, port):
            pytest.fail("the page served beside a squatter")


@pytest.mark.stdio
async def test_with_both_free_both_loopbacks_serve_the_stdio_servers_page(tmp_path: Path) -> None:
    passkeys = tmp_path / "passkeys.json"
    secret, _ = PasskeyFile(passkeys).start_pairing(time.time())
    port = free_port()
    params = StdioServerParameters(command=sys.executable, args=[SCRIPT], env=_env(passkeys, port))
    async with connect(params, revision="2025-11-25"), httpx.AsyncClient() as http:
        for address in ("127.0.0.1", "[::1]"):
            got = await http.get(
                f"http://{address}:{port}/approval/pair/{secret}", headers={"Host": f"localhost:{port}"}
            )
            assert got.status_code == 200, (address, got.text)
            assert 'id="pair"' in got.text, address


def test_a_free_port_on_one_loopback_only_is_passed_over_when_choosing(monkeypatch: pytest.MonkeyPatch) -> None:
    """With port 0, a port the kernel gave on ``::1`` but that is taken on ``127.0.0.1`` is not used."""
    refused: list[int] = []

    class Busy(socket.socket):
        """The double: a socket whose bind finds its port in use."""

        def bind(self, address: object, /) -> None:
            refused.append(address[1])  # type: ignore[index]
            raise OSError(errno.EADDRINUSE, "Address already in use")

    def make(family: int) -> socket.socket:
        if family == socket.AF_INET and not refused:
            return Busy(family, socket.SOCK_STREAM)
        return socket.socket(family, socket.SOCK_STREAM)

    socks = bind_loopbacks(0, make)
    try:
        assert len(refused) == 1
        assert [s.family for s in socks] == [socket.AF_INET, socket.AF_INET6]
        assert socks[0].getsockname()[1] == socks[1].getsockname()[1] != refused[0]
    finally:
        for sock in socks:
            sock.close()


def test_without_an_ipv6_loopback_the_page_listens_on_127_0_0_1_and_says_so(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A machine where ``::1`` cannot be bound (IPv6 off): nobody can take it there either."""

    def make(family: int) -> socket.socket:
        if family == socket.AF_INET6:  # the double: this "machine" has no IPv6
            raise OSError(errno.EAFNOSUPPORT, "Address family not supported by protocol")
        return socket.socket(family, socket.SOCK_STREAM)

    with caplog.at_level("WARNING", logger="approval_core.page"):
        socks = bind_loopbacks(0, make)
    try:
        assert [s.getsockname()[0] for s in socks] == ["127.0.0.1"]
        assert "no IPv6 loopback" in caplog.text
    finally:
        for sock in socks:
            sock.close()


def test_a_refused_bind_on_the_ipv6_loopback_is_not_mistaken_for_no_ipv6() -> None:
    """Only "no such address" leaves ``::1`` out; any other failure there (in use, not allowed) stops the page."""

    def make(family: int) -> socket.socket:
        if family == socket.AF_INET6:
            raise OSError(errno.EACCES, "Permission denied")
        return socket.socket(family, socket.SOCK_STREAM)

    with pytest.raises(LoopbackTaken, match=r"cannot listen on \[::1\]:0: Permission denied"):
        bind_loopbacks(0, make)


def _bind_and_listen(sock: socket.socket, address: tuple[str, int]) -> None:
    sock.bind(address)
    sock.listen(8)


@pytest.mark.parametrize("host", ["::1", "127.0.0.1", "::", "0.0.0.0"])  # noqa: S104 - a squatter's choice
async def test_no_listener_joins_the_port_once_the_page_holds_it(host: str, tmp_path: Path) -> None:
    """A program started after the page cannot bind its port on either loopback, even asking to share it."""
    page = ApprovalPage("example-mcp", PageSettings(passkeys_file=tmp_path / "p.json"), MemoryStore())
    async with running_page(page) as base:
        port = int(base.split(":")[2].split("/")[0])
        late = socket.socket(_family(host), socket.SOCK_STREAM)
        try:
            late.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            late.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
            if host == "::":
                late.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
            with pytest.raises(OSError, match="Address already in use"):
                _bind_and_listen(late, (host, port))
        finally:
            late.close()
