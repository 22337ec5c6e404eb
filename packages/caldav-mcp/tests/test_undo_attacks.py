"""What a restore trusts of a journal entry, on a real Radicale: an href it names never leads a request elsewhere.

The journal is sealed, so only someone holding the key file can plant an entry; these tests play that
person (sealing with the server's own journal) and check that ``restore_entry`` still writes only inside the
calendars this server may use, on the configured server.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from approval_core.testing import DialogLog, connect
from caldav_helpers import ics, structured, vevent

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    "href",
    [
        "https://evil.example{work}gone.ics",
        "{work}../{home_name}/gone.ics",
        "{work}sub/gone.ics",
        "//evil.example/x.ics",
    ],
)
async def test_a_sealed_entry_naming_a_place_elsewhere_is_never_restored_there(account, href: str) -> None:
    account.put(account.work, "gone.ics", ics(vevent("gone@x", ":20261201T090000Z", ":20261201T100000Z", "M")))
    server = account.build()
    journal = server.approval_gate.journal
    planted = href.format(work=account.work, home_name=account.home.strip("/").rsplit("/", 1)[-1])
    async with connect(server, revision="2025-11-25", answer=DialogLog()) as client:
        structured(await client.call_tool("delete_event", {"calendar": account.work, "id": "gone@x"}))
        [row] = structured(await client.call_tool("list_restorable", {"calendar": account.work}))["entries"]
        entry = await journal.entry(row["id"])
        assert entry is not None
        crafted = replace(entry, href=planted, after_href=planted)
        await journal._store().put(entry.id, journal._seal(crafted), entry.kept_at, entry.until)
        refused = await client.call_tool("restore_entry", {"calendar": account.work, "id": row["id"]})
    assert refused.is_error, refused
    assert "outside the calendars this server may use" in refused.content[0].text
    assert account.get(account.work, "gone.ics")[0] == 404
    assert account.get(account.home, "gone.ics")[0] == 404
