"""Contacts against the real servers: listing, paging, search, photos, export, changes, writes, scope."""

from __future__ import annotations

import base64
import datetime as dt

import pytest
from carddav_conftest import Dav, vcard

from approval_core import ApprovalSettings
from approval_core.testing import DialogLog, accept, approval_of, connect
from carddav_mcp.settings import CardDavSettings
from carddav_mcp.vcard import Card

pytestmark = pytest.mark.anyio
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(200)).decode()


async def call(dav: Dav, tool: str, args: dict, **server) -> object:
    async with connect(dav.server(**server), revision="2026-07-28") as client:
        return await client.call_tool(tool, args)


async def test_list_contacts_pages_with_a_cursor_and_leaves_groups_out(dav: Dav) -> None:
    for i in range(7):
        dav.put(dav.book, f"c{i}.vcf", vcard(f"UID:c{i}", f"FN:Person {i}", f"N:P{i};;;;", f"EMAIL:p{i}@x.org"))
    dav.put(dav.book, "g.vcf", vcard("UID:g", "FN:G", "KIND:group", "MEMBER:urn:uuid:c1", version="4.0"))
    seen: list[str] = []
    cursor = None
    async with connect(dav.server(), revision="2026-07-28") as client:
        for _ in range(5):
            args = {"address_book": dav.book, "limit": 3} | ({"cursor": cursor} if cursor else {})
            page = (await client.call_tool("list_contacts", args)).structured_content
            assert page["partial"] is True
            assert len(page["contacts"]) <= 3
            seen += [c["fn"] for c in page["contacts"]]
            cursor = page["next_cursor"]
            if cursor is None:
                break
        bad = await client.call_tool("list_contacts", {"address_book": dav.book, "cursor": "nonsense"})
        nested = base64.urlsafe_b64encode(b"[" * 1_400).decode()  # within its 2,000 characters; too deep for json
        deep = await client.call_tool("list_contacts", {"address_book": dav.book, "cursor": nested})
    assert sorted(seen) == [f"Person {i}" for i in range(7)]
    assert bad.is_error
    assert "cursor" in bad.content[0].text
    assert deep.is_error
    assert "is not a cursor this server returned" in deep.content[0].text


async def test_get_contact_reads_every_field(dav: Dav) -> None:
    href = dav.put(dav.book, "a.vcf", vcard(
        "UID:a", "FN:Ada Lovelace", "N:Lovelace;Ada;King;Lady;", "NICKNAME:Enchantress",
        "EMAIL;TYPE=WORK:ada@example.org", "TEL;TYPE=CELL:+44 20 7946 0018",
        "ADR;TYPE=HOME:;;12 St James's Sq;London;;SW1Y;UK",
        "ORG:Analytical Engines;Research", "TITLE:Countess", "NOTE:First programmer", "BDAY:--1210",
        "X-ANNIVERSARY:1835-07-08", "CATEGORIES:Friends,Math", "URL:https://example.org/ada", "X-CUSTOM:kept",
    ))  # fmt: skip
    contact = (await call(dav, "get_contact", {"contact_id": href})).structured_content
    assert contact["n"] == {
        "family": ["Lovelace"], "given": ["Ada"], "additional": ["King"], "prefix": ["Lady"], "suffix": []
    }  # fmt: skip
    assert contact["nickname"] == ["Enchantress"]
    assert contact["emails"] == [{"value": "ada@example.org", "types": ["work"]}]
    assert contact["phones"][0]["types"] == ["cell"]
    assert contact["addresses"][0]["locality"] == ["London"]
    assert contact["org"] == ["Analytical Engines", "Research"]
    assert contact["birthday"] == {"year": None, "month": 12, "day": 10}
    assert contact["anniversary"] == {"year": 1835, "month": 7, "day": 8}
    assert contact["categories"] == ["Friends", "Math"]
    assert "X-CUSTOM" in contact["other_properties"]
    assert contact["partial"] is False


async def test_search_matches_phones_whatever_their_formatting_and_text_fields(dav: Dav) -> None:
    dav.put(dav.book, "a.vcf", vcard("UID:a", "FN:Ada", "N:A;;;;", "TEL:0049301234567", "ORG:Engines"))
    dav.put(dav.book, "b.vcf", vcard("UID:b", "FN:Bob", "N:B;;;;", "TEL:+1 555 0100", "NICKNAME:Bobby"))
    async with connect(dav.server(), revision="2026-07-28") as client:
        phone = (await client.call_tool("search_contacts", {"query": "+49 30 1234-567"})).structured_content
        org = (await client.call_tool("search_contacts", {"query": "engines"})).structured_content
        nick = (
            await client.call_tool("search_contacts", {"query": "bobby", "address_book": dav.book})
        ).structured_content
        none = await client.call_tool("search_contacts", {})
    assert [(h["fn"], h["matched"]) for h in phone["hits"]] == [("Ada", ["tel"])]
    assert [h["fn"] for h in org["hits"]] == ["Ada"]
    assert [h["fn"] for h in nick["hits"]] == ["Bob"]
    assert none.is_error


async def test_search_finds_upcoming_birthdays_and_anniversaries(dav: Dav) -> None:
    today = dt.datetime.now(dt.UTC).date()
    soon, later = today + dt.timedelta(days=3), today + dt.timedelta(days=40)
    dav.put(dav.book, "s.vcf", vcard("UID:s", "FN:Soon", "N:S;;;;", f"BDAY:--{soon:%m-%d}"))
    dav.put(dav.book, "l.vcf", vcard("UID:l", "FN:Later", "N:L;;;;", f"BDAY:1970-{later:%m-%d}"))
    dav.put(dav.book, "v.vcf", vcard("UID:v", "FN:Wed", f"ANNIVERSARY:{soon:%Y%m%d}", version="4.0"))
    result = (await call(dav, "search_contacts", {"birthdays_within_days": 7})).structured_content
    assert sorted((h["fn"], h["days_until"]) for h in result["hits"]) == [("Soon", 3), ("Wed", 3)]


async def test_an_inline_photo_is_image_content_and_a_uri_photo_is_never_fetched(dav: Dav) -> None:
    inline = dav.put(dav.book, "i.vcf", vcard("UID:i", "FN:I", "N:I;;;;", f"PHOTO;ENCODING=b;TYPE=PNG:{PNG}"))
    linked = dav.put(dav.book, "u.vcf", vcard("UID:u", "FN:U", "N:U;;;;", "PHOTO;VALUE=uri:http://192.0.2.1/p.jpg"))
    async with connect(dav.server(), revision="2026-07-28") as client:
        image = await client.call_tool("get_contact_photo", {"contact_id": inline})
        capped = await client.call_tool("get_contact_photo", {"contact_id": inline, "max_bytes": 1000})
        uri = await client.call_tool("get_contact_photo", {"contact_id": linked})
    assert image.content[0].type == "image"
    assert image.content[0].mime_type == "image/png"
    assert base64.b64decode(image.content[0].data).startswith(b"\x89PNG")
    assert image.structured_content["size_bytes"] == 208
    assert capped.structured_content["included"] is True  # 208 bytes is under the cap
    assert uri.structured_content == {
        "id": linked, "kind": "uri", "media_type": None, "size_bytes": None, "uri": "http://192.0.2.1/p.jpg",
        "included": False, "reason": "the photo is a link; this server does not fetch links", "untrusted": [],
    }  # fmt: skip
    assert all(c.type == "text" for c in uri.content)


async def test_export_returns_raw_cards_and_list_changes_follows_the_sync_token(dav: Dav) -> None:
    a = dav.put(dav.book, "a.vcf", vcard("UID:a", "FN:A", "N:A;;;;"))
    async with connect(dav.server(), revision="2026-07-28") as client:
        export = (await client.call_tool("export_contacts", {"address_book": dav.book})).structured_content
        first = (await client.call_tool("list_changes", {"address_book": dav.book})).structured_content
        b = dav.put(dav.book, "b.vcf", vcard("UID:b", "FN:B", "N:B;;;;"))
        dav.http.delete(a)
        later = (
            await client.call_tool("list_changes", {"address_book": dav.book, "sync_token": first["sync_token"]})
        ).structured_content
    assert [c["id"] for c in export["cards"]] == [a]
    assert "FN:A" in export["cards"][0]["vcard"]
    assert first["full"] is True
    assert [c["id"] for c in first["changed"]] == [a]
    assert [c["id"] for c in later["changed"]] == [b]
    assert later["deleted"] == [a]


async def test_a_sync_token_the_server_refuses_names_the_field(dav: Dav) -> None:
    result = await call(dav, "list_changes", {"address_book": dav.book, "sync_token": "http://example.org/not-a-token"})
    assert result.is_error
    assert "sync_token" in result.content[0].text


async def test_create_contact_writes_the_books_version_and_the_fields(dav: Dav) -> None:
    dav.put(dav.book, "v4.vcf", vcard("UID:v4", "FN:Four", version="4.0"))
    phones = [{"value": "+1 555", "types": ["cell"]}]
    fields = {"fn": "Grace Hopper", "n": {"family": "Hopper", "given": "Grace"}, "phones": phones,
              "birthday": {"month": 12, "day": 9}}  # fmt: skip
    created = (await call(dav, "create_contact", {"address_book": dav.book, "fields": fields})).structured_content
    text = dav.get(created["id"])
    assert "VERSION:4.0" in text
    assert "BDAY:--1209" in text
    contact = (await call(dav, "get_contact", {"contact_id": created["id"]})).structured_content
    assert contact["fn"] == "Grace Hopper"
    assert contact["birthday"] == {"year": None, "month": 12, "day": 9}


async def test_bad_input_names_the_field(dav: Dav) -> None:
    async with connect(dav.server(), revision="2026-07-28") as client:
        no_fn = await client.call_tool("create_contact", {"address_book": dav.book, "fields": {"title": "x"}})
        bad_date = await client.call_tool(
            "create_contact", {"address_book": dav.book, "fields": {"fn": "x", "birthday": {"month": 2, "day": 30}}}
        )
        bad_id = await client.call_tool("get_contact", {"contact_id": "not-a-path"})
    assert no_fn.is_error
    assert "fields.fn" in no_fn.content[0].text
    assert bad_date.is_error
    assert "not a calendar date" in bad_date.content[0].text
    assert bad_id.is_error
    assert "contact_id" in bad_id.content[0].text


async def test_an_update_keeps_every_property_it_did_not_touch(dav: Dav) -> None:
    href = dav.put(dav.book, "a.vcf", vcard("UID:a", "FN:A", "N:A;;;;", "TITLE:Old", "NOTE:keep me", "X-FOO;X-P=1:bar",
                                            "IMPP:xmpp:a@example.org", f"PHOTO;ENCODING=b;TYPE=PNG:{PNG}"))  # fmt: skip
    before = [p.line for p in Card.parse(dav.get(href)).props if p.name != "TITLE"]
    server = dav.server(ApprovalSettings(elicitation=False))
    async with connect(server, revision="2026-07-28") as client:
        args = {"contact_id": href, "changes": {"title": "New"}}
        token = approval_of(await client.call_tool("update_contact", args))["confirm_token"]
        done = await client.call_tool("update_contact", {**args, "confirm_token": token})
    assert not done.is_error
    after = Card.parse(dav.get(href)).props
    assert [p.line for p in after if p.name == "TITLE"] == ["TITLE:New"]
    assert [p.line for p in after if p.name != "TITLE"] == before  # logical lines, exactly as before


async def test_the_address_book_limit_is_enforced_everywhere(dav: Dav) -> None:
    home = dav.book.rstrip("/").rsplit("/", 1)[0] + "/"
    async with connect(
        dav.server(addressbooks=frozenset({dav.book.rstrip("/").rsplit("/", 1)[1]})), revision="2026-07-28"
    ) as client:
        books = (await client.call_tool("list_address_books", {})).structured_content
        outside = await client.call_tool("list_contacts", {"address_book": dav.other})
        card = await client.call_tool("get_contact", {"contact_id": f"{dav.other}x.vcf"})
        member = await client.call_tool(
            "create_group", {"address_book": dav.book, "name": "G", "members": [f"{dav.other}x.vcf"]}
        )
    assert [b["id"] for b in books["address_books"]] == [dav.book]
    for result in (outside, card, member):
        assert result.is_error
        assert "CARDDAV_ADDRESSBOOKS" in result.content[0].text
    assert home


async def test_a_tool_without_configuration_says_what_to_set() -> None:
    from carddav_mcp.server import build_server

    server = build_server(ApprovalSettings(), CardDavSettings())
    async with connect(server, revision="2026-07-28") as client:
        tools = await client.list_tools()
        result = await client.call_tool("list_address_books", {})
    assert len(tools.tools) == 19
    assert result.is_error
    assert "CARDDAV_URL" in result.content[0].text
    assert "CARDDAV_PASSWORD" in result.content[0].text


async def test_wrong_credentials_are_reported(radicale: Dav) -> None:
    result = await call(radicale, "list_address_books", {}, password="wrong")
    assert result.is_error
    assert "CARDDAV_USERNAME" in result.content[0].text
    assert "wrong" not in result.content[0].text


async def test_get_server_info_reports_classes_principal_and_sync(dav: Dav) -> None:
    info = (await call(dav, "get_server_info", {})).structured_content
    assert "addressbook" in info["dav_classes"]
    assert info["principal"] == "/willi/"
    assert info["supports_sync_collection"] is True
    assert sorted(info["allowed_address_books"]) == sorted(dav.settings.addressbooks)


async def test_export_pages_with_a_cursor(dav: Dav) -> None:
    for i in range(3):
        dav.put(dav.book, f"e{i}.vcf", vcard(f"UID:e{i}", f"FN:E{i}", "N:E;;;;"))
    async with connect(dav.server(), revision="2026-07-28") as client:
        first = (await client.call_tool("export_contacts", {"address_book": dav.book, "limit": 2})).structured_content
        rest = (
            await client.call_tool("export_contacts", {"address_book": dav.book, "cursor": first["next_cursor"]})
        ).structured_content
    assert [c["id"].rsplit("/", 1)[1] for c in first["cards"] + rest["cards"]] == ["e0.vcf", "e1.vcf", "e2.vcf"]
    assert rest["next_cursor"] is None


UPDATE_ERRORS = [
    ({}, "exactly one of changes or vcard"),
    ({"changes": {}}, "at least one field"),
    ({"changes": {"fn": None}}, "cannot be cleared"),
    ({"vcard": "hello"}, "is not a vCard"),
    ({"vcard": vcard("UID:a", "FN:A", version="4.0")}, "must be vCard 3.0"),
    ({"vcard": vcard("UID:other", "FN:A")}, "must keep the UID"),
    ({"vcard": vcard("UID:a", "N:;;;;")}, "no N, ORG or EMAIL to make one from"),
    ({"vcard": vcard("UID:a", "FN:A")}, "must have N"),
    ({"vcard": vcard("UID:a", "FN:G", "X-ADDRESSBOOKSERVER-KIND:group")}, "is a group card"),
]


@pytest.mark.parametrize(("args", "needle"), UPDATE_ERRORS)
async def test_update_contact_refuses_bad_input_before_asking(radicale: Dav, args: dict, needle: str) -> None:
    href = radicale.put(radicale.book, "a.vcf", vcard("UID:a", "FN:A", "N:A;;;;"))
    log = DialogLog(accept)
    async with connect(radicale.server(), revision="2025-11-25", answer=log) as client:
        result = await client.call_tool("update_contact", {"contact_id": href, **args})
    assert result.is_error
    assert needle in result.content[0].text
    assert log.messages == []


async def test_every_field_can_be_set_and_cleared(dav: Dav) -> None:
    href = dav.put(dav.book, "a.vcf", vcard("UID:a", "FN:A", "N:A;B;;;", "TITLE:T", "URL:https://old.example"))
    changes = {
        "n": None,
        "nickname": ["Ace"],
        "emails": [{"value": "a@example.org", "types": ["home"]}],
        "addresses": [{"types": ["work"], "street": "Main St 1", "locality": "Springfield", "country": "US"}],
        "urls": None,
        "org": ["Acme; Inc", "Lab"],
        "title": None,
        "note": "two\nlines",
        "anniversary": {"year": 2001, "month": 6, "day": 2},
        "categories": ["x,y", "z"],
    }
    async with connect(dav.server(), revision="2025-11-25", answer=accept) as client:
        done = await client.call_tool("update_contact", {"contact_id": href, "changes": changes})
        contact = (await client.call_tool("get_contact", {"contact_id": href})).structured_content
    assert not done.is_error, done.content
    assert contact["n"] == {"family": [], "given": [], "additional": [], "prefix": [], "suffix": []}
    assert contact["nickname"] == ["Ace"]
    assert contact["emails"] == [{"value": "a@example.org", "types": ["home"]}]
    assert contact["addresses"][0]["street"] == ["Main St 1"]
    assert contact["urls"] == []
    assert contact["org"] == ["Acme; Inc", "Lab"]
    assert contact["title"] is None
    assert contact["note"] == "two\nlines"
    assert contact["anniversary"] == {"year": 2001, "month": 6, "day": 2}
    assert contact["categories"] == ["x,y", "z"]
