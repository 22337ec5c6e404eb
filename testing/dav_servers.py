"""Real CalDAV/CardDAV servers for the tests, started on 127.0.0.1.

Test support shared by the caldav-mcp and carddav-mcp test suites (a test's
conftest puts this folder on ``sys.path``). Nothing here is a double: these
are the real Radicale and Xandikos from PyPI, each in its own process with a
temporary storage folder. A server that cannot start raises
:class:`ServerDidNotStart` with its output, so a test fails rather than skips.

Radicale: htpasswd with plain passwords (bcrypt would cost ~0.2 s a request)
and no auth delay, owner-only rights; a new user starts with no collections,
its principal path ``/<user>/`` is also its calendar and address-book home.

Xandikos (the second implementation, and the one with RFC 6638 scheduling):
plain HTTP on loopback, trusting the ``X-Remote-User`` header from
127.0.0.1, so a client picks the principal with that header (see
``headers_for``); ``--defaults`` gives each principal a calendar and an
address book.

DAViCal (:func:`davical`), Cyrus (:func:`cyrus`) and SOGo (:func:`sogo`) come from Debian's
packages, installed as root when missing, each started with a configuration
of its own on free loopback ports. :func:`apache_front`,
:func:`cyrus_front` and :func:`sogo_front` are doubles, named as such: they stand in front of a real
server and answer its root the way Apache (DAViCal), Cyrus and SOGo do.
"""

from __future__ import annotations

import contextlib
import http.client
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from processes import answers_http, free_port, started

__all__ = [
    "DavServer",
    "Front",
    "ServerDidNotStart",
    "apache_front",
    "cyrus",
    "cyrus_front",
    "davical",
    "radicale",
    "sogo",
    "sogo_front",
    "xandikos",
]

STARTUP_SECONDS = 30.0


class ServerDidNotStart(RuntimeError):
    """A test server exited or did not answer in time; the message carries its output."""


@dataclass
class DavServer:
    """A running DAV server.

    Attributes:
        url: Base URL, e.g. ``http://127.0.0.1:5232/``.
        users: Username → password (Radicale); empty for header-auth servers.
        kind: ``radicale`` or ``xandikos``.
        data_dir: Where it keeps its collections.
        timings: Seconds per start-up step (install, database, ...), for servers from Debian packages.
    """

    url: str
    kind: str
    data_dir: Path
    users: Mapping[str, str] = field(default_factory=dict)
    timings: Mapping[str, float] = field(default_factory=dict)

    def headers_for(self, user: str) -> dict[str, str]:
        """Request headers that authenticate as ``user`` on a header-auth server (Xandikos)."""
        return {"X-Remote-User": user}


@contextlib.contextmanager
def _running(argv: list[str], name: str, port: int, workdir: Path) -> Iterator[None]:
    with started(
        argv,
        name=name,
        port=port,
        workdir=workdir,
        log=workdir / "server.log",
        ready=lambda: answers_http(port),
        error=ServerDidNotStart,
        seconds=STARTUP_SECONDS,
    ):
        yield


@contextlib.contextmanager
def radicale(workdir: Path, users: Mapping[str, str] | None = None, options: Sequence[str] = ()) -> Iterator[DavServer]:
    """Run Radicale on 127.0.0.1 with ``users`` (default ``{"willi": "secret"}``) and its command-line ``options``."""
    users = dict(users or {"willi": "secret"})
    workdir.mkdir(parents=True, exist_ok=True)
    htpasswd = workdir / "users"
    htpasswd.write_text("".join(f"{name}:{password}\n" for name, password in users.items()))
    storage = workdir / "collections"
    port = free_port()
    argv = [
        sys.executable, "-m", "radicale",
        "--server-hosts", f"127.0.0.1:{port}",
        "--auth-type", "htpasswd",
        "--auth-htpasswd-filename", str(htpasswd),
        "--auth-htpasswd-encryption", "plain",
        "--auth-delay", "0",
        "--rights-type", "owner_only",
        "--storage-filesystem-folder", str(storage),
        "--logging-level", "warning",
        *options,
    ]  # fmt: skip
    with _running(argv, "radicale", port, workdir):
        yield DavServer(f"http://127.0.0.1:{port}/", "radicale", storage, users)


@contextlib.contextmanager
def xandikos(workdir: Path) -> Iterator[DavServer]:
    """Run Xandikos (multi-user, RFC 6638 scheduling) on 127.0.0.1 with header auth."""
    workdir.mkdir(parents=True, exist_ok=True)
    data, state = workdir / "data", workdir / "state"
    port = free_port()
    argv = [
        sys.executable, "-m", "xandikos", "multi-user",
        "-d", str(data), "--state-dir", str(state),
        "-l", "127.0.0.1", "-p", str(port),
        "--defaults", "--no-detect-systemd",
        "--trust-x-remote-user-from", "127.0.0.1",
    ]  # fmt: skip
    with _running(argv, "xandikos", port, workdir):
        yield DavServer(f"http://127.0.0.1:{port}/", "xandikos", data)


_APACHE_405 = (
    b'<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01//EN" "http://www.w3.org/TR/html4/strict.dtd">\n'
    b"<html><head>\n<title>405 Method Not Allowed</title>\n"
    b"</head><body>\n<h1>Method Not Allowed</h1>\n<p>The requested method PROPFIND is not allowed for this URL.</p>\n"
    b"</body></html>\n"
)
"""Apache 2.4.71's own 405 page (Debian 12), as it answers PROPFIND on a site root (DAViCal's setup)."""


@dataclass
class Front:
    """A running :func:`apache_front` double.

    Attributes:
        url: Its root, ``http://127.0.0.1:<port>/`` (use it as CALDAV_URL / CARDDAV_URL).
        seen: ``METHOD path`` of every request it received, in order.
    """

    url: str
    seen: list[str] = field(default_factory=lambda: [])


_RootAnswer = Callable[[str, Mapping[str, str]], "tuple[int, dict[str, str], bytes] | None"]
"""What a front double answers on ``/``: (status, headers, body) for (method, request headers), or None to pass on."""


@contextlib.contextmanager
def apache_front(upstream: DavServer, redirects: Mapping[str, str]) -> Iterator[Front]:
    """A test double in front of a real DAV server, shaped like DAViCal behind Apache.

    A double, not a server: ``/`` answers every method with Apache's own HTML
    405 page (a site root takes no PROPFIND; the page starts with a ``<!DOCTYPE``), each path in ``redirects``
    answers 301 to its value (``/.well-known/caldav`` → ``/willi/``; a value may
    be an absolute URL on another origin), and every other request is passed to
    ``upstream`` and its answer passed back unchanged.
    """

    def root(method: str, headers: Mapping[str, str]) -> tuple[int, dict[str, str], bytes]:
        return 405, {"Allow": "GET, HEAD, POST, OPTIONS", "Content-Type": "text/html"}, _APACHE_405

    with _front(upstream, redirects, root) as front:
        yield front


_CYRUS_ANONYMOUS_ROOT = (
    b'<?xml version="1.0" encoding="utf-8"?>\n<D:multistatus xmlns:D="DAV:">\n'
    b"<D:response><D:href>/</D:href><D:propstat><D:prop><D:current-user-principal><D:unauthenticated/>"
    b"</D:current-user-principal></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>"
    b"</D:multistatus>"
)
"""Cyrus 3.6.1's answer (Debian 12) to a PROPFIND on ``/`` that carries no credentials (RFC 5397 §3)."""


@contextlib.contextmanager
def cyrus_front(upstream: DavServer, redirects: Mapping[str, str]) -> Iterator[Front]:
    """A test double in front of a real DAV server, shaped like Cyrus' httpd at its root.

    A double, not a server: a PROPFIND on ``/`` without an ``Authorization``
    header answers 207 with ``current-user-principal`` = ``DAV:unauthenticated``
    (what Cyrus 3.6 answers there instead of a 401 challenge), each path in
    ``redirects`` answers 301 to its value, and every other request (``/`` with
    credentials too) is passed to ``upstream`` and its answer passed back unchanged.
    """

    def root(method: str, headers: Mapping[str, str]) -> tuple[int, dict[str, str], bytes] | None:
        if method == "PROPFIND" and "authorization" not in {k.lower() for k in headers}:
            return 207, {"Content-Type": "application/xml; charset=utf-8"}, _CYRUS_ANONYMOUS_ROOT
        return None

    with _front(upstream, redirects, root) as front:
        yield front


_SOGO_PAGE = (
    b'\n\n  <!DOCTYPE html>\n  \n    <html lang="en" xmlns="http://www.w3.org/1999/xhtml">\n      <head>\n'
    b'        <title sg-default="SOGo">SOGo</title>\n      </head>\n      <body class="main">\n'
    b"        SOGo requires Javascript to run.\n      </body>\n    </html>\n"
)
"""The start of the page SOGo 5.8 (Debian 12) answers at ``/SOGo/``, where its site root redirects, to any method."""


@contextlib.contextmanager
def sogo_front(upstream: DavServer, redirects: Mapping[str, str]) -> Iterator[Front]:
    """A test double in front of a real DAV server, shaped like SOGo's site root.

    A double, not a server: ``/`` answers every method with SOGo's HTML page (200, ``text/html``, starting
    with ``<!DOCTYPE html>``), as SOGo's root does after its redirect to ``/SOGo/``; each path in
    ``redirects`` answers 301 to its value, and every other request is passed to ``upstream`` unchanged.
    """

    def root(method: str, headers: Mapping[str, str]) -> tuple[int, dict[str, str], bytes]:
        return 200, {"Content-Type": "text/html; charset=utf-8"}, _SOGO_PAGE

    with _front(upstream, redirects, root) as front:
        yield front


@contextlib.contextmanager
def _front(upstream: DavServer, redirects: Mapping[str, str], root: _RootAnswer) -> Iterator[Front]:
    """A loopback HTTP double: ``root`` answers ``/``, ``redirects`` answer 301, the rest goes to ``upstream``."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
    from urllib.parse import urlsplit

    target = urlsplit(upstream.url)
    front = Front("")

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: object) -> None:
            pass

        def _reply(self, status: int, headers: Mapping[str, str], body: bytes = b"") -> None:
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _handle(self) -> None:
            front.seen.append(f"{self.command} {self.path}")
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            path = urlsplit(self.path).path
            answer_here = root(self.command, dict(self.headers.items())) if path == "/" else None
            if answer_here is not None:
                self._reply(*answer_here)
                return
            if path in redirects:
                self._reply(301, {"Location": redirects[path], "Content-Type": "text/html"})
                return
            conn = http.client.HTTPConnection(target.hostname or "127.0.0.1", target.port, timeout=30)
            try:
                sent = {k: v for k, v in self.headers.items() if k.lower() not in {"host", "connection"}}
                conn.request(self.command, self.path, body=body or None, headers=sent)
                answer = conn.getresponse()
                data = answer.read()
                kept = {
                    k: v
                    for k, v in answer.getheaders()
                    if k.lower() not in {"content-length", "connection", "transfer-encoding"}
                }
                self._reply(answer.status, kept, data)
            finally:
                conn.close()

        do_GET = do_HEAD = do_PUT = do_DELETE = do_OPTIONS = do_POST = _handle
        do_PROPFIND = do_PROPPATCH = do_REPORT = do_MKCOL = do_MKCALENDAR = do_MOVE = _handle

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    front.url = f"http://127.0.0.1:{httpd.server_address[1]}/"
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield front
    finally:
        httpd.shutdown()
        httpd.server_close()


# ---------------------------------------------------------------- DAViCal (Debian packages)

DEBIAN_PACKAGES = {
    "davical": ("davical", "apache2", "libapache2-mod-php", "postgresql"),
    "cyrus": ("cyrus-imapd", "cyrus-caldav", "sasl2-bin", "libsasl2-modules-db"),
    "sogo": ("sogo", "memcached", "postgresql", "apache2"),
}
"""What each Debian-packaged server needs, installed with ``apt-get install --no-install-recommends``."""

_apt_updated = False


def _debian_install(kind: str, present: Callable[[], bool]) -> float:
    """Install ``kind``'s Debian packages when ``present()`` is false; the seconds it took (0.0 when present).

    Raises:
        ServerDidNotStart: not root, or apt-get failed (the message has the exact command and its output).
    """
    global _apt_updated
    if present():
        return 0.0
    import os
    import subprocess
    import time

    packages = DEBIAN_PACKAGES[kind]
    command = ["apt-get", "install", "-y", "--no-install-recommends", *packages]
    if os.geteuid() != 0:
        raise ServerDidNotStart(f"{kind} is not installed; as root run: apt-get update && {' '.join(command)}")
    began = time.monotonic()
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    steps = ([] if _apt_updated else [["apt-get", "update"]]) + [command]
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True, env=env, check=False)  # noqa: S603
        if done.returncode != 0:
            raise ServerDidNotStart(f"{' '.join(step)} failed ({done.returncode}):\n{done.stdout[-3000:]}{done.stderr}")
        if step[1] == "update":
            _apt_updated = True
    if not present():
        raise ServerDidNotStart(f"{' '.join(command)} succeeded but {kind} is still missing")
    return time.monotonic() - began


def _pg_bin() -> Path | None:
    found = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
    return found[-1].parent if found else None


_DAVICAL_PRESENT = (
    Path("/usr/share/davical/dba/create-database.sh"),
    Path("/usr/sbin/apache2"),
    Path("/usr/lib/apache2/modules/mod_rewrite.so"),
)
_DAVICAL_CONF = """<?php
// Written by the project's test fixtures (testing/dav_servers.py): each test Apache passes its own database.
$c->pg_connect[] = $_SERVER['DAVICAL_PG_CONNECT'];
$c->system_name = 'DAViCal (tests)';
$c->admin_email = 'admin@example.org';
"""


def _run(argv: list[str], what: str, **kwargs: object) -> None:
    import subprocess

    done = subprocess.run(argv, capture_output=True, text=True, check=False, **kwargs)  # noqa: S603  # pyright: ignore[reportCallIssue, reportArgumentType]
    if done.returncode != 0:
        raise ServerDidNotStart(f"{what}: {' '.join(argv)} failed ({done.returncode}):\n{done.stdout}{done.stderr}")


@contextlib.contextmanager
def davical(workdir: Path, users: Mapping[str, str] | None = None) -> Iterator[DavServer]:
    """Run DAViCal (Debian's package) behind Apache with its own PostgreSQL cluster, all on 127.0.0.1.

    Installs the Debian packages first when they are missing (as root). Apache
    is set up as Debian's ``davical.conf`` does: ``/davical`` → DAViCal,
    ``/.well-known/*`` rewritten to ``caldav.php``, and a plain site root (which
    answers PROPFIND with 405). Each user gets a calendar ``calendar`` and an
    address book ``addresses``, the email ``<name>@example.org`` (its
    calendar user address) and DAViCal's own default privileges for a new
    principal (``read-free-busy``, ``schedule-deliver``), so that one user's
    invitation reaches another's scheduling inbox (RFC 6638 §3.2.1; with none,
    DAViCal refuses delivery with SCHEDULE-STATUS 3.8). PostgreSQL listens on a Unix socket in
    ``workdir`` only. DAViCal reads ``/etc/davical/127.0.0.1-conf.php`` (written
    here), which takes the database from the Apache instance's environment.

    The database cluster and sockets are in a temporary folder outside
    ``workdir`` (which may be private to root), removed afterwards.

    Yields a :class:`DavServer` whose ``url`` is the site root and whose
    ``timings`` give the seconds for install, PostgreSQL, the database and Apache.
    """
    import os
    import shutil
    import subprocess
    import time

    users = dict(users or {"willi": "secret"})
    timings: dict[str, float] = {}
    timings["install"] = _debian_install(
        "davical", lambda: all(p.exists() for p in _DAVICAL_PRESENT) and _pg_bin() is not None
    )
    pg_bin = _pg_bin()
    assert pg_bin is not None
    import tempfile

    workdir.mkdir(parents=True, exist_ok=True)
    # The cluster and the sockets live where the postgres and www-data users can reach them (pytest's own
    # temporary folders are private to root).
    shared = Path(tempfile.mkdtemp(prefix="davical-"))
    shared.chmod(0o755)
    pg, sock, logs, www, lock = (shared / n for n in ("pg", "sock", "pglog", "www", "lock"))
    for folder in (pg, sock, logs, www, lock):
        folder.mkdir(exist_ok=True)
    as_postgres = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    if as_postgres:
        for folder in (pg, sock, logs):
            shutil.chown(folder, "postgres")
        shutil.chown(lock, "www-data")
    pg_port = free_port()
    began = time.monotonic()
    _run([*as_postgres, str(pg_bin / "initdb"), "-D", str(pg), "-A", "trust", "-U", "postgres"], "initdb")
    options = f"-k {sock} -p {pg_port} -c listen_addresses='' -c fsync=off"
    pg_ctl = [*as_postgres, str(pg_bin / "pg_ctl"), "-D", str(pg)]
    _run([*pg_ctl, "-l", str(logs / "pg.log"), "-o", options, "-w", "start"], "pg_ctl start")
    timings["postgresql"] = time.monotonic() - began
    try:
        began = time.monotonic()
        env = {**os.environ, "PGHOST": str(sock), "PGPORT": str(pg_port), "PGUSER": "postgres"}
        _run(["/usr/share/davical/dba/create-database.sh", "davical", "admin-secret"], "create the database", env=env)
        for name, password in users.items():
            sql = (  # psql quotes the values (:'name'), read from standard input
                "INSERT INTO usr (active, email_ok, updated, username, password, fullname, email) VALUES "
                "(TRUE, current_date, current_date, :'name', :'password', :'name', :'email');\n"
                "INSERT INTO principal (type_id, user_no, displayname, default_privileges) "
                "SELECT 1, user_no, fullname, privilege_to_bits(ARRAY['read-free-busy', 'schedule-deliver']) "
                "FROM usr WHERE username = :'name';\n"
            )
            variables = {"name": name, "password": f"**{password}", "email": f"{name}@example.org"}
            argv = ["psql", "-qX", "-v", "ON_ERROR_STOP=1", *(f"--set={k}={v}" for k, v in variables.items())]
            _run([*argv, "-f", "-", "davical"], f"create the user {name}", env=env, input=sql)
        timings["database"] = time.monotonic() - began
        conf_file = Path("/etc/davical/127.0.0.1-conf.php")
        if not conf_file.exists() or conf_file.read_text() != _DAVICAL_CONF:
            conf_file.write_text(_DAVICAL_CONF)
        port = free_port()
        httpd = workdir / "httpd.conf"
        httpd.write_text(
            f"""ServerRoot /etc/apache2
ServerName 127.0.0.1
PidFile {workdir}/httpd.pid
Mutex file:{lock} default
Listen 127.0.0.1:{port}
{"User www-data" + chr(10) + "Group www-data" if as_postgres else ""}
ErrorLog {workdir}/error.log
LogLevel warn
LoadModule mpm_prefork_module /usr/lib/apache2/modules/mod_mpm_prefork.so
LoadModule authz_core_module /usr/lib/apache2/modules/mod_authz_core.so
LoadModule alias_module /usr/lib/apache2/modules/mod_alias.so
LoadModule dir_module /usr/lib/apache2/modules/mod_dir.so
LoadModule mime_module /usr/lib/apache2/modules/mod_mime.so
LoadModule rewrite_module /usr/lib/apache2/modules/mod_rewrite.so
LoadModule env_module /usr/lib/apache2/modules/mod_env.so
LoadModule headers_module /usr/lib/apache2/modules/mod_headers.so
LoadModule php_module /usr/lib/apache2/modules/libphp8.2.so
TypesConfig /etc/mime.types
StartServers 2
MinSpareServers 1
MaxSpareServers 4
<FilesMatch "\\.php$">
  SetHandler application/x-httpd-php
</FilesMatch>
DocumentRoot {www}
<Directory {www}>
  Require all granted
</Directory>
SetEnv DAVICAL_PG_CONNECT "dbname=davical user=davical_app host={sock} port={pg_port}"
Alias /davical /usr/share/davical/htdocs
<Directory /usr/share/davical/htdocs>
  DirectoryIndex index.php
  AllowOverride None
  Require all granted
</Directory>
RewriteEngine On
RewriteRule ^/\\.well-known/(.*)$ /davical/caldav.php/.well-known/$1 [NC,PT]
"""
        )
        began = time.monotonic()
        # Its own session (started() gives every process one): Apache signals its whole process group when it
        # stops, which would otherwise include pytest.
        argv = ["/usr/sbin/apache2", "-f", str(httpd), "-DFOREGROUND"]
        with _running(argv, "apache2 (DAViCal)", port, workdir):
            timings["apache"] = time.monotonic() - began
            url = f"http://127.0.0.1:{port}/"
            for name, password in users.items():
                _davical_collections(url, name, password)
            yield DavServer(url, "davical", workdir, users, timings)
    finally:
        subprocess.run(  # noqa: S603
            [*pg_ctl, "-m", "fast", "-w", "stop"],
            capture_output=True,
            check=False,
        )
        shutil.rmtree(shared, ignore_errors=True)


def _davical_collections(url: str, user: str, password: str) -> None:
    """Make ``user``'s calendar ``calendar`` and address book ``addresses`` (MKCALENDAR, extended MKCOL)."""
    import base64

    auth = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()
    host = url.split("//", 1)[1].rstrip("/")
    hostname, port = host.rsplit(":", 1)
    book = (
        '<?xml version="1.0" encoding="utf-8"?><d:mkcol xmlns:d="DAV:" xmlns:c="urn:ietf:params:xml:ns:carddav">'
        "<d:set><d:prop><d:resourcetype><d:collection/><c:addressbook/></d:resourcetype>"
        "<d:displayname>Addresses</d:displayname></d:prop></d:set></d:mkcol>"
    )
    for method, path, body in (
        ("MKCALENDAR", f"/davical/caldav.php/{user}/calendar/", ""),
        ("MKCOL", f"/davical/caldav.php/{user}/addresses/", book),
    ):
        conn = http.client.HTTPConnection(hostname, int(port), timeout=30)
        try:
            headers = {"Authorization": auth}
            if body:
                headers["Content-Type"] = "application/xml; charset=utf-8"
            conn.request(method, path, body=body.encode() or None, headers=headers)
            answer = conn.getresponse()
            answer.read()
            if answer.status not in (201, 405):  # 405: it exists already
                raise ServerDidNotStart(f"DAViCal answered {method} {path} with {answer.status}")
        finally:
            conn.close()


# ---------------------------------------------------------------- Cyrus IMAP's httpd (Debian packages)

_CYRUS_BIN = Path("/usr/lib/cyrus/bin")
_CYRUS_PRESENT = (
    _CYRUS_BIN / "master",  # cyrus-common
    _CYRUS_BIN / "imapd",  # cyrus-imapd
    _CYRUS_BIN / "httpd",  # cyrus-caldav
    Path("/usr/sbin/saslpasswd2"),  # sasl2-bin
)
_CYRUS_ADMIN = ("cyrus-admin", "admin-secret")
"""The Cyrus administrator (``admins:``) that creates each user's mailbox over IMAP."""


def _cyrus_sasldb(sasldb: Path, name: str, password: str) -> None:
    """Add ``name`` to the SASL password file ``sasldb`` (``saslpasswd2 -f``) in the realm ``127.0.0.1``.

    Cyrus looks a user up as ``name@<servername>`` (the fixture's ``servername: 127.0.0.1``), so the entry
    is made in that realm rather than saslpasswd2's default (the host name).
    """
    argv = ["/usr/sbin/saslpasswd2", "-p", "-c", "-f", str(sasldb), "-u", "127.0.0.1", name]
    _run(argv, f"add {name} to the sasldb", input=password)


def _cyrus_user(imap_port: int, name: str) -> None:
    """Create ``name``'s mailbox ``user/<name>`` (RFC 3501 CREATE as the administrator).

    Cyrus' httpd gives a user calendar and address-book homes (``Default`` calendar and address book,
    scheduling Inbox and Outbox) on their first authenticated request, and only when the user's
    mailbox exists; it answers 500 ("could not autoprovision calendars: Invalid user") otherwise.
    """
    import imaplib

    with imaplib.IMAP4("127.0.0.1", imap_port, timeout=30) as imap:
        imap.login(*_CYRUS_ADMIN)
        status, answer = imap.create(f"user/{name}")
        if status != "OK":
            raise ServerDidNotStart(f"Cyrus refused CREATE user/{name}: {answer!r}")


def _cyrus_homes(url: str, name: str, password: str) -> None:
    """Ask ``name``'s calendar and address-book homes once (PROPFIND), which makes Cyrus provision them."""
    import base64
    from urllib.parse import urlsplit

    where = urlsplit(url)
    auth = "Basic " + base64.b64encode(f"{name}:{password}".encode()).decode()
    for home in (f"/dav/calendars/user/{name}/", f"/dav/addressbooks/user/{name}/"):
        conn = http.client.HTTPConnection(where.hostname or "127.0.0.1", where.port, timeout=30)
        try:
            conn.request("PROPFIND", home, headers={"Authorization": auth, "Depth": "1"})
            answer = conn.getresponse()
            answer.read()
            if answer.status != 207:
                raise ServerDidNotStart(f"Cyrus answered PROPFIND {home} as {name} with {answer.status}")
        finally:
            conn.close()


@contextlib.contextmanager
def cyrus(workdir: Path, users: Mapping[str, str] | None = None) -> Iterator[DavServer]:
    """Run Cyrus IMAP's CalDAV/CardDAV server (Debian's ``cyrus-caldav``) on 127.0.0.1.

    Installs the Debian packages first when they are missing (as root). Cyrus'
    ``master`` runs from the package's binaries with a configuration of its own
    (``imapd.conf``, ``cyrus.conf``) and its own configuration, spool, lock and
    socket folders in a temporary folder; it serves HTTP (``httpmodules: caldav
    carddav``, Basic authentication over plain HTTP against a sasldb written by
    ``saslpasswd2 -f``) and, for the fixture's own administration, IMAP, both on
    free loopback ports. Each user gets its mailbox (IMAP CREATE ``user/<name>``
    as the administrator) and then, on a first PROPFIND, its homes: calendar
    ``/dav/calendars/user/<name>/Default/`` and address book
    ``/dav/addressbooks/user/<name>/Default/``. ``master`` changes to the
    ``cyrus`` user when started as root; its folder is owned by that user. It
    runs in a process group of its own and is stopped with SIGTERM (it stops its
    services), then anything left in its group is killed and the folder removed.

    Yields a :class:`DavServer` whose ``url`` is the site root and whose
    ``timings`` give the seconds for install, start and the users.

    Raises:
        ServerDidNotStart: a package is missing and this is not root, there is no ``cyrus`` user, the server
            did not answer, or a user could not be made (the message names the step).
    """
    import os
    import pwd
    import shutil
    import signal
    import subprocess
    import tempfile
    import time

    users = dict(users or {"willi": "secret"})
    timings: dict[str, float] = {}
    timings["install"] = _debian_install("cyrus", lambda: all(p.exists() for p in _CYRUS_PRESENT))
    try:
        owner = pwd.getpwnam("cyrus")
    except KeyError:
        raise ServerDidNotStart(
            "there is no cyrus user (Debian's cyrus-common makes it); as root run: "
            "apt-get install --reinstall cyrus-common"
        ) from None
    if os.geteuid() not in (0, owner.pw_uid):
        raise ServerDidNotStart("Cyrus' master must be started as root (it changes to the cyrus user) or as cyrus")
    workdir.mkdir(parents=True, exist_ok=True)
    # Cyrus runs as the cyrus user: its folders live where that user can reach them (pytest's own temporary
    # folders are private to root).
    shared = Path(tempfile.mkdtemp(prefix="cyrus-"))
    try:
        config, spool = shared / "config", shared / "spool"
        for folder in (spool, shared / "proc", shared / "lock", shared / "socket"):
            folder.mkdir()
        for sub in ("db", "socket", "log", "msg", "ptclient", "sieve", "user", "quota"):
            (config / sub).mkdir(parents=True)
        http_port = imap_port = free_port()
        while imap_port == http_port:
            imap_port = free_port()
        conf = shared / "imapd.conf"
        conf.write_text(
            f"""# Written by the project's test fixtures (testing/dav_servers.py).
configdirectory: {config}
defaultpartition: default
partition-default: {spool}
proc_path: {shared}/proc
mboxname_lockpath: {shared}/lock
lmtpsocket: {shared}/socket/lmtp
idlesocket: {shared}/socket/idle
notifysocket: {shared}/socket/notify
servername: 127.0.0.1
unixhierarchysep: yes
admins: {_CYRUS_ADMIN[0]}
allowplaintext: yes
sasl_pwcheck_method: auxprop
sasl_auxprop_plugin: sasldb
sasl_sasldb_path: {shared}/sasldb2
sasl_mech_list: PLAIN
httpmodules: caldav carddav
httpallowcompress: no
syslog_prefix: cyrus-tests
"""
        )
        # Every command gets -C: master does not pass its own configuration on to the services it starts.
        (shared / "cyrus.conf").write_text(
            f"""START {{
  recover cmd="ctl_cyrusdb -C {conf} -r"
}}
SERVICES {{
  imap cmd="imapd -C {conf}" listen="127.0.0.1:{imap_port}" prefork=0 maxchild=4
  http cmd="httpd -C {conf}" listen="127.0.0.1:{http_port}" prefork=1 maxchild=16
}}
EVENTS {{
}}
"""
        )
        for name, password in {_CYRUS_ADMIN[0]: _CYRUS_ADMIN[1], **users}.items():
            _cyrus_sasldb(shared / "sasldb2", name, password)
        for path in (shared, *shared.rglob("*")):
            os.chown(path, owner.pw_uid, owner.pw_gid)
        began = time.monotonic()
        # Its own session (started() gives every process one), so that stopping it can never reach pytest's
        # process group; -D keeps it in the
        # foreground (the process the fixture stops), and it stops its services on SIGTERM.
        argv = [
            str(_CYRUS_BIN / "master"), "-D",
            "-C", str(conf), "-M", str(shared / "cyrus.conf"), "-p", str(shared / "master.pid"),
        ]  # fmt: skip
        master: subprocess.Popen[bytes] | None = None
        try:
            with started(
                argv,
                name="cyrus master",
                port=http_port,
                workdir=workdir,
                log=workdir / "server.log",
                ready=lambda: answers_http(http_port),
                error=ServerDidNotStart,
                seconds=STARTUP_SECONDS,
            ) as master:
                timings["start"] = time.monotonic() - began
                began = time.monotonic()
                url = f"http://127.0.0.1:{http_port}/"
                for name, password in users.items():
                    _cyrus_user(imap_port, name)
                    _cyrus_homes(url, name, password)
                timings["users"] = time.monotonic() - began
                yield DavServer(url, "cyrus", spool, users, timings)
        finally:
            # master has stopped its services on SIGTERM; a service it could not reap dies with its group.
            if master is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(master.pid, signal.SIGKILL)
    finally:
        shutil.rmtree(shared, ignore_errors=True)


# ---------------------------------------------------------------- SOGo (Debian packages)

_SOGO_PRESENT = (
    Path("/usr/sbin/sogod"),
    Path("/usr/bin/memcached"),
    Path("/usr/sbin/apache2"),
    Path("/usr/lib/apache2/modules/mod_proxy_http.so"),
)
_SOGO_USERS_SQL = """CREATE TABLE sogo_users (
  c_uid VARCHAR(128) PRIMARY KEY, c_name VARCHAR(128) NOT NULL, c_password VARCHAR(256) NOT NULL,
  c_cn VARCHAR(256), mail VARCHAR(256)
);
"""
"""The SQL user source (SOGo's ``SOGoUserSources`` of ``type = sql``): the columns SOGo reads by these names."""


def _port_open(port: int) -> bool:
    import socket

    with socket.create_connection(("127.0.0.1", port), timeout=1):
        return True


def _sogo_defaults(db: str, memcached_port: int, port: int, workdir: Path) -> list[str]:
    """Sogod's settings as GNUstep arguments (``-Key value``, the highest of its defaults domains).

    They override Debian's ``/etc/sogo/sogo.conf``, which the fixture leaves alone.
    """
    users = (
        '({ type = sql; id = users; viewURL = "' + db + '/sogo_users"; canAuthenticate = YES; '
        "isAddressBook = NO; userPasswordAlgorithm = plain; })"
    )
    settings = {
        "WOPort": f"127.0.0.1:{port}",
        "WONoDetach": "YES",
        "WOWorkersCount": "2",
        "WOLogFile": str(workdir / "sogo.log"),
        "WOPidFile": str(workdir / "sogo.pid"),
        "SOGoProfileURL": f"{db}/sogo_user_profile",
        "OCSFolderInfoURL": f"{db}/sogo_folder_info",
        "OCSSessionsFolderURL": f"{db}/sogo_sessions_folder",
        "OCSEMailAlarmsFolderURL": f"{db}/sogo_alarms_folder",
        "SOGoMemcachedHost": f"127.0.0.1:{memcached_port}",
        "SOGoUserSources": users,
        "SOGoTimeZone": "UTC",
        "SOGoMailDomain": "example.org",
        "SOGoLanguage": "English",
        "SOGoAppointmentSendEMailNotifications": "NO",
    }
    return [part for key, value in settings.items() for part in (f"-{key}", value)]


def _sogo_apache(workdir: Path, port: int, sogod_port: int) -> Path:
    """Apache's configuration in front of sogod, as SOGo's own Apache example (``SOGo.conf``) sets it up.

    ``/SOGo`` is proxied to sogod (with the ``x-webobjects-*`` headers that tell it where it is served);
    ``/.well-known/caldav`` and ``/.well-known/carddav`` redirect (301) to ``/SOGo/dav``; the site root
    redirects (302) to ``/SOGo``, whose answer is the web application's HTML page.
    """
    conf = workdir / "httpd.conf"
    conf.write_text(
        f"""ServerRoot /etc/apache2
ServerName 127.0.0.1
PidFile {workdir}/httpd.pid
Mutex file:{workdir} default
Listen 127.0.0.1:{port}
User www-data
Group www-data
ErrorLog {workdir}/error.log
LogLevel warn
LoadModule mpm_event_module /usr/lib/apache2/modules/mod_mpm_event.so
LoadModule authz_core_module /usr/lib/apache2/modules/mod_authz_core.so
LoadModule alias_module /usr/lib/apache2/modules/mod_alias.so
LoadModule rewrite_module /usr/lib/apache2/modules/mod_rewrite.so
LoadModule headers_module /usr/lib/apache2/modules/mod_headers.so
LoadModule proxy_module /usr/lib/apache2/modules/mod_proxy.so
LoadModule proxy_http_module /usr/lib/apache2/modules/mod_proxy_http.so
DocumentRoot {workdir}
ProxyRequests Off
ProxyPreserveHost On
ProxyPass /SOGo http://127.0.0.1:{sogod_port}/SOGo retry=0 disablereuse=On
<Location /SOGo>
  Require all granted
  RequestHeader set "x-webobjects-server-port" "{port}"
  RequestHeader set "x-webobjects-server-name" "127.0.0.1"
  RequestHeader set "x-webobjects-server-url" "http://127.0.0.1:{port}"
  RequestHeader set "x-webobjects-server-protocol" "HTTP/1.0"
  RequestHeader unset "x-webobjects-remote-user"
</Location>
RedirectMatch 302 ^/$ /SOGo
RewriteEngine On
RewriteRule ^/\\.well-known/caldav/?$ /SOGo/dav [R=301,L]
RewriteRule ^/\\.well-known/carddav/?$ /SOGo/dav [R=301,L]
"""
    )
    return conf


def _sogo_homes(url: str, name: str, password: str) -> None:
    """Ask ``name``'s calendar and address-book homes once (PROPFIND), which makes SOGo create ``personal`` in each."""
    import base64
    from urllib.parse import urlsplit

    where = urlsplit(url)
    auth = "Basic " + base64.b64encode(f"{name}:{password}".encode()).decode()
    for home in (f"/SOGo/dav/{name}/Calendar/", f"/SOGo/dav/{name}/Contacts/"):
        conn = http.client.HTTPConnection(where.hostname or "127.0.0.1", where.port, timeout=30)
        try:
            conn.request("PROPFIND", home, headers={"Authorization": auth, "Depth": "1"})
            answer = conn.getresponse()
            answer.read()
            if answer.status != 207:
                raise ServerDidNotStart(f"SOGo answered PROPFIND {home} as {name} with {answer.status}")
        finally:
            conn.close()


@contextlib.contextmanager
def sogo(workdir: Path, users: Mapping[str, str] | None = None) -> Iterator[DavServer]:
    """Run SOGo (Debian's ``sogo``) on 127.0.0.1 with its own PostgreSQL cluster and memcached.

    Installs the Debian packages first when they are missing (as root). In a
    temporary folder the postgres and sogo users can reach: a PostgreSQL
    cluster on a free loopback port (trust authentication) with a database
    ``sogo`` holding the SQL user source ``sogo_users`` (plain passwords); a
    memcached on a free loopback port; then ``sogod`` as the ``sogo`` user on a
    free loopback port, its settings given as arguments (Debian's
    ``/etc/sogo/sogo.conf`` is left as it is; SOGo makes its own tables on
    first use). sogod serves its root itself, as it does behind no proxy:
    ``/SOGo`` is the web application, ``/SOGo/dav/<user>/`` the principal;
    each user's calendar home ``/SOGo/dav/<user>/Calendar/`` and address-book
    home ``/SOGo/dav/<user>/Contacts/`` are asked once, which makes SOGo create
    ``personal`` in each.

    Yields a :class:`DavServer` whose ``url`` is the site root and whose
    ``timings`` give the seconds for install, PostgreSQL, the database,
    memcached, sogod and the users.

    Raises:
        ServerDidNotStart: a package is missing and this is not root, there is no ``sogo`` user, a step
            failed (the message names it), or sogod did not answer.
    """
    import os
    import pwd
    import shutil
    import signal
    import subprocess
    import tempfile
    import time

    users = dict(users or {"willi": "secret"})
    timings: dict[str, float] = {}
    timings["install"] = _debian_install(
        "sogo", lambda: all(p.exists() for p in _SOGO_PRESENT) and _pg_bin() is not None
    )
    pg_bin = _pg_bin()
    assert pg_bin is not None
    try:
        owner = pwd.getpwnam("sogo")
    except KeyError:
        raise ServerDidNotStart(
            "there is no sogo user (Debian's sogo package makes it); as root run: apt-get install --reinstall sogo"
        ) from None
    if os.geteuid() != 0:
        raise ServerDidNotStart(
            "the SOGo fixture must run as root (PostgreSQL, memcached and sogod run as their users)"
        )
    workdir.mkdir(parents=True, exist_ok=True)
    # Each server runs as its own user: the folders live where those users can reach them (pytest's own
    # temporary folders are private to root).
    shared = Path(tempfile.mkdtemp(prefix="sogo-"))
    shared.chmod(0o755)
    pg, logs, sock, home = shared / "pg", shared / "pglog", shared / "sock", shared / "home"
    for folder in (pg, logs, sock):
        folder.mkdir()
        shutil.chown(folder, "postgres")
    home.mkdir()
    os.chown(home, owner.pw_uid, owner.pw_gid)
    as_postgres = ["runuser", "-u", "postgres", "--"]
    pg_port = free_port()
    pg_ctl = [*as_postgres, str(pg_bin / "pg_ctl"), "-D", str(pg)]
    try:
        began = time.monotonic()
        _run([*as_postgres, str(pg_bin / "initdb"), "-D", str(pg), "-A", "trust", "-U", "postgres"], "initdb")
        options = f"-k {sock} -p {pg_port} -c listen_addresses=127.0.0.1 -c fsync=off"
        _run([*pg_ctl, "-l", str(logs / "pg.log"), "-o", options, "-w", "start"], "pg_ctl start")
        timings["postgresql"] = time.monotonic() - began
        began = time.monotonic()
        env = {**os.environ, "PGHOST": "127.0.0.1", "PGPORT": str(pg_port), "PGUSER": "postgres"}
        psql = ["psql", "-qX", "-v", "ON_ERROR_STOP=1"]
        _run([*psql, "-c", "CREATE ROLE sogo LOGIN PASSWORD 'sogo'", "postgres"], "create the role sogo", env=env)
        _run([*psql, "-c", "CREATE DATABASE sogo OWNER sogo", "postgres"], "create the database sogo", env=env)
        rows = "".join(  # psql quotes the values (:'name0'); only the variables' numbers are formatted in
            "INSERT INTO sogo_users VALUES "  # noqa: S608
            f"(:'name{i}', :'name{i}', :'password{i}', :'name{i}', :'name{i}' || '@example.org');\n"
            for i in range(len(users))
        )
        variables = [
            f"--set={key}{i}={value}"
            for i, (name, password) in enumerate(users.items())
            for key, value in (("name", name), ("password", password))
        ]
        sql_env = {**env, "PGUSER": "sogo"}
        _run(
            [*psql, *variables, "-f", "-", "sogo"],
            "create the SQL user source",
            env=sql_env,
            input=_SOGO_USERS_SQL + rows,
        )
        timings["database"] = time.monotonic() - began
        began = time.monotonic()
        memcached_port = free_port()
        memcached = ["memcached", "-l", "127.0.0.1", "-p", str(memcached_port), "-U", "0", "-u", "memcache", "-m", "32"]
        with started(
            memcached,
            name="memcached",
            port=memcached_port,
            workdir=workdir,
            log=workdir / "memcached.log",
            ready=lambda: _port_open(memcached_port),
            error=ServerDidNotStart,
            seconds=STARTUP_SECONDS,
        ):
            timings["memcached"] = time.monotonic() - began
            began = time.monotonic()
            port = free_port()
            db = f"postgresql://sogo:sogo@127.0.0.1:{pg_port}/sogo"
            # Its own session (started() gives every process one: sogod forks its workers, and stopping them must
            # never reach pytest's process group),
            # as the sogo user (sogod refuses root), with a home of its own for GNUstep's user defaults.
            argv = [
                "runuser", "-u", "sogo", "--",
                "env", f"HOME={home}", "/usr/sbin/sogod", *_sogo_defaults(db, memcached_port, port, home),
            ]  # fmt: skip
            sogod: subprocess.Popen[bytes] | None = None
            try:
                with started(
                    argv,
                    name="sogod",
                    port=port,
                    workdir=workdir,
                    log=workdir / "sogod.log",
                    ready=lambda: answers_http(port, "GET", "/SOGo/"),
                    error=ServerDidNotStart,
                    seconds=STARTUP_SECONDS,
                ) as sogod:
                    timings["sogod"] = time.monotonic() - began
                    began = time.monotonic()
                    front = free_port()
                    httpd = _sogo_apache(workdir, front, port)
                    # Its own session (started() gives every process one): Apache signals its whole process group
                    # when it stops.
                    with _running(
                        ["/usr/sbin/apache2", "-f", str(httpd), "-DFOREGROUND"],
                        "apache2 (SOGo)",
                        front,
                        workdir,
                    ):
                        timings["apache"] = time.monotonic() - began
                        began = time.monotonic()
                        url = f"http://127.0.0.1:{front}/"
                        for name, password in users.items():
                            _sogo_homes(url, name, password)
                        timings["users"] = time.monotonic() - began
                        yield DavServer(url, "sogo", workdir, users, timings)
            finally:
                if sogod is not None:  # sogod's workers, should any outlive their parent
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(sogod.pid, signal.SIGKILL)
                log = home / "sogo.log"
                if log.exists():
                    shutil.copy(log, workdir / "sogo.log")
    finally:
        subprocess.run([*pg_ctl, "-m", "fast", "-w", "stop"], capture_output=True, check=False)  # noqa: S603
        shutil.rmtree(shared, ignore_errors=True)
