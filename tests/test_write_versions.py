"""Every write of every DAV server binds a version, also behind a server whose listings carry no ETag.

Issue 22 §3, for the whole family: each DAV server's scenario (``tests/scenarios.py``) is driven with the
server pointed through a test double (``rewriting_proxy.no_etag_proxy``) in front of the real Radicale
that strips ``getetag`` from every multistatus, as some real servers list entries (a GET still carries
``ETag``). Every PUT, DELETE and MOVE that then reaches the server must carry ``If-Match``, or
``If-None-Match: *`` for a create: no write ever goes out blind. A server whose backend is not WebDAV
(ntfy-mcp: nothing there carries an ETag) is left out by its scenario's backend.
"""

from __future__ import annotations

import dataclasses

import pytest
from rewriting_proxy import no_etag_proxy, writes

from approval_core.testing import DialogLog, accept, connect
from scenarios import SCENARIOS, Driver, scenario_of
from servers import SERVERS

pytestmark = pytest.mark.anyio

DAV_SERVERS = [name for name in SERVERS if name in SCENARIOS and SCENARIOS[name].backend == "dav"]


@pytest.mark.parametrize("name", DAV_SERVERS)
async def test_every_write_carries_a_precondition_behind_a_server_that_lists_no_etag(
    name: str, request: pytest.FixtureRequest
) -> None:
    scenario = scenario_of(name)
    dav = request.getfixturevalue(scenario.backend)
    with no_etag_proxy(dav.url) as proxy:
        through = dataclasses.replace(dav, url=proxy.url)
        async with connect(scenario.make(through), revision="2025-11-25", answer=DialogLog(accept)) as client:
            await scenario.drive(Driver(client), dav)  # its own set-up goes to the server directly
    sent = writes(proxy)
    assert sent, "the scenario sent no write through the proxy"
    blind = [
        f"{method} {path}"
        for method, path, headers in sent
        if "if-match" not in headers and headers.get("if-none-match") != "*"
    ]
    assert blind == [], f"{name}: writes without If-Match or If-None-Match: * behind a no-ETag server: {blind}"
