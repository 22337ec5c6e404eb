"""What the event tools work out about attendees before they ask: the organiser, and what the server sends.

On a server with RFC 6638 scheduling (``calendar-auto-schedule`` in its DAV
header, :meth:`caldav_mcp.calendars.Calendars.scheduling`) storing an event
whose ORGANIZER is this account makes the server send every other attendee
an iTIP REQUEST, and deleting it sends each a CANCEL (RFC 6638 §3.2.1,
RFC 5546). :class:`Plan` holds those counts for the guard (``facts["sends"]``),
the dialog and the result; where the server does not schedule, nothing is
sent and the result says so.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated

from pydantic import Field

from caldav_mcp.attendees import (
    MAX_ATTENDEES,
    AttendeeIn,
    Invitations,
    addresses_of,
    check_attendees,
    invitations,
    mailto,
    organizer_of,
)
from caldav_mcp.errors import InvalidInput

if TYPE_CHECKING:
    import icalendar

    from caldav_mcp.tools.common import App

__all__ = ["AttendeesArg", "Plan", "cancels_of", "organiser", "plan", "told"]

AttendeesArg = Annotated[
    list[AttendeeIn] | None,
    Field(
        description="People to invite (ATTENDEE, RFC 5545 §3.8.4.1), at most 100: address, optional name, role "
        "(default REQ-PARTICIPANT), rsvp (default true). The ORGANIZER is this account's calendar user address. On "
        "a server with RFC 6638 scheduling the server then sends each an invitation, and this asks a person first; "
        "elsewhere the attendees are only written and nobody is told. On an update the list replaces the stored "
        "one ([] removes everyone; those taken off are sent a cancellation); omit to keep it.",
        max_length=MAX_ATTENDEES,
    ),
]


async def organiser(app: App, published: list[str] | None = None) -> str:
    """This account's ``mailto:`` calendar user address, for ORGANIZER (RFC 6638 §2.4.1).

    The first ``mailto:`` address of the principal's calendar-user-address-set; where the server publishes
    none (Radicale), the account's user name when it is an email address. ``published`` is the address set
    when the caller has read it already.

    Raises:
        InvalidInput: neither gives an address.
    """
    if published is None:
        published = await app.client.user_addresses()
    if published:
        return published[0]
    username = app.client.settings.username or ""
    try:
        return mailto(username, "attendees")
    except InvalidInput:
        raise InvalidInput(
            "attendees: an event with attendees needs an ORGANIZER (RFC 5545 §3.8.4.3), and this account has no "
            "email address to use: the server publishes no calendar-user-address-set for it and its user name "
            "is not an email address. Nothing was written."
        ) from None


@dataclass(frozen=True, slots=True)
class Plan:
    """What one write does with attendees.

    Attributes:
        given: The caller's attendees with their ``mailto:`` addresses (None: the list is kept as stored).
        organizer: The organiser's address to write (this account's), or None when no attendee is involved.
        scheduling: Whether the server schedules (RFC 6638).
        ours: Whether this account organises the event (it is the organiser, or the event has none yet).
        sent: What the server is asked to send (all zero where it does not schedule or someone else organises).
    """

    given: list[tuple[str, AttendeeIn]] | None
    organizer: str | None
    scheduling: bool
    ours: bool
    sent: Invitations

    @property
    def sends(self) -> bool:
        """Whether the write makes the server send anybody anything (the guard's ``facts["sends"]``)."""
        return self.scheduling and self.ours and self.sent.anyone

    @property
    def count(self) -> int:
        """People (other than the organiser) on the event after the write."""
        return self.sent.invited + self.sent.kept


async def plan(app: App, components: list[icalendar.Component], attendees: list[AttendeeIn] | None) -> Plan:
    """What writing ``attendees`` (None: keep the stored ones) into the event ``components`` would send.

    ``components`` are the event's VEVENTs as stored (empty for a new event). The organiser and the scheduling
    probe are read only when the event has or gets attendees. When ``attendees`` is None and this account has
    no address, the event is not taken to be this account's: nothing is counted.

    Raises:
        InvalidInput: an attendee is invalid (:func:`caldav_mcp.attendees.check_attendees`), the account has
            no address (:func:`organiser`), or another person organises the event and attendees are given.
    """
    given = check_attendees(attendees) if attendees is not None else None
    before = sorted({address for component in components for address in addresses_of(component)})
    if not before and not given:
        return Plan(given, None, False, True, Invitations(0, 0, 0, 0, ()))
    published = await app.client.user_addresses()
    try:
        me = await organiser(app, published)
    except InvalidInput:
        if given is not None:
            raise
        # An account without an address organises nothing a server could schedule; nothing to count.
        return Plan(None, None, False, False, Invitations(0, 0, 0, 0, ()))
    stored = {organizer_of(component) for component in components} - {None}
    mine = {address.removeprefix("mailto:") for address in [me, *published]}
    # Without an ORGANIZER a server schedules nothing; this call writes one only when it sets attendees.
    ours = stored <= mine if stored else given is not None
    if given is not None and not ours:
        raise InvalidInput(
            "attendees: another person organises this event (its ORGANIZER is not this account), so only they "
            "can change who is invited; answer the invitation with respond_to_event instead"
        )
    scheduling = await app.client.scheduling()
    sent = invitations(before, given, me) if ours else Invitations(0, 0, 0, 0, ())
    return Plan(given, me, scheduling, ours, sent)


def cancels_of(plan_: Plan) -> int:
    """People a scheduling server sends a CANCEL when the event (or an occurrence) is deleted."""
    return plan_.sent.kept if plan_.sends else 0


def told(plan_: Plan) -> tuple[bool | None, str | None]:
    """The result's ``attendees_told`` and ``scheduling`` note for a write of ``plan_``.

    (None, None) when the event has no attendees, or another person organises it.
    """
    if plan_.organizer is None or not plan_.ours:
        return None, None
    if not plan_.scheduling and plan_.given is not None:
        if plan_.count:
            what = f"The {plan_.count} attendee(s) were written into the event"
        else:
            what = "The attendees were removed from the event"
        return False, (
            f"{what}, but this CalDAV server does not do RFC 6638 scheduling: nobody was told. Send them the "
            "news some other way."
        )
    if not plan_.scheduling:
        return False, (
            f"The event has {plan_.count} attendee(s), but this CalDAV server does not do RFC 6638 scheduling: "
            "nobody was told of this change."
        )
    return plan_.sent.anyone, (
        "This server does RFC 6638 scheduling: it sends the invitations, updates and cancellations itself "
        f"({plan_.sent.invited} invited, {plan_.sent.kept} sent the change, {plan_.sent.removed} sent a "
        "cancellation)."
    )
