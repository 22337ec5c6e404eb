"""caldav-mcp as a remote service: three replicas behind HAProxy, one Redis, one Radicale, all real.

The deployment of ``docs/deploy.md`` (``testing/remote_stack.py``): every
replica runs ``caldav-mcp`` over Streamable HTTP with JWT authentication
(a local issuer's JWKS), ``APPROVAL_STORE_URL`` on one Redis and one shared
``APPROVAL_KEY_FILE``; HAProxy balances round robin and keeps a 2025-11-25
session on its replica. Each response names its replica (``X-Backend``), so
every proof asserts which replica minted a question and which one took the
answer. What changed is read from Radicale itself, never from the server
under test.

Single use is proved with the same version: after an approved delete, the
test puts the entry back byte for byte (Radicale's ETag is a hash of the
content, so the entry has the same ETag it had when the question was asked).
A replayed answer or token is then refused only because it was spent.
"""

from __future__ import annotations

import datetime
import json
import re
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import anyio
import defusedxml.ElementTree as SafeET
import haproxy
import httpx2
import mcp_types as types
import pytest
import token_issuer
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID
from remote_stack import CALENDARS, HEALTH_CHECK_PATH, Stack, remote_stack
from replica_client import call_tool_json, http_client

from approval_core.testing import accept, approval_of, call_once, ticked

pytestmark = pytest.mark.anyio

WORK = CALENDARS[0]
DAV = "{DAV:}"


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    with remote_stack(tmp_path_factory.mktemp("remote"), count=3, store="redis", auth="jwt") as running:
        yield running


# ---------------------------------------------------------------------------- Radicale, read directly


def snapshot(stack: Stack) -> dict[str, str]:
    """Every entry of both calendars: href → ETag, read from Radicale (PROPFIND, Depth 1)."""
    body = '<?xml version="1.0"?><d:propfind xmlns:d="DAV:"><d:prop><d:getetag/></d:prop></d:propfind>'
    entries: dict[str, str] = {}
    with stack.dav() as dav:
        for calendar in CALENDARS:
            answer = dav.request("PROPFIND", calendar, content=body, headers={"Depth": "1"})
            assert answer.status_code == 207, answer.text
            for response in SafeET.fromstring(answer.content).iter(f"{DAV}response"):
                href = response.findtext(f"{DAV}href") or ""
                etag = response.findtext(f".//{DAV}getetag")
                if href.endswith(".ics") and etag:
                    entries[href] = etag
    return entries


def ics(uid: str, summary: str) -> bytes:
    return (
        "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//remote proof//EN\r\nBEGIN:VEVENT\r\n"
        f"UID:{uid}\r\nDTSTAMP:20261201T090000Z\r\nDTSTART:20261207T120000Z\r\nDTEND:20261207T130000Z\r\n"
        f"SUMMARY:{summary}\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n"
    ).encode()


def put_event(stack: Stack, calendar: str, uid: str, summary: str = "Remote proof") -> tuple[str, str]:
    """Store an event straight into Radicale; its href and ETag."""
    href = f"{calendar}{uid}.ics"
    with stack.dav() as dav:
        made = dav.put(href, content=ics(uid, summary), headers={"Content-Type": "text/calendar", "If-None-Match": "*"})
    assert made.status_code == 201, made.text
    return href, snapshot(stack)[href]


def event(stack: Stack, summary: str = "Remote proof") -> tuple[dict[str, Any], str, str]:
    """A fresh event in the work calendar: the delete_event arguments, its href and its ETag."""
    uid = f"proof-{uuid.uuid4().hex}"
    href, etag = put_event(stack, WORK, uid, summary)
    return {"calendar": WORK, "id": uid}, href, etag


def put_back(stack: Stack, arguments: dict[str, Any], href: str, etag: str) -> None:
    """Store the deleted event again, byte for byte; it must have the ETag it had before."""
    _, again = put_event(stack, WORK, arguments["id"])
    assert again == etag, "Radicale gave the same content another ETag: a replay would not meet the same version"


def audit(stack: Stack, name: str | None, event: str) -> dict[str, str]:
    """The last audit record (approval-core's ``approval {...}`` line on stderr) of ``event`` by replica ``name``."""
    assert name is not None, "no replica named itself (X-Backend)"
    records = []
    for line in stack.replicas[name].log.read_text(errors="replace").splitlines():
        _, found, record = line.partition("approval {")
        if found:
            records.append(json.loads("{" + record))
    matching = [r for r in records if r["event"] == event]
    assert matching, f"{name} logged no {event}: {records}"
    return matching[-1]


# ---------------------------------------------------------------------------- 1. a question answered elsewhere


async def test_a_question_minted_by_one_replica_is_answered_through_another_once(stack: Stack) -> None:
    arguments, href, etag = event(stack)
    async with http_client(stack.url, stack.token, revision="2026-07-28", answer=accept) as (client, seen):
        await client.listed_tool("delete_event")  # the checking client lists the tools now, not between two calls
        question = await call_once(client, "delete_event", arguments)
        assert isinstance(question, types.InputRequiredResult), question
        minted_by = seen.last()
        before = snapshot(stack)

        answered = await call_once(
            client, "delete_event", arguments, answer=ticked, request_state=question.request_state
        )
        assert isinstance(answered, types.CallToolResult), answered
        assert not answered.is_error, answered
        answered_by = seen.last()
        assert answered_by != minted_by, f"question and answer both went to {minted_by}: {seen.exchanges}"
        after = snapshot(stack)
        assert set(before) - set(after) == {href}, "exactly the one event is gone"
        assert {h: e for h, e in before.items() if h != href} == after, "nothing else changed"

        put_back(stack, arguments, href, etag)
        restored = snapshot(stack)
        replayed = await call_once(
            client, "delete_event", arguments, answer=ticked, request_state=question.request_state
        )
        replayed_by = seen.last()
    assert replayed_by not in (minted_by, answered_by), f"the replay did not reach a third replica: {seen.exchanges}"
    assert isinstance(replayed, types.InputRequiredResult), f"a spent answer was taken again: {replayed}"
    assert snapshot(stack) == restored, "the replay changed something"
    # Refused for being spent, and for the very binding the other replica approved (not for another target).
    refused, approved = audit(stack, replayed_by, "state_refused"), audit(stack, answered_by, "approved")
    assert (refused["reason"], refused["fp"]) == ("spent", approved["fp"]), (refused, approved)


async def test_one_answer_sent_through_two_replicas_at_once_is_taken_once(stack: Stack) -> None:
    arguments, href, _ = event(stack)
    async with (
        http_client(stack.url, stack.token, revision="2026-07-28", answer=accept) as (first, seen_first),
        http_client(stack.url, stack.token, revision="2026-07-28", answer=accept) as (second, seen_second),
    ):
        for client in (first, second):
            await client.listed_tool("delete_event")  # the checking clients list the tools now, not in the race
        question = await call_once(first, "delete_event", arguments)
        assert isinstance(question, types.InputRequiredResult), question
        results: dict[int, types.CallToolResult | types.InputRequiredResult] = {}

        async def answer(index: int, client: Any) -> None:
            state = question.request_state
            results[index] = await call_once(client, "delete_event", arguments, answer=ticked, request_state=state)

        async with anyio.create_task_group() as race:  # the same answer, twice, at the same moment
            race.start_soon(answer, 0, first)
            race.start_soon(answer, 1, second)
        by = (seen_first.last(), seen_second.last())
    assert by[0] != by[1], f"both answers reached {by[0]}"
    approved = [i for i, r in results.items() if isinstance(r, types.CallToolResult) and not r.is_error]
    assert len(approved) == 1, results
    assert href not in snapshot(stack)
    fingerprint = audit(stack, by[approved[0]], "approved")["fp"]
    everywhere = [line for name in stack.replicas.names for line in stack.replicas[name].log.read_text().splitlines()]
    assert sum('"event":"approved"' in line and fingerprint in line for line in everywhere) == 1
    # The other answer was refused: spent by its rival, or (if it came second) its event was already gone.
    other = results[1 - approved[0]]
    assert isinstance(other, types.InputRequiredResult) or other.is_error, other


# ---------------------------------------------------------------------------- 2. a token redeemed elsewhere


async def test_a_token_issued_by_one_replica_is_redeemed_through_another_once(stack: Stack) -> None:
    arguments, href, etag = event(stack)
    # A client that declares no elicitation gets the two-call confirm token.
    async with http_client(stack.url, stack.token, revision="2026-07-28") as (client, seen):
        await client.listed_tool("delete_event")  # the checking client lists the tools now, not between two calls
        issued = approval_of(await client.call_tool("delete_event", arguments))
        assert issued["outcome"] == "token_issued", issued
        issued_by = seen.last()
        before = snapshot(stack)

        redeemed = await client.call_tool("delete_event", {**arguments, "confirm_token": issued["confirm_token"]})
        assert not redeemed.is_error, redeemed
        redeemed_by = seen.last()
        assert redeemed_by != issued_by, f"issued and redeemed on {issued_by}: {seen.exchanges}"
        assert set(before) - set(snapshot(stack)) == {href}

        put_back(stack, arguments, href, etag)
        restored = snapshot(stack)
        again = approval_of(
            await client.call_tool("delete_event", {**arguments, "confirm_token": issued["confirm_token"]})
        )
        again_by = seen.last()
    assert again_by not in (issued_by, redeemed_by), seen.exchanges
    assert again["outcome"] == "token_refused", again
    assert snapshot(stack) == restored, "a spent token changed something"
    refused, redeemed = audit(stack, again_by, "token_refused"), audit(stack, redeemed_by, "token_redeemed")
    assert refused["fp"] == redeemed["fp"], (refused, redeemed)


# ---------------------------------------------------------------------------- 3. a restart in between


async def test_an_answer_survives_a_restart_of_the_replica_and_stays_single_use(stack: Stack) -> None:
    arguments, href, etag = event(stack)
    proxy = stack.proxy
    assert proxy is not None
    names = stack.replicas.names
    async with http_client(stack.url, stack.token, revision="2026-07-28", answer=accept) as (client, seen):
        await client.listed_tool("delete_event")  # the checking client lists the tools now, not between two calls
        question = await call_once(client, "delete_event", arguments)
        assert isinstance(question, types.InputRequiredResult), question
        minted_by = str(seen.last())
        first_start = stack.replicas[minted_by].starts

        stack.replicas.restart(minted_by)  # a new process: nothing it held in memory is left
        assert stack.replicas[minted_by].starts == first_start + 1
        proxy.only(minted_by, names)  # through the proxy, but only to the restarted replica
        try:
            answered = await call_once(
                client, "delete_event", arguments, answer=ticked, request_state=question.request_state
            )
            assert seen.last() == minted_by
            assert isinstance(answered, types.CallToolResult), answered
            assert not answered.is_error, answered
            assert href not in snapshot(stack)

            put_back(stack, arguments, href, etag)
            restored = snapshot(stack)
            stack.replicas.restart(minted_by)
            proxy.only(minted_by, names)
            replayed = await call_once(
                client, "delete_event", arguments, answer=ticked, request_state=question.request_state
            )
            assert seen.last() == minted_by
        finally:
            proxy.all(names)
    assert isinstance(replayed, types.InputRequiredResult), f"a spent answer was taken after a restart: {replayed}"
    assert snapshot(stack) == restored
    refused, approved = audit(stack, minted_by, "state_refused"), audit(stack, minted_by, "approved")
    assert (refused["reason"], refused["fp"]) == ("spent", approved["fp"]), (refused, approved)


# ---------------------------------------------------------------------------- 4. Redis away and back


async def test_without_redis_guarded_calls_are_refused_and_reads_still_work(stack: Stack) -> None:
    names = stack.replicas.names
    events = [event(stack) for _ in names]
    arguments = events[0][0]
    redis = stack.redis
    assert redis is not None
    async with http_client(stack.url, stack.token, revision="2026-07-28", answer=accept) as (client, seen):
        await client.listed_tool("delete_event")  # the checking client lists the tools now, not between two calls
        redis.stop()
        try:
            before = snapshot(stack)
            refusals = []
            for _ in names:  # one call per replica (round robin)
                refusals.append(approval_of(await client.call_tool("delete_event", arguments)))
            refused_by = seen.backends()[-len(names) :]
            window = {"calendar": WORK, "start": "2026-12-07", "end": "2026-12-08"}
            for _ in names:
                reads = await client.call_tool("list_events", window)
                assert not reads.is_error, reads
                assert arguments["id"] in [e["uid"] for e in reads.structured_content["events"]]
            read_by = seen.backends()[-len(names) :]
            assert snapshot(stack) == before, "a guarded call changed something without the store"
        finally:
            redis.start()
        done = []
        for other, _, _ in events:  # one guarded call per replica again, each approved
            done.append(await client.call_tool("delete_event", other))
        done_by = seen.backends()[-2 * len(names) :: 2]  # each call: the question, then the answer
    assert sorted(map(str, refused_by)) == sorted(names), refused_by
    assert sorted(map(str, read_by)) == sorted(names), read_by
    assert [r["outcome"] for r in refusals] == ["store_unavailable"] * len(names), refusals
    assert all(not result.is_error for result in done), done
    assert len(set(done_by)) == len(names), done_by
    assert not {href for _, href, _ in events} & set(snapshot(stack)), "an approved delete did not happen"


# ---------------------------------------------------------------------------- 5. who may call at all


def raw_call(
    stack: Stack, token: str | None, headers: dict[str, str] | None = None, summary: str = ""
) -> httpx2.Response:
    """A 2026-07-28 create_event POSTed by hand through the proxy (it would store an event if it ran)."""
    sent = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",  # the 2026-07-28 routing headers, as the SDK client sends them
        "Mcp-Name": "create_event",
        **(headers or {}),
    }
    if token is not None:
        sent["Authorization"] = f"Bearer {token}"
    body = call_tool_json(
        "create_event",
        {"calendar": WORK, "summary": summary, "start": "2026-12-09T09:00:00Z", "end": "2026-12-09T10:00:00Z"},
    )
    return httpx2.post(stack.url, json=body, headers=sent, timeout=60)


def _slow_sockets(port: int, count: int, source: str) -> tuple[list[socket.socket], int]:
    """Open ``count`` connections from ``source`` that start a request's headers and never finish them.

    Returns the sockets the proxy kept open (so far) and how many it refused or reset at once.
    """
    opened: list[socket.socket] = []
    refused = 0
    for _ in range(count):
        try:
            sock = socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(source, 0))
        except OSError:
            refused += 1
            continue
        try:
            sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: 1\r\n")
        except OSError:
            refused += 1
            sock.close()
            continue
        opened.append(sock)
    return opened, refused


def _closed_by_peer(sock: socket.socket, within: float) -> bool:
    """Whether the proxy closed ``sock`` (EOF, a reset, or a 408 answer then EOF) within ``within`` seconds."""
    sock.settimeout(within)
    try:
        while sock.recv(4096):
            pass
    except TimeoutError:
        return False
    except OSError:
        return True
    return True


def test_slow_headers_through_haproxy_leave_valid_calls_answered(stack: Stack) -> None:
    """Slowloris through the documented proxy: per-address limit, header deadline, and a valid call meanwhile."""
    issuer = stack.issuer
    assert issuer is not None
    port = int(stack.url.split(":")[2].split("/")[0])
    slow, refused = _slow_sockets(port, haproxy.PER_SOURCE + 20, source="127.0.0.2")
    try:
        started = time.monotonic()
        listed = httpx2.post(
            stack.url,
            json={**call_tool_json("list_calendars", {}), "id": 7},
            headers={
                "Content-Type": "application/json",
                "Accept": "application/json, text/event-stream",
                "MCP-Protocol-Version": "2026-07-28",
                "Mcp-Method": "tools/call",
                "Mcp-Name": "list_calendars",
                "Authorization": f"Bearer {issuer.token(stack.url)}",
            },
            timeout=30,
        )
        assert listed.status_code == 200, listed.text
        assert WORK.strip("/").split("/")[-1] in listed.text
        refused += sum(_closed_by_peer(sock, 0.5) for sock in slow)
        assert refused >= 20, "connections beyond the per-address limit are refused at once"
        assert all(_closed_by_peer(sock, 15) for sock in slow), "the header deadline closes the rest"
        assert time.monotonic() - started < 20
    finally:
        for sock in slow:
            sock.close()


def summaries(stack: Stack) -> str:
    with stack.dav() as dav:
        return "".join(dav.get(href).text for href in snapshot(stack))


def test_without_a_valid_token_or_with_a_foreign_origin_no_tool_runs(stack: Stack) -> None:
    issuer = stack.issuer
    assert issuer is not None
    public = stack.url
    forged = token_issuer.new_key()  # a key the issuer never published
    cases = {
        "no token": (None, {}),
        "a wrong token": ("not-a-token-" + uuid.uuid4().hex, {}),
        "a token signed by another key": (
            issuer.token(public, signing_key=forged),
            {},
        ),
        "another audience": (issuer.token("https://other.example.org/mcp"), {}),
        "an expired token": (issuer.token(public, expires_in=-120), {}),
        "a foreign Origin": (stack.token, {"Origin": "https://evil.example.org"}),
    }
    statuses: dict[str, int] = {}
    for case, (token, headers) in cases.items():
        statuses[case] = raw_call(stack, token, headers, summary=f"Should not exist {case}").status_code
    for case, status in statuses.items():
        expected = 403 if case == "a foreign Origin" else 401
        assert status == expected, f"{case}: HTTP {status}, expected {expected}"
    assert "Should not exist" not in summaries(stack), "a refused request ran a tool"
    # The same request with the valid token and no foreign Origin does run: the refusals above were the checks.
    allowed = raw_call(stack, stack.token, summary="Allowed control")
    assert allowed.status_code == 200, allowed.text
    assert "Allowed control" in summaries(stack)


def test_a_refusal_points_to_the_resource_metadata(stack: Stack) -> None:
    refused = raw_call(stack, None, summary="Should not exist either")
    challenge = refused.headers.get("WWW-Authenticate", "")
    assert refused.status_code == 401, refused.text
    assert challenge.startswith("Bearer"), challenge
    assert "resource_metadata=" in challenge
    metadata = httpx2.get(f"{stack.url.removesuffix('/mcp')}/.well-known/oauth-protected-resource/mcp", timeout=30)
    assert metadata.status_code == 200
    assert metadata.json()["resource"] == stack.url


# ---------------------------------------------------------------------------- 2025-11-25 with affinity


async def test_a_pushed_dialog_is_answered_on_the_sessions_replica(stack: Stack) -> None:
    arguments, href, _ = event(stack)
    async with http_client(stack.url, stack.token, revision="2025-11-25", answer=accept) as (client, seen):
        for _ in range(3):  # more requests than replicas: round robin alone would spread them
            listed = await client.call_tool("list_calendars", {})
            assert not listed.is_error
        before = snapshot(stack)
        done = await client.call_tool("delete_event", arguments)
    assert not done.is_error, done
    assert set(before) - set(snapshot(stack)) == {href}
    in_session = {e.backend for e in seen.exchanges if e.session is not None}
    answers = [e for e in seen.exchanges if e.method == "response"]
    assert answers, f"no dialog answer was posted: {seen.exchanges}"
    assert len(in_session) == 1, f"one session, several replicas: {seen.exchanges}"
    assert len([e for e in seen.exchanges if e.session is not None]) > len(stack.replicas.names)


def session_steps(url: str, token: str, host: str) -> tuple[str | None, str | None, int]:
    """A 2025-11-25 ``initialize`` and the ``notifications/initialized`` that follows it, POSTed by hand.

    ``host``: the Host header (the replicas accept only their public URL's). Returns the replica that created
    the session, the replica the second request reached, and the second request's status.
    """
    headers = {
        "Host": host,
        "Authorization": f"Bearer {token}",
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "proof", "version": "1"},
        },
    }
    with httpx2.Client(headers=headers, timeout=60) as http:
        created = http.post(url, json=hello)
        assert created.status_code == 200, created.text
        session = created.headers["mcp-session-id"]
        follow = http.post(
            url,
            json={"jsonrpc": "2.0", "method": "notifications/initialized"},
            headers={"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"},
        )
        http.delete(url, headers={"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"})
    return created.headers.get("X-Backend"), follow.headers.get("X-Backend"), follow.status_code


def test_a_session_needs_the_stick_table(stack: Stack, tmp_path: Path) -> None:
    members = [(r.name, "127.0.0.1", r.port) for r in stack.replicas.members]
    host = urlsplit(stack.url).netloc  # the Host the replicas expect: their MCP_PUBLIC_URL's
    sticky = session_steps(stack.url, stack.token, host)
    # A second HAProxy in front of the same replicas, the same configuration without the stick table.
    with haproxy.haproxy(tmp_path, members, affinity=False) as loose_proxy:
        loose = session_steps(f"{loose_proxy.url}/mcp", stack.token, host)
    assert sticky[0] == sticky[1], sticky
    assert sticky[2] == 202, sticky
    # Round robin alone sends the session's second request to another replica, which does not know it.
    assert loose[0] != loose[1], loose
    assert loose[2] == 404, loose


# ---------------------------------------------------------------------------- the documented configuration

DOC_REPLICAS = [("r1", "10.0.0.11", 8000), ("r2", "10.0.0.12", 8000), ("r3", "10.0.0.13", 8000)]
DOC_CERTIFICATE = "/etc/haproxy/certs/cal.example.org.pem"
DOC_BIND = f":443 ssl crt {DOC_CERTIFICATE} alpn h2,http/1.1"


def self_signed(folder: Path) -> Path:
    """A certificate and its key for 127.0.0.1 in one PEM file, as HAProxy's ``crt`` takes them."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "cal.example.org")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now)
        .not_valid_after(now + datetime.timedelta(days=1))
        .sign(key, hashes.SHA256())
    )
    path = folder / "cal.example.org.pem"
    key_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM) + key_pem)
    return path


def test_the_documented_haproxy_configuration_is_the_one_the_proofs_run(tmp_path: Path) -> None:
    page = (Path(__file__).resolve().parents[1] / "docs" / "deploy.md").read_text()
    blocks = re.findall(r"```haproxy\n(.*?)```", page, flags=re.DOTALL)
    assert len(blocks) == 1, f"docs/deploy.md shows {len(blocks)} HAProxy configurations, expected one"
    # The proofs' configuration, with the documented addresses and TLS on the frontend: nothing else differs.
    expected = haproxy.config_text(DOC_REPLICAS, bind=DOC_BIND, health_check_path=HEALTH_CHECK_PATH)
    assert blocks[0] == expected
    # HAProxy itself accepts it (a self-signed certificate stands in for the documented one).
    config = tmp_path / "haproxy.cfg"
    config.write_text(blocks[0].replace(DOC_CERTIFICATE, str(self_signed(tmp_path))))
    checked = subprocess.run(  # noqa: S603 - Debian's haproxy on our own file
        [haproxy.binary(), "-c", "-f", str(config)], capture_output=True, text=True, check=False
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
