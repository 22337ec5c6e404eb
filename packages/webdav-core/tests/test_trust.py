"""The trust rules (webdav_core.testing.TrustSuite) against the bare layer, with a profile of its own."""

from __future__ import annotations

import httpx2 as httpx
import pytest

from webdav_core import WebDavClient
from webdav_core.testing import BARE_PROFILE, MakeClient, TrustSuite

PROFILE = BARE_PROFILE


class TestLayer(TrustSuite):
    @pytest.fixture
    def make(self) -> MakeClient:
        def build(
            url: str,
            transport: httpx.AsyncBaseTransport | None = None,
            *,
            timeout: float = 5.0,
            max_bytes: int = 1_000_000,
        ) -> WebDavClient:
            return WebDavClient(
                url,
                PROFILE,
                username="willi",
                password="secret",
                timeout=timeout,
                max_bytes=max_bytes,
                transport=transport,
            )

        return build
