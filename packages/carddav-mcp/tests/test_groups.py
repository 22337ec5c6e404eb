"""Groups in the three conventions: vCard 4 KIND/MEMBER, Apple X-ADDRESSBOOKSERVER-*, CATEGORIES labels."""

from __future__ import annotations

import pytest
from carddav_conftest import Dav, vcard

from approval_core.testing import accept, connect

pytestmark = pytest.mark.anyio


async def tools(dav: Dav, *calls: tuple[str, dict]) -> list:
    async with connect(dav.server(), revision="2025-11-25", answer=accept) as client:
        return [await client.call_tool(tool, args) for tool, args in calls]


def people(dav: Dav, version: str = "3.0", extra: str | None = None) -> tuple[str, str]:
    lines = [extra] if extra else []
    ada = dav.put(dav.book, "ada.vcf", vcard("UID:ada-uid", "FN:Ada", "N:A;;;;", *lines, version=version))
    grace = dav.put(dav.book, "grace.vcf", vcard("UID:grace-uid", "FN:Grace", "N:G;;;;", version=version))
    return ada, grace


async def test_vcard4_kind_group_is_read_and_updated_with_member(dav: Dav) -> None:
    ada, grace = people(dav, "4.0")
    team = dav.put(dav.book, "team.vcf", vcard("UID:t", "KIND:group", "FN:Team", "MEMBER:urn:uuid:ada-uid",
                                                "MEMBER:urn:uuid:somebody-elsewhere", version="4.0"))  # fmt: skip
    listed, got, updated = await tools(
        dav,
        ("list_groups", {"address_book": dav.book}),
        ("get_group", {"group_id": team}),
        ("update_group", {"group_id": team, "members": [grace]}),
    )
    assert listed.structured_content["groups"] == [
        {"id": team, "name": "Team", "convention": "kind", "member_count": 2}
    ]
    assert listed.structured_content["convention_for_new_groups"] == "kind"
    assert got.structured_content["members"] == [ada]
    assert got.structured_content["unresolved_members"] == ["urn:uuid:somebody-elsewhere"]
    assert updated.structured_content["members"] == [grace]
    text = dav.get(team)
    assert "MEMBER:urn:uuid:grace-uid" in text
    assert "urn:uuid:somebody-elsewhere" in text  # a reference this server cannot resolve is kept
    assert "urn:uuid:ada-uid" not in text


async def test_apple_group_is_created_in_the_books_convention_and_renamed(dav: Dav) -> None:
    ada, grace = people(dav)
    dav.put(dav.book, "old.vcf", vcard("UID:o", "FN:Old", "N:Old;;;;", "X-ADDRESSBOOKSERVER-KIND:group"))
    (created,) = await tools(dav, ("create_group", {"address_book": dav.book, "name": "Club", "members": [ada]}))
    group = created.structured_content
    assert group["convention"] == "apple"
    assert group["members"] == [ada]
    assert "X-ADDRESSBOOKSERVER-MEMBER:urn:uuid:ada-uid" in dav.get(group["id"])
    (renamed,) = await tools(dav, ("update_group", {"group_id": group["id"], "name": "Chess club", "add": [grace]}))
    assert renamed.structured_content["name"] == "Chess club"
    assert renamed.structured_content["members"] == [ada, grace]
    (deleted,) = await tools(dav, ("delete_group", {"group_id": group["id"]}))
    assert not deleted.is_error
    assert not dav.exists(group["id"])
    assert dav.exists(ada)
    assert dav.exists(grace)  # the contacts stay


async def test_categories_groups_live_on_the_member_cards(dav: Dav) -> None:
    ada, grace = people(dav, extra="CATEGORIES:Friends,Work")
    listed, created = await tools(
        dav,
        ("list_groups", {"address_book": dav.book}),
        ("create_group", {"address_book": dav.book, "name": "Chess", "members": [grace]}),
    )
    groups = listed.structured_content["groups"]
    assert [(g["name"], g["convention"], g["member_count"]) for g in groups] == [
        ("Friends", "categories", 1),
        ("Work", "categories", 1),
    ]
    assert listed.structured_content["convention_for_new_groups"] == "categories"
    assert created.structured_content["id"] == f"{dav.book}#Chess"
    assert "CATEGORIES:Chess" in dav.get(grace)
    friends = f"{dav.book}#Friends"
    (moved,) = await tools(dav, ("update_group", {"group_id": friends, "add": [grace], "remove": [ada]}))
    assert moved.structured_content["members"] == [grace]
    assert "Friends" not in dav.get(ada)
    assert "Work" in dav.get(ada)  # other labels stay
    (deleted,) = await tools(dav, ("delete_group", {"group_id": f"{dav.book}#Chess"}))
    assert not deleted.is_error
    assert "Chess" not in dav.get(grace)
    assert dav.exists(grace)


async def test_group_input_is_checked(dav: Dav) -> None:
    _, grace = people(dav, "4.0")
    team = dav.put(
        dav.book, "team.vcf", vcard("UID:t", "KIND:group", "FN:Team", "MEMBER:urn:uuid:ada-uid", version="4.0")
    )
    both, not_member, foreign, empty_categories = await tools(
        dav,
        ("update_group", {"group_id": team, "add": [grace], "remove": [grace]}),
        ("update_group", {"group_id": team, "remove": [grace]}),
        ("update_group", {"group_id": team, "add": [f"{dav.other}x.vcf"]}),
        ("get_group", {"group_id": f"{dav.book}#Nothing"}),
    )
    assert "both added and removed" in both.content[0].text
    assert "not members" in not_member.content[0].text
    assert "group's address book" in foreign.content[0].text
    assert empty_categories.is_error
    assert "urn:uuid:ada-uid" in dav.get(team)


async def test_one_missing_member_written_in_two_spellings_counts_once(dav: Dav) -> None:
    ada, _ = people(dav, "4.0")
    lines = ("UID:t2", "KIND:group", "FN:Team", "MEMBER:urn:uuid:ada-uid", "MEMBER:urn:uuid:zz", "MEMBER:URN:UUID:ZZ")
    team = dav.put(dav.book, "team2.vcf", vcard(*lines, version="4.0"))
    (got,) = await tools(dav, ("get_group", {"group_id": team}))
    assert got.structured_content["members"] == [ada]
    assert len(got.structured_content["unresolved_members"]) == 1
    assert got.structured_content["member_count"] == 2
