"""Issue 42: the plain electors of one client share its connections. Each used to renew with a
call of its own on a connection of the client's pool (100 at most), so a client of 105 or 200
electors held no seat after a lease; now they ride the client's shared session (one call
connection, one wake-up lock) and all lead. (10,000 on one client: bindings/c/test_mysqlleader.c.)"""

from __future__ import annotations

import time

import mysqlleader

from conftest import query

N = 300
LEASE = 2.0


def account_connections(url: str) -> int:
    """The server connections of the test's account (this query's own included)."""
    rows = query(url, "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER = SUBSTRING_INDEX(CURRENT_USER(), '@', 1)")
    return int(rows[0][0])


def test_three_hundred_plain_electors_on_one_client_all_lead_and_keep_their_seats(url: str, service: str) -> None:
    before = account_connections(url)
    with mysqlleader.Client(url) as client:
        electors = [mysqlleader.Elector(client, f"{service}-{i}", node_id="many", lease=LEASE) for i in range(N)]
        try:
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and not all(e.is_leader for e in electors):
                time.sleep(0.1)
            leading = sum(e.is_leader for e in electors)
            during = account_connections(url)
            print(f"{leading} of {N} plain electors on one client lead; the account's connections: {before} before, {during} during")
            assert leading == N
            # The client's shared session: its call connection and its wake-up lock's (plus,
            # rarely, a short-lived one that ends a call left running).
            assert during - before <= 3, (before, during)
            terms = [e.term for e in electors]
            # Two leases later: every seat still held at its term (the renews reach them all).
            time.sleep(2 * LEASE + 0.5)
            kept = [e.is_leader and e.term == t for e, t in zip(electors, terms)]
            assert all(kept), f"{kept.count(False)} of {N} lost their seat"
        finally:
            for e in electors:
                e.close()
    held = query(url, "SELECT COUNT(*) FROM leader_election WHERE service_id LIKE %s AND leader_id IS NOT NULL", (f"{service}-%",))
    assert held[0][0] == 0, "closing each elector resigns its seat"
