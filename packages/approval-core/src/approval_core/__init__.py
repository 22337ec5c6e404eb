"""approval-core: asking a person before an MCP tool does something irreversible.

One gate for every server of the family. A server says *which* tools ask
(:class:`GuardTable`), *when* (:class:`Guard`), and *what the dialog says*
(:class:`Dialog`); the gate does the asking, on MCP 2025-11-25 (a pushed
form elicitation) and 2026-07-28 (``input_required`` with sealed, single-use
state), and, where no dialog can be shown, sends the person to the approval
page (a passkey approves there) or falls back to a two-call confirm token.
See docs/approval.md for the paths and what each one proves.
"""

from approval_core.asking.answers import client_can_show_form, judge_answer
from approval_core.asking.binding import Binding, canonical_json, fingerprint
from approval_core.asking.capabilities import install_one_capability_set
from approval_core.asking.dialog import (
    APPROVE_FIELD,
    APPROVE_TITLE,
    CALLER_VALUES_HEADING,
    DEFAULT_VALUE_LIMIT,
    CallerValue,
    Dialog,
    Operation,
    operation,
    undoable,
)
from approval_core.asking.recovery import StateRecovery, install_state_recovery, share_sdk_state_keys
from approval_core.asking.results import APPROVAL_META_KEY, approval_outcome, refusal, structured
from approval_core.asking.sealing import STATE_TTL, StateSealer
from approval_core.asking.tokens import TOKEN_TTL, Redemption, TokenStore
from approval_core.errors import ApprovalError, BindingError, DialogError, GuardTableError, SettingsError
from approval_core.every_write.profile import install_every_write
from approval_core.every_write.requests import RequestLine, WriteDialog
from approval_core.every_write.scope import (
    before_send,
    chosen_by_server,
    origin_text,
    plan_writes,
    show_stored,
    stable,
)
from approval_core.gate import (
    INPUT_KEY,
    VERSION_KEY,
    ApprovalGate,
    Approved,
    Decision,
    NotApproved,
    PathName,
)
from approval_core.page.approval_page import ApprovalPage
from approval_core.page.loopback import running_page
from approval_core.page.passkeys import PasskeyFile
from approval_core.page.pending import PendingApproval, PendingBook
from approval_core.page.settings import PAGE_ENV, PageSettings
from approval_core.page.stored import Change, Collection, SentBody, StoredEntry, StoredField, StoredView
from approval_core.policy import (
    Effect,
    Guard,
    GuardedCall,
    GuardKind,
    GuardTable,
    Mismatch,
    MismatchKind,
    annotations,
    effects,
)
from approval_core.records.audit import AUDIT_LOGGER
from approval_core.records.journal import Journal, JournalEntry, JournalUnavailable, Keeping
from approval_core.records.keys import KEY_FILE_ENV, KeyRing, read_key_file
from approval_core.records.redis_store import RedisStore
from approval_core.records.restorable import (
    RESTORE_ID_PATTERN,
    Restorable,
    RestorableList,
    Restored,
    RestoreIdArg,
    RestoreTokenArg,
    restorable,
)
from approval_core.records.store import MemoryStore, RecordStore, StoreUnavailable
from approval_core.serving.boundary import Translator, install_error_boundary
from approval_core.serving.equip import equip, run
from approval_core.serving.portable import install_portable_schemas, mapping_from_pairs, portable_schema
from approval_core.serving.progress import report_progress
from approval_core.serving.remote import HttpSettings, serve
from approval_core.serving.startup import (
    announce,
    backend_settings_or_exit,
    collector_paused,
    configure_logging,
    exit_on_bad_setting,
    load_settings_or_exit,
    say,
    startup_line,
)
from approval_core.settings import (
    DEFAULT_DIALOG_TIMEOUT,
    ELICITATION_ENV,
    PROFILE_ENV,
    STORE_URL_ENV,
    TIMEOUT_ENV,
    UNDO_DAYS_ENV,
    ApprovalSettings,
)

__all__ = [
    "APPROVAL_META_KEY",
    "APPROVE_FIELD",
    "APPROVE_TITLE",
    "AUDIT_LOGGER",
    "CALLER_VALUES_HEADING",
    "DEFAULT_DIALOG_TIMEOUT",
    "DEFAULT_VALUE_LIMIT",
    "ELICITATION_ENV",
    "INPUT_KEY",
    "KEY_FILE_ENV",
    "PAGE_ENV",
    "PROFILE_ENV",
    "RESTORE_ID_PATTERN",
    "STATE_TTL",
    "STORE_URL_ENV",
    "TIMEOUT_ENV",
    "TOKEN_TTL",
    "UNDO_DAYS_ENV",
    "VERSION_KEY",
    "ApprovalError",
    "ApprovalGate",
    "ApprovalPage",
    "ApprovalSettings",
    "Approved",
    "Binding",
    "BindingError",
    "CallerValue",
    "Change",
    "Collection",
    "Decision",
    "Dialog",
    "DialogError",
    "Effect",
    "Guard",
    "GuardKind",
    "GuardTable",
    "GuardTableError",
    "GuardedCall",
    "HttpSettings",
    "Journal",
    "JournalEntry",
    "JournalUnavailable",
    "Keeping",
    "KeyRing",
    "MemoryStore",
    "Mismatch",
    "MismatchKind",
    "NotApproved",
    "Operation",
    "PageSettings",
    "PasskeyFile",
    "PathName",
    "PendingApproval",
    "PendingBook",
    "RecordStore",
    "Redemption",
    "RedisStore",
    "RequestLine",
    "Restorable",
    "RestorableList",
    "RestoreIdArg",
    "RestoreTokenArg",
    "Restored",
    "SentBody",
    "SettingsError",
    "StateRecovery",
    "StateSealer",
    "StoreUnavailable",
    "StoredEntry",
    "StoredField",
    "StoredView",
    "TokenStore",
    "Translator",
    "WriteDialog",
    "annotations",
    "announce",
    "approval_outcome",
    "backend_settings_or_exit",
    "before_send",
    "canonical_json",
    "chosen_by_server",
    "client_can_show_form",
    "collector_paused",
    "configure_logging",
    "effects",
    "equip",
    "exit_on_bad_setting",
    "fingerprint",
    "install_error_boundary",
    "install_every_write",
    "install_one_capability_set",
    "install_portable_schemas",
    "install_state_recovery",
    "judge_answer",
    "load_settings_or_exit",
    "mapping_from_pairs",
    "operation",
    "origin_text",
    "plan_writes",
    "portable_schema",
    "read_key_file",
    "refusal",
    "report_progress",
    "restorable",
    "run",
    "running_page",
    "say",
    "serve",
    "share_sdk_state_keys",
    "show_stored",
    "stable",
    "startup_line",
    "structured",
    "undoable",
]
