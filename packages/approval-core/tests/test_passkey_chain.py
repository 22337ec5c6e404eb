"""Every passkey after the first must carry the vouch of one paired before it: attacks on the passkey file.

A process that can write the passkey file tries to approve with a key of its
own: appended by hand, with a vouch copied from another entry or another
file, with a tampered entry, in another order. Each such entry approves
nothing, is logged on stderr, and is handed to the push. The keys are real
P-256 keys and the vouches real WebAuthn assertions (``testing/soft_passkey.py``,
a double for an authenticator); the checks are the page's own. The chain as
the real browser makes it is in ``test_page_browser.py``; the push reaching
the real ntfy in ``test_page_push.py``.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from soft_passkey import SoftPasskey, b64url

from approval_core.page.chain import FirstKeyRecord, entry_digest, head_digest, new_nonce, vouch_challenge, walk
from approval_core.page.passkeys import CeremonyFailed, PasskeyFile, RelyingParty

ORIGIN = "http://localhost:41234"
PARTY = RelyingParty(rp_id="localhost", origin=ORIGIN)


def vouched(
    entry: dict[str, Any], signer: SoftPasskey, user_id: str, chain: list[dict[str, Any]], origin: str = ORIGIN
) -> dict[str, Any]:
    """``entry`` with the vouch ``signer`` makes for it after ``chain`` in the file of ``user_id`` (as pairing does)."""
    nonce = new_nonce()
    signed = signer.assertion(vouch_challenge(user_id, head_digest(chain), entry, nonce), origin)["response"]
    vouch = {
        "by": b64url(signer.credential_id),
        "nonce": nonce,
        "client_data": signed["clientDataJSON"],
        "authenticator_data": signed["authenticatorData"],
        "signature": signed["signature"],
    }
    return {**entry, "vouch": vouch}


def write(path: Path, user_id: str, entries: list[dict[str, Any]]) -> PasskeyFile:
    path.write_text(json.dumps({"version": 1, "user_id": user_id, "credentials": entries, "pairing": None}))
    path.chmod(0o600)
    return PasskeyFile(path)


class Chain:
    """A passkey file holding a first passkey ``a`` and ``b`` paired with ``a``'s vouch, as pairing writes it."""

    def __init__(self, folder: Path) -> None:
        self.user_id = b64url(secrets.token_bytes(16))
        self.a, self.b = SoftPasskey(), SoftPasskey()
        first = self.a.entry()
        self.entries = [first, vouched(self.b.entry(), self.a, self.user_id, [first])]
        self.path = folder / "passkeys.json"
        self.file = write(self.path, self.user_id, self.entries)

    def rewrite(self, entries: list[dict[str, Any]]) -> PasskeyFile:
        return write(self.path, self.user_id, entries)


def ids(file: PasskeyFile) -> list[bytes]:
    return [p.credential_id for p in file.passkeys("localhost")]


def approves(file: PasskeyFile, key: SoftPasskey) -> bool:
    challenge = secrets.token_bytes(32)
    try:
        file.verify_assertion(PARTY, challenge, key.assertion(challenge, ORIGIN))
    except CeremonyFailed:
        return False
    return True


@pytest.fixture
def chain(tmp_path: Path) -> Chain:
    return Chain(tmp_path)


def test_a_chain_made_as_pairing_makes_it_approves(chain: Chain) -> None:
    assert ids(chain.file) == [chain.a.credential_id, chain.b.credential_id]
    assert approves(chain.file, chain.a)
    assert approves(chain.file, chain.b)
    c = SoftPasskey()
    chain.rewrite([*chain.entries, vouched(c.entry(), chain.b, chain.user_id, chain.entries)])
    assert approves(chain.file, c), "vouched by the second, which the first vouched for"
    assert chain.file.take_unannounced() == []


def test_a_key_appended_by_hand_approves_nothing_and_is_logged_once(
    chain: Chain, caplog: pytest.LogCaptureFixture
) -> None:
    intruder = SoftPasskey()
    file = chain.rewrite([*chain.entries, intruder.entry()])
    with caplog.at_level(logging.WARNING, logger="approval_core.passkeys"):
        assert not approves(file, intruder)
        assert not approves(file, intruder)
    assert ids(file) == [chain.a.credential_id, chain.b.credential_id], "the paired ones still approve"
    warnings = [r.getMessage() for r in caplog.records]
    assert len(warnings) == 1, "once per process, however often the file is read"
    assert "(entry 3 of" in warnings[0]
    assert "approves nothing: it carries no vouch from a passkey paired before it" in warnings[0]
    [left_out] = file.take_unannounced()
    assert left_out.credential_id == b64url(intruder.credential_id)
    assert file.take_unannounced() == [], "handed to the push once"


def test_a_key_appended_by_hand_cannot_vouch_for_another(chain: Chain) -> None:
    intruder, helper = SoftPasskey(), SoftPasskey()
    appended = [*chain.entries, intruder.entry()]
    file = chain.rewrite([*appended, vouched(helper.entry(), intruder, chain.user_id, chain.entries)])
    assert not approves(file, intruder)
    assert not approves(file, helper)
    reasons = [r.reason for r in file.take_unannounced()]
    assert reasons[1] == "its vouch names no passkey paired before it"


@pytest.mark.parametrize("field", ["public_key", "id", "added", "signature"])
def test_a_tampered_entry_is_left_out(chain: Chain, field: str) -> None:
    """The second entry's vouch kept, one of its fields changed: the vouch no longer speaks for it."""
    intruder = SoftPasskey()
    tampered = dict(chain.entries[1])
    if field == "public_key":
        tampered["public_key"] = b64url(intruder.cose())
    elif field == "id":
        tampered["id"] = b64url(intruder.credential_id)
    elif field == "added":
        tampered["added"] = "2027-01-01T00:00:00Z"
    else:
        signature = bytearray(tampered["vouch"]["signature"].encode())
        signature[-5] = ord("A") if signature[-5] != ord("A") else ord("B")
        tampered["vouch"] = {**tampered["vouch"], "signature": signature.decode()}
    file = chain.rewrite([chain.entries[0], tampered])
    assert ids(file) == [chain.a.credential_id]
    assert not approves(file, intruder)
    [left_out] = file.take_unannounced()
    assert left_out.reason.startswith("its vouch does not verify")


def test_a_vouch_replayed_onto_another_key_verifies_nothing(chain: Chain) -> None:
    intruder = SoftPasskey()
    replayed = {**intruder.entry(added=chain.entries[1]["added"]), "vouch": chain.entries[1]["vouch"]}
    file = chain.rewrite([*chain.entries, replayed])
    assert not approves(file, intruder)
    assert file.take_unannounced()[0].reason.startswith("its vouch does not verify")


def test_an_entry_copied_twice_is_left_out(chain: Chain) -> None:
    file = chain.rewrite([*chain.entries, chain.entries[1]])
    assert ids(file) == [chain.a.credential_id, chain.b.credential_id]
    assert file.take_unannounced()[0].reason == "its credential id is paired already"


def test_an_entry_copied_from_another_file_is_left_out(chain: Chain, tmp_path: Path) -> None:
    """A vouch made in another file (another user id), even by the same first passkey, fits no place here."""
    other = tmp_path / "other"
    other.mkdir(mode=0o700)
    stranger = SoftPasskey()
    other_user = b64url(secrets.token_bytes(16))
    elsewhere = vouched(stranger.entry(), chain.a, other_user, [chain.entries[0]])
    file = chain.rewrite([*chain.entries, elsewhere])
    assert not approves(file, stranger)
    assert file.take_unannounced()[0].reason.startswith("its vouch does not verify")
    own = vouched(stranger.entry(), chain.a, chain.user_id, [chain.entries[0]])  # this file, but an old place
    file = chain.rewrite([*chain.entries, own])
    assert not approves(file, stranger), "the vouch names the entry before it, which is b now, not a"


def test_a_reordered_file_keeps_only_what_still_chains(chain: Chain) -> None:
    c = SoftPasskey()
    entries = [*chain.entries, vouched(c.entry(), chain.b, chain.user_id, chain.entries)]
    file = chain.rewrite([entries[0], entries[2], entries[1]])
    assert ids(file) == [chain.a.credential_id, chain.b.credential_id], "c named b as the entry before it"
    file = chain.rewrite([entries[1], entries[0], entries[2]])
    assert file.chain("localhost")[0] == entries[1], "a new first passkey: the start-up push announces it"
    assert not approves(file, chain.a), "a carries no vouch, so it cannot follow b"


def test_a_vouch_made_on_another_sites_page_is_left_out(chain: Chain) -> None:
    c = SoftPasskey()
    file = chain.rewrite(
        [*chain.entries, vouched(c.entry(), chain.a, chain.user_id, chain.entries, "https://evil.test")]
    )
    assert not approves(file, c)
    assert file.take_unannounced()[0].reason == "its vouch was made on a page of another site"


def test_a_vouch_without_user_verification_is_left_out(chain: Chain) -> None:
    c = SoftPasskey()
    nonce = new_nonce()
    challenge = vouch_challenge(chain.user_id, head_digest(chain.entries), c.entry(), nonce)
    signed = chain.a.assertion(challenge, ORIGIN, verified=False)["response"]
    vouch = {
        "by": b64url(chain.a.credential_id),
        "nonce": nonce,
        "client_data": signed["clientDataJSON"],
        "authenticator_data": signed["authenticatorData"],
        "signature": signed["signature"],
    }
    file = chain.rewrite([*chain.entries, {**c.entry(), "vouch": vouch}])
    assert not approves(file, c)


def test_other_relying_parties_chain_on_their_own(chain: Chain) -> None:
    """A deployment's passkeys (rp id mcp.example.org) in the same file start their own chain."""
    remote = SoftPasskey()
    entries = [*chain.entries, remote.entry(rp_id="mcp.example.org")]
    chained, left_out = walk(chain.user_id, entries, "mcp.example.org")
    assert chained == [entries[2]]
    assert left_out == []
    assert walk(chain.user_id, entries, "localhost")[0] == chain.entries


def test_the_first_passkey_record_notices_a_new_first_passkey(chain: Chain) -> None:
    record = FirstKeyRecord(chain.path)
    assert record.changed("localhost", chain.entries[0]), "nothing recorded yet"
    assert not record.changed("localhost", chain.entries[0])
    assert record.changed("localhost", SoftPasskey().entry())
    assert (record.path.stat().st_mode & 0o777) == 0o600
    assert json.loads(record.path.read_text()) != {"localhost": entry_digest(chain.entries[0])}


def test_pairing_keeps_a_second_passkey_only_with_a_paired_ones_assertion_over_its_own_statement(chain: Chain) -> None:
    """The page's last step (``keep_vouched``): a replayed vouch, an intruder's vouch, a stale one are refused."""
    secret, _ = chain.file.start_pairing(1000.0)
    new, other, intruder = SoftPasskey(), SoftPasskey(), SoftPasskey()
    entry = new.entry()
    previous, nonce, challenge = chain.file.vouch_statement(PARTY, entry)
    _, _, other_challenge = chain.file.vouch_statement(PARTY, other.entry())

    def keep(response: dict[str, Any]) -> None:
        chain.file.keep_vouched(secret, PARTY, entry, (previous, nonce), response, 1001.0)

    with pytest.raises(CeremonyFailed, match="did not verify"):
        keep(chain.a.assertion(other_challenge, ORIGIN))  # a vouch made for another key, replayed
    with pytest.raises(CeremonyFailed, match="not one paired"):
        keep(intruder.assertion(challenge, ORIGIN))  # signed by a key nobody paired
    with pytest.raises(CeremonyFailed, match="did not verify"):
        keep(chain.a.assertion(challenge, "http://localhost:1"))  # made on another page than this one
    with pytest.raises(CeremonyFailed, match=r"user verification|did not verify"):
        keep(chain.a.assertion(challenge, ORIGIN, verified=False))
    keep(chain.b.assertion(challenge, ORIGIN))
    assert approves(chain.file, new)
    with pytest.raises(CeremonyFailed, match="not valid any more"):
        keep(chain.b.assertion(challenge, ORIGIN))  # the pairing is spent


def test_a_vouch_for_a_chain_that_moved_meanwhile_is_refused(chain: Chain) -> None:
    secret, _ = chain.file.start_pairing(1000.0)
    new, meanwhile = SoftPasskey(), SoftPasskey()
    previous, nonce, challenge = chain.file.vouch_statement(PARTY, new.entry())
    contents = json.loads(chain.path.read_text())
    contents["credentials"].append(vouched(meanwhile.entry(), chain.a, chain.user_id, chain.entries))
    chain.path.write_text(json.dumps(contents))
    with pytest.raises(CeremonyFailed, match="changed meanwhile"):
        chain.file.keep_vouched(
            secret, PARTY, new.entry(), (previous, nonce), chain.a.assertion(challenge, ORIGIN), 1001.0
        )


def test_a_first_passkey_is_kept_only_while_none_is_paired(chain: Chain) -> None:
    secret, _ = chain.file.start_pairing(1000.0)
    with pytest.raises(CeremonyFailed, match="paired already"):
        chain.file.keep_first(secret, PARTY, SoftPasskey().entry(), 1001.0)


@pytest.mark.stdio
def test_a_server_over_stdio_says_on_stderr_which_passkey_approves_nothing(chain: Chain) -> None:
    intruder = SoftPasskey()
    chain.rewrite([*chain.entries, intruder.entry()])
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ELICITATION", "APPROVAL_"))}
    env = {**base, "APPROVAL_PAGE": "true", "APPROVAL_PASSKEYS_FILE": str(chain.path)}
    run = subprocess.run(  # noqa: S603 - our own interpreter and script
        [sys.executable, str(Path(__file__).with_name("example_server.py"))],
        env=env,
        input="",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    assert "a passkey is paired" in run.stderr
    short = b64url(intruder.credential_id)[:16]
    assert f"the passkey {short}… (entry 3 of {chain.path}) approves nothing: it carries no vouch" in run.stderr
    assert run.stderr.count("approves nothing") == 1
