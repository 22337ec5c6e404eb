"""webdav-core: the WebDAV layer the family's DAV servers share (one origin, bounded answers, confined hrefs).

A server describes itself with a :class:`Profile` and subclasses
:class:`WebDavClient`; see ``docs/adding-a-server.md`` for where each rule lives.
"""

from webdav_core.answer import Answer
from webdav_core.client import Account, SyncResult, WebDavClient, account_of
from webdav_core.discovery import Discovery
from webdav_core.errors import (
    BackendError,
    Conflict,
    DavError,
    Errors,
    Forbidden,
    InvalidId,
    NotFound,
    OffOrigin,
    PreconditionFailed,
    Rejected,
    TooLarge,
    Unauthenticated,
    Unreachable,
    errors_of,
)
from webdav_core.origin import OriginAuth, origin_of
from webdav_core.paths import MAX_ID_LENGTH, folder, member_in, resolve_path
from webdav_core.privileges import WRITE_PRIVILEGES, allows_write
from webdav_core.profile import Profile
from webdav_core.session import MAX_REDIRECTS, ConfinedSession
from webdav_core.statuses import raise_for_status
from webdav_core.versions import CollectionVersions, KeptByVersion
from webdav_core.xml import DavResponse, MultiStatus, norm_href, parse_multistatus

__all__ = [
    "MAX_ID_LENGTH",
    "MAX_REDIRECTS",
    "WRITE_PRIVILEGES",
    "Account",
    "Answer",
    "BackendError",
    "CollectionVersions",
    "ConfinedSession",
    "Conflict",
    "DavError",
    "DavResponse",
    "Discovery",
    "Errors",
    "Forbidden",
    "InvalidId",
    "KeptByVersion",
    "MultiStatus",
    "NotFound",
    "OffOrigin",
    "OriginAuth",
    "PreconditionFailed",
    "Profile",
    "Rejected",
    "SyncResult",
    "TooLarge",
    "Unauthenticated",
    "Unreachable",
    "WebDavClient",
    "account_of",
    "allows_write",
    "errors_of",
    "folder",
    "member_in",
    "norm_href",
    "origin_of",
    "parse_multistatus",
    "raise_for_status",
    "resolve_path",
]
