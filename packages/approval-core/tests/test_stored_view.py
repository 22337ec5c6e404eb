"""What a change touches, as stored: drawn on the page as data, kept out of every channel the model reads.

The markup's rules are checked on the HTML itself (escaped, one cell each,
bidi-isolated, invisible characters as escapes, look-alikes marked, cut);
the gate's rules through the example server: the view reaches the page and
the read-only view a form dialog links to, never the dialog's bound text,
a result, or the audit log, and it may name only versions the approval binds.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import mcp_types as mt
import pytest

from approval_core import (
    ApprovalSettings,
    BindingError,
    Change,
    Collection,
    SentBody,
    StoredEntry,
    StoredField,
    StoredView,
    approval_outcome,
)
from approval_core.page.approval_page import PREFIX
from approval_core.page.markup import approval_html
from approval_core.page.pending import PendingApproval
from approval_core.page.settings import PageSettings
from approval_core.page.stored import ENTRY_LIMIT, ROW_LIMIT, VALUE_LIMIT, unbound_etags
from approval_core.page.stored_markup import STORED_HEADING, lookalikes, stored_html
from approval_core.testing import DialogLog, call_once, connect, ticked
from approval_core.testing.recorders import AuditRecorder
from example_server import Example

pytestmark = pytest.mark.anyio

ORIGIN = "http://localhost:8766"
HOSTILE = {
    "html": "<script>alert(1)</script><td>Approve</td>",
    "rlo": "Invoice \u202etxt.exe",
    "zero_width": "Pay\u200bment\u200d",
    "long": "L" * 20_000,
    "fake": "Approved by IT",
}


def _entry(title: str, **extra: object) -> StoredEntry:
    return StoredEntry(
        kind="Event",
        collection=Collection(path="/me/cal/", name="Work"),
        href="/me/cal/x.ics",
        etag='"1"',
        fields=(StoredField(label="Title", value=title, name=True),),
        **extra,  # type: ignore[arg-type]
    )


# ------------------------------------------------------------------ the markup


def test_markup_is_escaped_in_its_own_isolated_cell() -> None:
    html = stored_html(StoredView(entries=(_entry(HOSTILE["html"]),)))
    assert "<script>" not in html
    assert "<td>Approve" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;&lt;td&gt;Approve&lt;/td&gt;" in html
    assert '<td><bdi dir="auto" class="value">&lt;script&gt;' in html
    assert html.count("<h2>") == 1
    assert STORED_HEADING in html


def test_invisible_and_direction_characters_are_shown_as_escapes() -> None:
    html = stored_html(StoredView(entries=(_entry(HOSTILE["rlo"]), _entry(HOSTILE["zero_width"]))))
    assert "\u202e" not in html
    assert "\u200b" not in html
    assert "\u200d" not in html
    assert "Invoice \\u202etxt.exe" in html
    assert "Pay\\u200bment\\u200d" in html


def test_a_long_value_is_cut_and_says_how_much_was_left_out() -> None:
    view = StoredView(entries=(_entry(HOSTILE["long"]),))
    stored = view.entries[0].fields[0]
    assert stored.value is not None
    assert len(stored.value) == VALUE_LIMIT
    assert stored.cut == 20_000 - VALUE_LIMIT
    html = stored_html(StoredView.from_json(view.to_json()))
    assert f"({20_000 - VALUE_LIMIT:,} more characters not shown)" in html
    assert "L" * (VALUE_LIMIT + 1) not in html


def test_look_alike_letters_in_a_name_are_marked() -> None:
    assert lookalikes("Paypal") == []
    assert lookalikes("Москва") == []  # one script, no Latin: nothing to mark
    assert lookalikes("P\u0430ypal") == ["U+0430 CYRILLIC SMALL LETTER A"]
    assert lookalikes("\uff21pple")[0].startswith("U+FF21 FULLWIDTH")
    html = stored_html(StoredView(entries=(_entry("P\u0430ypal"),)))
    assert 'class="lookalike"' in html
    assert "U+0430" in html


def test_an_edit_shows_before_and_after_and_that_the_rest_is_kept() -> None:
    entry = _entry("Standup", changes=(Change(label="Title", before="Standup", after="Retro", name=True),))
    html = stored_html(StoredView(entries=(entry,)))
    assert "Standup" in html
    assert "Retro" in html
    assert "→" in html
    assert "Everything else in the entry is written back as it is stored." in html


def test_a_move_names_both_collections() -> None:
    entry = _entry("Standup", moved_to=Collection(path="/me/home/", name="Home"))
    html = stored_html(StoredView(entries=(entry,)))
    assert "Moves to" in html
    assert "/me/home/" in html
    assert ">Home<" in html
    assert ">Work<" in html


def test_a_bulk_view_lists_up_to_its_bound_and_counts_the_rest() -> None:
    view = StoredView(entries=tuple(_entry(f"n{i}") for i in range(ENTRY_LIMIT + 7)))
    assert len(view.entries) == ENTRY_LIMIT
    assert view.not_listed == 7
    assert "… and 7 more entries, not listed here." in stored_html(view)


def test_an_entry_lists_up_to_its_bound_of_changes_and_counts_the_rest() -> None:
    """A stored entry with thousands of changed properties keeps the record small and the page readable."""
    many = tuple(Change(label=f"X-P{i}", before="v" * 900, after=None) for i in range(5000))
    view = StoredView(entries=(_entry("Ada", changes=many),))
    entry = view.entries[0]
    assert len(entry.changes) == ROW_LIMIT
    assert entry.not_listed == 5000 - ROW_LIMIT
    again = StoredView.from_json(view.to_json())
    assert again is not None
    assert len(again.entries[0].changes) == ROW_LIMIT
    assert again.entries[0].not_listed == 5000 - ROW_LIMIT
    assert len(view.to_json()) < 200_000
    html = stored_html(again)
    assert f"… and {5000 - ROW_LIMIT:,} more changed fields, not listed here." in html


def test_a_body_is_a_fenced_block_of_the_first_4000_characters() -> None:
    body = SentBody.of("PUT https://dav.example.org/me/cal/x.ics", ("A\n" * 3000).encode(), "text/calendar")
    assert body.more == 6000 - 4000
    html = stored_html(StoredView(bodies=(body,)))
    assert "<pre><code>A\nA\n" in html
    assert "… and 2,000 more characters not shown." in html
    secret = SentBody.of("POST https://x.example/", b'{"password":"hunter2"}', "application/json", ["hunter2"])
    assert "hunter2" not in secret.text


def test_the_page_keeps_the_dialog_lines_and_draws_a_time_for_the_script() -> None:
    when = StoredField(label="Starts", value="2026-12-03 10:00 Europe/Berlin", instant="2026-12-03T09:00:00Z")
    entry = StoredEntry(kind="Event", collection=Collection(path="/me/cal/"), fields=(when,))
    record = PendingApproval(
        id="x" * 22,
        code="K7Q-4",
        server="s",
        tool="t",
        fingerprint="f",
        headline="Confirm a change",
        consequence="First paragraph\n\nThis call sends 2 requests:\n  PUT a\n  PUT b",
        caller_values=(),
        created=0,
        expires=10**10,
        stored=StoredView(entries=(entry,)).to_json(),
    )
    html = approval_html(record, "csrf", 100, None, None)
    assert '<p class="consequence">This call sends 2 requests:<br>  PUT a<br>  PUT b</p>' in html
    assert '<time datetime="2026-12-03T09:00:00Z">' in html
    assert "Europe/Berlin" in html
    decided = approval_html(record, "csrf", 100, "approve", None)
    assert "Europe/Berlin" not in decided, "a decided approval shows nothing stored any more"


# ------------------------------------------------------------------ the gate


def _example(tmp_path: Path) -> Example:
    passkeys = tmp_path / "passkeys.json"
    example = Example(ApprovalSettings(page=PageSettings(passkeys_file=passkeys)))
    assert example.gate.page is not None
    example.gate.page.bind(ORIGIN)
    example.titles = {"a": HOSTILE["html"], "b": HOSTILE["fake"]}
    return example


def test_a_view_may_name_only_versions_the_approval_binds() -> None:
    view = StoredView(entries=(_entry("x"),))
    assert unbound_etags(view, {"entries": [["/me/cal/x.ics", '"1"']]}, None) == []
    assert unbound_etags(view, {}, '"1"') == []
    assert unbound_etags(view, {}, '"2"') == ['"1"']


async def test_the_gate_refuses_a_view_of_another_version(tmp_path: Path) -> None:
    example = _example(tmp_path)
    gate = example.gate
    view = StoredView(entries=(_entry("x"),))
    with pytest.raises(BindingError, match="does not bind"):
        await gate.check(None, tool="delete_items", target={"ids": ["a"]}, dialog=None, version="9", stored=view)  # type: ignore[arg-type]


async def _view_text(example: Example, link: str) -> httpx.Response:
    assert example.gate.page is not None
    transport = httpx.ASGITransport(app=example.gate.page.app())
    async with httpx.AsyncClient(transport=transport, base_url=ORIGIN) as http:
        return await http.get(link.removeprefix(ORIGIN))


@pytest.mark.parametrize("revision", ["2025-11-25", "2026-07-28"])
async def test_a_form_dialog_links_a_read_only_view_that_closes_with_the_question(
    tmp_path: Path, revision: str
) -> None:
    example = _example(tmp_path)
    views: list[httpx.Response] = []

    async def look_then_approve(context: object, params: mt.ElicitRequestParams) -> mt.ElicitResult:
        views.append(await _view_text(example, params.message.rsplit(" ", 1)[1]))
        return ticked

    log = DialogLog(look_then_approve)  # type: ignore[arg-type]
    with AuditRecorder() as audit:
        async with connect(example.server, revision=revision, answer=log) as client:
            result = await client.call_tool("delete_items", {"book": "b", "ids": ["a", "b"]})
    assert not result.is_error, result
    assert example.items == {"c"}
    (message,) = log.messages
    lines = message.split("\n")
    assert lines[-1].startswith(f"See what this changes: {ORIGIN}{PREFIX}/v/")
    link = lines[-1].rsplit(" ", 1)[1]
    assert len(link.rsplit("/", 1)[1]) >= 22, "the view's id is 128 random bits"
    (view,) = views
    assert view.status_code == 200
    assert "&lt;script&gt;alert(1)" in view.text
    assert "Approved by IT" in view.text
    assert "Approve with passkey" not in view.text
    assert "<button" not in view.text
    closed = await _view_text(example, link)
    assert closed.status_code == 410
    assert "Approved by IT" not in closed.text
    assert "alert(1)" not in closed.text
    everything = message + json.dumps(result.model_dump(mode="json")) + json.dumps(audit.events)
    for value in ("alert(1)", "Approved by IT"):
        assert value not in everything


async def test_the_link_is_not_bound_so_a_2026_retry_still_matches(tmp_path: Path) -> None:
    example = _example(tmp_path)
    async with connect(example.server, revision="2026-07-28", answer=DialogLog()) as client:
        first = await call_once(client, "delete_items", {"book": "b", "ids": ["a"]})
        assert isinstance(first, mt.InputRequiredResult)
        assert first.input_requests is not None
        question = next(iter(first.input_requests.values()))
        assert "See what this changes:" in question.params.message  # type: ignore[union-attr]
        done = await call_once(
            client, "delete_items", {"book": "b", "ids": ["a"]}, answer=ticked, request_state=first.request_state
        )
    assert isinstance(done, mt.CallToolResult)
    assert not done.is_error, done
    assert example.items == {"b", "c"}


async def test_the_page_shows_the_stored_titles_and_the_refusal_does_not(tmp_path: Path) -> None:
    example = _example(tmp_path)
    passkeys = tmp_path / "passkeys.json"
    passkeys.write_text(
        json.dumps(
            {
                "version": 1,
                "user_id": "dXVVdXV1dXV1dXV1dXV1dQ",
                "credentials": [{"id": "Y3JlZA", "public_key": "a2V5", "rp_id": "localhost", "added": "x"}],
                "pairing": None,
            }
        )
    )
    passkeys.chmod(0o600)
    with AuditRecorder() as audit:
        async with connect(example.server, revision="2026-07-28") as client:  # no elicitation: the page
            result = await client.call_tool("delete_items", {"book": "b", "ids": ["a", "b"]})
    outcome = approval_outcome(result)
    assert outcome is not None
    assert outcome["outcome"] == "approval_pending"
    page = await _view_text(example, outcome["approval_url"])
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page.text
    assert "Approved by IT" in page.text
    assert STORED_HEADING in page.text
    everything = json.dumps(result.model_dump(mode="json")) + json.dumps(audit.events)
    for value in ("alert(1)", "Approved by IT"):
        assert value not in everything


async def test_the_strict_refusal_names_the_approval_page_as_the_way_out() -> None:
    example = Example(strict=True)
    async with connect(example.server, revision="2026-07-28") as client:  # a client that shows no form
        refused = await client.call_tool("delete_items", {"book": "b", "ids": ["a"]})
    assert refused.is_error
    text = refused.content[0].text  # type: ignore[union-attr]
    assert "APPROVAL_PAGE=true" in text
    assert "python -m approval_core pair" in text
    assert example.items == {"a", "b", "c"}


async def test_a_view_expires_with_its_question_and_then_shows_nothing() -> None:
    from approval_core import Binding, CallerValue, Dialog, MemoryStore, operation
    from approval_core.page.views import ReadOnlyViews

    now = [1_800_000_000.0]
    store = MemoryStore(clock=lambda: now[0])
    views = ReadOnlyViews(store, "s", clock=lambda: now[0])
    dialog = Dialog(operation("delete an item"), "Gone for good.", [CallerValue("Item", "a")])
    record = await views.open(Binding("s", "t", {"x": 1}), dialog, StoredView(entries=(_entry("Secret"),)), 90)
    assert (await views.get(record.id)) is not None
    assert len(record.id) >= 22
    now[0] += 91
    assert (await views.get(record.id)) is None
    assert (await views.get("not-a-view")) is None


async def test_two_dialogs_of_one_call_keep_their_own_views_until_each_is_answered() -> None:
    """The same call made twice at once pushes two dialogs: answering one must not close the other's view."""
    from approval_core import Binding, CallerValue, Dialog, MemoryStore, operation
    from approval_core.page.views import ReadOnlyViews

    views = ReadOnlyViews(MemoryStore(), "s")
    dialog = Dialog(operation("delete an item"), "Gone for good.", [CallerValue("Item", "a")])
    binding = Binding("s", "t", {"x": 1})
    first = await views.open(binding, dialog, StoredView(entries=(_entry("Standup"),)), 90, alone=False)
    second = await views.open(binding, dialog, StoredView(entries=(_entry("Standup"),)), 90, alone=False)
    assert (await views.get(first.id)) is not None, "the first dialog is still open: its view stays"
    await views.close(binding.fingerprint, first.id)
    assert (await views.get(first.id)) is None
    assert (await views.get(second.id)) is not None, "the second dialog is still open: its view stays"
    await views.close(binding.fingerprint)  # a 2026-07-28 answer closes the question's view by its fingerprint
    assert (await views.get(second.id)) is None


async def test_a_pushed_dialog_answered_first_leaves_the_other_dialogs_view_open(tmp_path: Path) -> None:
    """One call made twice at once (2025-11-25): each pushed dialog links its own view; the first call to end
    closes only its own, so the person still sees what the second dialog would change."""
    import anyio

    example = _example(tmp_path)
    links: list[str] = []
    both_asked = anyio.Event()
    one_call_ended = anyio.Event()
    seen_after_first: list[httpx.Response] = []

    async def answer_one_then_look(context: object, params: mt.ElicitRequestParams) -> mt.ElicitResult:
        link = params.message.rsplit(" ", 1)[1]
        links.append(link)
        if len(links) == 2:
            both_asked.set()
        await both_asked.wait()
        if link == links[0]:
            return ticked
        with anyio.fail_after(30):
            await one_call_ended.wait()  # the first call has ended (its dialog's view closed with it)
        seen_after_first.append(await _view_text(example, link))
        return ticked

    log = DialogLog(answer_one_then_look)  # type: ignore[arg-type]
    async with connect(example.server, revision="2025-11-25", answer=log) as client:

        async def call() -> None:
            await client.call_tool("delete_items", {"book": "b", "ids": ["a"]})
            one_call_ended.set()

        async with anyio.create_task_group() as calls:
            calls.start_soon(call)
            calls.start_soon(call)
    (second,) = seen_after_first
    assert second.status_code == 200, "the second dialog is still open, so its view is too"
    assert "&lt;script&gt;alert(1)" in second.text


@pytest.mark.xfail(
    strict=True,
    reason="whole-script and same-script look-alikes need the confusables data of UTS #39 (not yet used): a name "
    "written wholly in Cyrillic letters that read as Latin, or with Latin small capitals or IPA letters, is not marked",
)
def test_whole_script_and_latin_lookalike_names_are_marked() -> None:
    assert lookalikes("\u0441\u043e\u0441\u0430") != []  # "соса", all Cyrillic, reads as "coca"
    assert lookalikes("\u1d18aypal") != []  # LATIN LETTER SMALL CAPITAL P
    assert lookalikes("\u0251pple") != []  # LATIN SMALL LETTER ALPHA
