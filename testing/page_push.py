"""The real ntfy for the approval page's push tests, and the push as a person's phone reads it.

Test support (on ``sys.path`` through the family's pytest plugin). Nothing
here is a double: :func:`real_ntfy` starts ntfy itself (built once from the
source kit, see :mod:`ntfy_server`), showing a first build's progress on the
terminal past pytest's capture.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest
from ntfy_server import NtfyServer, find_or_build_binary, ntfy_server
from terminal import on_terminal

from approval_core.page.settings import PageSettings

__all__ = ["push_settings", "pushed", "real_ntfy"]


@contextlib.contextmanager
def real_ntfy(folder: Path, pytestconfig: pytest.Config) -> Iterator[NtfyServer]:
    """A running ntfy on 127.0.0.1 with its data in ``folder`` (fails with the reason, never skips)."""
    binary = find_or_build_binary(progress=on_terminal(pytestconfig))  # a first build shows its progress
    with ntfy_server(folder, binary) as server:
        yield server


def push_settings(ntfy: NtfyServer, folder: Path, topic: str) -> PageSettings:
    """Page settings whose push goes to ``topic`` on ``ntfy``, with an access token in an owner-only file."""
    made = httpx2.post(f"{ntfy.url}/v1/account/token", json={"label": "push"}, headers=ntfy.admin_headers())
    assert made.status_code == 200, made.text
    token = folder / "push.token"
    token.write_text(made.json()["token"])
    token.chmod(0o600)
    return PageSettings(passkeys_file=folder / "passkeys.json", push_url=f"{ntfy.url}/{topic}", push_token_file=token)


def pushed(ntfy: NtfyServer, topic: str) -> list[dict[str, object]]:
    """Every message ``topic`` holds, oldest first (ntfy's poll API, as the phone reads it)."""
    polled = httpx2.get(f"{ntfy.url}/{topic}/json", params={"poll": "1", "since": "all"}, headers=ntfy.admin_headers())
    assert polled.status_code == 200, polled.text
    return [json.loads(line) for line in polled.text.splitlines() if line.strip()]
