"""The MCP Apps approval card (approval_core.serving.apps_card): declared only to clients that declare the extension.

A client declaring ``io.modelcontextprotocol/ui`` (the SDK client with ``advertise(...)``) sees the card as a
``ui://`` resource and ``_meta.ui.resourceUri`` on every tool that may ask; any other client sees neither.
A call waiting for the approval page carries what the card shows: the operation in the server's own words,
the code, and the page's URL. ``test_apps_card_browser.py`` runs the card itself in Chromium.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import mcp_types as mt
import pytest
from mcp.client import Client
from mcp.client.extension import advertise
from mcp.server.apps import APP_MIME_TYPE, EXTENSION_ID

from approval_core import ApprovalSettings, approval_outcome
from approval_core.page.settings import PageSettings
from approval_core.serving.apps_card import CARD_URI, card_html, install_approval_card
from example_server import Example
from test_approval_page import ORIGIN, _paired_file

pytestmark = pytest.mark.anyio

DELETE = {"book": "b", "ids": ["a"]}
ASKING = ("delete_items", "grant", "update_item")
APPS = advertise(EXTENSION_ID, {"mimeTypes": [APP_MIME_TYPE]})
MODES = ["legacy", "2026-07-28"]


def carded_example(tmp_path: Path) -> Example:
    settings = ApprovalSettings(page=PageSettings(passkeys_file=_paired_file(tmp_path / "passkeys.json")))
    example = Example(settings)
    assert example.gate.page is not None
    example.gate.page.bind(ORIGIN)
    install_approval_card(example.server, ASKING)
    install_approval_card(example.server, ASKING)  # idempotent
    return example


def ui_of(tool: mt.Tool) -> Any:
    return (tool.meta or {}).get("ui")


@pytest.mark.parametrize("mode", MODES)
async def test_a_client_declaring_mcp_apps_sees_the_card_on_every_tool_that_may_ask(tmp_path: Path, mode: str) -> None:
    example = carded_example(tmp_path)
    async with Client(example.server, mode=mode, extensions=[APPS]) as client:  # type: ignore[arg-type]
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        listed = [str(r.uri) for r in (await client.list_resources()).resources]
        read = await client.read_resource(CARD_URI)
    assert {name for name, tool in tools.items() if ui_of(tool)} == set(ASKING)
    assert ui_of(tools["delete_items"]) == {"resourceUri": CARD_URI, "visibility": ["model", "app"]}
    assert CARD_URI in listed
    (content,) = read.contents
    assert isinstance(content, mt.TextResourceContents)
    assert content.mime_type == APP_MIME_TYPE
    assert content.text == card_html()


@pytest.mark.parametrize("mode", MODES)
async def test_a_client_that_does_not_declare_it_sees_no_card(tmp_path: Path, mode: str) -> None:
    example = carded_example(tmp_path)
    undeclared = advertise(EXTENSION_ID, {"mimeTypes": ["text/html"]})  # the extension, not the MIME type
    for extensions in ([], [undeclared]):
        async with Client(example.server, mode=mode, extensions=extensions) as client:  # type: ignore[arg-type]
            tools = (await client.list_tools()).tools
            listed = [str(r.uri) for r in (await client.list_resources()).resources]
        assert not [tool.name for tool in tools if ui_of(tool)]
        assert CARD_URI not in listed


async def test_the_server_names_the_extension_in_its_capabilities(tmp_path: Path) -> None:
    example = carded_example(tmp_path)  # on 2026-07-28: the 2025-11-25 capabilities have no extensions field
    async with Client(example.server, mode="2026-07-28") as client:
        discovered = await client.session.send_discover("2026-07-28")
    assert EXTENSION_ID in discovered["capabilities"]["extensions"]


@pytest.mark.parametrize("mode", MODES)
async def test_a_call_waiting_for_the_page_gives_the_card_the_operation_and_the_code(tmp_path: Path, mode: str) -> None:
    example = carded_example(tmp_path)
    async with Client(example.server, mode=mode, extensions=[APPS]) as client:  # type: ignore[arg-type]
        first = await client.call_tool("delete_items", DELETE)
    outcome = approval_outcome(first)
    assert first.is_error
    assert outcome is not None
    assert outcome["outcome"] == "approval_pending"
    assert outcome["operation"] == "Delete 1 item(s)"
    assert outcome["code"] in first.content[0].text  # type: ignore[union-attr]
    assert outcome["approval_url"].startswith(f"{ORIGIN}/")
    assert example.items == {"a", "b", "c"}


def test_the_card_writes_text_only_and_decides_nothing() -> None:
    html = card_html()
    assert "innerHTML" not in html
    assert "outerHTML" not in html
    assert "insertAdjacentHTML" not in html
    assert "document.write" not in html
    assert "tools/call" not in html  # it asks the host to open a link, and nothing else
    assert html.count('request("') == 2  # ui/initialize and ui/open-link
    assert 'request("ui/open-link"' in html


SERVERS = sorted(p.name for p in Path(__file__).resolve().parents[2].glob("*-mcp"))


@pytest.mark.parametrize("name", SERVERS)
async def test_each_family_server_with_the_page_cards_exactly_the_tools_that_may_ask(name: str, tmp_path: Path) -> None:
    module = importlib.import_module(f"{name.replace('-', '_')}.server")
    guards = importlib.import_module(f"{name.replace('-', '_')}.guards").GUARDS
    settings = ApprovalSettings(page=PageSettings(passkeys_file=_paired_file(tmp_path / "passkeys.json")))
    async with Client(module.build_server(settings), mode="legacy", extensions=[APPS]) as client:
        tools = (await client.list_tools()).tools
    assert {t.name for t in tools if ui_of(t)} == {tool for tool, guard in guards.items() if guard.may_ask}
    async with Client(module.build_server(ApprovalSettings()), mode="legacy", extensions=[APPS]) as client:
        plain = (await client.list_tools()).tools
        listed = [str(r.uri) for r in (await client.list_resources()).resources]
    assert not [t.name for t in plain if ui_of(t)], "without the page there is no card"
    assert CARD_URI not in listed
