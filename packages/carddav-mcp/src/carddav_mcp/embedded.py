"""The opt-in embedded backend: a Radicale inside this process, on 127.0.0.1.

``CARDDAV_EMBEDDED=true`` lets a person try carddav-mcp from their MCP client
with no CardDAV server of their own. Radicale (the ``embedded`` extra,
``carddav-mcp[embedded]``) runs in a thread of the server process, so it stops
with the server and leaves nothing running behind it.

* 127.0.0.1 only. The listening socket is bound here, to port 0, before the
  port is known to anyone, and Radicale's WSGI application is served on it:
  no other local user can take the port in between and collect the password.
* One account, ``me``; its password is drawn afresh at each start
  (``secrets.token_urlsafe``, 32 bytes) and kept only in memory, checked by
  an in-memory Radicale auth plugin in constant time (``hmac.compare_digest``).
  No file ever holds it, however the process ends. Radicale's ``owner_only``
  rights apply.
* A thread per connection and a 30 s socket timeout: idle connections opened
  by someone else do not hold up the server's own requests.
* The contacts live in ``CARDDAV_EMBEDDED_DIR`` or else in the user's data
  folder (``platformdirs.user_data_path("carddav-mcp") / "radicale"``, which
  is ``~/.local/share/carddav-mcp/radicale`` on Linux), made with mode 0700.
  A folder that exists already must be a real folder (no symbolic link),
  this user's, and closed to others (POSIX). Radicale takes a lock on its
  storage for each request, so two servers on one folder (two MCP clients on
  one machine) can share it.
* The first start gives the account one address book, ``/me/contacts/``
  named "Contacts" (extended MKCOL, RFC 5689), unless it already has one.
* Radicale reads no configuration file of the machine or the user; its web
  interface is switched off.

caldav-mcp carries its own copy of this runner, so that each server installs
and is released on its own.
"""

from __future__ import annotations

import contextlib
import hmac
import os
import secrets
import stat
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from approval_core import SettingsError
from carddav_mcp.client import CardDavClient
from carddav_mcp.errors import BackendError
from carddav_mcp.settings import CardDavSettings

__all__ = ["ADDRESS_BOOK_PATH", "USERNAME", "EmbeddedRadicale", "EmbeddedStartError", "default_folder", "start"]

USERNAME = "me"
ADDRESS_BOOK_PATH = f"/{USERNAME}/contacts/"
_ADDRESS_BOOK_NAME = "Contacts"
_INSTALL = (
    "install its embedded extra, carddav-mcp[embedded]: from a clone of the repository, "
    "`uv run --package carddav-mcp --extra embedded carddav-mcp`; from the wheels `nox -s release` builds into dist/, "
    "`uvx --find-links dist/ --constraints dist/constraints.txt --from 'carddav-mcp[embedded]' carddav-mcp` "
    "(see docs/clients.md)"
)
_IDLE_SECONDS = 30.0  # a connection that stays silent longer is closed


class EmbeddedStartError(RuntimeError):
    """Radicale did not start, or the account's first address book could not be made (the text says which)."""


@dataclass(frozen=True)
class EmbeddedRadicale:
    """The running embedded Radicale.

    Attributes:
        settings: How to reach it (URL ``http://127.0.0.1:<port>/``, ``me``
            and this start's password).
        folder: Where the address books are kept.
    """

    settings: CardDavSettings
    folder: Path
    _http: Any = field(repr=False)  # a socketserver.BaseServer
    _loop: threading.Thread = field(repr=False)

    def stop(self) -> None:
        """Stop accepting requests and release the port."""
        self._http.shutdown()
        self._http.server_close()
        self._loop.join()


def default_folder() -> Path:
    """The user's data folder for the embedded address books.

    Raises:
        SettingsError: platformdirs (part of the ``embedded`` extra) is missing.
    """
    try:
        from platformdirs import user_data_path
    except ImportError:
        raise SettingsError(f"CARDDAV_EMBEDDED=true needs platformdirs: {_INSTALL}") from None
    return user_data_path("carddav-mcp", appauthor=False) / "radicale"


async def start(folder: Path | None = None) -> EmbeddedRadicale:
    """Run Radicale on 127.0.0.1 and give the account an address book if it has none.

    Args:
        folder: Absolute folder for the data; default :func:`default_folder`.

    Raises:
        SettingsError: The ``embedded`` extra is not installed.
        EmbeddedStartError: The folder is unusable (not a folder, a symbolic
            link, another user's, open to others), no port could be bound, or
            the first address book could not be made.
    """
    try:
        from radicale import app as radicale_app
        from radicale import auth as radicale_auth
        from radicale import config as radicale_config
        from radicale import server as radicale_server
    except ImportError:
        raise SettingsError(f"CARDDAV_EMBEDDED=true needs Radicale: {_INSTALL}") from None
    folder = folder or default_folder()
    for path in (folder, folder / "collection-root"):
        _make_private(path)
    password = secrets.token_urlsafe(32)
    expected = password.encode()

    class OneAccount(radicale_auth.BaseAuth):
        """The only account, ``me``, with this start's password (constant-time comparison)."""

        def _login(self, login: str, password: str) -> str:
            user_ok = hmac.compare_digest(login.encode(), USERNAME.encode())
            password_ok = hmac.compare_digest(password.encode(), expected)
            return USERNAME if user_ok and password_ok else ""

    configuration = radicale_config.load([])  # built-in defaults, no configuration file
    configuration.update(
        {
            "auth": {"type": OneAccount},
            "rights": {"type": "owner_only"},
            "storage": {"filesystem_folder": str(folder)},
            "web": {"type": "none"},
        },
        "carddav-mcp embedded",
    )
    configuration.update({"server": {"_internal_server": "True"}}, "carddav-mcp embedded", privileged=True)

    class Handler(radicale_server.RequestHandler):
        timeout = _IDLE_SECONDS

    try:
        http = _server_class()(("127.0.0.1", 0), Handler)  # listening before the port is told to anyone
    except OSError as exc:
        raise EmbeddedStartError(f"the embedded Radicale found no port on 127.0.0.1: {exc.strerror}") from None
    http.set_app(radicale_app.Application(configuration))
    loop = threading.Thread(target=http.serve_forever, name="embedded-radicale", daemon=True)
    loop.start()
    settings = CardDavSettings(url=f"http://127.0.0.1:{http.server_address[1]}/", username=USERNAME, password=password)
    embedded = EmbeddedRadicale(settings, folder, http, loop)
    try:
        await _ensure_address_book(settings)
    except BaseException:
        embedded.stop()
        raise
    return embedded


def _server_class() -> type[Any]:
    """A threading WSGI server; its modules (http.server and more) imported only when Radicale is embedded."""
    import socketserver
    import wsgiref.simple_server

    class Server(socketserver.ThreadingMixIn, wsgiref.simple_server.WSGIServer):
        daemon_threads = True
        block_on_close = False

    return Server


def _make_private(path: Path) -> None:
    """Make ``path`` a 0700 folder, or accept an existing one only if it is a private folder of this user's."""
    try:
        with contextlib.suppress(FileExistsError):  # an existing one is checked below
            path.mkdir(mode=0o700, parents=True)
        info = path.lstat()
    except OSError as exc:
        raise EmbeddedStartError(f"the embedded address-book folder {path} cannot be used: {exc.strerror}") from None
    if stat.S_ISLNK(info.st_mode):
        why = "it is a symbolic link; give the folder it points to"
    elif not stat.S_ISDIR(info.st_mode):
        why = "it is not a folder"
    elif os.name == "posix" and info.st_uid != os.getuid():
        why = "it belongs to another user"
    elif os.name == "posix" and info.st_mode & 0o077:
        why = f"other users have access to it (mode {stat.S_IMODE(info.st_mode):o}); make it private with chmod 700"
    else:
        return
    raise EmbeddedStartError(f"the embedded address-book folder {path} cannot be used: {why}")


async def _ensure_address_book(settings: CardDavSettings) -> None:
    """Make the first address book unless one exists; a MKCOL lost to a second server starting alongside is fine."""
    client = CardDavClient(settings)
    try:
        if not await client.address_books():
            try:
                await client.make_address_book(ADDRESS_BOOK_PATH, _ADDRESS_BOOK_NAME)
            except BackendError:
                if not await client.address_books():
                    raise
    except BackendError as exc:
        raise EmbeddedStartError(f"the embedded Radicale could not make the first address book: {exc}") from None
    finally:
        await client.aclose()
