"""Entry hrefs a server names: decoded once, sent back to the same resource, never outside the calendar queried."""

from __future__ import annotations

import pytest
from rewriting_proxy import rewriting_proxy

from approval_core import ApprovalSettings
from approval_core.testing import approval_of, connect
from caldav_helpers import ics, vevent
from caldav_mcp.server import build_server
from caldav_mcp.settings import CalDAVSettings

pytestmark = pytest.mark.anyio

OFF = ApprovalSettings(elicitation=False)


async def _confirmed(client, tool: str, args: dict):
    """Call a guarded tool with approval switched off: ask for the token, then repeat with it."""
    first = await client.call_tool(tool, args)
    if not first.is_error or "confirm_token=" not in first.content[0].text:
        return first  # done, or refused before any token
    return await client.call_tool(tool, {**args, "confirm_token": approval_of(first)["confirm_token"]})


async def test_an_entry_named_with_a_percent_is_the_one_written_and_deleted(account) -> None:
    # Stored as "a%41.ics" (its href is "a%2541.ics"); its sibling "aA.ics" is what a second decoding would name.
    account.put(account.work, "a%2541.ics", ics(vevent("pct@example.org", ":20261201T090000Z", ":20261201T100000Z")))
    account.put(account.work, "aA.ics", ics(vevent("other@example.org", ":20261201T090000Z", ":20261201T100000Z")))
    call = {"calendar": account.work, "id": "pct@example.org"}
    async with connect(account.build(OFF), revision="2026-07-28") as client:
        updated = await _confirmed(client, "update_event", {**call, "summary": "Renamed"})
        assert not updated.is_error, updated.content[0].text
        assert "SUMMARY:Renamed" in account.get(account.work, "a%2541.ics")[1]
        deleted = await _confirmed(client, "delete_event", call)
    assert not deleted.is_error, deleted.content[0].text
    assert deleted.structured_content["already_gone"] is False
    assert account.get(account.work, "a%2541.ics")[0] == 404
    status, sibling = account.get(account.work, "aA.ics")
    assert status == 200
    assert "UID:other@example.org" in sibling
    assert "Renamed" not in sibling


INSIDE_NOT = "not directly inside it"


@pytest.mark.parametrize(
    ("elsewhere", "said"),
    [
        ("{home}h1.ics", INSIDE_NOT),  # another calendar this server may use
        ("{work}sub/e1.ics", INSIDE_NOT),
        ("{work}%2e%2e/{home_name}/h1.ics", INSIDE_NOT),
        ("{work}", "no event with UID"),  # the caldav library drops the collection's own href
    ],
)
async def test_an_href_outside_the_calendar_queried_is_refused_before_any_write(
    account, elsewhere: str, said: str
) -> None:
    account.put(account.work, "e1.ics", ics(vevent("e1@example.org", ":20261201T090000Z", ":20261201T100000Z")))
    account.put(account.home, "h1.ics", ics(vevent("h1@example.org", ":20261201T090000Z", ":20261201T100000Z")))
    href = elsewhere.format(work=account.work, home=account.home, home_name=account.home.strip("/").rsplit("/")[-1])
    real = f">{account.work}e1.ics<".encode()

    with rewriting_proxy(account.server.url, lambda body: body.replace(real, f">{href}<".encode())) as proxy:
        settings = CalDAVSettings(proxy.url, "willi", "secret")
        async with connect(build_server(OFF, settings), revision="2026-07-28") as client:
            results = [
                await _confirmed(client, tool, {"calendar": account.work, "id": "e1@example.org", **extra})
                for tool, extra in [
                    ("update_event", {"summary": "Changed"}),
                    ("delete_event", {}),
                    ("move_event", {"destination": account.home}),
                ]
            ]
    for result in results:
        assert result.is_error
        assert said in result.content[0].text, result.content[0].text
    writes = [r for r in proxy.requests if r.split(" ")[0] in {"PUT", "DELETE", "MOVE"}]
    assert writes == []
    assert "SUMMARY:Meeting" in account.get(account.home, "h1.ics")[1]
    assert "SUMMARY:Meeting" in account.get(account.work, "e1.ics")[1]
