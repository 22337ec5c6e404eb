"""Pydantic models: what a notification may carry (input) and what the tools return (output).

Input rules follow ntfy's publishing docs ("Publishing": message priority,
tags, click action, icons, attachments by URL, scheduled delivery, action
buttons), checked here so a bad call fails before anything is sent, with the
field and the rule named. Output models are the tools' output schemas.
Text that came from ntfy (titles, bodies, tags, labels) is data written by
whoever could publish to the topic; it is returned, never interpreted.
"""

from __future__ import annotations

import re
import time
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator
from pydantic.config import JsonDict

from approval_core import mapping_from_pairs
from approval_core.serving.stored_text import quoted_name
from ntfy_mcp.errors import InputError

__all__ = [
    "MAX_ACTIONS",
    "MAX_DELAY_SECONDS",
    "MAX_MESSAGE_BYTES",
    "MIN_DELAY_SECONDS",
    "PRIORITY_NAMES",
    "Action",
    "BroadcastAction",
    "Content",
    "CopyAction",
    "HttpAction",
    "Priority",
    "ViewAction",
    "delay_to_unix",
    "priority_number",
]

MAX_MESSAGE_BYTES = 4096
"""ntfy's default message size limit (``message-size-limit``); a longer body would become an attachment."""
MAX_ACTIONS = 3
"""ntfy allows at most three action buttons per notification (docs, "Action buttons")."""
MIN_DELAY_SECONDS = 10
MAX_DELAY_SECONDS = 3 * 24 * 3600
"""ntfy's default bounds for scheduled delivery: 10 s to 3 days (docs, "Scheduled delivery")."""
PRIORITY_NAMES = {"min": 1, "low": 2, "default": 3, "high": 4, "max": 5, "urgent": 5}

_HTTP_URL = re.compile(r"^https?://[^\s/?#]+[^\s]*$", re.IGNORECASE)
_DURATION = re.compile(r"^(\d{1,7})([smhd])$")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
_HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$")

Priority = Annotated[
    int | Literal["min", "low", "default", "high", "max", "urgent"],
    Field(description="1 (min) to 5 (max), or one of min, low, default, high, max, urgent"),
]
HttpUrl = Annotated[str, Field(max_length=2000, description="An http:// or https:// URL")]
Label = Annotated[str, Field(min_length=1, max_length=64, description="The button's label")]


def _check_url(field: str, value: str) -> str:
    if not _HTTP_URL.match(value):
        raise ValueError(f"{field} must be an http:// or https:// URL")
    return value


def priority_number(value: int | str) -> int:
    """The priority as ntfy's number, 1 to 5 (docs, "Message priority").

    Raises:
        InputError: not 1-5 and not one of the names.
    """
    if isinstance(value, int) and 1 <= value <= 5:
        return value
    if isinstance(value, str) and value in PRIORITY_NAMES:
        return PRIORITY_NAMES[value]
    raise InputError(f"priority: {quoted_name(value)} is not 1-5 or one of {', '.join(PRIORITY_NAMES)}")


def delay_to_unix(delay: str, now: float | None = None) -> int:
    """When a delayed notification is delivered, as a Unix time (UTC seconds).

    ``delay`` is a duration (``30s``, ``10m``, ``2h``, ``1d``) or a Unix
    timestamp; the result must lie 10 s to 3 days ahead, ntfy's default
    bounds (a server configured differently may still refuse it).

    Raises:
        InputError: not a duration or timestamp, or outside the bounds.
    """
    now = time.time() if now is None else now
    match = _DURATION.match(delay)
    if match:
        seconds = int(match.group(1)) * _UNIT_SECONDS[match.group(2)]
    elif delay.isdigit():
        seconds = int(delay) - int(now)
    else:
        raise InputError(f"delay: {quoted_name(delay)} is not a duration like 30s, 10m, 2h, 1d or a Unix timestamp")
    if not MIN_DELAY_SECONDS <= seconds <= MAX_DELAY_SECONDS:
        raise InputError(f"delay: {quoted_name(delay)} must be between 10 seconds and 3 days from now")
    return int(now) + seconds


_PairsOrMap = Annotated[dict[str, Annotated[str, Field(max_length=1000)]], BeforeValidator(mapping_from_pairs)]
"""Header / extra names and their values: a map, or the list of ``{name, value}`` pairs that the published
input schema shows (approval_core.serving.portable: the OpenAI Agents SDK's strict mode takes no open map)."""


class _Button(BaseModel):
    model_config = ConfigDict(extra="forbid")

    label: Label
    clear: bool = Field(default=False, description="Dismiss the notification after the button is used")


class ViewAction(_Button):
    """Opens a web page on the recipient's device."""

    action: Literal["view"]
    url: HttpUrl

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        return _check_url("actions[].url", value)


class HttpAction(_Button):
    """Sends an HTTP request from the recipient's device when tapped."""

    action: Literal["http"]
    url: HttpUrl
    method: Literal["GET", "POST", "PUT", "PATCH", "DELETE"] = "POST"
    headers: _PairsOrMap = Field(default_factory=dict, max_length=10)
    body: str = Field(default="", max_length=4096)

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        return _check_url("actions[].url", value)

    @field_validator("headers")
    @classmethod
    def _headers(cls, value: dict[str, str]) -> dict[str, str]:
        for name, text in value.items():
            if not _HEADER_NAME.match(name) or any(ch in text for ch in "\r\n"):
                raise ValueError(f"actions[].headers: {quoted_name(name)} is not a valid header name/value")
        return value


class BroadcastAction(_Button):
    """Sends an Android broadcast intent on the recipient's device."""

    action: Literal["broadcast"]
    intent: str = Field(default="io.heckel.ntfy.USER_ACTION", max_length=256)
    extras: _PairsOrMap = Field(default_factory=dict, max_length=10)


class CopyAction(_Button):
    """Copies a value to the recipient's clipboard (ntfy 2.17 and newer)."""

    action: Literal["copy"]
    value: str = Field(min_length=1, max_length=4096)


def _no_openapi_discriminator(schema: JsonDict) -> None:
    """Drop the OpenAPI ``discriminator`` keyword pydantic adds beside ``oneOf``.

    It is no JSON Schema Draft 2020-12 keyword, so a strict validator (Ajv in strict mode) refuses the
    whole tool schema; the tag still picks the model when pydantic validates.
    """
    schema.pop("discriminator", None)


Action = Annotated[
    ViewAction | HttpAction | BroadcastAction | CopyAction,
    Field(discriminator="action", json_schema_extra=_no_openapi_discriminator),
]


class Content(BaseModel):
    """Everything a notification says; shared by publish_message and update_message."""

    model_config = ConfigDict(extra="forbid")

    message: str | None = Field(default=None, description="The body (at most 4,096 bytes of UTF-8)")
    title: str | None = Field(default=None, max_length=256)
    priority: Priority | None = None
    tags: list[Annotated[str, Field(min_length=1, max_length=64)]] | None = Field(default=None, max_length=10)
    markdown: bool | None = Field(default=None, description="Render the body as Markdown")
    click: HttpUrl | None = Field(default=None, description="Opened when the notification is tapped")
    icon: HttpUrl | None = Field(default=None, description="Notification icon (JPEG or PNG)")
    attach: HttpUrl | None = Field(default=None, description="Attach a file by URL")
    filename: str | None = Field(default=None, min_length=1, max_length=255, description="Name for the attached file")
    actions: list[Action] | None = Field(default=None, max_length=MAX_ACTIONS)
    delay: str | None = Field(
        default=None, description="Deliver later: 30s, 10m, 2h, 1d (10 s to 3 days) or a Unix time"
    )

    @field_validator("message")
    @classmethod
    def _size(cls, value: str | None) -> str | None:
        if value is not None and len(value.encode()) > MAX_MESSAGE_BYTES:
            raise ValueError(f"message is longer than {MAX_MESSAGE_BYTES} bytes of UTF-8")
        return value

    @field_validator("tags")
    @classmethod
    def _tags(cls, value: list[str] | None) -> list[str] | None:
        for tag in value or []:
            if "," in tag:
                raise ValueError(f"tags: {quoted_name(tag)} contains a comma")
        return value

    @field_validator("click", "icon", "attach")
    @classmethod
    def _urls(cls, value: str | None, info: Any) -> str | None:
        return None if value is None else _check_url(info.field_name, value)

    @model_validator(mode="after")
    def _filename_needs_attach(self) -> Content:
        if self.filename is not None and self.attach is None:
            raise ValueError("filename is only meaningful together with attach")
        return self

    def set_fields(self) -> list[str]:
        """Names of the fields this content sets, in declaration order."""
        return [name for name in type(self).model_fields if getattr(self, name) is not None]

    def to_ntfy(self, now: float | None = None) -> dict[str, Any]:
        """Ntfy's JSON publish body (without ``topic``) (ntfy docs, "Publish as JSON").

        Raises:
            InputError: a priority or delay that breaks its rule.
        """
        body: dict[str, Any] = self.model_dump(exclude_none=True, exclude={"priority", "delay", "actions"})
        if self.priority is not None:
            body["priority"] = priority_number(self.priority)
        if self.delay is not None:
            body["delay"] = str(delay_to_unix(self.delay, now))
        if self.actions is not None:
            body["actions"] = [action.model_dump() for action in self.actions]
        return body
