"""Topics outside NTFY_TOPICS stay unnamed: list_users and get_account over stdio against the real ntfy 2.13.

On ntfy a topic's name is often all that protects it. With ``NTFY_TOPICS`` set, list_users shows a user's
rules on listed topics (and patterns matching one, as written) and counts the others; get_account drops
reservations outside the list and counts them. An ntfy with reservations switched on (``--enable-login
--enable-reservations``, a tier allowing them) is started for this module.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import httpx2
import pytest
from mcp.client.stdio import StdioServerParameters
from ntfy_server import NtfyServer, find_or_build_binary, ntfy_server

from approval_core.testing import connect

pytestmark = [pytest.mark.anyio, pytest.mark.stdio]

LISTED = ("leak-shown", "leak-also")
SECRET = ("secret-ops-7f3a", "hidden-ops-9c1d")


@pytest.fixture(scope="module")
def reserving(tmp_path_factory: pytest.TempPathFactory) -> Iterator[NtfyServer]:
    """The real ntfy with login and reservations on, and a user 'holder' on a tier that may reserve topics."""
    extra = ["--enable-login", "--enable-reservations"]
    with ntfy_server(tmp_path_factory.mktemp("ntfy-reserving"), find_or_build_binary(), extra=extra) as server:
        auth = str(server.workdir / "auth.db")
        for argv in (["tier", "--auth-file", auth, "add", "--reservation-limit=10", "pro"],):
            subprocess.run([str(server.binary), *argv], check=True, capture_output=True, timeout=60)  # noqa: S603
        server.add_user("holder", "holder-password")
        change = ["user", "--auth-file", auth, "change-tier", "holder", "pro"]
        subprocess.run([str(server.binary), *change], check=True, capture_output=True, timeout=60)  # noqa: S603
        for topic in (LISTED[0], SECRET[0]):
            httpx2.post(
                f"{server.url}/v1/account/reservation",
                json={"topic": topic, "everyone": "deny-all"},
                auth=("holder", "holder-password"),
            ).raise_for_status()
        server.add_user("reader", "reader-password")
        for topic, permission in [
            (LISTED[0], "read-only"),
            (SECRET[0], "read-write"),
            (SECRET[1], "deny-all"),
            ("leak-*", "read-only"),  # matches a listed topic: shown as written
            ("hidden-*", "write-only"),  # matches none: counted
        ]:
            body = {"username": "reader", "topic": topic, "permission": permission}
            httpx2.put(f"{server.url}/v1/users/access", json=body, headers=server.admin_headers()).raise_for_status()
        yield server


def params(ntfy: NtfyServer, user: str, password: str, topics: str | None) -> StdioServerParameters:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("NTFY_", "ELICITATION", "APPROVAL_", "TOOLS"))}
    env = {**base, "NTFY_URL": ntfy.url, "NTFY_USERNAME": user, "NTFY_PASSWORD": password}
    if topics is not None:
        env["NTFY_TOPICS"] = topics
    return StdioServerParameters(command=sys.executable, args=["-m", "ntfy_mcp"], env=env)


async def test_list_users_names_no_rule_outside_the_topics(reserving: NtfyServer) -> None:
    admin = (reserving.admin_user, reserving.admin_password)
    async with connect(params(reserving, *admin, ",".join(LISTED)), revision="2025-11-25") as client:
        result = await client.call_tool("list_users", {})
    reader = next(u for u in result.structured_content["users"] if u["name"] == "reader")
    assert sorted((g["topic"], g["permission"]) for g in reader["grants"]) == [
        ("leak-*", "read-only"),
        (LISTED[0], "read-only"),
    ]
    assert reader["other_rules"] == 3
    every_text = str(result.content) + str(result.structured_content)
    for secret in (*SECRET, "hidden-*"):
        assert secret not in every_text
    async with connect(params(reserving, *admin, None), revision="2025-11-25") as client:
        unbounded = await client.call_tool("list_users", {})
    everything = next(u for u in unbounded.structured_content["users"] if u["name"] == "reader")
    assert len(everything["grants"]) == 5
    assert everything["other_rules"] == 0


async def test_get_account_drops_reservations_outside_the_topics(reserving: NtfyServer) -> None:
    async with connect(params(reserving, "holder", "holder-password", ",".join(LISTED)), revision="2026-07-28") as c:
        result = await c.call_tool("get_account", {})
    account = result.structured_content
    assert account["reservations"] == [{"topic": LISTED[0], "everyone": "deny-all"}]
    assert account["other_reservations"] == 1
    assert SECRET[0] not in str(result.content) + str(account)
    async with connect(params(reserving, "holder", "holder-password", None), revision="2026-07-28") as c:
        unbounded = (await c.call_tool("get_account", {})).structured_content
    assert sorted(r["topic"] for r in unbounded["reservations"]) == sorted([LISTED[0], SECRET[0]])
