"""The opt-in embedded backend: a Radicale inside this process, on 127.0.0.1.

For a person who wants to try caldav-mcp from their MCP client without a
CalDAV server of their own. ``CALDAV_EMBEDDED=true`` starts Radicale (the
``embedded`` extra: ``caldav-mcp[embedded]``) in a thread of the server
process, so it lives and dies with the server and leaves nothing running.

* Listens on 127.0.0.1 only, on a port the system picks at each start.
* The listening socket is bound by this module itself to 127.0.0.1 port 0
  and handed to Radicale's WSGI application, so there is no moment where the
  port is chosen but not yet held (another local user cannot take it first
  and collect the password).
* One account, ``me``, with a password drawn at each start
  (``secrets.token_urlsafe``, 32 bytes) that exists only in this process's
  memory: Radicale checks it through an in-memory auth plugin
  (``hmac.compare_digest``), so no file holds it, whatever way the process
  ends. Radicale's ``owner_only`` rights apply.
* Each connection gets its own thread and a 30 s socket timeout, so idle
  connections from another local user cannot starve the server's own.
* The calendars are kept in ``CALDAV_EMBEDDED_DIR`` or else in the user's
  data folder (``platformdirs.user_data_path("caldav-mcp") / "radicale"``:
  ``~/.local/share/caldav-mcp/radicale`` on Linux), created with mode 0700.
  An existing folder is used only if it is a real folder (not a symbolic
  link) owned by this user and closed to everyone else (POSIX).
  Radicale locks its storage per request, so two servers started on one folder
  (two MCP clients on one machine) share it safely.
* On a first start the account gets one calendar, ``/me/calendar/`` named
  "Calendar", that takes events, tasks and journal entries (RFC 4791 §5.3.1
  MKCALENDAR).
* No user configuration of Radicale is read (``/etc/radicale/config`` and
  ``~/.config/radicale/config`` are ignored); its web interface is off.

carddav-mcp carries its own copy of this runner, so that each server installs
and is released on its own.
"""

from __future__ import annotations

import base64
import contextlib
import hmac
import http.client
import os
import secrets
import socketserver
import stat
import threading
import wsgiref.simple_server
from dataclasses import dataclass, field
from pathlib import Path

from approval_core import SettingsError

__all__ = ["CALENDAR_PATH", "USERNAME", "EmbeddedRadicale", "EmbeddedStartError", "default_folder", "start"]

USERNAME = "me"
CALENDAR_PATH = f"/{USERNAME}/calendar/"
_CALENDAR_NAME = "Calendar"
_COMPONENTS = ["VEVENT", "VTODO", "VJOURNAL"]
_EXTRA_HINT = (
    "install its embedded extra, caldav-mcp[embedded]: from a clone of the repository, "
    "`uv run --package caldav-mcp --extra embedded caldav-mcp`; from the wheels `nox -s release` builds into dist/, "
    "`uvx --find-links dist/ --constraints dist/constraints.txt --from 'caldav-mcp[embedded]' caldav-mcp` "
    "(see docs/clients.md)"
)
_SOCKET_TIMEOUT = 30.0  # seconds a connection may stay silent
_CALDAV = "urn:ietf:params:xml:ns:caldav"
_XML_TYPE = "application/xml; charset=utf-8"
_PROPFIND = '<?xml version="1.0" encoding="utf-8"?><propfind xmlns="DAV:"><prop><resourcetype/></prop></propfind>'
_MKCALENDAR = (
    f'<?xml version="1.0" encoding="utf-8"?><C:mkcalendar xmlns:D="DAV:" xmlns:C="{_CALDAV}"><D:set><D:prop>'
    f"<D:displayname>{_CALENDAR_NAME}</D:displayname><C:supported-calendar-component-set>"
    + "".join(f'<C:comp name="{name}"/>' for name in _COMPONENTS)
    + "</C:supported-calendar-component-set></D:prop></D:set></C:mkcalendar>"
)


class EmbeddedStartError(RuntimeError):
    """The embedded Radicale could not be started or prepared (the message says why)."""


@dataclass(frozen=True)
class EmbeddedRadicale:
    """A running embedded Radicale.

    Attributes:
        url: Its root, ``http://127.0.0.1:<port>/``.
        username: The one account, :data:`USERNAME`.
        password: This start's password (never logged or shown).
        folder: Where the collections are kept.
    """

    url: str
    username: str
    password: str = field(repr=False)
    folder: Path
    _server: socketserver.BaseServer = field(repr=False)
    _thread: threading.Thread = field(repr=False)

    def stop(self) -> None:
        """Stop serving and close the listening socket (requests under way are cut short by the process's end)."""
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()


def default_folder() -> Path:
    """The user's data folder for caldav-mcp's embedded calendars.

    Raises:
        SettingsError: The ``embedded`` extra (platformdirs) is not installed.
    """
    try:
        import platformdirs
    except ImportError:
        raise SettingsError(f"CALDAV_EMBEDDED=true needs platformdirs: {_EXTRA_HINT}") from None
    return platformdirs.user_data_path("caldav-mcp", appauthor=False) / "radicale"


def start(folder: Path | None = None) -> EmbeddedRadicale:
    """Start Radicale on 127.0.0.1 and make sure the account has a calendar.

    Args:
        folder: Where to keep the data (absolute); default :func:`default_folder`.

    Raises:
        SettingsError: The ``embedded`` extra is not installed.
        EmbeddedStartError: The folder cannot be used (not a folder, a
            symbolic link, another user's, open to others), no port could be
            bound, or the first calendar could not be made.
    """
    try:
        import radicale.app
        import radicale.auth
        import radicale.config
        import radicale.server
    except ImportError:
        raise SettingsError(f"CALDAV_EMBEDDED=true needs Radicale: {_EXTRA_HINT}") from None
    folder = folder or default_folder()
    _prepare(folder)
    password = secrets.token_urlsafe(32)
    expected = password.encode()

    class OneAccount(radicale.auth.BaseAuth):
        """Radicale auth plugin: :data:`USERNAME` with this start's password, compared in constant time."""

        def _login(self, login: str, password: str) -> str:
            same_user = hmac.compare_digest(login.encode(), USERNAME.encode())
            same_password = hmac.compare_digest(password.encode(), expected)
            return USERNAME if same_user and same_password else ""

    configuration = radicale.config.load([])  # defaults only: no system or user config file
    configuration.update(
        {
            "auth": {"type": OneAccount},
            "rights": {"type": "owner_only"},
            "storage": {"filesystem_folder": str(folder)},
            "web": {"type": "none"},
        },
        "caldav-mcp embedded",
    )
    configuration.update({"server": {"_internal_server": "True"}}, "caldav-mcp embedded", privileged=True)

    class Handler(radicale.server.RequestHandler):
        timeout = _SOCKET_TIMEOUT

    try:
        server = _ThreadingServer(("127.0.0.1", 0), Handler)  # bound and listening before anyone learns the port
    except OSError as exc:
        raise EmbeddedStartError(f"the embedded Radicale could not listen on 127.0.0.1: {exc.strerror}") from None
    server.set_app(radicale.app.Application(configuration))
    thread = threading.Thread(target=server.serve_forever, name="embedded-radicale", daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}/"
    running = EmbeddedRadicale(url, USERNAME, password, folder, server, thread)
    try:
        _ensure_calendar(running)
    except BaseException:
        running.stop()
        raise
    return running


class _ThreadingServer(socketserver.ThreadingMixIn, wsgiref.simple_server.WSGIServer):
    daemon_threads = True
    block_on_close = False


def _prepare(folder: Path) -> None:
    """Create the folder (and Radicale's ``collection-root``) mode 0700, or check the existing one."""
    for path in (folder, folder / "collection-root"):
        try:
            with contextlib.suppress(FileExistsError):  # checked just below, whoever made it
                path.mkdir(mode=0o700, parents=path is folder)
            info = path.lstat()
        except OSError as exc:
            raise EmbeddedStartError(f"the embedded calendar folder {path} cannot be used: {exc.strerror}") from None
        problem = _unsafe(info)
        if problem:
            raise EmbeddedStartError(f"the embedded calendar folder {path} cannot be used: {problem}")


def _unsafe(info: os.stat_result) -> str | None:
    if stat.S_ISLNK(info.st_mode):
        return "it is a symbolic link; give the folder it points to"
    if not stat.S_ISDIR(info.st_mode):
        return "it is not a folder"
    if os.name != "posix":
        return None
    if info.st_uid != os.getuid():
        return "it belongs to another user"
    if info.st_mode & 0o077:
        return f"other users have access to it (mode {stat.S_IMODE(info.st_mode):o}); make it private with chmod 700"
    return None


def _ensure_calendar(server: EmbeddedRadicale) -> None:
    """Give the account its first calendar unless it already has one (any name).

    Plain HTTP to the Radicale of this process (PROPFIND, then MKCALENDAR per
    RFC 4791 §5.3.1), so that starting does not wait for the caldav library
    to import. Two servers starting on one new folder may both find none: the
    one whose MKCALENDAR loses reads the collections again and takes the other's.
    """
    port = int(server.url.removesuffix("/").rsplit(":", 1)[1])
    token = base64.b64encode(f"{server.username}:{server.password}".encode()).decode()

    def send(method: str, path: str, body: str, headers: dict[str, str]) -> tuple[int, bytes]:
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=_SOCKET_TIMEOUT)
        try:
            connection.request(
                method,
                path,
                body=body.encode(),
                headers={"Authorization": f"Basic {token}", "Content-Type": _XML_TYPE, **headers},
            )
            answer = connection.getresponse()
            return answer.status, answer.read()
        finally:
            connection.close()

    def has_calendar() -> bool:
        status, body = send("PROPFIND", f"/{USERNAME}/", _PROPFIND, {"Depth": "1"})
        if status != 207:
            raise EmbeddedStartError(f"the embedded Radicale answered PROPFIND /{USERNAME}/ with {status}")
        from webdav_core import parse_multistatus  # the layer's parser: no DTD, no entities

        listed = parse_multistatus(body).responses
        return any(r.has_child("DAV:", "resourcetype", (_CALDAV, "calendar")) for r in listed)

    try:
        if has_calendar():
            return
        status, _ = send("MKCALENDAR", CALENDAR_PATH, _MKCALENDAR, {})
        if status != 201 and not has_calendar():
            raise EmbeddedStartError(f"the embedded Radicale could not make the first calendar (MKCALENDAR {status})")
    except (OSError, http.client.HTTPException, ValueError) as exc:
        raise EmbeddedStartError(f"the embedded Radicale could not make the first calendar: {exc}") from None
