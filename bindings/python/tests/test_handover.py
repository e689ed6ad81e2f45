"""Handover (the contract's "Handover"): the leader's own ``Elector.handover(to_node)`` (sync and
asyncio), and an operator's ``Client.handover(service_id, to_node)``. Followers here poll only
every 5 s, so a new leader within 3 s was woken (the wake-up lock), not polled. Timings are
printed (``pytest -s``), never asserted tightly."""

from __future__ import annotations

import asyncio
import time

import pytest

import mysqlleader
import mysqlleader.aio
from mysqlleader import EventKind, StopReason
from conftest import history
from test_elector import Recorder, wait_until

SLACK = 15.0
SLOW_POLL = dict(lease=20, retry_interval=5, retry_jitter=0)  # a follower polls every 5 s
WOKEN_WITHIN = 3.0  # far below the 5 s poll: the named node was woken


def _leader_and_waiting_follower(client: mysqlleader.Client, service: str, a_events: Recorder):
    a = mysqlleader.Elector(client, service, node_id="a", on_event=a_events, **SLOW_POLL)
    assert a.wait_for_leadership(SLACK)
    b = mysqlleader.Elector(client, service, node_id="b", **SLOW_POLL)
    # b has learned who leads and waits on the leader's wake-up lock.
    assert wait_until(lambda: b.leader_id == "a")
    time.sleep(0.5)
    return a, b


def test_the_leader_hands_over_to_the_named_follower(client: mysqlleader.Client, url: str, service: str) -> None:
    a_events = Recorder()
    a, b = _leader_and_waiting_follower(client, service, a_events)
    with a, b:
        started = time.monotonic()
        assert a.handover("b") is True, "a led"
        assert not a.is_leader, "a stepped down before handover returned"
        assert b.wait_for_leadership(SLACK)
        took = time.monotonic() - started
        print(f"\nleader-initiated handover a -> b: b leads after {took * 1000:.0f} ms (followers poll every 5 s)")
        assert took < WOKEN_WITHIN, f"b led only after {took:.2f} s: it was not woken"
        assert b.term == 2 and b.leader_id == "b"
        assert wait_until(lambda: a_events.has(EventKind.STOPPED_LEADING, term=1, reason=StopReason.HANDED_OVER))
        assert StopReason.HANDED_OVER.name.lower() == mysqlleader._native.library().mysqlleader_stop_reason_name(6).decode()
        assert a.campaigning, "a goes on as a follower (unlike resign)"
        assert wait_until(lambda: a.leader_id == "b")
        assert history(url, service)[0] == (1, "a", "elected", "handed_over")
        # A follower's handover changes nothing.
        assert a.handover("b") is False
        assert b.is_leader
        # A handover to itself is refused, naming to_node; the leader stays.
        with pytest.raises(mysqlleader.InvalidArgumentError) as refused:
            b.handover("b")
        assert refused.value.parameter == "to_node", refused.value
        assert "to_node" in str(refused.value)
        assert b.is_leader and b.term == 2, "a refused handover changes nothing"
        with pytest.raises(TypeError):
            b.handover(None)  # type: ignore[arg-type]


def test_an_operators_handover_with_the_client(client: mysqlleader.Client, url: str, service: str) -> None:
    # The bare calls: a leads; the seat is reserved for b; c cannot take it; b can.
    assert client.campaign(service, "a", 20).is_leader
    seat = client.handover(service, "b")
    assert isinstance(seat, mysqlleader.CampaignResult)
    assert not seat.is_leader and seat.leader_id is None, seat
    assert not client.am_i_leader(service, "a").is_leader, "the old leader no longer leads"
    # b may take the seat once the displaced leader has acknowledged the handover with a resign,
    # sent once it stopped acting as leader (or once its lease has run out): before, b waits.
    # a's campaign (its renew, whose answer could still be on its way) is no acknowledgement.
    assert not client.campaign(service, "b", 20).is_leader, "b waits for a's acknowledgement"
    assert not client.campaign(service, "a", 20).is_leader, "a's renew sees the handover"
    assert not client.campaign(service, "b", 20).is_leader, "a's renew is no acknowledgement"
    acknowledged = client.resign(service, "a")
    assert not acknowledged.resigned and acknowledged.term == 1, acknowledged
    assert not client.campaign(service, "c", 20).is_leader, "the seat is reserved for b"
    taken = client.campaign(service, "b", 20)
    assert taken.is_leader and taken.leader_id == "b" and taken.term == 2, taken
    assert history(url, service)[0] == (1, "a", "elected", "handed_over")
    # Nothing changes when to_node leads already.
    again = mysqlleader.handover(url, service, "b")
    assert again.is_leader and again.leader_id == "b" and again.term == 2, again


def test_an_operators_handover_reaches_the_leader_at_its_next_renew(client: mysqlleader.Client, service: str) -> None:
    a_events = Recorder()
    quick_renew = dict(lease=6, renew_interval=0.5, retry_interval=5, retry_jitter=0)
    a = mysqlleader.Elector(client, service, node_id="a", on_event=a_events, **quick_renew)
    with a:
        assert a.wait_for_leadership(SLACK)
        with mysqlleader.Elector(client, service, node_id="b", **quick_renew) as b:
            assert wait_until(lambda: b.leader_id == "a")
            time.sleep(0.5)
            started = time.monotonic()
            seat = client.handover(service, "b")
            assert not seat.is_leader and seat.leader_id is None, seat
            assert not client.am_i_leader(service, "a").is_leader
            assert b.wait_for_leadership(SLACK)
            took = time.monotonic() - started
            print(f"\noperator-initiated handover a -> b: b leads after {took * 1000:.0f} ms (a renews every 500 ms)")
            assert took < WOKEN_WITHIN, f"b led only after {took:.2f} s: it was not woken"
            assert wait_until(lambda: a_events.has(EventKind.STOPPED_LEADING, term=1, reason=StopReason.HANDED_OVER))
            assert not a.is_leader and a.campaigning


def test_async_handover(url: str, service: str) -> None:
    async def main() -> None:
        async with mysqlleader.aio.Elector(url, service, node_id="a", **SLOW_POLL) as a:
            events = a.events()
            assert await a.wait_for_leadership(SLACK)
            async with mysqlleader.aio.Elector(url, service, node_id="b", **SLOW_POLL) as b:
                deadline = time.monotonic() + SLACK
                while b.leader_id != "a" and time.monotonic() < deadline:
                    await asyncio.sleep(0.02)
                await asyncio.sleep(0.5)
                started = time.monotonic()
                assert await a.handover("b") is True
                assert not a.is_leader
                assert await b.wait_for_leadership(SLACK)
                took = time.monotonic() - started
                print(f"\nasyncio handover a -> b: b leads after {took * 1000:.0f} ms")
                assert took < WOKEN_WITHIN

                async def stop_reason() -> StopReason:
                    async for event in events:
                        if event.kind is EventKind.STOPPED_LEADING:
                            return event.reason
                    raise AssertionError("the stream ended without STOPPED_LEADING")

                assert await asyncio.wait_for(stop_reason(), SLACK) is StopReason.HANDED_OVER
                with pytest.raises(mysqlleader.InvalidArgumentError) as refused:
                    await b.handover("b")
                assert refused.value.parameter == "to_node"

    asyncio.run(main())
