"""What a tool returns: structured results, and refusals that end a call.

Guarded tools return ``Annotated[CallToolResult, Model] | InputRequiredResult``:
the SDK derives the output schema from ``Model`` and passes an
``InputRequiredResult`` through untouched, so a tool can return the gate's
result, or its own, from one signature. :func:`structured` builds the success
result; the gate builds refusals with :func:`refusal`.

A refusal carries no ``structuredContent``. MCP 2025-11-25 (Tools, "Output
Schema") says a client SHOULD validate structured results against the tool's
``outputSchema``, and the TypeScript SDK client 1.x does so for every result
that has ``structuredContent``, error or not: a refusal shaped
``{"approval": ...}`` fails the check and the client throws -32602, so neither
the person nor the model sees the refusal or its confirm token. The same
client accepts an ``isError`` result without ``structuredContent``. So a
refusal says everything in its text (including the confirm token), and puts
the machine-readable outcome in the result's ``_meta`` under
:data:`APPROVAL_META_KEY`.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from typing import Any

from mcp_types import CallToolResult, TextContent
from pydantic import BaseModel

__all__ = ["APPROVAL_META_KEY", "approval_outcome", "dumped_text", "refusal", "structured"]

APPROVAL_META_KEY = "approval-core/approval"
"""The ``_meta`` key of a refusal's machine-readable outcome.

MCP 2025-11-25 (Basic, "General fields", ``_meta``): a key is an optional
prefix of dot-separated labels followed by ``/``, then a name; prefixes whose
second label is ``modelcontextprotocol`` or ``mcp`` are reserved. The prefix
is the library's name as a single label: this project owns no domain to write
in reverse DNS, and a single label cannot collide with a reverse-DNS prefix
(those have two labels or more).
"""


def structured(model: BaseModel) -> CallToolResult:
    """A successful result: ``structuredContent`` plus the same data as compact JSON text.

    The text block is what a model reads; it is compact (no indentation) to
    keep listings small. Field aliases are used, as on the wire.
    """
    data = model.model_dump(mode="json", by_alias=True)
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    result = CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)
    kept: object = result.structured_content  # pyright: ignore[reportUnknownMemberType]
    _DUMPS[id(kept)] = (kept, text)
    if len(_DUMPS) > _KEPT_DUMPS:
        _DUMPS.popitem(last=False)
    return result


_KEPT_DUMPS = 16
_DUMPS: OrderedDict[int, tuple[object, str]] = OrderedDict()
"""The text of the latest results :func:`structured` made, by the identity of their structured content.

Each entry holds its structured content, so that identity cannot pass to another object while it is kept.
"""


def dumped_text(data: object) -> str | None:
    """The text :func:`structured` made for this very ``data`` (its result's ``structured_content``), or None.

    Lets a wrapper tell which text block of a result repeats its structured content without parsing the
    text: the block whose text is this very string. Each result is answered once (the entry is dropped),
    and only for the latest 16 results made; None for any other, and for a result built another way.
    """
    entry = _DUMPS.pop(id(data), None)
    if entry is None or entry[0] is not data:
        return None
    return entry[1]


def refusal(text: str, approval: dict[str, Any]) -> CallToolResult:
    """A result that ends the call with nothing changed (``isError: true``, no ``structuredContent``).

    Args:
        text: What happened and what to do, for the model and a person; a
            confirm token, when one was issued, must be in it.
        approval: Machine-readable details (``outcome``, ``path``,
            ``changed``, and on the token path ``confirm_token`` and
            ``expires_in_seconds``), returned as
            ``_meta[APPROVAL_META_KEY]``.
    """
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        is_error=True,
        _meta={APPROVAL_META_KEY: approval},
    )


def approval_outcome(result: CallToolResult) -> dict[str, Any] | None:
    """The machine-readable outcome of a refusal built by :func:`refusal`, or None for any other result."""
    meta = result.meta or {}
    found: object = meta.get(APPROVAL_META_KEY)
    if not isinstance(found, dict):
        return None
    return dict(found)  # pyright: ignore[reportUnknownArgumentType]
