"""A real browser for the approval page's tests: Debian's Chromium, headless, driven by Playwright.

Nothing here is a double: the page runs in Chromium, and the person's passkey
is a WebAuthn virtual authenticator of the DevTools protocol (CTAP2, internal
transport, resident keys, user verification), which Chromium treats like a
platform authenticator. Each :class:`Browser` has its own context and its own
authenticator, so a second browser holds none of the first one's passkeys.

Needs ``/usr/bin/chromium`` (Debian's ``chromium``; ``.ci/run`` installs
it). Playwright's own browser download is never used. Where Chromium is
missing, :class:`BrowserUnavailable` says the exact step; tests fail with
it, never skip.
"""

from __future__ import annotations

import contextlib
import json
import shutil
from collections.abc import AsyncGenerator
from typing import Any

from playwright.async_api import BrowserContext, CDPSession, Page, async_playwright

from approval_core.testing import approval_of

__all__ = ["CHROMIUM", "PAIRING_ENDS", "Browser", "BrowserUnavailable", "browser", "pair_on"]

CHROMIUM = "/usr/bin/chromium"
WAIT_MS = 20_000
_AUTHENTICATOR = {
    "protocol": "ctap2",
    "transport": "internal",
    "hasResidentKey": True,
    "hasUserVerification": True,
    "isUserVerified": True,
    "automaticPresenceSimulation": True,
}


PAIRING_ENDS = (
    "Paired",
    "No passkey",
    "no passkey",
    "not valid",
    "Refused",
    "not the code",
    "approves nothing yet",
    "did not agree",
)
"""Words one of which the pairing page's state line holds once a press of its button has been answered."""


class BrowserUnavailable(RuntimeError):
    """Chromium is not installed; the message gives the command that installs it."""


class Browser:
    """One browser context (a person's browser profile) with its own virtual passkey authenticator."""

    def __init__(self, context: BrowserContext, page: Page, cdp: CDPSession, authenticator: str) -> None:
        self.context = context
        self.page = page
        self._cdp = cdp
        self.authenticators = [authenticator]

    async def open(self, url: str) -> str:
        """Load ``url``; return the page's visible text."""
        await self.page.goto(url)
        return await self.text()

    async def text(self) -> str:
        """The visible text of the page now."""
        return await self.page.inner_text("body")

    async def html(self) -> str:
        """The page's markup as the browser holds it now."""
        return await self.page.content()

    async def type_into(self, field_id: str, text: str) -> None:
        """Type ``text`` into the input ``field_id``, as a person would."""
        await self.page.fill(f"#{field_id}", text)

    async def click_and_wait(self, button_id: str, until: tuple[str, ...]) -> str:
        """Click the button ``button_id``; wait until the state line holds one of ``until``; return that line.

        The click comes after the page has been in front for a second, as a person's would: the page ignores
        an Approve pressed sooner after it appeared or got the focus.
        """
        await self.page.bring_to_front()
        await self.page.wait_for_timeout(1000)
        await self.page.click(f"#{button_id}")
        words = list(until)
        await self.page.wait_for_function(
            "(words) => { const s = document.getElementById('state'); "
            "return !!s && words.some((w) => s.textContent.includes(w)); }",
            arg=words,
            timeout=WAIT_MS,
        )
        return await self.page.inner_text("#state")

    async def post_from_page(self, path: str, body: dict[str, Any], csrf: str | None) -> tuple[int, dict[str, Any]]:
        """A POST made by script in the open page (same origin), as a model driving the browser could make it."""
        headers = {"Content-Type": "application/json"}
        if csrf is not None:
            headers["X-CSRF-Token"] = csrf
        reply: dict[str, Any] = await self.page.evaluate(
            "async ([path, body, headers]) => { const r = await fetch(path, {method: 'POST', headers, "
            "body: JSON.stringify(body)}); let data = {}; try { data = await r.json(); } catch (e) {} "
            "return {status: r.status, data}; }",
            [path, body, headers],
        )
        return int(reply["status"]), dict(reply["data"])

    async def add_authenticator(self, transport: str = "usb") -> None:
        """Plug a second, empty authenticator into this browser (a security key beside the platform one)."""
        options = {**_AUTHENTICATOR, "transport": transport}
        added = await self._cdp.send("WebAuthn.addVirtualAuthenticator", {"options": options})
        self.authenticators.append(str(added["authenticatorId"]))

    async def swap_authenticator(self) -> None:
        """Unplug every authenticator of this browser and plug in one empty one (another device)."""
        for authenticator in self.authenticators:
            await self._cdp.send("WebAuthn.removeVirtualAuthenticator", {"authenticatorId": authenticator})
        self.authenticators = []
        await self.add_authenticator("internal")

    async def hold_only(self, credentials: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Unplug every authenticator and plug in one holding just ``credentials``; return what was held before.

        The credentials are DevTools' ``WebAuthn.Credential`` objects (private key included), as this method
        returns them: so a passkey can be set aside while another device is used, and plugged back later.
        """
        held: list[dict[str, Any]] = []
        for authenticator in self.authenticators:
            found = await self._cdp.send("WebAuthn.getCredentials", {"authenticatorId": authenticator})
            held.extend(found["credentials"])
        await self.swap_authenticator()
        for credential in credentials:
            params = {"authenticatorId": self.authenticators[0], "credential": credential}
            await self._cdp.send("WebAuthn.addCredential", params)
        return held

    async def passkeys(self) -> int:
        """How many passkeys this browser's authenticator holds."""
        total = 0
        for authenticator in self.authenticators:
            found = await self._cdp.send("WebAuthn.getCredentials", {"authenticatorId": authenticator})
            total += len(found["credentials"])
        return total

    async def set_user_verified(self, verified: bool) -> None:
        """Whether the authenticator verifies the person (PIN, biometrics) from now on."""
        for authenticator in self.authenticators:
            params = {"authenticatorId": authenticator, "isUserVerified": verified}
            await self._cdp.send("WebAuthn.setUserVerified", params)


@contextlib.asynccontextmanager
async def browser(count: int = 1) -> AsyncGenerator[list[Browser]]:
    """``count`` separate browsers (contexts of one headless Chromium), each with its own passkey authenticator.

    Raises:
        BrowserUnavailable: ``/usr/bin/chromium`` is missing.
    """
    if shutil.which(CHROMIUM) is None:
        raise BrowserUnavailable(f"{CHROMIUM} is missing: run `apt-get install chromium` (Debian package, as root)")
    async with async_playwright() as playwright:
        chromium = await playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-dev-shm-usage"]
        )
        try:
            made: list[Browser] = []
            for _ in range(count):
                context = await chromium.new_context()
                page = await context.new_page()
                cdp = await context.new_cdp_session(page)
                await cdp.send("WebAuthn.enable", {"enableUI": False})
                added = await cdp.send("WebAuthn.addVirtualAuthenticator", {"options": _AUTHENTICATOR})
                made.append(Browser(context, page, cdp, str(added["authenticatorId"])))
            yield made
        finally:
            await chromium.close()


async def pair_on(page: Any, person: Browser) -> str:
    """Pair ``person``'s passkey with ``page`` (an ``approval_core.ApprovalPage`` being served) as its first.

    As the pairing command's user would: open its link, type the code it shows in the terminal, press the button.
    Returns the pairing page's state line (``Paired. ...`` on success).
    """
    import time

    secret, code = page.passkeys.start_pairing(time.time())
    await person.open(page.pairing_url(secret))
    await person.type_into("code", code)
    return await person.click_and_wait("pair", PAIRING_ENDS)


async def paired(page: Any, person: Browser) -> None:
    """Pair ``person``'s passkey with ``page`` (an ``ApprovalPage``), asserting it worked."""
    said = await pair_on(page, person)
    assert said.startswith("Paired"), said


async def page_of(client: Any, person: Browser, tool: str, arguments: dict[str, Any]) -> tuple[str, Any]:
    """Call ``tool`` from the formless client, open the page it links to; its visible text and the result."""
    result = await client.call_tool(tool, arguments)
    pending = approval_of(result)
    assert pending["outcome"] == "approval_pending", pending
    return await person.open(pending["approval_url"]), result


async def stored_part(person: Browser) -> tuple[str, str]:
    """The visible text of the page's stored-data section, and of everything else on the page."""
    inside = await person.page.inner_text("#stored")
    outside: str = await person.page.evaluate(
        "() => { const c = document.body.cloneNode(true); c.querySelectorAll('#stored').forEach((s) => s.remove());"
        " return c.innerText; }"
    )
    return inside, outside


def model_sees(*results: Any) -> str:
    """Everything the model reads of these results: text, structuredContent and _meta."""
    return json.dumps([r.model_dump(mode="json", by_alias=True) for r in results], ensure_ascii=False)
