"""The trust rules (webdav_core.testing.TrustSuite) against the bare layer, with a profile of its own."""

from __future__ import annotations

import httpx2 as httpx
import pytest

from webdav_core import Profile, WebDavClient
from webdav_core.testing import MakeClient, TrustSuite
from webdav_core.xml import CARDDAV

PROFILE = Profile(
    server="WebDAV server",
    program="webdav-core",
    url_setting="DAV_URL",
    credential_settings="DAV_USERNAME and DAV_PASSWORD",
    timeout_setting="DAV_TIMEOUT",
    size_setting="DAV_MAX_RESPONSE_BYTES",
    item="resource",
    data_name="data",
    data_preconditions=(),
    collections="collections",
    home_name="home",
    home_set=(CARDDAV, "addressbook-home-set"),
    well_known="/.well-known/carddav",
    collection_type=(CARDDAV, "addressbook"),
    data_types=frozenset({"text/vcard"}),
)


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
