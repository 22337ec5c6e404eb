"""Who can reach this instance: list_users, and the guarded create_user, delete_user, manage_user_access.

These need an admin account (ntfy's ``/v1/users`` API). Each guarded tool
reads the user list first, so a call that would fail (the user exists, does
not exist, is an admin) fails before anybody is asked. The account as read (its
role and access rules) goes to the approval page alone (:mod:`ntfy_mcp.stored`).
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

import mcp_types as mt
from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field

from approval_core import NotApproved, StoredView, annotations, structured
from approval_core.serving.stored_text import quoted_name
from ntfy_mcp import stored
from ntfy_mcp.app import NtfyApp
from ntfy_mcp.dialogs import access_dialog, create_user_dialog, delete_user_dialog
from ntfy_mcp.errors import ChangedMeanwhile, InputError, OutsideAllowedTopics
from ntfy_mcp.outputs import AccessResult, Grant, User, UserResult, Users

__all__ = ["register"]

USERNAME = re.compile(r"^[-_.+@a-zA-Z0-9]{1,64}$")
"""ntfy's username rule (letters, digits and ``-_.+@``), capped here at 64 characters."""
TOPIC_RULE = re.compile(r"^[-_*A-Za-z0-9]{1,64}$")
"""A topic or topic pattern in an access rule (``*`` is a wildcard)."""
EVERYONE = "*"

Username = Annotated[str, Field(min_length=1, max_length=64, description="An ntfy username")]
ConfirmToken = Annotated[
    str | None, Field(description="Only where no dialog can be shown: the token from the first call")
]
Permission = Literal["read-write", "read-only", "write-only", "deny-all", "remove"]


def _user(raw: dict[str, Any]) -> User:
    listed: list[dict[str, Any]] = list(raw.get("grants") or [])
    grants = [Grant(topic=str(g.get("topic")), permission=str(g.get("permission"))) for g in listed]
    return User(name=str(raw.get("username")), role=str(raw.get("role")), grants=grants)


def within(pattern: str, topics: tuple[str, ...]) -> bool:
    """Whether an access rule on ``pattern`` may be shown while ``NTFY_TOPICS`` is ``topics``.

    A topic name is shown when it is listed; a pattern (``*`` matches any run of characters, as ntfy reads
    it) when it matches a listed topic, so every letter it shows is part of a listed name. With no list
    (every topic allowed), everything is shown.
    """
    if not topics:
        return True
    if "*" not in pattern:
        return pattern in topics
    rule = re.compile(".*".join(re.escape(part) for part in pattern.split("*")))
    return any(rule.fullmatch(topic) for topic in topics)


def restated(user: User, topics: tuple[str, ...]) -> User:
    """``user`` with only the rules :func:`within` ``topics``; the others counted in ``other_rules``.

    On ntfy a topic's name is often all that protects it, so a rule on a topic outside ``NTFY_TOPICS``
    must not hand its name to the model (list_users).
    """
    shown = [g for g in user.grants if within(g.topic, topics)]
    return user.model_copy(update={"grants": shown, "other_rules": len(user.grants) - len(shown)})


def _standing(user: User) -> str:
    """The version an admin approval binds: the account's role and rules as read (ntfy gives no ETag)."""
    rules = ",".join(sorted(f"{g.topic}={g.permission}" for g in user.grants))
    return f"role={user.role};rules={rules}"


def _check_username(username: str, *, everyone: bool = False) -> str:
    if everyone and username == EVERYONE:
        return username
    if not USERNAME.match(username):
        raise InputError(
            f"username: {quoted_name(username)} is not an ntfy username (letters, digits and -_.+@, up to 64)"
        )
    return username


def register(server: MCPServer[Any], app: NtfyApp) -> None:
    """Add the four user and access tools to ``server``."""

    async def users() -> dict[str, User]:
        return {u.name: u for u in map(_user, await app.client.users())}

    async def _unchanged(username: str, standing: str) -> None:
        """Read the user list again after the answer: the account must stand as it did when asked about.

        ntfy's admin API has no conditional write; this re-read right before the write is the check.

        Raises:
            ChangedMeanwhile: the account's role or rules changed, or it is gone.
        """
        now = (await users()).get(username)
        if now is None or _standing(now) != standing:
            raise ChangedMeanwhile(
                f"username: the account {quoted_name(username)} changed while the person was being asked (its role or "
                "access rules, or it is gone); nothing was done. Call again to be asked about it as it is now."
            )

    @server.tool(annotations=annotations(read_only=True, destructive=False, idempotent=True, open_world=True))
    async def list_users() -> Annotated[mt.CallToolResult, Users]:
        """The instance's users with role and access rules (admin credentials). No hashes, no tokens.

        While NTFY_TOPICS is set, a user's rules on other topics are counted (other_rules), not named.
        """
        found = await users()
        return structured(Users(users=[restated(user, app.settings.topics) for user in found.values()]))

    @server.tool(annotations=annotations(read_only=False, destructive=False, idempotent=False, open_world=True))
    async def create_user(
        ctx: Context,
        username: Username,
        password: Annotated[str, Field(min_length=8, max_length=256, description="Never shown or logged")],
        confirm_token: ConfirmToken = None,
    ) -> Annotated[mt.CallToolResult, UserResult] | mt.InputRequiredResult:
        """Create a user account (role user, no access yet). Always asks a person first.

        Guarded though it takes nothing away: a new account changes who can
        reach this instance. The password is neither shown in the dialog nor
        part of what an approval is bound to.
        """
        _check_username(username)
        if username in await users():
            raise InputError(f"username: an account {quoted_name(username)} already exists")
        decision = await app.gate.check(
            ctx,
            tool="create_user",
            target={"username": username, "password": password},
            exclude=["password"],
            dialog=create_user_dialog(username),
            confirm_token=confirm_token,
            stored=StoredView(entries=(stored.account(app.settings.url, username, None),)),
        )
        if isinstance(decision, NotApproved):
            return decision.result
        await app.client.create_user(username, password)
        return structured(UserResult(username=username, created=True))

    @server.tool(annotations=annotations(read_only=False, destructive=True, idempotent=True, open_world=True))
    async def delete_user(
        ctx: Context,
        username: Username,
        confirm_token: ConfirmToken = None,
    ) -> Annotated[mt.CallToolResult, UserResult] | mt.InputRequiredResult:
        """Delete a user account with its access rules and tokens. Always asks a person first."""
        _check_username(username)
        found = (await users()).get(username)
        if found is None:
            raise InputError(f"username: there is no account {quoted_name(username)}")
        if found.role == "admin":
            raise InputError(
                f"username: {quoted_name(username)} is an admin; ntfy does not delete admins through its API"
            )
        decision = await app.gate.check(
            ctx,
            tool="delete_user",
            version=_standing(found),
            target={"username": username},
            dialog=delete_user_dialog(username, len(found.grants)),
            confirm_token=confirm_token,
            stored=StoredView(entries=(stored.account(app.settings.url, username, found),)),
        )
        if isinstance(decision, NotApproved):
            return decision.result
        await _unchanged(username, _standing(found))
        await app.client.delete_user(username)
        return structured(UserResult(username=username, deleted=True))

    @server.tool(annotations=annotations(read_only=False, destructive=True, idempotent=True, open_world=True))
    async def manage_user_access(
        ctx: Context,
        username: Annotated[str, Field(min_length=1, max_length=64, description="A username, or * for everyone")],
        topic: Annotated[str, Field(min_length=1, max_length=64, description="A topic, or a pattern with *")],
        permission: Annotated[Permission, Field(description="The rule to write, or remove to delete the rule")],
        confirm_token: ConfirmToken = None,
    ) -> Annotated[mt.CallToolResult, AccessResult] | mt.InputRequiredResult:
        """Write or remove one access rule (username, topic, permission). Always asks a person first.

        While NTFY_TOPICS is set, only those topics may be named and a
        wildcard pattern is refused.
        """
        _check_username(username, everyone=True)
        if not TOPIC_RULE.match(topic):
            raise InputError(f"topic: {quoted_name(topic)} is not a topic or pattern (letters, digits, '-', '_', '*')")
        allowed = app.settings.topics
        if allowed and "*" in topic:
            raise OutsideAllowedTopics(
                f"topic: a wildcard rule ({quoted_name(topic)}) is refused while NTFY_TOPICS is set"
            )
        if allowed and topic not in allowed:
            raise OutsideAllowedTopics(f"topic: {quoted_name(topic)} is outside NTFY_TOPICS ({', '.join(allowed)})")
        found = (await users()).get(username)
        if found is None:
            raise InputError(f"username: there is no account {quoted_name(username)}")
        if found.role == "admin":
            raise InputError(
                f"username: {quoted_name(username)} is an admin, who may use every topic; rules do not apply"
            )
        existing = sum(g.topic == topic for g in found.grants)
        if permission == "remove" and not existing:
            raise InputError(f"topic: {quoted_name(username)} has no rule for {quoted_name(topic)} to remove")
        change = stored.access_change(found, topic, permission)
        decision = await app.gate.check(
            ctx,
            tool="manage_user_access",
            version=_standing(found),
            target={"rule": (username, topic, permission)},
            dialog=access_dialog(username, topic, permission, existing),
            confirm_token=confirm_token,
            stored=StoredView(entries=(stored.account(app.settings.url, username, found, changes=[change]),)),
        )
        if isinstance(decision, NotApproved):
            return decision.result
        await _unchanged(username, _standing(found))
        if permission == "remove":
            await app.client.reset_access(username, topic)
        else:
            await app.client.set_access(username, topic, permission)
        return structured(
            AccessResult(username=username, topic=topic, permission=permission.replace("remove", "removed"))
        )
