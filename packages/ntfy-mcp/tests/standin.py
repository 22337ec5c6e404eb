"""An in-process STAND-IN for an ntfy server: only for what the real server here cannot do on demand.

The real ntfy the tests build is whatever version could be had (see
testing/ntfy_server.py). This stand-in plays:

* a server of a chosen version, older or newer than 2.16, including the
  2.16+ sequence routes (update by ``sequence_id``, ``PUT /<topic>/<sid>/clear``,
  ``DELETE /<topic>/<sid>``) as ntfy-mcp understands them;
* faults: every request answered with a 5xx, or never answered (a timeout).

It is not ntfy. Its behaviour is the project's understanding of ntfy; the
real server is the reference wherever it can be used.
"""

from __future__ import annotations

import json
import secrets
import time
from dataclasses import dataclass, field
from typing import Any

import httpx2


@dataclass
class NtfyStandIn:
    """State and behaviour of the stand-in; ``transport`` plugs it into ntfy-mcp."""

    version: str | None = "2.17.0"
    version_visible: bool = True  # False: /v1/version answers 404 (ntfy 2.16, or not an admin)
    fault: str | None = (
        None  # "5xx", "timeout", or "stream" (the transport breaks in a way httpx2 calls a stream error)
    )
    events: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    requests: list[tuple[str, str]] = field(default_factory=list)
    users: dict[str, dict[str, Any]] = field(default_factory=lambda: {"admin": {"username": "admin", "role": "admin"}})

    @property
    def transport(self) -> httpx2.MockTransport:
        return httpx2.MockTransport(self.handle)

    @property
    def sequences(self) -> bool:
        return self.version is not None and tuple(int(p) for p in self.version.split(".")) >= (2, 16, 0)

    def publish(self, topic: str, message: str, **extra: Any) -> dict[str, Any]:
        """Put a message on ``topic`` as if someone had published it."""
        return self._store(topic, {"message": message, **extra})

    def _store(self, topic: str, body: dict[str, Any], event: str = "message") -> dict[str, Any]:
        mid = secrets.token_hex(6)
        msg: dict[str, Any] = {"id": mid, "time": int(time.time()), "event": event, "topic": topic}
        delay = body.pop("delay", None)
        if delay is not None:
            msg["time"] = int(delay)
        msg.update({k: v for k, v in body.items() if k not in {"topic", "sequence_id"}})
        if self.sequences:
            msg["sequence_id"] = body.get("sequence_id") or mid
        self.events.setdefault(topic, []).append(msg)
        return msg

    def _error(self, status: int, code: int, text: str) -> httpx2.Response:
        return httpx2.Response(status, json={"code": code, "http": status, "error": text})

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        method, path = request.method, request.url.path
        self.requests.append((method, path))
        if self.fault == "timeout":
            raise httpx2.ReadTimeout("stand-in: no answer", request=request)
        if self.fault == "stream":
            raise httpx2.StreamClosed()
        if self.fault == "5xx":
            return self._error(503, 50301, "service unavailable")
        parts = [p for p in path.split("/") if p]
        body = json.loads(request.content) if request.content else {}
        if method == "GET" and path == "/v1/version":
            if self.version is None or not self.version_visible:
                return self._error(404, 40401, "page not found")
            return httpx2.Response(200, json={"version": self.version, "commit": "standin", "date": ""})
        if method == "GET" and path == "/v1/health":
            return httpx2.Response(200, json={"healthy": True})
        if method == "GET" and path == "/v1/stats":
            return httpx2.Response(200, json={"messages": sum(map(len, self.events.values())), "messages_rate": 0})
        if method == "GET" and path == "/v1/account":
            return httpx2.Response(200, json={"username": "admin", "role": "admin"})
        if method == "GET" and path == "/v1/users":
            return httpx2.Response(200, json=list(self.users.values()))
        if method == "POST" and path == "/":
            if request.headers.get("X-Sequence-ID", body.get("sequence_id")) != body.get("sequence_id"):
                return self._error(400, 40000, "stand-in: header and field disagree")
            if "sequence_id" in body and self.sequences:
                topic_events = self.events.get(body["topic"], [])
                pending = [e for e in topic_events if e.get("sequence_id") == body["sequence_id"]]
                if pending and pending[-1]["time"] > time.time():
                    topic_events.remove(pending[-1])
            return httpx2.Response(200, json=self._store(body["topic"], dict(body)))
        if method == "GET" and len(parts) == 2 and parts[1] == "json":
            found = [e for t in parts[0].split(",") for e in self.events.get(t, [])]
            wanted = request.url.params.get("id")
            found = [e for e in found if wanted is None or e["id"] == wanted or e["event"] != "message"]
            if request.url.params.get("scheduled") != "1":
                # a time that is no number (a test's wrong value) is handed on as it is, for the client to refuse
                found = [e for e in found if not isinstance(e["time"], (int, float)) or e["time"] <= time.time()]
            return httpx2.Response(200, text="".join(json.dumps(e) + "\n" for e in found))
        if self.sequences and len(parts) >= 2:
            topic, sid = parts[0], parts[1]
            if method == "PUT" and len(parts) == 3 and parts[2] == "clear":
                return httpx2.Response(200, json=self._store(topic, {"sequence_id": sid}, "message_clear"))
            if method == "DELETE" and len(parts) == 2:
                events = self.events.get(topic, [])
                for e in [e for e in events if e.get("sequence_id") == sid and e["time"] > time.time()]:
                    events.remove(e)  # a scheduled one is cancelled
                return httpx2.Response(200, json=self._store(topic, {"sequence_id": sid}, "message_delete"))
        return self._error(404, 40401, "page not found")

    def messages(self, topic: str) -> list[dict[str, Any]]:
        return list(self.events.get(topic, []))
