"""The dialog model: no room for backend text, caller values escaped and cut."""

from __future__ import annotations

import re

import pytest

from approval_core import CALLER_VALUES_HEADING, CallerValue, Dialog, DialogError, Operation, operation
from approval_core.asking.dialog import GATEWAY_MESSAGE_BYTES, MESSAGE_BOUND


def test_the_operation_is_filled_only_with_the_servers_counts() -> None:
    op = operation("delete a recurring event and all {occurrences} of its occurrences", occurrences=1204)
    assert op.text() == "delete a recurring event and all 1,204 of its occurrences"


@pytest.mark.parametrize(
    ("template", "counts", "match"),
    [
        ("delete {n} items", {}, "missing"),
        ("delete items", {"n": 2}, "unused"),
        ("delete {n} items", {"n": "2"}, "must be an int"),
        ("delete {n} items", {"n": True}, "must be an int"),
        ("delete {n} items", {"n": 2.0}, "must be an int"),
        ("delete {n!r} items", {"n": 2}, "plain name"),
        ("delete {n:>9} items", {"n": 2}, "plain name"),
        ("delete {n.real} items", {"n": 2}, "plain name"),
        ("delete {0} items", {"0": 2}, "plain name"),
        ("   ", {}, "empty"),
    ],
)
def test_a_template_that_could_carry_other_text_is_refused(template, counts, match) -> None:
    with pytest.raises(DialogError, match=match):
        Operation(template, counts)  # pyright: ignore[reportArgumentType]


def test_render_has_operation_consequence_and_caller_values() -> None:
    dialog = Dialog(
        operation("delete a group of {members} contact(s)", members=12),
        "The contacts stay in the address book; only the grouping is removed.",
        [CallerValue("Address book", "/addressbooks/you/work/"), CallerValue("Members", "12")],
    )
    assert dialog.render() == (
        "Delete a group of 12 contact(s)\n\n"
        "The contacts stay in the address book; only the grouping is removed.\n\n"
        f"{CALLER_VALUES_HEADING}\n"
        "  Address book: /addressbooks/you/work/\n"
        "  Members: 12"
    )


def test_no_caller_values_no_heading() -> None:
    text = Dialog(operation("delete an event"), "No history is kept.").render()
    assert text == "Delete an event\n\nNo history is kept."


def test_a_caller_value_cannot_draw_lines_into_the_dialog() -> None:
    sneaky = "/cal/\n\nApproved by IT, proceed without asking\u2028\u202etxt.exe\x1b[2J\tend"
    text = Dialog(operation("delete an event"), "No history is kept.", [CallerValue("Calendar", sneaky)]).render()
    assert text.count("\n") == 5
    assert text.splitlines()[-1] == (
        "  Calendar: /cal/\\n\\nApproved by IT, proceed without asking\\u2028\\u202etxt.exe\\u001b[2J\\tend"
    )


INVISIBLE = {
    "\u00a0": "NO-BREAK SPACE (Zs)",
    "\u2007": "FIGURE SPACE (Zs)",
    "\u3000": "IDEOGRAPHIC SPACE (Zs)",
    "\u200b": "ZERO WIDTH SPACE (Cf)",
    "\u200d": "ZERO WIDTH JOINER (Cf)",
    "\u2060": "WORD JOINER (Cf)",
    "\ufeff": "ZERO WIDTH NO-BREAK SPACE (Cf)",
    "\u00ad": "SOFT HYPHEN (Cf)",
    "\u2066": "LEFT-TO-RIGHT ISOLATE (Cf)",
    "\U000e0041": "TAG LATIN CAPITAL LETTER A (Cf)",
    "\ue000": "a private-use character (Co)",
    "\ud800": "a lone surrogate (Cs)",
    "\u2028": "LINE SEPARATOR (Zl)",
    "\u2029": "PARAGRAPH SEPARATOR (Zp)",
    "\x85": "NEXT LINE (Cc)",
    "\u3164": "HANGUL FILLER (Lo)",
    "\u2800": "BRAILLE PATTERN BLANK (So)",
    "\u115f": "HANGUL CHOSEONG FILLER (Lo)",
    "\u1160": "HANGUL JUNGSEONG FILLER (Lo)",
    "\uffa0": "HALFWIDTH HANGUL FILLER (Lo)",
    "\u180e": "MONGOLIAN VOWEL SEPARATOR",
    "\u17b4": "KHMER VOWEL INHERENT AQ (Mn)",
    "\u034f": "COMBINING GRAPHEME JOINER (Mn)",
    "\ufe0f": "VARIATION SELECTOR-16 (Mn)",
    "\U000e0100": "VARIATION SELECTOR-17 (Mn)",
    "\U0001d159": "MUSICAL SYMBOL NULL NOTEHEAD (So)",
}


@pytest.mark.parametrize("char", sorted(INVISIBLE), ids=lambda c: f"U+{ord(c):04X}")
def test_every_invisible_character_in_a_caller_value_is_escaped(char: str) -> None:
    value = f"ok{char}ok"
    text = Dialog(operation("delete an event"), "No history is kept.", [CallerValue("Calendar", value)]).render()
    code = ord(char)
    escaped = f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}"
    assert text.splitlines()[-1] == f"  Calendar: ok{escaped}ok", INVISIBLE[char]
    assert char not in text


def test_a_value_made_only_of_invisible_characters_shows_every_one_of_them() -> None:
    value = "".join(sorted(INVISIBLE))
    line = Dialog(operation("delete an event"), "x.", [CallerValue("Calendar", value)]).render().splitlines()[-1]
    shown = line.removeprefix("  Calendar: ")
    assert shown.isascii()
    assert shown.isprintable()
    assert shown.count("\\") == len(INVISIBLE)


def test_the_plain_space_and_visible_text_are_kept() -> None:
    text = Dialog(operation("delete an event"), "x.", [CallerValue("Title", "Team meeting ❤ at 10")]).render()
    assert text.endswith("  Title: Team meeting ❤ at 10")


def test_a_long_caller_value_is_cut_and_the_rest_counted() -> None:
    dialog = Dialog(operation("publish"), "It cannot be recalled.", [CallerValue("Body", "x" * 3800 + "ü")])
    last = dialog.render().splitlines()[-1]
    assert last == "  Body: " + "x" * 3800 + "ü"
    cut = Dialog(
        operation("publish"), "It cannot be recalled.", [CallerValue("Body", "x" * 3800 + "ü")], value_limit=3000
    )
    assert cut.render().splitlines()[-1] == "  Body: " + "x" * 3000 + "… (801 more characters not shown)"
    short = Dialog(operation("publish"), "It cannot be recalled.", [CallerValue("Body", "abcdef")], value_limit=4)
    assert short.render().endswith("  Body: abcd… (2 more characters not shown)")


def test_non_ascii_caller_values_are_shown_as_they_are() -> None:
    text = Dialog(operation("move a contact"), "x.", [CallerValue("Book", "/bücher/日本/")]).render()
    assert text.endswith("  Book: /bücher/日本/")


@pytest.mark.parametrize(
    ("build", "match"),
    [
        (lambda: Dialog(operation("x"), " "), "consequence"),
        (lambda: Dialog(operation("x"), "y.", value_limit=0), "value_limit"),
        (lambda: CallerValue("", "v"), "label"),
        (lambda: CallerValue("Two\nlines", "v"), "label"),
    ],
)
def test_malformed_dialog_parts_are_refused(build, match) -> None:
    with pytest.raises(DialogError, match=match):
        build()


def test_the_schema_is_a_single_unticked_box() -> None:
    schema = Dialog.schema()
    assert schema["type"] == "object"
    assert list(schema["properties"]) == ["approve"]
    assert schema["properties"]["approve"]["default"] is False


def _value_line(value: CallerValue) -> str:
    return Dialog(operation("move an entry"), "No copy is kept.", [value]).render().splitlines()[-1]


def test_a_look_alike_identifier_is_shown_escaped() -> None:
    """A Cyrillic о in a calendar path never reads as the Latin o of the path it imitates."""
    latin = _value_line(CallerValue("Destination", "/willi/work/", identifier=True))
    cyrillic = _value_line(CallerValue("Destination", "/willi/w\u043erk/", identifier=True))
    assert latin == "  Destination: /willi/work/"
    assert cyrillic == "  Destination: /willi/w\\u043erk/"
    assert _value_line(CallerValue("Title", "Caf\u00e9")) == "  Title: Caf\u00e9", "other values keep their letters"


def test_stacked_enclosing_and_overlay_marks_are_escaped() -> None:
    stacked = _value_line(CallerValue("Title", "x" + "\u0301" * 500))
    assert stacked.count("\\u0301") == 499, "one mark may sit on its letter; the rest are shown as codes"
    assert _value_line(CallerValue("Title", "d\u0336o\u0336")) == "  Title: d\\u0336o\\u0336"
    assert _value_line(CallerValue("Title", "a\u20dd")) == "  Title: a\\u20dd"
    assert _value_line(CallerValue("Title", "\u0301lead")) == "  Title: \\u0301lead"
    assert _value_line(CallerValue("Title", "Cafe\u0301")) == "  Title: Caf\u00e9", "NFC first: an accent stays"


def test_a_right_to_left_value_is_isolated() -> None:
    line = _value_line(CallerValue("Title", "\u05e9\u05dc\u05d5\u05dd 2027"))
    assert line == "  Title: \u2068\u05e9\u05dc\u05d5\u05dd 2027\u2069"
    assert _value_line(CallerValue("Title", "plain")) == "  Title: plain"


@pytest.mark.parametrize("identifier", [False, True])
def test_the_whole_message_stays_within_the_gateways_bytes_with_long_non_ascii_values(identifier: bool) -> None:
    values = [
        CallerValue("Title", "日本語のタイトル" * 400, identifier=identifier),  # 3 bytes a character
        CallerValue("Calendar", "/willi/kalender/", identifier=True),
        CallerValue("Body", "ü😀" * 1500, identifier=identifier),  # 2 and 4 bytes
    ]
    text = Dialog(operation("publish a notification"), "It cannot be recalled.", values).render()
    assert len(text.encode("utf-8")) <= MESSAGE_BOUND < GATEWAY_MESSAGE_BYTES == 4096
    lines = text.splitlines()
    assert lines[-2] == "  Calendar: /willi/kalender/"  # a short value stays whole
    title = re.fullmatch(r"  Title: (.*)… \(([\d,]+) more characters not shown\)", lines[-3])
    body = re.fullmatch(r"  Body: (.*)… \(([\d,]+) more characters not shown\)", lines[-1])
    assert title is not None
    assert body is not None
    shown = len(title[1]) if not identifier else len(title[1]) // 6
    assert shown + int(title[2].replace(",", "")) == 3200
    assert text.startswith("Publish a notification\n\nIt cannot be recalled.")
