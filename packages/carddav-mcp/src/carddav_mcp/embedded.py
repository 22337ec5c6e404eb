"""The opt-in embedded backend: a Radicale inside this process, on 127.0.0.1.

``CARDDAV_EMBEDDED=true`` lets a person try carddav-mcp from their MCP client
with no CardDAV server of their own. Radicale (the ``embedded`` extra,
``carddav-mcp[embedded]``) runs in a thread of the server process, so it stops
with the server and leaves nothing running behind it.

* 127.0.0.1 only, on a port the system picks at each start.
* One account, ``me``; its password is drawn afresh at each start
  (``secrets.token_urlsafe``, 32 bytes) and written only to a private
  temporary file, removed at stop, so another local user who finds the port
  cannot read or change the contacts. Radicale's ``owner_only`` rights apply.
* The contacts live in ``CARDDAV_EMBEDDED_DIR`` or else in the user's data
  folder (``platformdirs.user_data_path("carddav-mcp") / "radicale"``, which
  is ``~/.local/share/carddav-mcp/radicale`` on Linux), made with mode 0700.
  Radicale takes a lock on its storage for each request, so two servers on one
  folder (two MCP clients on one machine) can share it.
* The first start gives the account one address book, ``/me/contacts/``
  named "Contacts" (extended MKCOL, RFC 5689), unless it already has one.
* Radicale reads no configuration file of the machine or the user; its web
  interface is switched off.

caldav-mcp carries its own copy of this runner (about a screenful), so that
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

import anyio

from approval_core import SettingsError
from carddav_mcp.client import CardDavClient
from carddav_mcp.errors import BackendError
from carddav_mcp.settings import CardDavSettings

__all__ = ["ADDRESS_BOOK_PATH", "USERNAME", "EmbeddedRadicale", "EmbeddedStartError", "default_folder", "start"]

USERNAME = "me"
ADDRESS_BOOK_PATH = f"/{USERNAME}/contacts/"
_ADDRESS_BOOK_NAME = "Contacts"
_INSTALL = "install the embedded extra: pip install 'carddav-mcp[embedded]' or uvx --from 'carddav-mcp[embedded]'"
_TRIES = 3

logger = logging.getLogger(__name__)


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
    _stop_signal: socket.socket = field(repr=False)
    _runner: threading.Thread = field(repr=False)
    _secrets: Path = field(repr=False)

    def stop(self, grace: float = 10.0) -> None:
        """Refuse new requests, give running ones ``grace`` seconds to finish, delete the password file."""
        self._stop_signal.close()
        self._runner.join(grace)
        shutil.rmtree(self._secrets, ignore_errors=True)


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


async def start(folder: Path | None = None, *, ready_timeout: float = 10.0) -> EmbeddedRadicale:
    """Run Radicale on 127.0.0.1 and give the account an address book if it has none.

    Args:
        folder: Absolute folder for the data; default :func:`default_folder`.
        ready_timeout: Seconds Radicale may take to accept connections.

    Raises:
        SettingsError: The ``embedded`` extra is not installed.
        EmbeddedStartError: The folder is unusable, Radicale did not start,
            or the first address book could not be made.
    """
    try:
        from radicale import config as radicale_config
        from radicale import server as radicale_server
    except ImportError:
        raise SettingsError(f"CARDDAV_EMBEDDED=true needs Radicale: {_INSTALL}") from None
    folder = folder or default_folder()
    if folder.exists() and not folder.is_dir():
        raise EmbeddedStartError(f"the embedded address-book folder {folder} cannot be used: it is not a folder")
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        (folder / "collection-root").mkdir(mode=0o700, exist_ok=True)  # Radicale's tree; made here, quietly
        with tempfile.TemporaryFile(dir=folder):
            pass  # the folder takes files
    except OSError as exc:
        raise EmbeddedStartError(f"the embedded address-book folder {folder} cannot be used: {exc.strerror}") from None
    logging.getLogger("radicale").setLevel(logging.WARNING)

    secrets_dir = Path(tempfile.mkdtemp(prefix="carddav-mcp-"))
    try:
        password = secrets.token_urlsafe(32)
        htpasswd = secrets_dir / "users"
        htpasswd.touch(mode=0o600)
        htpasswd.write_text(f"{USERNAME}:{password}\n", encoding="utf-8")
        for _ in range(_TRIES):
            port = _unused_port()
            configuration = radicale_config.load([])  # built-in defaults, no configuration file
            configuration.update(
                {
                    "server": {"hosts": f"127.0.0.1:{port}"},
                    "auth": {"type": "htpasswd", "htpasswd_filename": str(htpasswd), "htpasswd_encryption": "plain"},
                    "rights": {"type": "owner_only"},
                    "storage": {"filesystem_folder": str(folder)},
                    "web": {"type": "none"},
                },
                "carddav-mcp embedded",
            )
            stop_signal, radicale_end = socket.socketpair()
            errors: list[Exception] = []
            runner = threading.Thread(
                target=_run, args=(radicale_server.serve, configuration, radicale_end, errors), daemon=True
            )
            runner.start()
            if await _listening(port, runner, ready_timeout):
                settings = CardDavSettings(url=f"http://127.0.0.1:{port}/", username=USERNAME, password=password)
                embedded = EmbeddedRadicale(settings, folder, stop_signal, runner, secrets_dir)
                try:
                    await _ensure_address_book(settings)
                except BaseException:
                    embedded.stop()
                    raise
                return embedded
            stop_signal.close()
            runner.join(ready_timeout)
            if not errors:
                raise EmbeddedStartError(f"the embedded Radicale did not answer within {ready_timeout:g} s")
            logger.warning("embedded Radicale could not listen on port %d (%s); trying another", port, errors[0])
        raise EmbeddedStartError("the embedded Radicale found no port to listen on at 127.0.0.1")
    except BaseException:
        shutil.rmtree(secrets_dir, ignore_errors=True)
        raise


def _run(serve: Any, configuration: Any, stop_signal: socket.socket, errors: list[Exception]) -> None:
    try:
        serve(configuration, stop_signal)
    except Exception as exc:  # start() reads it once this thread has ended
        errors.append(exc)


def _unused_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


async def _listening(port: int, runner: threading.Thread, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while runner.is_alive() and time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1) as probe:
            # A connection to itself (same port at both ends, possible while nobody listens) is not Radicale.
            if probe.getsockname() != probe.getpeername():
                return runner.is_alive()
        await anyio.sleep(0.02)
    return False


async def _ensure_address_book(settings: CardDavSettings) -> None:
    client = CardDavClient(settings)
    try:
        if not await client.address_books():
            await client.make_address_book(ADDRESS_BOOK_PATH, _ADDRESS_BOOK_NAME)
    except BackendError as exc:
        raise EmbeddedStartError(f"the embedded Radicale could not make the first address book: {exc}") from None
    finally:
        await client.aclose()
