"""One whole answer of a WebDAV server, read within the size limit."""

from __future__ import annotations

from dataclasses import dataclass

import httpx2 as httpx

__all__ = ["Answer"]


@dataclass(frozen=True)
class Answer:
    """A whole answer, read within the size limit: status, headers and body bytes."""

    status_code: int
    headers: httpx.Headers
    content: bytes
    url: str = ""
    """The URL that answered (after same-origin redirects)."""

    @property
    def media_type(self) -> str:
        """The Content-Type without parameters, lower case ("" when absent)."""
        return self.headers.get("Content-Type", "").split(";", 1)[0].strip().lower()

    @property
    def text(self) -> str:
        """The body decoded with the Content-Type's charset (default UTF-8; undecodable bytes replaced)."""
        charset = "utf-8"
        for param in self.headers.get("Content-Type", "").split(";")[1:]:
            name, _, value = param.partition("=")
            if name.strip().lower() == "charset" and value.strip():
                charset = value.strip().strip('"')
        try:
            return self.content.decode(charset, errors="replace")
        except LookupError:
            return self.content.decode("utf-8", errors="replace")
