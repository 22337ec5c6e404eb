"""Helpers every tool module uses: the shared content parameters, and content from them.

A tool raises this package's own errors (:mod:`ntfy_mcp.errors`); the error boundary installed in
:func:`ntfy_mcp.server.build_server` gives the caller their text.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, ValidationError

from ntfy_mcp.errors import InputError
from ntfy_mcp.models import Action, Content, Priority

__all__ = [
    "ActionsArg",
    "AttachArg",
    "ClickArg",
    "FilenameArg",
    "IconArg",
    "MarkdownArg",
    "MessageArg",
    "PriorityArg",
    "TagsArg",
    "TitleArg",
    "content_from",
]

# The content schema publish_message and update_message share (a revision carries the same content).
MessageArg = Annotated[str | None, Field(description="The body, up to 4,096 bytes")]
TitleArg = Annotated[str | None, Field(max_length=256, description="The notification's title")]
PriorityArg = Annotated[Priority | None, Field(description="1 (min) to 5 (max), or min/low/default/high/max/urgent")]
TagsArg = Annotated[list[str] | None, Field(max_length=10, description="Tags; emoji short codes show")]
MarkdownArg = Annotated[bool | None, Field(description="Render the body as Markdown")]
ClickArg = Annotated[str | None, Field(description="http(s) URL opened on tap")]
IconArg = Annotated[str | None, Field(description="http(s) URL of an icon")]
AttachArg = Annotated[str | None, Field(description="http(s) URL of a file to attach")]
FilenameArg = Annotated[str | None, Field(description="Name shown for the attachment")]
ActionsArg = Annotated[list[Action] | None, Field(max_length=3, description="Up to 3 buttons")]


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
