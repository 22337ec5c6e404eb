"""The undo journal: what it keeps, for how long, sealed how, and what it refuses to open.

The journal is driven directly, in a temporary data folder; the DAV servers' tests (``test_undo.py``)
drive it through real deletes, overwrites and moves.
"""

from __future__ import annotations

import base64
import json
import secrets
from pathlib import Path

import pytest

from approval_core import ApprovalSettings, Approved, Journal, KeyRing, SettingsError
from approval_core.records.journal import MAX_ENTRY_BYTES, open_journal
from approval_core.records.journal_entry import JournalEntry
from approval_core.records.journal_storage import FileStorage
from approval_core.records.restorable import restorable

pytestmark = pytest.mark.anyio

APPROVED = Approved("dialog", "ab" * 32)
PAGE = b"BEGIN:VCALENDAR\r\nBEGIN:VEVENT\r\nUID:one@x\r\nSUMMARY:Approved by IT\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"


class Clock:
    def __init__(self) -> None:
        self.now = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


def journal(folder: Path, *, ring: KeyRing | None = None, clock: Clock | None = None, days: int = 7) -> Journal:
    return Journal("caldav-mcp", "caldav-mcp", days, key_ring=ring, folder=folder, clock=clock or Clock())


async def keep(j: Journal, href: str = "/cal/one.ics", data: bytes = PAGE, kind: str = "deleted") -> str:
    async with j.keeping(
        APPROVED, tool="delete_event", kind=kind, collection="/cal/", href=href, etag='"1"', data=data,
        content_type="text/calendar",
    ) as kept:  # fmt: skip
        if kind == "overwritten":
            kept.left('"2"')
    assert kept.entry_id is not None
    return kept.entry_id


def files(folder: Path) -> list[Path]:
    return sorted((folder / "journal" / "caldav-mcp").glob("*.j"))


async def test_an_entry_keeps_the_bytes_the_place_and_the_approval(tmp_path: Path) -> None:
    j = journal(tmp_path)
    entry_id = await keep(j, kind="overwritten")
    entry = await j.entry(entry_id)
    assert entry is not None
    assert entry.data == PAGE
    assert (entry.href, entry.etag, entry.after_etag, entry.kind) == ("/cal/one.ics", '"1"', '"2"', "overwritten")
    assert (entry.fingerprint, entry.path, entry.principal) == (APPROVED.fingerprint, "dialog", None)
    assert entry.until - entry.kept_at == 7 * 86400


async def test_an_entry_notes_what_its_change_created_beside_it(tmp_path: Path) -> None:
    j = journal(tmp_path)
    async with j.keeping(
        APPROVED, tool="update_event", kind="overwritten", collection="/cal/", href="/cal/one.ics", etag='"1"',
        data=PAGE, content_type="text/calendar", made=("/cal/two.ics", "two@x"),
    ) as kept:  # fmt: skip
        kept.left('"2"')
    assert kept.entry_id is not None
    entry = await j.entry(kept.entry_id)
    assert entry is not None
    assert entry.made == ["/cal/two.ics", "two@x"]
    assert (await j.entry(await keep(j))).made is None  # type: ignore[union-attr]


async def test_an_entry_kept_before_made_was_noted_still_opens() -> None:
    body = {
        "id": "0" * 16, "server": "caldav-mcp", "tool": "delete_event", "kind": "deleted", "collection": "/cal/",
        "href": "/cal/one.ics", "etag": None, "data": base64.b64encode(PAGE).decode(), "content_type": "text/calendar",
        "after_href": "/cal/one.ics", "after_etag": None, "kept_at": 1.0, "until": 2.0, "fingerprint": "ab",
        "path": "dialog", "principal": None, "backend": None,
    }  # fmt: skip
    assert JournalEntry.from_json(json.dumps(body).encode()).made is None


async def test_what_is_on_disk_is_sealed_and_owner_only(tmp_path: Path) -> None:
    j = journal(tmp_path)
    await keep(j)
    [path] = files(tmp_path)
    assert b"UID:one@x" not in path.read_bytes()
    assert b"Approved" not in path.read_bytes()
    assert path.stat().st_mode & 0o077 == 0
    assert path.parent.stat().st_mode & 0o077 == 0
    key = tmp_path / "journal.key"
    assert key.stat().st_mode & 0o077 == 0  # the per-user key made on first use


async def test_a_listing_shows_ids_places_sizes_and_times_never_the_text(tmp_path: Path) -> None:
    j = journal(tmp_path)
    entry_id = await keep(j)
    listed = await restorable(j)
    [row] = listed.entries
    assert row.id == entry_id
    assert row.bytes == len(PAGE)
    assert row.approval == APPROVED.fingerprint[:12]
    assert "Approved" not in listed.model_dump_json()
    assert "UID" not in listed.model_dump_json()


async def test_one_flipped_bit_on_disk_and_the_entry_does_not_open(tmp_path: Path) -> None:
    j = journal(tmp_path)
    entry_id = await keep(j)
    [path] = files(tmp_path)
    sealed = bytearray(path.read_bytes())
    sealed[-20] ^= 0x01
    path.write_bytes(bytes(sealed))
    assert await j.entry(entry_id) is None
    entries, unreadable = await j.entries()
    assert (entries, unreadable) == ([], 1)


async def test_an_entry_renamed_to_another_id_does_not_open(tmp_path: Path) -> None:
    j = journal(tmp_path)
    first, second = await keep(j, "/cal/a.ics"), await keep(j, "/cal/b.ics")
    paths = {p.name.rsplit("-", 1)[1][:-2]: p for p in files(tmp_path)}
    paths[second].write_bytes(paths[first].read_bytes())  # a's sealed text filed under b's id
    assert await j.entry(second) is None
    assert (await j.entry(first)) is not None


async def test_a_journal_from_another_key_file_does_not_open(tmp_path: Path) -> None:
    ring = KeyRing((secrets.token_bytes(32),))
    entry_id = await keep(journal(tmp_path, ring=ring))
    other = journal(tmp_path, ring=KeyRing((secrets.token_bytes(32),)))
    assert await other.entry(entry_id) is None
    rotated = journal(tmp_path, ring=KeyRing((secrets.token_bytes(32), ring.keys[0])))  # the old key as previous
    assert await rotated.entry(entry_id) is not None


async def test_an_entry_of_another_server_does_not_open(tmp_path: Path) -> None:
    entry_id = await keep(journal(tmp_path))
    [path] = files(tmp_path)
    theirs = tmp_path / "journal" / "carddav-mcp"
    theirs.mkdir(parents=True)
    (theirs / path.name).write_bytes(path.read_bytes())
    carddav = Journal("carddav-mcp", "carddav-mcp", 7, folder=tmp_path, clock=Clock())
    assert await carddav.entry(entry_id) is None


async def test_an_entry_goes_after_its_days(tmp_path: Path) -> None:
    clock = Clock()
    j = journal(tmp_path, clock=clock, days=1)
    entry_id = await keep(j)
    clock.now += 86400 + 1
    assert await j.entry(entry_id) is None
    assert files(tmp_path) == []


async def test_a_pre_image_over_the_bound_is_not_kept_and_the_oldest_go_first(tmp_path: Path) -> None:
    j = journal(tmp_path)
    assert j.keeps(MAX_ENTRY_BYTES)
    assert not j.keeps(MAX_ENTRY_BYTES + 1)
    async with j.keeping(
        APPROVED, tool="delete_event", kind="deleted", collection="/cal/", href="/cal/big.ics", etag='"1"',
        data=b"x" * (MAX_ENTRY_BYTES + 1), content_type="text/calendar",
    ) as kept:  # fmt: skip
        assert kept.entry_id is None
    clock = Clock()
    small = FileStorage(tmp_path / "small", max_entries=2, max_bytes=1 << 20, clock=clock)
    for n in range(3):
        clock.now += 1
        await small.put(f"{n:016x}", b"sealed", clock.now, clock.now + 60)
    assert [entry_id for entry_id, _, _ in await small.entries()] == [f"{2:016x}", f"{1:016x}"]


class RacedStorage(FileStorage):
    """A double of one process's file storage whose folder another process of the same server trims as well:
    each listing after a put finds its oldest entry already gone (removed by the other process) when it reads
    its size."""

    def _files(self) -> list[tuple[str, float, float, Path]]:
        found = super()._files()
        if len(found) > 1:
            found[-1][3].unlink()
        return found


async def test_an_entry_another_process_trimmed_meanwhile_does_not_fail_a_put(tmp_path: Path) -> None:
    # Two stdio processes of one server share its journal folder; at the bound both trim the oldest entry.
    clock = Clock()
    shared = RacedStorage(tmp_path / "shared", max_entries=2, max_bytes=1 << 20, clock=clock)
    for n in range(4):
        clock.now += 1
        await shared.put(f"{n:016x}", b"sealed", clock.now, clock.now + 60)
    survivor = FileStorage(tmp_path / "shared", max_entries=2, max_bytes=1 << 20, clock=clock)
    newest, *_ = await survivor.entries()
    assert newest[0] == f"{3:016x}"


async def test_a_change_that_fails_drops_its_entry_unless_its_answer_was_lost(tmp_path: Path) -> None:
    j = journal(tmp_path)

    class Refused(Exception):
        pass

    class Lost(Exception):
        pass

    for error, kept in ((Refused, 0), (Lost, 1)):
        with pytest.raises(error):
            async with j.keeping(
                APPROVED, tool="delete_event", kind="deleted", collection="/cal/", href="/cal/x.ics", etag='"1"',
                data=PAGE, content_type="text/calendar", lost=(Lost,),
            ):  # fmt: skip
                raise error
        assert len((await j.entries())[0]) == kept


async def test_a_call_that_did_not_ask_keeps_nothing(tmp_path: Path) -> None:
    j = journal(tmp_path)
    async with j.keeping(
        Approved("not_guarded", ""), tool="update_event", kind="overwritten", collection="/cal/", href="/cal/x.ics",
        etag='"1"', data=PAGE, content_type="text/calendar",
    ) as kept:  # fmt: skip
        assert kept.entry_id is None
    assert files(tmp_path) == []


async def test_a_spent_entry_is_gone(tmp_path: Path) -> None:
    j = journal(tmp_path)
    entry_id = await keep(j)
    await j.spend(entry_id)
    assert await j.entry(entry_id) is None


def test_zero_days_turns_the_journal_off() -> None:
    assert open_journal("caldav-mcp", 0, None, object()) is None
    assert open_journal("caldav-mcp", 7, None, object()) is not None


@pytest.mark.parametrize(("raw", "days"), [(None, 7), ("0", 0), ("1", 1), ("90", 90)])
def test_the_days_are_read_strictly(raw: str | None, days: int) -> None:
    env = {} if raw is None else {"APPROVAL_UNDO_DAYS": raw}
    assert ApprovalSettings.from_env(env).undo_days == days


@pytest.mark.parametrize("raw", ["", "7d", "-1", "07", "91", "1.5", " 7", "７"])
def test_a_bad_number_of_days_stops_the_server_naming_the_rule(raw: str) -> None:
    with pytest.raises(SettingsError, match=r"APPROVAL_UNDO_DAYS=.* whole number of days from 0 to 90"):
        ApprovalSettings.from_env({"APPROVAL_UNDO_DAYS": raw})


def test_the_journal_key_is_its_own_purpose() -> None:
    from approval_core.records.keys import JOURNAL_PURPOSE, PAGE_PURPOSE, STATE_SEAL_PURPOSE

    ring = KeyRing((base64.b64decode(base64.b64encode(secrets.token_bytes(32))),))
    derived = {ring.derive(p)[0] for p in (JOURNAL_PURPOSE, PAGE_PURPOSE, STATE_SEAL_PURPOSE)}
    assert len(derived) == 3


async def test_an_entry_is_offered_only_to_the_backend_and_account_it_was_kept_from(tmp_path: Path) -> None:
    kept_by = journal(tmp_path)
    kept_by.backend = lambda: ("https://dav.example.org", "willi")
    entry_id = await keep(kept_by)
    for origin, account in [("https://dav.example.org", "other"), ("https://dav.example.net", "willi")]:
        elsewhere = journal(tmp_path)
        elsewhere.backend = lambda origin=origin, account=account: (origin, account)
        assert await elsewhere.entry(entry_id) is None
        assert (await elsewhere.entries())[0] == []
    same = journal(tmp_path)
    same.backend = lambda: ("https://dav.example.org", "willi")
    assert await same.entry(entry_id) is not None


async def test_an_embedded_backend_on_a_new_port_still_finds_its_entries(tmp_path: Path) -> None:
    before = journal(tmp_path)
    before.backend = lambda: ("http://127.0.0.1:40001", "me")
    entry_id = await keep(before)
    after = journal(tmp_path)
    after.backend = lambda: ("http://127.0.0.1:40777", "me")
    assert await after.entry(entry_id) is not None


async def test_an_entry_is_offered_only_to_the_principal_whose_call_kept_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from approval_core.records import journal as module

    monkeypatch.setattr(module, "_principal", lambda: ["client-a", "https://issuer", "alice"])
    j = journal(tmp_path)
    entry_id = await keep(j)
    assert await j.entry(entry_id) is not None
    monkeypatch.setattr(module, "_principal", lambda: ["client-b", "https://issuer", "bob"])
    assert await j.entry(entry_id) is None
    assert (await j.entries()) == ([], 0)


async def test_a_journal_that_cannot_keep_stops_the_change_saying_so(tmp_path: Path) -> None:
    from approval_core import JournalUnavailable

    (tmp_path / "journal.key").write_text("not a key\n")
    (tmp_path / "journal.key").chmod(0o600)
    ran = []
    with pytest.raises(JournalUnavailable, match="could not keep what the change would remove"):
        async with journal(tmp_path).keeping(
            APPROVED, tool="delete_event", kind="deleted", collection="/cal/", href="/cal/x.ics", etag='"1"',
            data=PAGE, content_type="text/calendar",
        ):  # fmt: skip
            ran.append(True)
    assert ran == []


async def test_turned_off_the_journal_still_lets_earlier_entries_go_after_their_days(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """APPROVAL_UNDO_DAYS=0 after a run that kept entries: they go after their days, not never."""
    from approval_core.records.journal import journal_folder

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    clock = Clock()
    folder = journal_folder()
    fresh = await keep(journal(folder, clock=clock, days=7))
    clock.now += 2 * 86400
    old = await keep(journal(folder, clock=Clock(), days=1))  # kept two days ago, for one day
    assert len(files(folder)) == 2
    assert open_journal("caldav-mcp", 0, None, object(), clock) is None
    assert [p.name.rsplit("-", 1)[1] for p in files(folder)] == [f"{fresh}.j"], "the expired one is gone"
    assert old not in "".join(p.name for p in files(folder))
