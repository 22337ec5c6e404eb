"""approval-core's stored-text mechanism on its own: pointers, fences, escapes (serving/stored_text.py)."""

from __future__ import annotations

import json
import re

from approval_core.asking.dialog import BLANK_FILLERS
from approval_core.serving.stored_text import _stored_paths, fenced_text  # pyright: ignore[reportPrivateUsage]

FIELDS = frozenset({"summary", "tags", "attachment"})


def test_pointers_name_every_stored_string_with_array_indices_as_stars() -> None:
    data = {
        "events": [{"summary": "a", "id": "x"}, {"summary": "b"}],
        "tags": ["t1", "t2"],
        "attachment": {"name": "f.png", "size": 3},
        "a/b": {"summary": "c"},
    }
    assert sorted(set(_stored_paths(data, FIELDS))) == sorted(
        ["/a~1b/summary", "/attachment/name", "/events/*/summary", "/tags/*"]
    )


def test_every_invisible_character_of_the_dialog_is_escaped_and_the_json_still_reads_back() -> None:
    hidden = "".join(sorted(BLANK_FILLERS)) + "\u202e\u2066\u200b\u200d\ufeff\U000e0041\ue000"
    data = {"summary": f"x{hidden}y", "tags": ["`````"], "id": "plain"}
    text = fenced_text(data, FIELDS, nonce="0a1b2c3d")
    assert all(ch not in text for ch in hidden)
    fence = re.match(r"(`+)json\n", text)
    assert fence is not None
    assert len(fence[1]) == 6  # longer than the five backticks of the stored tag
    body = json.loads(text.removeprefix(fence[0]).removesuffix("\n" + fence[1]))
    assert body["summary"] == f"⟦stored 0a1b2c3d⟧x{hidden}y⟦/stored 0a1b2c3d⟧"
    assert body["tags"] == ["⟦stored 0a1b2c3d⟧`````⟦/stored 0a1b2c3d⟧"]
    assert body["id"] == "plain"
