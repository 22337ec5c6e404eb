"""Helpers every tool module uses: this package's errors as MCP tool errors, and content from parameters."""

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager

from mcp.server.mcpserver.exceptions import ToolError
from pydantic import ValidationError

from ntfy_mcp.errors import InputError, NtfyMcpError
from ntfy_mcp.models import Content

__all__ = ["content_from", "tool_errors"]


@contextmanager
def tool_errors() -> Generator[None]:
    """Re-raise any :class:`NtfyMcpError` as a ``ToolError`` the model reads (``isError: true``)."""
    try:
        yield
    except NtfyMcpError as exc:
        raise ToolError(str(exc)) from exc


def content_from(**fields: object) -> Content:
    """A :class:`Content` from the tool's own parameters (None = not given).

    Raises:
        InputError: a field breaks its rule; the message names each field.
    """
    given = {name: value for name, value in fields.items() if value is not None}
    try:
        return Content.model_validate(given)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'content'}: {err['msg']}" for err in exc.errors()
        )
        raise InputError(problems) from None
