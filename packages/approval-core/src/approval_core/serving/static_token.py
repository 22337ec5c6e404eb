"""What a client without the right static bearer token is told (``MCP_AUTH_TOKEN_FILE``).

With a static token there is no authorization server: the RFC 9728 document
names none (its ``authorization_servers`` is optional, §2). Clients that
find none fall back to the MCP server's own origin as the authorization
server (MCP authorization, 2025-11-25, and the 2025-03-26 fallback), look for
its RFC 8414 metadata and then try RFC 7591 dynamic client registration at
``/register``. Behind bearer authentication those answered 401, which
clients report as "Dynamic Client Registration rejected (HTTP 401)": a
missing token read as a failed sign-in. So, with a static token only:

* the 401 of the endpoint says that a bearer token is missing or wrong, in
  its ``WWW-Authenticate`` ``error_description`` (RFC 6750 §3) and its body;
* ``/.well-known/oauth-authorization-server...`` and
  ``/.well-known/openid-configuration...`` answer 404 with the same words;
* ``/register`` answers 400 ``invalid_client_metadata`` (RFC 7591 §3.2.2)
  with the same words, which clients show beside their own error.

Nothing else changes: every other request still needs the token.
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import BaseRoute, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["StaticTokenChallenge", "missing_token_text", "static_token_routes"]


def missing_token_text(server_name: str) -> str:
    """The words every answer to a client without the right token carries."""
    return (
        f"{server_name} takes one static bearer token and registers no OAuth clients: the bearer token is "
        "missing or wrong. Send it as 'Authorization: Bearer <token>' (the token in the server's "
        "MCP_AUTH_TOKEN_FILE)."
    )


def static_token_routes(server_name: str) -> list[BaseRoute]:
    """The RFC 8414 metadata paths (404) and ``/register`` (400), each saying what to send instead."""
    text = missing_token_text(server_name)

    async def no_metadata(_: Request) -> JSONResponse:
        return JSONResponse({"error": "not_found", "error_description": text}, status_code=404)

    async def no_registration(_: Request) -> JSONResponse:
        return JSONResponse({"error": "invalid_client_metadata", "error_description": text}, status_code=400)

    return [
        Route("/.well-known/oauth-authorization-server{rest:path}", no_metadata, methods=["GET"]),
        Route("/.well-known/openid-configuration{rest:path}", no_metadata, methods=["GET"]),
        Route("/register", no_registration, methods=["POST"]),
    ]


class StaticTokenChallenge:
    """Rewrites the SDK's 401 ``Authentication required`` into :func:`missing_token_text` (header and body)."""

    def __init__(self, app: ASGIApp, server_name: str) -> None:
        self.app = app
        text = missing_token_text(server_name)
        self.body = JSONResponse({"error": "invalid_token", "error_description": text}).body
        self.described = f'error_description="{text}"'.encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on; a 401 going back gets this module's words (header and body)."""
        refused = False

        async def send_explained(message: Message) -> None:
            nonlocal refused
            if message["type"] == "http.response.start" and message["status"] == 401:
                refused = True
                headers = [
                    (name, self._challenge(value) if name.lower() == b"www-authenticate" else value)
                    for name, value in message.get("headers", [])
                    if name.lower() != b"content-length"
                ]
                message = {**message, "headers": [*headers, (b"content-length", str(len(self.body)).encode())]}
            elif message["type"] == "http.response.body" and refused:
                message = {"type": "http.response.body", "body": self.body, "more_body": False}
            await send(message)

        await self.app(scope, receive, send_explained)

    def _challenge(self, value: bytes) -> bytes:
        return value.replace(b'error_description="Authentication required"', self.described)
