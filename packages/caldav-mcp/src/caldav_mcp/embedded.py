"""The opt-in embedded backend: a Radicale inside this process, on 127.0.0.1.

For a person who wants to try caldav-mcp from their MCP client without a
CalDAV server of their own. ``CALDAV_EMBEDDED=true`` starts Radicale (the
``embedded`` extra: ``caldav-mcp[embedded]``) in a thread of the server
process, so it lives and dies with the server and leaves nothing running.

* Listens on 127.0.0.1 only, on a port the system picks at each start.
* One account, ``me``, with a password drawn at each start
  (``secrets.token_urlsafe``, 32 bytes) and kept in a private temporary file
  that is deleted at stop; another local user who finds the port cannot log in.
  Radicale's ``owner_only`` rights apply.
* The calendars are kept in ``CALDAV_EMBEDDED_DIR`` or else in the user's
  data folder (``platformdirs.user_data_path("caldav-mcp") / "radicale"``:
  ``~/.local/share/caldav-mcp/radicale`` on Linux), created with mode 0700.
  Radicale locks its storage per request, so two servers started on one folder
  (two MCP clients on one machine) share it safely.
* On a first start the account gets one calendar, ``/me/calendar/`` named
  "Calendar", that takes events, tasks and journal entries (RFC 4791 §5.3.1
  MKCALENDAR).
* No user configuration of Radicale is read (``/etc/radicale/config`` and
  ``~/.config/radicale/config`` are ignored); its web interface is off.

carddav-mcp carries its own copy of this runner (about a screenful), so that
each server installs and is released on its own.
"""

from __future__ import annotations

import contextlib
import logging
import secrets
import shutil
import socket
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from approval_core import SettingsError

__all__ = ["CALENDAR_PATH", "USERNAME", "EmbeddedRadicale", "EmbeddedStartError", "default_folder", "start"]

USERNAME = "me"
CALENDAR_PATH = f"/{USERNAME}/calendar/"
_CALENDAR_NAME = "Calendar"
_COMPONENTS = ["VEVENT", "VTODO", "VJOURNAL"]
_EXTRA_HINT = "install the embedded extra: pip install 'caldav-mcp[embedded]' or uvx --from 'caldav-mcp[embedded]'"
_PORT_ATTEMPTS = 3

logger = logging.getLogger(__name__)


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
    _shutdown: socket.socket = field(repr=False)
    _thread: threading.Thread = field(repr=False)
    _private: Path = field(repr=False)

    def stop(self, timeout: float = 10.0) -> None:
        """Stop accepting requests, let the running ones finish (up to ``timeout`` seconds) and forget the password."""
        self._shutdown.close()
        self._thread.join(timeout)
        shutil.rmtree(self._private, ignore_errors=True)


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


def start(folder: Path | None = None, *, ready_timeout: float = 10.0) -> EmbeddedRadicale:
    """Start Radicale on 127.0.0.1 and make sure the account has a calendar.

    Args:
        folder: Where to keep the data (absolute); default :func:`default_folder`.
        ready_timeout: Seconds to wait for Radicale to accept connections.

    Raises:
        SettingsError: The ``embedded`` extra is not installed.
        EmbeddedStartError: The folder cannot be used, Radicale did not start,
            or the first calendar could not be made.
    """
    try:
        import radicale.config
        import radicale.server
    except ImportError:
        raise SettingsError(f"CALDAV_EMBEDDED=true needs Radicale: {_EXTRA_HINT}") from None
    folder = folder or default_folder()
    if folder.exists() and not folder.is_dir():
        raise EmbeddedStartError(f"the embedded calendar folder {folder} cannot be used: it is not a folder")
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        (folder / "collection-root").mkdir(mode=0o700, exist_ok=True)  # Radicale's tree; made here, quietly
        with tempfile.TemporaryFile(dir=folder):
            pass  # the folder takes files
    except OSError as exc:
        raise EmbeddedStartError(f"the embedded calendar folder {folder} cannot be used: {exc.strerror}") from None
    logging.getLogger("radicale").setLevel(logging.WARNING)  # its per-request INFO lines are noise on stderr

    private = Path(tempfile.mkdtemp(prefix="caldav-mcp-"))
    password = secrets.token_urlsafe(32)
    users = private / "users"
    users.touch(mode=0o600)
    users.write_text(f"{USERNAME}:{password}\n", encoding="utf-8")
    try:
        for _ in range(_PORT_ATTEMPTS):
            port = _free_port()
            configuration = radicale.config.load([])  # defaults only: no system or user config file
            configuration.update(
                {
                    "server": {"hosts": f"127.0.0.1:{port}"},
                    "auth": {"type": "htpasswd", "htpasswd_filename": str(users), "htpasswd_encryption": "plain"},
                    "rights": {"type": "owner_only"},
                    "storage": {"filesystem_folder": str(folder)},
                    "web": {"type": "none"},
                },
                "caldav-mcp embedded",
            )
            shutdown, theirs = socket.socketpair()
            failure: list[BaseException] = []
            thread = threading.Thread(
                target=_serve, args=(radicale.server.serve, configuration, theirs, failure), daemon=True
            )
            thread.start()
            if _wait_ready(port, thread, ready_timeout):
                url = f"http://127.0.0.1:{port}/"
                server = EmbeddedRadicale(url, USERNAME, password, folder, shutdown, thread, private)
                try:
                    _ensure_calendar(server)
                except Exception:
                    server.stop()
                    raise
                return server
            shutdown.close()
            thread.join(ready_timeout)
            if not failure:
                raise EmbeddedStartError(f"the embedded Radicale did not answer within {ready_timeout:g} s")
            logger.warning("embedded Radicale could not listen on port %d (%s); trying another", port, failure[0])
        raise EmbeddedStartError("the embedded Radicale could not listen on 127.0.0.1")
    except BaseException:
        shutil.rmtree(private, ignore_errors=True)
        raise


def _serve(serve: Any, configuration: Any, shutdown: socket.socket, failure: list[BaseException]) -> None:
    try:
        serve(configuration, shutdown)
    except Exception as exc:  # reported by start(), which is waiting for this thread
        failure.append(exc)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_ready(port: int, thread: threading.Thread, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while thread.is_alive() and time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1) as probe:
            # A connection to itself (same port at both ends, possible while nobody listens) is not Radicale.
            if probe.getsockname() != probe.getpeername():
                return thread.is_alive()
        time.sleep(0.02)
    return False


def _ensure_calendar(server: EmbeddedRadicale) -> None:
    """Give the account its first calendar unless it already has one (any name)."""
    from caldav.davclient import DAVClient
    from caldav.lib import error

    client = DAVClient(url=server.url, username=server.username, password=server.password)
    try:
        principal = client.principal()
        if not principal.calendars():
            principal.make_calendar(
                name=_CALENDAR_NAME,
                cal_id=CALENDAR_PATH.strip("/").rsplit("/", 1)[-1],
                supported_calendar_component_set=_COMPONENTS,
            )
    except (error.DAVError, OSError) as exc:
        raise EmbeddedStartError(f"the embedded Radicale could not make the first calendar: {exc}") from None
    finally:
        client.close()
