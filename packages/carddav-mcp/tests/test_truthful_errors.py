"""Errors say the truth and keep secrets: userinfo in CARDDAV_URL, 401 vs 403, write privileges, a DELETE answered 404.

Against the real Radicale and Xandikos, except where noted: the read-only privilege set is answered by a
double (an httpx MockTransport), since neither test server is set up with a read-only shared book.
"""

from __future__ import annotations

from typing import Any

import httpx2 as httpx
import mcp_types as mt
import pytest
from carddav_conftest import Dav, vcard

from approval_core import ApprovalSettings, SettingsError
from approval_core.testing import connect, ticked
from carddav_mcp.client import CardDavClient
from carddav_mcp.errors import NotConfigured
from carddav_mcp.settings import CardDavSettings

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    "url", ["https://willi:hunter2@dav.example.org/", "https://willi@dav.example.org/", "http://:hunter2@h/"]
)
def test_a_password_in_the_url_is_refused_at_startup_without_showing_it(url: str) -> None:
    with pytest.raises(SettingsError) as caught:
        CardDavSettings.from_env({"CARDDAV_URL": url})
    assert "hunter2" not in str(caught.value)
    assert "CARDDAV_USERNAME" in str(caught.value)
    assert "CARDDAV_PASSWORD" in str(caught.value)
    with pytest.raises(NotConfigured) as refused:  # settings made in code are checked before any request
        CardDavSettings(url=url).require()
    assert "hunter2" not in str(refused.value)


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        ("http://[hunter2SECRET/", "its host or port cannot be read"),
        ("http://127.0.0.1:99999/hunter2", "its host or port cannot be read"),
        ("http://127.0.0.1:1/?pw=hunter2", "must not have a query (?) or fragment (#)"),
        ("http://127.0.0.1:1/#hunter2", "must not have a query (?) or fragment (#)"),
    ],
)
def test_an_unreadable_url_or_one_with_a_query_is_refused_without_showing_it(url: str, reason: str) -> None:
    with pytest.raises(SettingsError) as caught:
        CardDavSettings.from_env({"CARDDAV_URL": url})
    assert reason in str(caught.value)
    assert "hunter2" not in str(caught.value)
    with pytest.raises(NotConfigured) as refused:
        CardDavSettings(url=url).require()
    assert reason in str(refused.value)
    assert "hunter2" not in str(refused.value)


@pytest.mark.parametrize(
    ("env", "needle"),
    [
        ({"CARDDAV_TIMEOUT": "0"}, "CARDDAV_TIMEOUT"),
        ({"CARDDAV_TIMEOUT": "soon"}, "CARDDAV_TIMEOUT"),
        ({"CARDDAV_MAX_RESPONSE_BYTES": "12"}, "CARDDAV_MAX_RESPONSE_BYTES"),
    ],
)
def test_bounds_out_of_range_are_refused(env: dict[str, str], needle: str) -> None:
    with pytest.raises(SettingsError, match=needle):
        CardDavSettings.from_env(env)
    bounded = CardDavSettings.from_env({"CARDDAV_TIMEOUT": "5", "CARDDAV_MAX_RESPONSE_BYTES": "2048"})
    assert (bounded.timeout, bounded.max_response_bytes) == (5, 2048)


async def test_403_is_not_allowed_and_401_is_bad_credentials(radicale: Dav) -> None:
    """Radicale answers 403 for another user's book (owner-only rights) and 401 for a wrong password."""
    foreign = "/someone/book/"
    server = radicale.server(addressbooks=radicale.settings.addressbooks | {foreign})
    async with connect(server, revision="2025-11-25") as client:
        forbidden = await client.call_tool("get_contact", {"contact_id": f"{foreign}a.vcf"})
    async with connect(radicale.server(password="wrong"), revision="2025-11-25") as client:
        unauthorised = await client.call_tool("list_address_books", {})
    assert forbidden.is_error
    assert unauthorised.is_error
    assert "403 Forbidden: this account may not do that there" in forbidden.content[0].text
    assert "CARDDAV_PASSWORD" not in forbidden.content[0].text
    assert "refused these credentials (401)" in unauthorised.content[0].text


async def test_can_write_reads_the_published_privileges(dav: Dav) -> None:
    client = CardDavClient(dav.settings)
    try:
        assert await client.can_write(dav.book) is True
    finally:
        await client.aclose()


def _privileges(privileges: list[str] | None) -> httpx.MockTransport:
    """A double for a server that publishes the given privileges on a book (or none at all)."""

    def answer(request: httpx.Request) -> httpx.Response:
        inner = "".join(f"<d:privilege><d:{p}/></d:privilege>" for p in privileges or [])
        prop = f"<d:current-user-privilege-set>{inner}</d:current-user-privilege-set>" if privileges is not None else ""
        xml = (
            f'<d:multistatus xmlns:d="DAV:"><d:response><d:href>/u/b/</d:href><d:propstat><d:prop>{prop}</d:prop>'
            "<d:status>HTTP/1.1 200 OK</d:status></d:propstat></d:response></d:multistatus>"
        )
        return httpx.Response(207, content=xml.encode(), headers={"Content-Type": "application/xml"})

    return httpx.MockTransport(answer)


@pytest.mark.parametrize(
    ("privileges", "expected"),
    [(["read"], False), (["read", "write-content"], True), (["all"], True), (None, None)],
)
async def test_can_write_is_false_for_a_read_only_book_and_none_when_unpublished(
    privileges: list[str] | None, expected: bool | None
) -> None:
    settings = CardDavSettings(url="https://dav.example.org/", username="u", password="p")
    client = CardDavClient(settings, transport=_privileges(privileges))
    try:
        assert await client.can_write("/u/b/") is expected
    finally:
        await client.aclose()


async def test_a_delete_answered_404_reports_the_card_already_gone(dav: Dav) -> None:
    """Someone else deletes the card while the person is looking at the dialog."""
    ada = dav.put(dav.book, "ada.vcf", vcard("UID:ada", "FN:Ada", "N:Lovelace;Ada;;;"))
    grace = dav.put(dav.book, "grace.vcf", vcard("UID:grace", "FN:Grace", "N:Hopper;Grace;;;"))

    async def meanwhile_deleted(context: Any, params: mt.ElicitRequestParams) -> mt.ElicitResult:
        assert dav.http.delete(ada).status_code in {200, 204}
        return ticked

    async with connect(dav.server(ApprovalSettings()), revision="2025-11-25", answer=meanwhile_deleted) as client:
        result = await client.call_tool("delete_contact", {"contact_ids": [ada, grace]})
    assert not result.is_error, result.content[0].text
    assert result.structured_content is not None
    assert result.structured_content["deleted"] == [grace]
    assert result.structured_content["already_gone"] == [ada]
    assert not dav.exists(grace)
