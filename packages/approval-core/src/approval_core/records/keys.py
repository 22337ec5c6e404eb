"""The key file shared by the replicas of one deployment, and the keys derived from it.

``APPROVAL_KEY_FILE`` names a text file: one key per line, the base64
(standard or url-safe, padding optional) of at least 32 random bytes. The
first key is the *current* one: it seals. Every later key is a *previous* key,
still accepted when opening, so a rotation never breaks a question already
out. Blank lines and lines starting with ``#`` are ignored. The file must not
be readable or writable by group or others (mode ``0600`` or stricter). A key
that cannot have come from a random source (:func:`degenerate`: all zero, one
byte repeated, a short pattern repeated, a counting sequence) is refused.

No key is used as it stands: each purpose gets its own 32-byte key derived
with HKDF-SHA256 (RFC 5869) under a purpose label, so the key that seals
approval-core's state never equals the one the MCP SDK encrypts its
``requestState`` envelope with.

Command line (``python -m approval_core keys``):

``new FILE``
    Write a fresh key file (one current key), mode 0600; refuses to overwrite.
``rotate FILE``
    Put a fresh key first; the old current key becomes the previous one; keys
    older than that are dropped (keep ``--keep N`` previous keys, default 1).
"""

from __future__ import annotations

import base64
import binascii
import itertools
import os
import secrets
import stat
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cryptography.hazmat.primitives.hashes import SHA256
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from approval_core.errors import SettingsError

__all__ = [
    "BODY_DIGEST_PURPOSE",
    "JOURNAL_PURPOSE",
    "KEY_FILE_ENV",
    "MIN_KEY_BYTES",
    "PAGE_PURPOSE",
    "RECORD_NAMESPACE_PURPOSE",
    "SDK_STATE_PURPOSE",
    "STATE_SEAL_PURPOSE",
    "KeyRing",
    "new_key_line",
    "read_key_file",
    "record_namespace",
    "rotate_key_file",
    "write_new_key_file",
]

KEY_FILE_ENV = "APPROVAL_KEY_FILE"
MIN_KEY_BYTES = 32
STATE_SEAL_PURPOSE = b"approval-core/v1/state-hmac"
"""HKDF label of the key approval-core's input_required state is sealed with."""
SDK_STATE_PURPOSE = b"approval-core/v1/mcp-request-state"
PAGE_PURPOSE = b"approval-core/v1/approval-page"
RECORD_NAMESPACE_PURPOSE = b"approval-core/v1/record-namespace"
BODY_DIGEST_PURPOSE = b"approval-core/v1/every-write-body"
JOURNAL_PURPOSE = b"approval-core/v1/undo-journal"
"""HKDF label of the AES-256-GCM key that seals the undo journal's entries (:mod:`approval_core.records.journal`)."""
"""Derives the deployment's identity in the shared store's keys, so two deployments sharing one Redis are apart."""
"""Derives the approval page's key (its CSRF tokens), so every replica checks what another issued."""
"""HKDF label of the secret handed to the MCP SDK's ``RequestStateSecurity(keys=...)``."""


@dataclass(frozen=True, slots=True)
class KeyRing:
    """The keys of a key file: ``keys[0]`` is current, the rest are previous keys.

    Attributes:
        keys: Raw key bytes, each at least :data:`MIN_KEY_BYTES` long, current first.
        source: Where they came from (a path, for messages); never a key.
    """

    keys: tuple[bytes, ...]
    source: str = ""

    def __post_init__(self) -> None:
        if not self.keys:
            raise ValueError("a key ring needs at least one key")
        if any(len(key) < MIN_KEY_BYTES for key in self.keys):
            raise ValueError(f"every key must be at least {MIN_KEY_BYTES} bytes")

    def derive(self, purpose: bytes) -> tuple[bytes, ...]:
        """The 32-byte keys for ``purpose`` (HKDF-SHA256, no salt, ``info=purpose``), current first."""
        return tuple(HKDF(algorithm=SHA256(), length=32, salt=None, info=purpose).derive(key) for key in self.keys)

    def __repr__(self) -> str:
        return f"KeyRing(<{len(self.keys)} keys>, source={self.source!r})"


def _decode_key(text: str) -> bytes | None:
    standard = text.replace("-", "+").replace("_", "/")
    try:
        return base64.b64decode(standard + "=" * (-len(standard) % 4), validate=True)
    except (ValueError, binascii.Error):
        return None


MIN_DISTINCT_BYTES = 16
"""The fewest different byte values a key may hold: 32 random bytes hold about 30, and fewer than 16 happens
by chance with a probability far below 2**-100."""


def degenerate(key: bytes) -> bool:
    """Whether ``key`` is plainly not random.

    That is: fewer than :data:`MIN_DISTINCT_BYTES` different byte values (all zero, one byte repeated, a short
    pattern repeated), or a counting sequence (each byte the last plus a constant, modulo 256).
    """
    if len(set(key)) < MIN_DISTINCT_BYTES:
        return True
    steps = {(b - a) % 256 for a, b in itertools.pairwise(key)}
    return len(steps) == 1


def read_key_file(path: str | os.PathLike[str]) -> KeyRing:
    """Read and check a key file (see the module docstring).

    Raises:
        SettingsError: the file cannot be read, is readable or writable by
            group or others, holds no key, or holds a line that is not base64
            of at least 32 bytes. The message names ``APPROVAL_KEY_FILE``, the
            file and (for a bad line) its line number, never a key.
    """
    where = f"{KEY_FILE_ENV}={os.fspath(path)!r}"
    try:
        mode = os.stat(path).st_mode
        if not stat.S_ISREG(mode):  # checked before opening: a FIFO would block the start
            raise SettingsError(f"{where} is not a regular file")
        with open(path, "rb") as handle:
            mode = os.fstat(handle.fileno()).st_mode
            raw = handle.read(1 << 16)
    except OSError as exc:
        raise SettingsError(f"{where} cannot be read: {exc.strerror or exc}") from None
    if mode & 0o077:
        raise SettingsError(
            f"{where} has mode {stat.S_IMODE(mode):04o}: a key file must not be open to group or others "
            f"(chmod 600 {os.fspath(path)})"
        )
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError:
        raise SettingsError(f"{where} is not a text file of base64 keys") from None
    keys: list[bytes] = []
    for number, line in enumerate(text.splitlines(), start=1):
        entry = line.strip()
        if not entry or entry.startswith("#"):
            continue
        key = _decode_key(entry)
        if key is None:
            raise SettingsError(f"{where}: line {number} is not base64 (one key per line)")
        if len(key) < MIN_KEY_BYTES:
            raise SettingsError(
                f"{where}: line {number} holds {len(key)} bytes; a key must be at least {MIN_KEY_BYTES} random bytes"
            )
        if degenerate(key):
            raise SettingsError(
                f"{where}: line {number} is not a random key (all zero, a repeated pattern or a counting sequence): "
                "make one with: python -m approval_core keys new FILE"
            )
        keys.append(key)
    if not keys:
        raise SettingsError(f"{where} holds no key (one base64 key per line, the current key first)")
    return KeyRing(tuple(keys), os.fspath(path))


def new_key_line() -> str:
    """A fresh key: url-safe base64 of 32 random bytes (``secrets.token_bytes``)."""
    return base64.urlsafe_b64encode(secrets.token_bytes(MIN_KEY_BYTES)).decode("ascii")


_HEADER = "# approval-core key file: the first key seals, every key opens. Keep it 0600.\n"


def _write_private(path: Path, text: str, *, exclusive: bool) -> None:
    flags = os.O_WRONLY | os.O_CREAT | (os.O_EXCL if exclusive else os.O_TRUNC)
    if exclusive:
        fd = os.open(path, flags, 0o600)
        with os.fdopen(fd, "w", encoding="ascii") as handle:
            handle.write(text)
        return
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as handle:
        handle.write(text)
    os.replace(temporary, path)


def write_new_key_file(path: str | os.PathLike[str]) -> None:
    """Create ``path`` with one fresh current key, mode 0600.

    Raises:
        FileExistsError: ``path`` exists (a key file is never overwritten by ``new``).
    """
    _write_private(Path(path), _HEADER + new_key_line() + "\n", exclusive=True)


def rotate_key_file(path: str | os.PathLike[str], keep: int = 1) -> KeyRing:
    """Put a fresh key first in ``path``, keeping ``keep`` previous keys (the newest ones).

    The file is replaced atomically (a temporary file in the same folder,
    mode 0600, then ``os.replace``). Roll the new file out to every replica;
    a state sealed before the rotation still opens while its old key is listed.

    Raises:
        SettingsError: the existing file is not a valid key file (see :func:`read_key_file`).
        ValueError: ``keep`` is negative.
    """
    if keep < 0:
        raise ValueError("keep must be 0 or more")
    ring = read_key_file(path)
    kept = [base64.urlsafe_b64encode(key).decode("ascii") for key in ring.keys[:keep]]
    _write_private(Path(path), _HEADER + "\n".join([new_key_line(), *kept]) + "\n", exclusive=False)
    return read_key_file(path)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m approval_core keys new FILE | rotate FILE [--keep N]``; returns the exit code."""
    import argparse  # the command line only: a server's start does not need it

    parser = argparse.ArgumentParser(prog="python -m approval_core keys", description="Make or rotate a key file.")
    commands = parser.add_subparsers(dest="command", required=True)
    new = commands.add_parser("new", help="create a key file with one fresh key (mode 0600)")
    new.add_argument("file")
    rotate = commands.add_parser("rotate", help="put a fresh key first; keep the newest previous keys")
    rotate.add_argument("file")
    rotate.add_argument("--keep", type=int, default=1, help="previous keys to keep (default 1)")
    args = parser.parse_args(argv)
    try:
        if args.command == "new":
            write_new_key_file(args.file)
            print(f"{args.file}: new key file, one current key", file=sys.stderr)
        else:
            ring = rotate_key_file(args.file, args.keep)
            print(f"{args.file}: rotated, {len(ring.keys)} keys (the first is current)", file=sys.stderr)
    except FileExistsError:
        print(f"{args.file} exists; use 'rotate' to add a key to it", file=sys.stderr)
        return 1
    except (SettingsError, ValueError) as exc:
        print(str(exc), file=sys.stderr)
        return 1
    except OSError as exc:  # a missing folder, no right to write there
        print(f"{args.file}: cannot be written: {exc.strerror or type(exc).__name__}", file=sys.stderr)
        return 1
    return 0


def record_namespace(server_name: str, key_ring: KeyRing | None) -> str:
    """``<server name>:<deployment id>``: the shared store's namespace of one deployment of a server.

    The deployment id is 12 hex digits derived from the current key of
    ``APPROVAL_KEY_FILE``, so two deployments sharing one Redis, each with its
    own key file, never see each other's records. A key rotation starts a new
    namespace: questions and tokens in flight are then asked again or refused.
    Without a key file it is the server's name.
    """
    if key_ring is None:
        return server_name
    return f"{server_name}:{key_ring.derive(RECORD_NAMESPACE_PURPOSE)[0][:6].hex()}"
