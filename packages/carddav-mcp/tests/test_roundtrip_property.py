"""A round-trip property against the real Radicale: what the tools read is what is stored, and a write changes
only what it names.

Hypothesis builds cards with what real exports contain: vCard 3.0 and 4.0,
folded lines (at varying widths, space or tab continuations) with non-ASCII
text, parameters (TYPE lists, LANGUAGE, X- parameters), X- properties, Apple
``itemN.`` groups, lists in the components of N and ADR, NICKNAME and
CATEGORIES, every RFC 6350 §3.4 escape in text, small inline photos, dates
with and without a year. Each card is seeded on Radicale, read with
get_contact, and written back with update_contact unchanged or with one
field changed. Then:

* every value get_contact returned equals what the card holds (the generated
  values, which Radicale stored);
* written back unchanged, the stored card is byte for byte what it was;
* with one field changed, every property that field does not name reads back
  from the server as the same lines, and get_contact returns the new value
  for that field and the same values for every other.

Examples: 15 by default (deterministic: derandomized, no deadline); the
``thorough`` profile (``HYPOTHESIS_PROFILE=thorough``, set by ``nox -s tests``)
runs 200.
"""

from __future__ import annotations

import base64
import os
import uuid
from dataclasses import dataclass, field
from typing import Any

import anyio
from carddav_conftest import Dav
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from approval_core import ApprovalSettings
from approval_core.testing import approval_of, connect
from carddav_mcp.fields import FIELD_PROPERTIES
from carddav_mcp.vcard import Card, escape_text

EXAMPLES = {"thorough": 200}.get(os.environ.get("HYPOTHESIS_PROFILE", ""), 15)
PROPERTY = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    phases=(Phase.explicit, Phase.generate),  # shrinking against a real server takes many minutes
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow, HealthCheck.data_too_large],
)

# Text as exports write it: any printable character (non-ASCII, emoji, CJK), and the characters that need
# escaping (RFC 6350 §3.4) or that other tools trip on.
_CHAR = st.one_of(
    st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Zl", "Zp")),
    st.sampled_from([",", ";", "\\", "\n", ":", '"', "ü", "ß", "日本", "😀", "é"]),
)
TEXT = st.lists(_CHAR, min_size=1, max_size=24).map("".join).filter(lambda s: s.strip() == s and s.strip() != "")
ITEMS = st.lists(TEXT, max_size=3)
WORD = st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=8)
EMAIL = st.builds(lambda a, b: f"{a}@{b}.example", WORD, WORD)
PHONE = st.lists(st.sampled_from("0123456789 -"), min_size=3, max_size=15).map(lambda c: "+" + "".join(c).strip())
TYPES = st.lists(st.sampled_from(["home", "work", "cell", "voice", "pref"]), max_size=2, unique=True)
N_PARTS = ("family", "given", "additional", "prefix", "suffix")
ADR_PARTS = ("po_box", "extended", "street", "locality", "region", "postal_code", "country")


def structured(items: list[list[str]]) -> str:
    return ";".join(",".join(escape_text(i) for i in component) for component in items)


@dataclass
class Spec:
    """A generated card: its lines, and what get_contact must return for it."""

    version: str
    lines: list[str]
    expected: dict[str, Any]
    x_names: set[str] = field(default_factory=lambda: set[str]())
    photo: bytes | None = None
    fold: int = 75
    tab: bool = False

    def text(self) -> str:
        """The card, folded at ``fold`` octets (never inside a UTF-8 sequence), CRLF line ends."""
        out = ["BEGIN:VCARD", f"VERSION:{self.version}"]
        for line in self.lines:
            pieces, current = [], ""
            for char in line:
                if len((current + char).encode()) > self.fold:
                    pieces.append(current)
                    current = ""
                current += char
            pieces.append(current)
            lead = "\t" if self.tab else " "
            out.append(pieces[0] + "".join(f"\r\n{lead}{p}" for p in pieces[1:]))
        out.append("END:VCARD")
        return "\r\n".join(out) + "\r\n"


def _types(types: list[str], version: str) -> str:
    if not types:
        return ""
    return f";TYPE={','.join(t if version == '4.0' else t.upper() for t in types)}"


@st.composite
def cards(draw: st.DrawFn) -> Spec:
    version = draw(st.sampled_from(["3.0", "4.0"]))
    uid = str(uuid.uuid4())  # each example is a new card in the same book: a UID of its own (not shrunk)
    fn = draw(TEXT)
    lines = [f"UID:{uid}", f"FN{draw(st.sampled_from(['', ';LANGUAGE=de']))}:{escape_text(fn)}"]
    n = {part: draw(ITEMS) for part in N_PARTS}
    lines.append(f"N:{structured([n[p] for p in N_PARTS])}")
    nicknames = draw(st.lists(TEXT, max_size=2))
    lines += [f"NICKNAME{';TYPE=work' if i else ''}:{escape_text(v)}" for i, v in enumerate(nicknames)]
    emails = draw(st.lists(st.tuples(EMAIL, TYPES), max_size=2))
    labelled = False
    for index, (value, types) in enumerate(emails):
        if index == 0 and draw(st.booleans()):  # Apple's itemN group with its label, read back as "Other"
            lines += [f"item1.EMAIL{_types(types, version)}:{value}", "item1.X-ABLabel:_$!<Other>!$_"]
            labelled = True
        else:
            lines.append(f"EMAIL{_types(types, version)}:{value}")
    phones = draw(st.lists(st.tuples(PHONE, TYPES), max_size=2))
    lines += [f"TEL{_types(types, version)}:{value}" for value, types in phones]
    addresses = []
    for _ in range(draw(st.integers(0, 2))):
        types = draw(TYPES)
        parts = {part: draw(ITEMS) for part in ADR_PARTS}
        lines.append(f"ADR{_types(types, version)}:{structured([parts[p] for p in ADR_PARTS])}")
        addresses.append({"types": types, **parts})
    urls = draw(st.lists(st.tuples(WORD, TYPES), max_size=2))
    lines += [f"URL{_types(types, version)}:https://{value}.example/" for value, types in urls]
    title = draw(st.none() | TEXT)
    if title is not None:
        lines.append(f"TITLE:{escape_text(title)}")
    org = draw(st.lists(TEXT, max_size=3))
    if org:
        lines.append(f"ORG:{';'.join(escape_text(o) for o in org)}")
    note = draw(st.none() | TEXT)
    if note is not None:
        lines.append(f"NOTE:{escape_text(note)}")
    categories = draw(st.lists(TEXT, max_size=3))
    if categories:
        lines.append(f"CATEGORIES:{','.join(escape_text(c) for c in categories)}")
    birthday = draw(st.none() | st.tuples(st.none() | st.integers(1900, 2020), st.integers(1, 12), st.integers(1, 28)))
    if birthday is not None:
        year, month, day = birthday
        if year is None:
            lines.append(f"BDAY:--{month:02d}{day:02d}" if version == "4.0" else f"BDAY:--{month:02d}-{day:02d}")
        else:
            lines.append(
                f"BDAY:{year:04d}{month:02d}{day:02d}" if version == "4.0" else f"BDAY:{year}-{month:02d}-{day:02d}"
            )
    x_names = set()
    for index in range(draw(st.integers(0, 2))):
        name = f"X-PROBE{index}"
        param = draw(st.sampled_from(["", ";X-SOURCE=export", ';X-NOTE="a;b"']))
        lines.append(f"{name}{param}:{escape_text(draw(TEXT))}")
        x_names.add(name)
    # Radicale cuts a vCard 4.0 data: URI at its comma when it stores the card, so 4.0 cards link their photo.
    photo = draw(st.none() | st.binary(min_size=1, max_size=300))
    if photo is not None and version == "4.0":
        lines.append(f"PHOTO:https://photos.example/{draw(WORD)}.png")
    elif photo is not None:
        lines.append(f"PHOTO;ENCODING=b;TYPE=PNG:{base64.b64encode(photo).decode()}")
    expected = {
        "fn": fn, "n": n, "nickname": nicknames,
        "emails": [
            {"value": v, "types": t, **({"label": "Other"} if labelled and i == 0 else {})}
            for i, (v, t) in enumerate(emails)
        ],
        "phones": [{"value": v, "types": t} for v, t in phones],
        "addresses": addresses, "org": org, "note": note, "categories": categories, "title": title,
        "urls": [{"value": f"https://{v}.example/", "types": t} for v, t in urls],
        "birthday": None if birthday is None else dict(zip(("year", "month", "day"), birthday, strict=True)),
    }  # fmt: skip
    fold = draw(st.sampled_from([75, 40, 13]))
    return Spec(version, lines, expected, x_names, photo, fold, draw(st.booleans()))


CHANGES: dict[str, st.SearchStrategy[Any]] = {
    "fn": TEXT,
    "n": st.fixed_dictionaries({part: ITEMS for part in N_PARTS}),
    "nickname": st.lists(TEXT, min_size=1, max_size=3),
    "emails": st.lists(st.fixed_dictionaries({"value": EMAIL, "types": TYPES}), min_size=1, max_size=2),
    "addresses": st.lists(
        st.fixed_dictionaries({"types": TYPES, **{part: ITEMS for part in ADR_PARTS}}), min_size=1, max_size=2
    ),
    "org": st.lists(TEXT, min_size=1, max_size=3),
    "title": TEXT,
    "note": TEXT,
    "categories": st.lists(TEXT, min_size=1, max_size=3),
}
CHANGE = st.none() | st.sampled_from(sorted(CHANGES)).flatmap(lambda f: st.tuples(st.just(f), CHANGES[f]))
WRITABLE = sorted(FIELD_PROPERTIES)


def _others(card: Card, names: frozenset[str], groups: set[str]) -> list[str]:
    """The lines of ``card`` a change of ``names`` must leave alone: other properties, and not the ``itemN.``
    labels that belong to a changed line (they go with it)."""
    return sorted(p.line for p in card.props if p.name not in names and p.group not in groups)


async def _round_trip(dav: Dav, spec: Spec, change: tuple[str, Any] | None) -> None:
    href = dav.put(dav.book, f"{uuid.uuid4().hex}.vcf", spec.text())
    stored = dav.get(href)
    server = dav.server(ApprovalSettings(elicitation=False))
    async with connect(server, revision="2026-07-28") as client:
        read = await client.call_tool("get_contact", {"contact_id": href})
        assert not read.is_error, read.content
        contact = read.structured_content
        for key, value in spec.expected.items():
            assert contact[key] == value, (key, stored)
        assert spec.x_names <= set(contact["other_properties"]), stored
        if spec.photo is None:
            assert contact["photo"] is None
        elif spec.version == "4.0":
            assert contact["photo"]["kind"] == "uri"
        else:
            assert contact["photo"]["size_bytes"] == len(spec.photo)
            photo = await client.call_tool("get_contact_photo", {"contact_id": href})
            assert base64.b64decode(photo.content[0].data) == spec.photo  # type: ignore[union-attr]

        changes = {k: contact[k] for k in WRITABLE if contact[k] not in (None, [])}
        if change is not None:
            changes[change[0]] = change[1]
        args = {"contact_id": href, "changes": changes}
        token = approval_of(await client.call_tool("update_contact", args))["confirm_token"]
        written = await client.call_tool("update_contact", {**args, "confirm_token": token})
        assert not written.is_error, written.content
        again = (await client.call_tool("get_contact", {"contact_id": href})).structured_content

    after = dav.get(href)
    if change is None:
        assert after == stored
        assert {**again, "etag": None} == {**contact, "etag": None}
        return
    name, value = change
    touched = FIELD_PROPERTIES[name]
    before = Card.parse(stored)
    groups = {p.group for p in before.props if p.name in touched and p.group}
    assert _others(Card.parse(after), touched, groups) == _others(before, touched, groups), (name, stored, after)
    assert again[name] == value, (after,)
    for key in [*WRITABLE, "impp", "related", "photo", "uid", "version"]:
        if key != name:
            assert again[key] == contact[key], (key, after)
    labels = {"X-ABLABEL"} if groups else set()  # an itemN label goes with the line it labelled
    assert set(again["other_properties"]) - labels == set(contact["other_properties"]) - labels, after


@PROPERTY
@given(spec=cards(), change=CHANGE)
def test_what_is_read_is_what_is_stored_and_a_write_changes_only_what_it_names(
    radicale: Dav, spec: Spec, change: tuple[str, Any] | None
) -> None:
    anyio.run(_round_trip, radicale, spec, change)
