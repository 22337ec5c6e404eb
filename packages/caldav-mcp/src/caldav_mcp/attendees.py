"""Attendees and the organiser of an event (RFC 5545 §3.8.4.1 ATTENDEE, §3.8.4.3 ORGANIZER).

``create_event`` and ``update_event`` take a list of :class:`AttendeeIn`; this
module checks it (addresses, duplicates, the bound :data:`MAX_ATTENDEES`),
writes it into a VEVENT (keeping what each attendee already answered) and
counts what a scheduling server (RFC 6638 §3.2) will do with it: whom it
invites, whom it tells that they were taken off, whom it sends the change to.
Those counts, and the domains of the addresses the caller gave, are all a
dialog says about the people (:class:`Invitations`); their names and
addresses never go into one.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from approval_core.serving.stored_text import quoted_name
from caldav_mcp.errors import InvalidInput

if TYPE_CHECKING:
    import icalendar

__all__ = [
    "MAX_ATTENDEES",
    "AttendeeIn",
    "Invitations",
    "addresses_of",
    "check_attendees",
    "domain_of",
    "invitations",
    "mailto",
    "organizer_of",
    "write_attendees",
]

MAX_ATTENDEES = 100
"""At most this many attendees per call. Each one is a message a scheduling server sends on every write of the
event (a REQUEST now, a CANCEL when it is deleted), so one approval must not reach an unbounded list; a meeting
of more people is a mailing list's job. It also keeps the stored event small (a line of about 80 bytes each)."""

Role = Literal["CHAIR", "REQ-PARTICIPANT", "OPT-PARTICIPANT", "NON-PARTICIPANT"]

# A practical subset of RFC 5321's Mailbox: a dot-atom local part and a host name of letters, digits and
# hyphens (one label allowed: servers such as Cyrus give local users addresses like anna@internal).
_LOCAL = r"[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[A-Za-z0-9!#$%&'*+/=?^_`{|}~-]+)*"
_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_ADDRESS = re.compile(rf"^({_LOCAL})@({_LABEL}(?:\.{_LABEL})*)$")


class AttendeeIn(BaseModel):
    """One person invited to an event, as the caller gives it (written as an ATTENDEE, RFC 5545 §3.8.4.1)."""

    model_config = ConfigDict(extra="forbid")

    address: Annotated[
        str,
        Field(
            description="Email address, plain (anna@example.org) or as a mailto: URI (RFC 6638 calendar user "
            "address). Letters, digits and . _ + - etc. before the @, a host name after it.",
            min_length=3,
            max_length=254,
        ),
    ]
    name: Annotated[
        str | None,
        Field(description="Display name (the CN parameter), optional.", min_length=1, max_length=200),
    ] = None
    role: Annotated[
        Role,
        Field(
            description="ROLE (RFC 5545 §3.2.16): CHAIR, REQ-PARTICIPANT (required, the default), "
            "OPT-PARTICIPANT (optional) or NON-PARTICIPANT (for information only)."
        ),
    ] = "REQ-PARTICIPANT"
    rsvp: Annotated[bool, Field(description="Whether an answer is asked for (RSVP=TRUE, RFC 5545 §3.2.17).")] = True


def mailto(address: str, field: str) -> str:
    """``address`` (plain or ``mailto:``) as a ``mailto:`` URI, its host name in lower case.

    Raises:
        InvalidInput: it is not ``local@host`` (a dot-atom local part, a host name of letters, digits and hyphens).
    """
    text = address.strip()
    if text[:7].lower() == "mailto:":
        text = text[7:]
    found = _ADDRESS.match(text)
    if found is None or len(text) > 254:
        raise InvalidInput(
            f"{field}: {quoted_name(address)} is not an email address; give local@host (anna@example.org) or "
            "mailto:local@host, with no name or angle brackets around it"
        )
    return f"mailto:{found.group(1)}@{found.group(2).lower()}"


def domain_of(address: str) -> str:
    """The host name of a ``mailto:`` address, in lower case."""
    return address.rpartition("@")[2].lower()


def _key(address: str) -> str:
    """An address compared as servers compare calendar user addresses: ``mailto:`` and case ignored."""
    text = str(address).strip()
    return (text[7:] if text[:7].lower() == "mailto:" else text).lower()


def check_attendees(attendees: list[AttendeeIn]) -> list[tuple[str, AttendeeIn]]:
    """Each attendee with its address as a ``mailto:`` URI, in the caller's order.

    Raises:
        InvalidInput: an address is not one (:func:`mailto`), an address is given twice, or more than
            :data:`MAX_ATTENDEES`.
    """
    if len(attendees) > MAX_ATTENDEES:
        raise InvalidInput(f"attendees: at most {MAX_ATTENDEES} people per event, got {len(attendees)}")
    out: list[tuple[str, AttendeeIn]] = []
    seen: set[str] = set()
    for index, attendee in enumerate(attendees):
        uri = mailto(attendee.address, f"attendees[{index}].address")
        if _key(uri) in seen:
            raise InvalidInput(f"attendees[{index}].address: this address is already given earlier in the list")
        seen.add(_key(uri))
        if attendee.name is not None and any(ch == '"' or unicodedata.category(ch) == "Cc" for ch in attendee.name):
            raise InvalidInput(
                f"attendees[{index}].name: a display name is one line of text without double quotes or control "
                "characters (RFC 5545 §3.2: a parameter value cannot hold them)"
            )
        out.append((uri, attendee))
    return out


def _listed(component: icalendar.Component, name: str) -> list[Any]:
    raw: Any = component.get(name)
    return list(raw) if isinstance(raw, list) else [] if raw is None else [raw]  # pyright: ignore[reportUnknownArgumentType]


def addresses_of(component: icalendar.Component) -> list[str]:
    """The ATTENDEE addresses of a VEVENT as stored (compared without ``mailto:``, lower case)."""
    return [_key(str(attendee)) for attendee in _listed(component, "ATTENDEE")]


def organizer_of(component: icalendar.Component) -> str | None:
    """The ORGANIZER's address as stored (compared without ``mailto:``, lower case), or None."""
    found: Any = component.get("ORGANIZER")
    return None if found is None else _key(str(found))


def write_attendees(component: icalendar.Component, given: list[tuple[str, AttendeeIn]], organizer: str) -> None:
    """Replace the ATTENDEE list of ``component`` with ``given``, and set ORGANIZER if it has none.

    An attendee already on the event keeps its property as stored (PARTSTAT and every other parameter) and
    only takes the CN, ROLE and RSVP given; a new one is written with PARTSTAT=NEEDS-ACTION (RFC 5545
    §3.2.12). ``organizer`` is this account's ``mailto:`` address (RFC 6638 §2.4.1); an event that already
    names an organiser keeps it (the caller has checked it is this account).
    """
    import icalendar

    stored = {_key(str(attendee)): attendee for attendee in _listed(component, "ATTENDEE")}
    component.pop("ATTENDEE", None)
    if "ORGANIZER" not in component and given:
        component.add("ORGANIZER", icalendar.vCalAddress(organizer))
    for uri, attendee in given:
        found = stored.get(_key(uri))
        wanted = {"ROLE": attendee.role, "RSVP": "TRUE" if attendee.rsvp else "FALSE"}
        if attendee.name is not None:
            wanted["CN"] = attendee.name
        if found is not None:
            if any(str(found.params.get(key, "")) != value for key, value in wanted.items()):
                for key, value in wanted.items():
                    found.params[key] = value
            component.add("ATTENDEE", found)
            continue
        made = icalendar.vCalAddress(uri)
        if attendee.name is not None:
            made.params["CN"] = attendee.name
        made.params["ROLE"] = attendee.role
        made.params["PARTSTAT"] = "NEEDS-ACTION"
        made.params["RSVP"] = wanted["RSVP"]
        component.add("ATTENDEE", made)


@dataclass(frozen=True, slots=True)
class Invitations:
    """What a scheduling server is asked to send by one write, counted (the organiser never counts).

    Attributes:
        invited: People on the event after the write who were not on it before (each gets a REQUEST).
        kept: People on it before and after (each gets the changed event as a REQUEST).
        removed: People taken off it (each gets a CANCEL, RFC 5546 §3.2.5).
        outside: Of ``invited``, those whose address is at another domain than the organiser's.
        domains: Those other domains, sorted (taken from the caller's addresses only).
    """

    invited: int
    kept: int
    removed: int
    outside: int
    domains: tuple[str, ...]

    @property
    def anyone(self) -> bool:
        """Whether the write reaches anybody at all."""
        return bool(self.invited or self.kept or self.removed)


def invitations(before: list[str], given: list[tuple[str, AttendeeIn]] | None, organizer: str) -> Invitations:
    """Count what a write sends (see :class:`Invitations`).

    ``before`` are the stored attendees (:func:`addresses_of`), ``given`` the new list (None: the list stays
    as it is), ``organizer`` the organiser's address.
    """
    me = _key(organizer)
    old = [address for address in before if address != me]
    if given is None:
        return Invitations(0, len(set(old)), 0, 0, ())
    new = [_key(uri) for uri, _ in given if _key(uri) != me]
    home = domain_of(me)
    fresh = [address for address in new if address not in old]
    elsewhere = sorted({domain_of(address) for address in fresh if domain_of(address) != home})
    outside = sum(1 for address in fresh if domain_of(address) != home)
    kept = sum(1 for address in new if address in old)
    removed = len({address for address in old if address not in new})
    return Invitations(len(fresh), kept, removed, outside, tuple(elsewhere))
