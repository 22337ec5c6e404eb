"""The approval card in a real browser (Chromium), in the frame of a host that speaks MCP Apps' postMessage protocol.

The host here is a small test page standing in for claude.ai or ChatGPT (a double: no real host can run
here): it answers the card's ``ui/initialize``, hands it a tool result as ``ui/notifications/tool-result``,
and records every ``ui/open-link`` the card asks for. The card and the tool results are the real ones: the
result comes from the example server, refused while it waits for the approval page.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from browser import WAIT_MS, browser
from mcp.client import Client

from approval_core.serving.apps_card import card_html
from test_apps_card import APPS, DELETE, carded_example

pytestmark = pytest.mark.anyio

HOST = """<!doctype html><html><body><iframe id="card" sandbox="allow-scripts"></iframe>
<script>window.CARD = %(card)s; window.RESULT = %(result)s;</script>
<script>
window.opened = []; window.initialized = false;
const frame = document.getElementById("card");
window.addEventListener("message", (event) => {
  if (event.source !== frame.contentWindow) return;
  const m = event.data;
  if (m.method === "ui/initialize") {
    frame.contentWindow.postMessage({jsonrpc: "2.0", id: m.id, result: {protocolVersion: "2026-01-26",
      hostInfo: {name: "test-host", version: "1"}, hostCapabilities: {openLinks: {}}, hostContext: {}}}, "*");
  } else if (m.method === "ui/notifications/initialized") {
    window.initialized = true;
    const note = {jsonrpc: "2.0", method: "ui/notifications/tool-result", params: window.RESULT};
    frame.contentWindow.postMessage(note, "*");
  } else if (m.method === "ui/open-link") {
    window.opened.push(m.params.url);
    frame.contentWindow.postMessage({jsonrpc: "2.0", id: m.id, result: {}}, "*");
  }
});
frame.srcdoc = window.CARD;
</script></body></html>"""


async def shown(result: dict[str, Any]) -> tuple[str, list[str], str]:
    """Load the card with ``result``; return its visible text, the links it asked to open after a click, its markup."""
    async with browser() as (person,):
        page = person.page
        inline = {"card": json.dumps(card_html()), "result": json.dumps(result)}
        await page.set_content(HOST % {k: v.replace("</", "<\\/") for k, v in inline.items()})
        await page.wait_for_function("window.initialized === true", timeout=WAIT_MS)
        card = page.frame_locator("#card")
        await card.locator(".card:not([hidden])").wait_for(timeout=WAIT_MS)
        text = await card.locator("body").inner_text()
        markup = await card.locator("body").inner_html()
        if await card.locator("#open").is_visible():
            await card.locator("#open").click()
            await page.wait_for_function("window.opened.length > 0", timeout=WAIT_MS)
        return text, list(await page.evaluate("window.opened")), markup


async def test_the_card_shows_the_operation_and_code_and_opens_the_page(tmp_path: Path) -> None:
    example = carded_example(tmp_path)
    async with Client(example.server, mode="2026-07-28", extensions=[APPS]) as client:  # type: ignore[arg-type]
        refused = await client.call_tool("delete_items", DELETE)
    result = refused.model_dump(by_alias=True, mode="json", exclude_none=True)
    approval = result["_meta"]["approval-core/approval"]
    text, opened, _ = await shown(result)
    assert "Delete 1 item(s)" in text
    assert approval["code"] in text
    assert opened == [approval["approval_url"]]
    assert example.items == {"a", "b", "c"}, "the card decides nothing"


async def test_the_card_writes_what_it_is_given_as_text_and_opens_no_other_scheme() -> None:
    approval = {
        "outcome": "approval_pending",
        "path": "page",
        "code": "<b>K7</b>",
        "operation": '<img src=x onerror="window.parent.opened.push(1)">delete',
        "approval_url": "javascript:alert(1)",
    }
    text, opened, markup = await shown({"content": [], "isError": True, "_meta": {"approval-core/approval": approval}})
    assert "Nothing was changed" in text or "Nothing waits" in text
    assert "<img" not in markup
    assert opened == []
    approval["approval_url"] = "https://approve.example.org/approval/a/x"
    text, opened, markup = await shown({"content": [], "isError": True, "_meta": {"approval-core/approval": approval}})
    assert '<img src=x onerror="window.parent.opened.push(1)">delete' in text
    assert "<img" not in markup.replace("&lt;img", "")
    assert opened == ["https://approve.example.org/approval/a/x"]


async def test_any_other_result_gets_one_neutral_line() -> None:
    text, opened, _ = await shown({"content": [{"type": "text", "text": "done"}], "isError": False})
    assert "Nothing waits for your approval." in text
    assert opened == []
