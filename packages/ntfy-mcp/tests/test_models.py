"""Action headers and extras: a map, or the list of {name, value} pairs the published schema shows."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from ntfy_mcp.models import BroadcastAction, HttpAction


def test_headers_and_extras_take_pairs_with_the_same_rules_as_a_map() -> None:
    pairs = [{"name": "Authorization", "value": "Bearer x"}]
    http = HttpAction.model_validate({"action": "http", "label": "Go", "url": "https://example.org", "headers": pairs})
    assert http.headers == {"Authorization": "Bearer x"}
    broadcast = BroadcastAction.model_validate(
        {"action": "broadcast", "label": "B", "extras": [{"name": "a", "value": "1"}]}
    )
    assert broadcast.extras == {"a": "1"}
    for headers in (
        [{"name": "A", "value": "1"}, {"name": "A", "value": "2"}],
        [{"name": "Bad Name", "value": "1"}],
        [{"name": "A", "value": "x\r\ny"}],
        [{"name": f"H{i}", "value": "1"} for i in range(11)],
    ):
        with pytest.raises(ValidationError):
            HttpAction.model_validate(
                {"action": "http", "label": "Go", "url": "https://example.org", "headers": headers}
            )
