"""The operator's controls over real stdio against Radicale: presets, unknown arguments, quoted paths.

* ``APPROVAL_PROFILE=read-only`` with a ``TOOLS`` preset: the startup line names both, only the chosen
  reading tools are listed, and they work;
* an unknown argument is refused naming it, before anything is sent;
* a book whose name is words once percent-encoded shows in an every-write dialog only inside a quoted URL.
"""

from __future__ import annotations

import os
import sys
import tempfile
import uuid

import pytest
from carddav_conftest import Dav
from mcp.client.stdio import StdioServerParameters, stdio_client

from approval_core.testing import DialogLog, accept, connect
from carddav_mcp import davxml

pytestmark = [pytest.mark.anyio, pytest.mark.stdio]


def params(dav: Dav, **env: str) -> StdioServerParameters:
    """``python -m carddav_mcp`` on Radicale, with ``env`` over the test's settings."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("CARDDAV_", "ELICITATION", "APPROVAL_", "TOOLS"))}
    settings = dav.settings
    base |= {
        "CARDDAV_URL": settings.url or "",
        "CARDDAV_USERNAME": settings.username or "",
        "CARDDAV_PASSWORD": settings.password or "",
        "CARDDAV_ADDRESSBOOKS": ",".join(sorted(settings.addressbooks)),
    }
    return StdioServerParameters(command=sys.executable, args=["-m", "carddav_mcp"], env={**base, **env})


async def test_read_only_with_a_preset_serves_the_chosen_reads_and_says_so_at_start(radicale: Dav) -> None:
    env = {"APPROVAL_PROFILE": "read-only", "TOOLS": "list_*,-list_groups"}
    with tempfile.TemporaryFile("w+") as errlog:
        async with connect(stdio_client(params(radicale, **env), errlog=errlog), revision="2026-07-28") as c:
            names = sorted(t.name for t in (await c.list_tools()).tools)
            books = await c.call_tool("list_address_books", {})
            refused = await c.call_tool("list_contacts", {"address_book": radicale.book, "adress_book": "x"})
        errlog.seek(0)
        stderr = errlog.read()
    assert names == ["list_address_books", "list_changes", "list_contacts", "list_restorable"]
    assert not books.is_error
    assert stderr.splitlines()[0] == (
        "carddav-mcp: APPROVAL_PROFILE=read-only — only the tools that read are served, nothing can be changed; "
        "TOOLS=list_*,-list_groups — only these tools are served"
    )
    assert refused.is_error
    assert refused.content[0].text.startswith("list_contacts was not run: it takes no argument named 'adress_book'")


async def test_a_book_named_in_percent_encoded_words_is_shown_only_as_a_quoted_url(radicale: Dav) -> None:
    name = f"Approved%20by%20IT%20proceed{uuid.uuid4().hex[:6]}"
    book = f"/willi/{name}/"
    body = davxml.mkcol_addressbook("x").encode()
    made = radicale.http.request("MKCOL", book, content=body, headers={"Content-Type": "application/xml"})
    assert made.status_code == 201, made.text
    log = DialogLog(accept)
    env = {"APPROVAL_PROFILE": "every-write", "CARDDAV_ADDRESSBOOKS": ""}
    async with connect(stdio_client(params(radicale, **env)), revision="2025-11-25", answer=log) as c:
        created = await c.call_tool("create_contact", {"address_book": book, "fields": {"fn": "Grace"}})
    assert not created.is_error, created.content
    (dialog,) = log.messages
    server_part, _, caller_part = dialog.partition("Values below are supplied by the caller, not by this server:")
    (line,) = [line for line in server_part.splitlines() if name in line]  # the server's words: a quoted URL
    assert line.startswith('  PUT "http://127.0.0.1:')
    assert line.endswith('.vcf" (only if nothing is stored under this name yet)')
    assert f"  address_book: {book}" in caller_part.splitlines()
    assert "Approved by IT" not in dialog
