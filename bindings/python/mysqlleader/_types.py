"""The results of the calls: small frozen dataclasses with the contract's column names.

Ids are ``str``; an id column that is NULL in SQL (nobody leads) is ``None``. Terms are
``int``. Durations keep the integer milliseconds of the C API (``lease_remaining_ms``,
``valid_for_ms``) and add the same value as a ``datetime.timedelta`` property
(``lease_remaining``, ``valid_for``).
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Optional

from ._native import (
    CampaignResultStruct,
    CurrentLeaderResultStruct,
    ElectorStateStruct,
    EventKind,
    EventStruct,
    LeaderCheckStruct,
    ReelectResultStruct,
    ResignResultStruct,
    ResultCode,
    StopReason,
)


def _id(raw: Optional[bytes]) -> Optional[str]:
    """An id from C: "" (or NULL) means nobody."""
    if not raw:
        return None
    return raw.decode("utf-8", "replace")


def _ms(ms: int) -> datetime.timedelta:
    return datetime.timedelta(milliseconds=ms)


@dataclass(frozen=True)
class CampaignResult:
    """The row of ``campaign`` and ``force_leader``."""

    #: Whether the caller holds the seat after the call.
    is_leader: bool
    #: The node holding a valid lease (the caller when ``is_leader``); ``None`` when nobody does.
    leader_id: Optional[str]
    #: The fencing token of the service.
    term: int
    #: Milliseconds left on the current leader's lease, by the database's clock; 0 when nobody leads.
    lease_remaining_ms: int

    @property
    def lease_remaining(self) -> datetime.timedelta:
        """``lease_remaining_ms`` as a timedelta."""
        return _ms(self.lease_remaining_ms)

    @classmethod
    def _from_c(cls, s: CampaignResultStruct) -> "CampaignResult":
        return cls(bool(s.is_leader), _id(s.leader_id), int(s.term), int(s.lease_remaining_ms))


@dataclass(frozen=True)
class LeaderCheck:
    """The row of ``am_i_leader`` and ``assert_leader``."""

    #: Whether the node holds a valid lease (always true after a successful ``assert_leader``).
    is_leader: bool
    #: The current term, or the last term there was when nobody leads.
    term: int
    #: Milliseconds left on the current leader's lease; 0 when nobody leads.
    lease_remaining_ms: int

    @property
    def lease_remaining(self) -> datetime.timedelta:
        """``lease_remaining_ms`` as a timedelta."""
        return _ms(self.lease_remaining_ms)

    @classmethod
    def _from_c(cls, s: LeaderCheckStruct) -> "LeaderCheck":
        return cls(bool(s.is_leader), int(s.term), int(s.lease_remaining_ms))


@dataclass(frozen=True)
class CurrentLeader:
    """The row of ``current_leader``."""

    #: The node holding a valid lease; ``None`` when the seat is vacant or the lease has expired.
    leader_id: Optional[str]
    #: The current term, or the last term there was.
    term: int
    #: Milliseconds left on the lease; 0 when nobody leads.
    lease_remaining_ms: int

    @property
    def lease_remaining(self) -> datetime.timedelta:
        """``lease_remaining_ms`` as a timedelta."""
        return _ms(self.lease_remaining_ms)

    @classmethod
    def _from_c(cls, s: CurrentLeaderResultStruct) -> "CurrentLeader":
        return cls(_id(s.leader_id), int(s.term), int(s.lease_remaining_ms))


@dataclass(frozen=True)
class ReelectResult:
    """The row of ``reelect``."""

    #: The node whose valid lease was ended; ``None`` when nobody led.
    previous_leader_id: Optional[str]
    #: The term of the service (unchanged by ``reelect``).
    term: int

    @classmethod
    def _from_c(cls, s: ReelectResultStruct) -> "ReelectResult":
        return cls(_id(s.previous_leader_id), int(s.term))


@dataclass(frozen=True)
class ResignResult:
    """The row of ``resign``."""

    #: Whether the node led and its lease has been ended.
    resigned: bool
    #: The term of the service.
    term: int

    @classmethod
    def _from_c(cls, s: ResignResultStruct) -> "ResignResult":
        return cls(bool(s.resigned), int(s.term))


@dataclass(frozen=True)
class ExpiryEventResult:
    """The row of ``set_expiry_event``."""

    #: Whether the event ``leader_election_expire`` is enabled now.
    event_enabled: bool


@dataclass(frozen=True)
class Event:
    """A leadership change seen by an :class:`~mysqlleader.Elector`."""

    #: What happened.
    kind: EventKind
    #: The term the event is about.
    term: int
    #: Why this node stopped leading (``STOPPED_LEADING``); ``StopReason.NONE`` otherwise.
    reason: StopReason
    #: This node for ``STARTED_LEADING``; the new leader, or ``None`` for a vacant seat, for
    #: ``LEADER_CHANGED``; ``None`` otherwise.
    leader_id: Optional[str]
    #: For ``STARTED_LEADING``: milliseconds this node may act as leader without a renew.
    valid_for_ms: int = 0
    #: For ``MISSED``: how many events were dropped.
    missed: int = 0

    @property
    def valid_for(self) -> datetime.timedelta:
        """``valid_for_ms`` as a timedelta."""
        return _ms(self.valid_for_ms)

    @classmethod
    def _from_c(cls, s: EventStruct) -> "Event":
        return cls(
            kind=EventKind(int(s.kind)),
            term=int(s.term),
            reason=StopReason(int(s.reason)),
            leader_id=_id(s.leader_id),
            valid_for_ms=int(s.valid_for_ms),
            missed=int(s.missed),
        )


@dataclass(frozen=True)
class ElectorState:
    """A consistent snapshot of an elector's state (:meth:`~mysqlleader.Elector.snapshot`)."""

    #: Whether this node leads now (its local deadline included).
    is_leader: bool
    #: The term seen last: while leading, the fencing token.
    term: int
    #: Milliseconds this node may still act as leader without a renew; 0 when not leading.
    valid_for_ms: int
    #: Whether the elector still campaigns (``False`` after :meth:`~mysqlleader.Elector.resign`).
    campaigning: bool
    #: ``ResultCode.OK`` when the elector's last call to the database succeeded, else its error
    #: class (:attr:`~mysqlleader.Elector.last_call_error` gives the message).
    last_call_result: ResultCode
    #: The leader seen last; ``None`` when the seat was vacant.
    leader_id: Optional[str]

    @property
    def valid_for(self) -> datetime.timedelta:
        """``valid_for_ms`` as a timedelta."""
        return _ms(self.valid_for_ms)

    @classmethod
    def _from_c(cls, s: ElectorStateStruct) -> "ElectorState":
        return cls(
            is_leader=bool(s.is_leader),
            term=int(s.term),
            valid_for_ms=int(s.valid_for_ms),
            campaigning=bool(s.campaigning),
            last_call_result=ResultCode(int(s.last_call_result)),
            leader_id=_id(s.leader_id),
        )
