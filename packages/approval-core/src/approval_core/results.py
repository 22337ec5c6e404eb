"""What a tool returns: structured results, and refusals that end a call.

Guarded tools return ``Annotated[CallToolResult, Model] | InputRequiredResult``:
the SDK derives the output schema from ``Model`` and passes an
``InputRequiredResult`` through untouched, so a tool can return the gate's
result, or its own, from one signature. :func:`structured` builds the success
result; the gate builds refusals with :func:`refusal`.
"""

from __future__ import annotations

import json
from typing import Any

from mcp_types import CallToolResult, TextContent
from pydantic import BaseModel

__all__ = ["refusal", "structured"]


def structured(model: BaseModel) -> CallToolResult:
    """A successful result: ``structuredContent`` plus the same data as compact JSON text.

    The text block is what a model reads; it is compact (no indentation) to
    keep listings small. Field aliases are used, as on the wire.
    """
    data = model.model_dump(mode="json", by_alias=True)
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=data)


def refusal(text: str, approval: dict[str, Any]) -> CallToolResult:
    """A result that ends the call with nothing changed (``isError: true``).

    Args:
        text: What happened and what to do, for the model and a person.
        approval: Machine-readable details, returned as
            ``structuredContent = {"approval": approval}``.
    """
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content={"approval": approval},
        is_error=True,
    )
