"""One error boundary per server: every failure of a tool becomes a tool error that says what failed.

``MCPServer`` (mcp 2.x) reports an exception that is not a ``ToolError`` as
``Error executing tool <name>`` and nothing else, and logs its traceback: the
model and the person learn only that something broke. A server of the family
calls :func:`install_error_boundary` once, naming the base class of its own
errors (whose messages are written for the model) and, optionally, a
translator for library exceptions it knows. Then:

* the server's own errors reach the caller with their text (without the
  SDK's ``Error executing tool <name>:`` prefix), logged at INFO without a
  traceback (a handled case);
* an exception the translator recognises becomes the server's own error;
* anything else is a defect: the caller is told which tool stopped, on what
  kind of error, and that whether the backend changed is unknown; the
  traceback goes to the log once, at ERROR.

* arguments that break the tool's input schema are refused in the server's
  words: each field's path, the value sent and what the field allows
  (:func:`approval_core.asking.arguments.explain`), instead of pydantic's dump; a value sent that is
  not of a plain name's shape is quoted fenced (:func:`~approval_core.serving.stored_text.quoted_name`);
* an argument the tool does not take is refused before the tool runs, naming
  it and the arguments the tool takes (:func:`unknown_arguments`): the SDK
  would drop it silently, so ``calendar`` sent for ``calendars`` would search
  every calendar, and a misspelt field of an edit would be left out of it.

``MCPError`` (a protocol-level error) passes through unchanged.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp_types import CallToolResult, InputRequiredResult
from pydantic import ValidationError

from approval_core.asking.arguments import explain
from approval_core.serving.progress import bind_call, unbind_call
from approval_core.serving.stored_text import quoted_name

__all__ = ["Translator", "install_error_boundary", "unknown_arguments"]

logger = logging.getLogger("approval_core.boundary")

Translator = Callable[[Exception], Exception | None]
"""Maps a library exception onto the server's own error, or returns None when it does not know it."""

_MARK = "_approval_core_boundary"


def _unexpected(tool: str, exc: BaseException) -> ToolError:
    return ToolError(
        f"{tool} stopped on an unexpected internal error ({type(exc).__name__}); the server's log has the "
        "details. Whether anything was changed is not known: read the entry again before retrying."
    )


def unknown_arguments(tool: str, arguments: dict[str, Any], schema: dict[str, Any]) -> str | None:
    """The refusal of a call that sends an argument ``tool`` does not take, or None when it sends none.

    Args:
        tool: The tool's name.
        arguments: The call's arguments, as the client sent them.
        schema: The tool's input schema (its top-level ``properties`` are the arguments it takes).

    Returns:
        ``<tool> was not run: it takes no argument named 'x' ...``, naming each unknown argument and every
        argument the tool takes, or None.
    """
    taken = list(schema.get("properties") or {})
    unknown = [name for name in arguments if name not in taken]
    if not unknown:
        return None
    names = ", ".join(quoted_name(name) for name in unknown)  # a name of words: fenced, as a value is
    takes = f"its arguments are {', '.join(taken)}" if taken else "it takes no arguments"
    plural = "argument" if len(unknown) == 1 else "arguments"
    return f"{tool} was not run: it takes no {plural} named {names}; {takes}. Nothing was sent to the backend."


def install_error_boundary(
    server: MCPServer[Any],
    own: type[Exception] | tuple[type[Exception], ...],
    translate: Translator | None = None,
) -> None:
    """Make every tool failure of ``server`` a clear tool error (see the module docstring).

    Idempotent: a second call on the same server changes nothing.

    Args:
        server: The server whose tools are wrapped.
        own: The base class(es) of the server's own errors; their message is
            shown as it is (``()`` for a server that raises only ``ToolError``).
        translate: Optional: turns a library exception into one of the
            server's own errors, or returns None.
    """
    if getattr(server, _MARK, False):
        return
    original = server.call_tool
    schemas: dict[str, dict[str, Any]] = {}

    async def call_tool(
        name: str, arguments: dict[str, Any], context: Context[Any, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        if not schemas:
            schemas.update({tool.name: dict(tool.input_schema) for tool in await server.list_tools()})
        if name in schemas and (refusal := unknown_arguments(name, arguments or {}, schemas[name])):
            logger.info("%s refused an unknown argument", name)
            raise ToolError(refusal)
        bound = bind_call(context)  # for report_progress, anywhere below the tool
        try:
            return await original(name, arguments, context)
        except UnexpectedToolError as wrapper:
            cause = wrapper.__cause__
            if not isinstance(cause, Exception):
                raise
            mapped: Exception | None = cause if isinstance(cause, own) else None
            if mapped is None and translate is not None:
                mapped = translate(cause)
            if mapped is not None:
                logger.info("%s failed: %s", name, type(mapped).__name__)
                raise ToolError(str(mapped)) from cause
            logger.error("%s stopped on an unexpected error", name, exc_info=cause)
            raise _unexpected(name, cause) from cause
        except ToolError as exc:
            if isinstance(exc.__cause__, ValidationError):
                logger.info("%s refused its arguments", name)
                raise ToolError(explain(name, exc.__cause__, schemas.get(name, {}), quoted_name)) from exc.__cause__
            # The SDK puts "Error executing tool <name>: " before a ToolError's own text; the message is
            # already written for the caller, so it goes out as it was raised.
            prefix = f"Error executing tool {name}: "
            text = str(exc)
            if not text.startswith(prefix):
                raise
            raise ToolError(text[len(prefix) :]) from (exc.__cause__ or exc)
        finally:
            unbind_call(bound)

    server.call_tool = call_tool  # type: ignore[method-assign]
    setattr(server, _MARK, True)
