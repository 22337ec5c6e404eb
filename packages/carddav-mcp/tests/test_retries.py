"""No write silently lost or doubled: caller-given UIDs, lost replies, and a CATEGORIES change failing part-way.

The faults come from a proxy double (tests/fault_proxy.py) in front of the
real Radicale: it carries a PUT out and drops the reply, drops a request
before it arrives, or answers one PUT with 500. Everything else reaches
Radicale unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from carddav_conftest import USER, Dav, vcard
from fault_proxy import Action, FaultProxy, fault_proxy

from approval_core.testing import accept, connect

pytestmark = pytest.mark.anyio


@pytest.fixture
def upstream(radicale: Dav) -> str:
    return radicale.settings.url.removesuffix(f"{USER}/")


def through(proxy: FaultProxy, dav: Dav) -> Any:
    """carddav-mcp talking to Radicale through the proxy."""
    return dav.server(url=f"{proxy.url}{USER}/")


def uids_in(dav: Dav, book: str, uid: str) -> list[str]:
    """Paths of the cards in ``book`` whose UID is ``uid`` (read straight from Radicale)."""
    body = '<d:propfind xmlns:d="DAV:"><d:prop><d:getetag/></d:prop></d:propfind>'
    listing = dav.http.request("PROPFIND", book, content=body, headers={"Depth": "1"}).text
    hrefs = [part.split("</")[0] for part in listing.split("href>")[1::2] if part.split("</")[0].endswith(".vcf")]
    return [href for href in hrefs if f"UID:{uid}\r\n" in dav.get(href)]


def drop_reply_to_first_put() -> Callable[[str, str], Action]:
    count = {"PUT": 0}

    def rule(method: str, path: str) -> Action:
        if method == "PUT":
            count["PUT"] += 1
            return "drop_reply" if count["PUT"] == 1 else "pass"
        return "pass"

    return rule


@pytest.fixture
def lost_reply(radicale: Dav, upstream: str) -> Iterator[FaultProxy]:
    with fault_proxy(upstream, drop_reply_to_first_put()) as proxy:
        yield proxy


async def test_a_lost_reply_to_create_contact_is_checked_and_a_retry_makes_no_duplicate(
    radicale: Dav, lost_reply: FaultProxy
) -> None:
    args = {"address_book": radicale.book, "fields": {"fn": "Ada Lovelace"}, "uid": "ada-2026"}
    async with connect(through(lost_reply, radicale), revision="2026-07-28") as client:
        first = await client.call_tool("create_contact", args)
        retry = await client.call_tool("create_contact", args)
    assert not first.is_error, first.content
    assert first.structured_content["outcome"] == "created"
    assert first.structured_content["id"] == f"{radicale.book}ada-2026.vcf"
    assert not retry.is_error, retry.content
    assert retry.structured_content["outcome"] == "already_exists"
    assert retry.structured_content["id"] == first.structured_content["id"]
    assert uids_in(radicale, radicale.book, "ada-2026") == [first.structured_content["id"]]
    (put,) = lost_reply.requests("PUT")  # the retry found the card and wrote nothing
    assert put.headers["if-none-match"] == "*"
    assert put.action == "drop_reply"


async def test_a_lost_reply_without_a_uid_is_read_back_too(radicale: Dav, lost_reply: FaultProxy) -> None:
    """The reproduction as first seen: the PUT was carried out, its reply lost; the card is there, and said to be."""
    async with connect(through(lost_reply, radicale), revision="2026-07-28") as client:
        result = await client.call_tool("create_contact", {"address_book": radicale.book, "fields": {"fn": "Ada"}})
    assert not result.is_error, result.content
    assert result.structured_content["outcome"] == "created"
    uid = result.structured_content["uid"]
    assert uids_in(radicale, radicale.book, uid) == [result.structured_content["id"]]


async def test_a_lost_reply_to_create_group_is_checked_and_a_retry_makes_no_duplicate(
    radicale: Dav, lost_reply: FaultProxy
) -> None:
    ada = radicale.put(radicale.book, "ada.vcf", vcard("UID:ada", "FN:Ada", "N:A;;;;"))
    args = {"address_book": radicale.book, "name": "Chess", "members": [ada], "uid": "chess-club"}
    async with connect(through(lost_reply, radicale), revision="2026-07-28") as client:
        first = await client.call_tool("create_group", args)
        retry = await client.call_tool("create_group", args)
    assert first.structured_content["outcome"] == "created", first.content
    assert retry.structured_content["outcome"] == "already_exists", retry.content
    assert retry.structured_content["id"] == first.structured_content["id"] == f"{radicale.book}chess-club.vcf"
    assert retry.structured_content["members"] == [ada]
    assert uids_in(radicale, radicale.book, "chess-club") == [first.structured_content["id"]]


async def test_a_request_lost_before_it_arrived_is_reported_as_not_created(radicale: Dav, upstream: str) -> None:
    def rule(method: str, path: str) -> Action:
        return "drop_request" if method == "PUT" else "pass"

    args = {"address_book": radicale.book, "fields": {"fn": "Ada"}, "uid": "ada-lost"}
    with fault_proxy(upstream, rule) as proxy:
        async with connect(through(proxy, radicale), revision="2026-07-28") as client:
            result = await client.call_tool("create_contact", args)
    assert result.is_error
    text = result.content[0].text
    assert "it was not created" in text
    assert 'Calling again with uid "ada-lost" is safe' in text
    assert uids_in(radicale, radicale.book, "ada-lost") == []


async def test_when_even_the_check_fails_the_caller_is_told_it_is_not_known(radicale: Dav, upstream: str) -> None:
    gone = {"down": False}

    def rule(method: str, path: str) -> Action:
        if method == "PUT":
            gone["down"] = True
            return "drop_reply"
        return "drop_request" if gone["down"] else "pass"

    args = {"address_book": radicale.book, "fields": {"fn": "Ada"}}
    with fault_proxy(upstream, rule) as proxy:
        async with connect(through(proxy, radicale), revision="2026-07-28") as client:
            result = await client.call_tool("create_contact", args)
    assert result.is_error
    text = result.content[0].text
    assert "Whether the card was created is not known" in text
    uid = text.split('Call again with uid "')[1].split('"')[0]  # the generated UID, so a retry is safe
    assert uids_in(radicale, radicale.book, uid) == [f"{radicale.book}{uid}.vcf"]  # it was, in fact, stored


async def test_a_uid_taken_by_another_card_is_already_exists_even_under_another_name(radicale: Dav) -> None:
    other = radicale.put(radicale.book, "someone-else.vcf", vcard("UID:shared", "FN:Someone", "N:S;;;;"))
    async with connect(radicale.server(), revision="2026-07-28") as client:
        result = await client.call_tool(
            "create_contact", {"address_book": radicale.book, "fields": {"fn": "Ada"}, "uid": "shared"}
        )
        group = await client.call_tool("create_group", {"address_book": radicale.book, "name": "G", "uid": "shared"})
    assert result.structured_content["outcome"] == "already_exists"
    assert result.structured_content["id"] == other
    assert group.is_error
    assert "is not a group card" in group.content[0].text
    assert "FN:Someone" in radicale.get(other)


async def test_a_file_name_taken_by_a_card_with_another_uid_is_a_conflict(dav: Dav) -> None:
    taken = dav.put(dav.book, "ada.vcf", vcard("UID:not-ada", "FN:Someone", "N:S;;;;"))
    async with connect(dav.server(), revision="2026-07-28") as client:
        result = await client.call_tool(
            "create_contact", {"address_book": dav.book, "fields": {"fn": "A"}, "uid": "ada"}
        )
    assert result.is_error
    assert f"uid: {taken} is taken by a card with another UID" in result.content[0].text
    assert "FN:Someone" in dav.get(taken)


@pytest.mark.parametrize(
    ("uid", "tool"),
    [("", "create_contact"), ("../x", "create_contact"), ("a/b", "create_group"), ("-x", "create_contact"),
     ("a b", "create_group"), ("x" * 201, "create_contact"), ("a%2Fb", "create_group"),
     ("urn:uuid:x", "create_contact")],
)  # fmt: skip
async def test_a_bad_uid_is_refused_naming_the_field(dav: Dav, uid: str, tool: str) -> None:
    args = {"address_book": dav.book, "uid": uid}
    args |= {"fields": {"fn": "Ada"}} if tool == "create_contact" else {"name": "G"}
    async with connect(dav.server(), revision="2026-07-28") as client:
        result = await client.call_tool(tool, args)
    assert result.is_error
    assert "uid" in result.content[0].text
    assert dav.http.request("PROPFIND", dav.book, headers={"Depth": "1"}).text.count(".vcf") == 0


async def test_a_uid_is_refused_for_a_categories_book(dav: Dav) -> None:
    ada = dav.put(dav.book, "ada.vcf", vcard("UID:ada", "FN:Ada", "N:A;;;;", "CATEGORIES:Work"))
    async with connect(dav.server(), revision="2026-07-28") as client:
        result = await client.call_tool(
            "create_group", {"address_book": dav.book, "name": "Chess", "members": [ada], "uid": "chess"}
        )
    assert result.is_error
    assert "uid: this address book keeps groups as CATEGORIES labels" in result.content[0].text
    assert "Chess" not in dav.get(ada)


async def test_uids_with_at_signs_and_dots_make_cards_on_both_servers(dav: Dav) -> None:
    async with connect(dav.server(), revision="2026-07-28") as client:
        made = await client.call_tool(
            "create_contact",
            {"address_book": dav.book, "fields": {"fn": "Ada"}, "uid": "ada.lovelace@example.org"},
        )
        assert made.structured_content, made.content
        read = await client.call_tool("get_contact", {"contact_id": made.structured_content["id"]})
    assert made.structured_content["outcome"] == "created", made.content
    assert read.structured_content["uid"] == "ada.lovelace@example.org"


# ---------------------------------------------------------------- a CATEGORIES change failing part-way


def club(dav: Dav) -> list[str]:
    return [
        dav.put(dav.book, f"m{i}.vcf", vcard(f"UID:m{i}", f"FN:M{i}", f"N:M{i};;;;", "CATEGORIES:Club,Other"))
        for i in range(4)
    ]


async def test_a_rename_failing_on_the_third_of_four_cards_names_what_changed_and_what_did_not(
    radicale: Dav, upstream: str
) -> None:
    members = club(radicale)
    third = members[2]

    def rule(method: str, path: str) -> Action:
        return "fail" if method == "PUT" and path == third else "pass"

    with fault_proxy(upstream, rule) as proxy:
        async with connect(through(proxy, radicale), revision="2025-11-25", answer=accept) as client:
            result = await client.call_tool("update_group", {"group_id": f"{radicale.book}#Club", "name": "Chess"})
    assert result.is_error
    text = result.content[0].text
    assert "500" in text
    assert f"Changed (2 of 4): {members[0]}, {members[1]}." in text
    assert f"Not changed: {members[2]}, {members[3]}." in text
    labels = ["Chess" if "CATEGORIES:Other,Chess" in radicale.get(m) else "Club" for m in members]
    assert labels == ["Chess", "Chess", "Club", "Club"]  # exactly as reported
    assert all("Other" in radicale.get(m) for m in members)  # other labels kept
    assert [s.path for s in proxy.requests("PUT")] == members[:3]  # stopped at the failure, not retried


async def test_a_lost_reply_part_way_is_read_back_and_counted_where_it_belongs(radicale: Dav, upstream: str) -> None:
    members = club(radicale)

    def rule(method: str, path: str) -> Action:
        return "drop_reply" if method == "PUT" and path == members[1] else "pass"

    with fault_proxy(upstream, rule) as proxy:
        async with connect(through(proxy, radicale), revision="2025-11-25", answer=accept) as client:
            result = await client.call_tool("delete_group", {"group_id": f"{radicale.book}#Club"})
    assert result.is_error
    text = result.content[0].text
    assert f"Changed (2 of 4): {members[0]}, {members[1]}." in text  # the lost reply's write did land
    assert f"Not changed: {members[2]}, {members[3]}." in text
    assert ["Club" in radicale.get(m) for m in members] == [False, False, True, True]


async def test_every_etag_is_checked_before_the_first_write(radicale: Dav) -> None:
    members = club(radicale)

    async def last_card_edited_then_accept(context: Any, params: Any) -> Any:
        radicale.put(radicale.book, "m3.vcf", vcard("UID:m3", "FN:M3", "N:M3;;;;", "CATEGORIES:Club", "NOTE:edit"))
        return await accept(context, params)

    async with connect(radicale.server(), revision="2025-11-25", answer=last_card_edited_then_accept) as client:
        result = await client.call_tool("update_group", {"group_id": f"{radicale.book}#Club", "name": "Chess"})
    assert result.is_error
    assert f"changed: {members[3]}" in result.content[0].text
    assert not any("Chess" in radicale.get(m) for m in members)  # not even the first three
