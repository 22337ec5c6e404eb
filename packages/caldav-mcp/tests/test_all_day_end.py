"""The refusal of an all-day end that is not after its start names the exclusive-end rule (Radicale)."""

from __future__ import annotations

import pytest

from approval_core.testing import accept, connect
from caldav_helpers import structured

pytestmark = pytest.mark.anyio


async def test_a_same_day_all_day_event_is_refused_naming_the_exclusive_end(account) -> None:
    args = {"calendar": account.work, "summary": "Offsite", "start": "2026-12-01", "end": "2026-12-01"}
    async with connect(account.build(), revision="2026-07-28", answer=accept) as client:
        refused = await client.call_tool("create_event", args)
        created = structured(await client.call_tool("create_event", {**args, "end": "2026-12-02"}))
        listed = structured(
            await client.call_tool(
                "list_events", {"calendar": account.work, "start": "2026-12-01", "end": "2026-12-03"}
            )
        )
    assert refused.is_error
    text = refused.content[0].text
    assert text.startswith("end: ")
    assert "all-day" in text
    assert "exclusive" in text
    assert "a one-day event on 2026-12-01 ends 2026-12-02" in text
    assert [e["id"] for e in listed["events"]] == [created["id"]]
    assert listed["events"][0]["end"] == "2026-12-02"


async def test_timed_events_keep_the_short_refusal(account) -> None:
    args = {"calendar": account.work, "summary": "Call", "start": "2026-12-01T10:00:00Z", "end": "2026-12-01T10:00:00Z"}
    async with connect(account.build(), revision="2026-07-28", answer=accept) as client:
        refused = await client.call_tool("create_event", args)
    assert refused.is_error
    assert refused.content[0].text.startswith("end: must be after start")
    assert "all-day" not in refused.content[0].text


async def test_an_all_day_task_due_on_its_start_day_names_the_field_and_the_rule(account) -> None:
    args = {"calendar": account.tasks_only, "summary": "Taxes", "start": "2026-12-01", "due": "2026-12-01"}
    async with connect(account.build(), revision="2026-07-28", answer=accept) as client:
        refused = await client.call_tool("create_task", args)
    assert refused.is_error
    text = refused.content[0].text
    assert text.startswith("due: must be later than start")
    assert "2026-12-02" in text
