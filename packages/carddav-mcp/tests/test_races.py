"""A change between question and answer: the approval binds the ETags read and the counts the dialog stated.

Another client (plain HTTP to the same real server) rewrites a card, or adds a
member to a group, after the person was asked and before the answer arrives.
On 2026-07-28 the answer then meets a fresh question; on the token path the
token is refused; on the pushed-dialog path (2025-11-25) the write is refused
(412, or the same check made before the first write) and reported, never
retried. In every case nothing the call would have written was written.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import mcp_types as mt
import pytest
from carddav_conftest import Dav, vcard

from approval_core import ApprovalSettings
from approval_core.testing import DialogLog, accept, approval_of, call_once, connect, ticked

pytestmark = pytest.mark.anyio
OFF = ApprovalSettings(elicitation=False)


@dataclass
class Race:
    """A guarded call, what another client does meanwhile, and whether the call's own change happened."""

    args: dict[str, Any]
    meanwhile: Callable[[], None]
    changed: Callable[[], bool]


def writes(dav: Dav, book: str, file: str, *lines: str) -> Callable[[], None]:
    """Another client's PUT of a card (no If-Match), to run later."""

    def put() -> None:
        dav.put(book, file, vcard(*lines))

    return put


def card_race(dav: Dav, scenario: str) -> Race:
    """The cards for one scenario: an Apple group card, and a CATEGORIES group of four members."""
    ada = dav.put(dav.book, "ada.vcf", vcard("UID:ada", "FN:Ada", "N:Lovelace;Ada;;;"))
    grace = dav.put(dav.book, "grace.vcf", vcard("UID:grace", "FN:Grace", "N:Hopper;Grace;;;"))
    dav.put(dav.book, "carl.vcf", vcard("UID:carl", "FN:Carl", "N:Gauss;Carl;;;"))
    team_lines = ["UID:team", "FN:Team", "N:Team;;;;", "X-ADDRESSBOOKSERVER-KIND:group"]
    team = dav.put(dav.book, "team.vcf", vcard(*team_lines, "X-ADDRESSBOOKSERVER-MEMBER:urn:uuid:ada"))
    edited = "NOTE:edited by another client"
    team_gains_carl = writes(dav, dav.book, "team.vcf", *team_lines, "X-ADDRESSBOOKSERVER-MEMBER:urn:uuid:ada",
                             "X-ADDRESSBOOKSERVER-MEMBER:urn:uuid:carl")  # fmt: skip
    club = [
        dav.put(dav.other, f"m{i}.vcf", vcard(f"UID:m{i}", f"FN:M{i}", f"N:M{i};;;;", "CATEGORIES:Club"))
        for i in range(4)
    ]
    outsider = dav.put(dav.other, "x.vcf", vcard("UID:x", "FN:X", "N:X;;;;"))
    m3_rewritten = writes(dav, dav.other, "m3.vcf", "UID:m3", "FN:M3", "N:M3;;;;", "CATEGORIES:Club", edited)

    def labelled(href: str, label: str) -> bool:
        return f"CATEGORIES:{label}" in dav.get(href)

    races = {
        "update_contact-card-rewritten": Race(
            {"contact_id": ada, "changes": {"title": "Dr"}},
            writes(dav, dav.book, "ada.vcf", "UID:ada", "FN:Ada", "N:Lovelace;Ada;;;", edited),
            lambda: "TITLE:Dr" in dav.get(ada),
        ),
        "delete_contact-second-card-rewritten": Race(
            {"contact_ids": [ada, grace]},
            writes(dav, dav.book, "grace.vcf", "UID:grace", "FN:Grace", "N:Hopper;Grace;;;", edited),
            lambda: not dav.exists(ada),
        ),
        "move_contact-card-rewritten": Race(
            {"contact_id": ada, "destination": dav.other},
            writes(dav, dav.book, "ada.vcf", "UID:ada", "FN:Ada", "N:Lovelace;Ada;;;", edited),
            lambda: not dav.exists(ada),
        ),
        "move_contact-group-added-meanwhile": Race(
            {"contact_id": ada, "destination": dav.other},
            writes(
                dav,
                dav.book,
                "club.vcf",
                "UID:club",
                "FN:Club",
                "N:Club;;;;",
                "X-ADDRESSBOOKSERVER-KIND:group",
                "X-ADDRESSBOOKSERVER-MEMBER:urn:uuid:ada",
            ),
            lambda: not dav.exists(ada),
        ),
        "update_group-member-added-meanwhile": Race(
            {"group_id": team, "add": [grace]}, team_gains_carl, lambda: "urn:uuid:grace" in dav.get(team)
        ),
        "delete_group-member-added-meanwhile": Race({"group_id": team}, team_gains_carl, lambda: not dav.exists(team)),
        "categories-add-member-meanwhile": Race(
            {"group_id": f"{dav.other}#Club", "add": [outsider]},
            writes(dav, dav.other, "y.vcf", "UID:y", "FN:Y", "N:Y;;;;", "CATEGORIES:Club"),  # a fifth member
            lambda: labelled(outsider, "Club"),
        ),
        "categories-delete-last-card-rewritten": Race(
            {"group_id": f"{dav.other}#Club"}, m3_rewritten, lambda: not labelled(club[0], "Club")
        ),
        "categories-rename-last-card-rewritten": Race(
            {"group_id": f"{dav.other}#Club", "name": "Chess"},
            m3_rewritten,
            lambda: any(labelled(m, "Chess") for m in club),
        ),
    }
    return races[scenario]


SCENARIOS = {
    "update_contact-card-rewritten": "update_contact",
    "delete_contact-second-card-rewritten": "delete_contact",
    "move_contact-card-rewritten": "move_contact",
    "move_contact-group-added-meanwhile": "move_contact",
    "update_group-member-added-meanwhile": "update_group",
    "delete_group-member-added-meanwhile": "delete_group",
    "categories-add-member-meanwhile": "update_group",
    "categories-delete-last-card-rewritten": "delete_group",
    "categories-rename-last-card-rewritten": "update_group",
}


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
async def test_a_change_after_the_question_meets_a_fresh_question_on_2026_07_28(dav: Dav, scenario: str) -> None:
    race = card_race(dav, scenario)
    tool = SCENARIOS[scenario]
    async with connect(dav.server(), revision="2026-07-28", answer=accept) as client:
        asked = await call_once(client, tool, race.args)
        assert isinstance(asked, mt.InputRequiredResult)
        race.meanwhile()
        answered = await call_once(client, tool, race.args, answer=ticked, request_state=asked.request_state)
    assert isinstance(answered, mt.InputRequiredResult), answered  # asked afresh
    assert not race.changed()


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
async def test_a_change_after_the_token_was_issued_refuses_the_token(dav: Dav, scenario: str) -> None:
    race = card_race(dav, scenario)
    tool = SCENARIOS[scenario]
    async with connect(dav.server(OFF), revision="2026-07-28") as client:
        first = await client.call_tool(tool, race.args)
        token = approval_of(first)["confirm_token"]
        race.meanwhile()
        second = await client.call_tool(tool, {**race.args, "confirm_token": token})
    assert second.is_error
    assert approval_of(second)["outcome"] == "token_refused"
    assert not race.changed()


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
async def test_a_change_while_a_pushed_dialog_is_open_is_reported_not_retried(dav: Dav, scenario: str) -> None:
    race = card_race(dav, scenario)
    tool = SCENARIOS[scenario]

    async def change_then_accept(context: Any, params: Any) -> Any:
        race.meanwhile()
        return ticked

    log = DialogLog(change_then_accept)
    async with connect(dav.server(), revision="2025-11-25", answer=log) as client:
        result = await client.call_tool(tool, race.args)
    assert result.is_error, result.content
    text = result.content[0].text
    assert "changed" in text
    assert "nothing was" in text
    assert len(log.messages) == 1  # asked once; not asked again, not retried
    assert not race.changed()


async def test_every_write_carries_the_etag_the_dialog_was_built_from(radicale: Dav) -> None:
    """Recorded at a pass-through proxy double: PUT, DELETE and MOVE each carry If-Match with the ETag read."""
    from fault_proxy import fault_proxy

    dav = radicale
    ada = dav.put(dav.book, "ada.vcf", vcard("UID:ada", "FN:Ada", "N:Lovelace;Ada;;;"))
    grace = dav.put(dav.book, "grace.vcf", vcard("UID:grace", "FN:Grace", "N:Hopper;Grace;;;"))
    etags = {href: dav.http.get(href).headers["ETag"] for href in (ada, grace)}
    upstream = dav.settings.url.split("/willi/")[0] + "/"
    with fault_proxy(upstream, lambda method, path: "pass") as proxy:
        server = dav.server(url=f"{proxy.url}willi/")
        async with connect(server, revision="2025-11-25", answer=accept) as client:
            updated = await client.call_tool("update_contact", {"contact_id": ada, "changes": {"title": "Dr"}})
            moved = await client.call_tool("move_contact", {"contact_id": grace, "destination": dav.other})
            deleted = await client.call_tool("delete_contact", {"contact_ids": [ada]})
    assert not updated.is_error
    assert not moved.is_error
    assert not deleted.is_error
    (put,) = proxy.requests("PUT")
    (move,) = proxy.requests("MOVE")
    (delete,) = proxy.requests("DELETE")
    assert put.headers["if-match"] == etags[ada]
    assert move.headers["if-match"] == etags[grace]
    assert delete.headers["if-match"] == updated.structured_content["etag"]


def test_every_guarded_tool_binds_a_version_and_none_is_listed_without() -> None:
    from carddav_mcp.guards import GUARDS

    assert dict(GUARDS.unversioned) == {}


def test_a_card_without_an_etag_cannot_be_bound_and_nothing_is_changed() -> None:
    from carddav_mcp.errors import BackendError
    from carddav_mcp.writes import version_of

    assert version_of("contact_id", {"/u/b/a.vcf": '"1"'}) == '"1"'
    two = version_of("contact_ids", {"/u/b/a.vcf": '"1"', "/u/b/b.vcf": '"2"'})
    assert two.startswith("2 cards sha256:")
    assert two != version_of("contact_ids", {"/u/b/a.vcf": '"1"', "/u/b/b.vcf": '"3"'})
    with pytest.raises(BackendError, match=r"contact_ids: the server gave no ETag for /u/b/b\.vcf"):
        version_of("contact_ids", {"/u/b/a.vcf": '"1"', "/u/b/b.vcf": None})
