"""The real-ntfy launcher fails with the exact reason when no server can be had (it never skips)."""

from __future__ import annotations

from pathlib import Path

import ntfy_server
import pytest


def test_a_build_that_cannot_reach_the_module_names_the_command_and_gos_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NTFY_SERVER_BINARY", raising=False)
    monkeypatch.setattr(ntfy_server, "CACHE", tmp_path / "empty-cache")
    monkeypatch.setenv("GOPROXY", "off")
    monkeypatch.setenv("GOFLAGS", "-mod=mod")
    with pytest.raises(ntfy_server.NtfyUnavailable) as caught:
        ntfy_server.find_or_build_binary()
    text = str(caught.value)
    assert text.startswith("could not build the ntfy server from heckel.io/ntfy/v2")
    assert "go list -m -versions heckel.io/ntfy/v2" in text
    assert "GOPROXY=off" in text or "module lookup disabled" in text


def test_an_explicit_binary_that_is_not_there_is_reported(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("NTFY_SERVER_BINARY", str(tmp_path / "ntfy"))
    with pytest.raises(ntfy_server.NtfyUnavailable, match="is not an executable file"):
        ntfy_server.find_or_build_binary()


def test_versions_are_read_from_names() -> None:
    assert ntfy_server._parse_version("ntfy-2.16.0") == (2, 16, 0)
    assert ntfy_server._parse_version("v2.17.1") == (2, 17, 1)
    assert ntfy_server._parse_version("ntfy") is None
