"""The WebDAV layer's trust rules (webdav_core.testing.TrustSuite) through carddav-mcp's own client."""

from __future__ import annotations

import httpx2 as httpx
import pytest

from carddav_mcp.client import CardDavClient
from carddav_mcp.settings import CardDavSettings
from webdav_core.testing import MakeClient, TrustSuite


class TestCardDav(TrustSuite):
    @pytest.fixture
    def make(self) -> MakeClient:
        def build(
            url: str,
            transport: httpx.AsyncBaseTransport | None = None,
            *,
            timeout: float = 5.0,
            max_bytes: int = 1_000_000,
        ) -> CardDavClient:
            settings = CardDavSettings(
                url=url, username="willi", password="secret", timeout=timeout, max_response_bytes=max_bytes
            )
            return CardDavClient(settings, transport)

        return build
