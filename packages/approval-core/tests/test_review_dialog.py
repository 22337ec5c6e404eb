"""Review of issue 22 (dialogs and names): characters a person cannot see, in a caller value that is not an id.

docs/security.md: every caller value is put "on a single line with every character a person cannot see
escaped"; approval_core.dialog.BLANK_FILLERS lists the Default_Ignorable letters and marks a category test
lets through. The four Mongolian free variation selectors (U+180B, U+180C, U+180D, U+180F: Mn,
Default_Ignorable_Code_Point in DerivedCoreProperties.txt, drawn as nothing) are missing: after a letter
they pass raw. Under the guarded profile non-identifier values are the servers' own field names; under
APPROVAL_PROFILE=every-write they are the caller's free text (a message, a summary, a vCard), shown in the
dialog with these characters hidden. (Partial: identifiers escape every non-ASCII character.)
"""

from __future__ import annotations

import pytest

from approval_core.dialog import shown_value


@pytest.mark.parametrize("char", ["\u180b", "\u180c", "\u180d", "\u180f"])
def test_a_mongolian_free_variation_selector_in_a_caller_value_is_escaped(char: str) -> None:
    shown = shown_value(f"Meet Bob{char} at noon")
    assert char not in shown, f"U+{ord(char):04X} passes raw into the dialog: {shown!r}"
    assert f"\\u{ord(char):04x}" in shown
