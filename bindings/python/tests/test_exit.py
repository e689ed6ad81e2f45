"""Issue 26, item 5: closing an elector returns within its request timeout whatever the server
does.

(Item 1, the abort at exit, has no test: a child that exits while its server hangs, then comes
back, even with a slow finalizer giving the library seconds to call into the finalizing
interpreter, exited 0 with the atexit hook removed too: the electors' own finalizers close them
at exit, and no library thread logs after that. A test that cannot fail was dropped.)

The server "hangs" behind a proxy of the test's own that stops forwarding (conftest's
``StallingProxy``): connections stay open, nothing comes back.
"""

from __future__ import annotations

import time

import mysqlleader

from conftest import StallingProxy


def test_close_returns_within_the_request_timeout_while_the_server_hangs(
    url: str, service: str, stalling_proxy: StallingProxy
) -> None:
    """It blocked about 5.5 s (lease 2 s, request timeout 400 ms), leader and follower alike."""
    proxied = stalling_proxy.url_for(url)
    leader = mysqlleader.Elector(proxied, service, node_id="leader", lease=2, request_timeout=0.4)
    assert leader.wait_for_leadership(20)
    follower = mysqlleader.Elector(proxied, service, node_id="follower", lease=2, request_timeout=0.4)
    try:
        deadline = time.monotonic() + 20
        while follower.leader_id != "leader":
            assert time.monotonic() < deadline, "the follower never saw the leader"
            time.sleep(0.02)
        stalling_proxy.stall()
        time.sleep(0.6)  # both in the middle of a call to the hung server
        for name, elector in (("leader", leader), ("follower", follower)):
            began = time.monotonic()
            elector.close()
            took = time.monotonic() - began
            print(f"{name}: close took {took * 1000:.0f} ms")
            # The bound the issue states (the request timeout), plus timer resolution.
            assert took <= 0.4 + 0.05, f"{name}: close took {took:.3f} s"
    finally:
        stalling_proxy.resume()
        leader.close()
        follower.close()
