"""Characters a person cannot see, in a caller value that is not an id, are escaped (docs/security.md).

approval_core.asking.dialog.BLANK_FILLERS lists the Default_Ignorable letters and marks that a category test lets
through. The four Mongolian free variation selectors (U+180B, U+180C, U+180D, U+180F: Mn,
Default_Ignorable_Code_Point in DerivedCoreProperties.txt, drawn as nothing) are among them: under
APPROVAL_PROFILE=every-write caller values are free text (a message, a summary, a vCard).
"""

from __future__ import annotations

import pytest

from approval_core.asking.dialog import shown_value


@pytest.mark.parametrize("char", ["\u180b", "\u180c", "\u180d", "\u180f"])
def test_a_mongolian_free_variation_selector_in_a_caller_value_is_escaped(char: str) -> None:
    shown = shown_value(f"Meet Bob{char} at noon")
    assert char not in shown, f"U+{ord(char):04X} passes raw into the dialog: {shown!r}"
    assert f"\\u{ord(char):04x}" in shown
