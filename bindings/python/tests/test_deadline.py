"""A leader cut off from its database: ``run_while_leader`` ends with reason ``DEADLINE_PASSED``,
by the local deadline and with no event needed, in the sync and the asyncio API.

The elector talks to the server through a TCP proxy of this module; ``freeze()`` makes the proxy
swallow every byte from then on, so renews go unanswered (the network partition of a real
deployment). The lateness of ``stop`` after the last deadline the node reported is printed.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
import urllib.parse
from typing import Iterator, List

import pytest

import mysqlleader
import mysqlleader.aio


class FreezingProxy:
    """Forwards loopback TCP connections to ``target``; after :meth:`freeze` it reads and drops
    everything, in both directions, without closing anything."""

    def __init__(self, target_host: str, target_port: int) -> None:
        self.target = (target_host, target_port)
        self.frozen = threading.Event()
        self.closing = threading.Event()
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(0.2)
        self.port = self.listener.getsockname()[1]
        self.sockets: List[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.closing.is_set():
            try:
                client, _ = self.listener.accept()
            except OSError:
                continue
            try:
                upstream = socket.create_connection(self.target, timeout=5)
            except OSError:
                client.close()
                continue
            self.sockets += [client, upstream]
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pump, args=(a, b), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket) -> None:
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                if not self.frozen.is_set():
                    sink.sendall(data)
        except OSError:
            pass

    def freeze(self) -> None:
        self.frozen.set()

    def close(self) -> None:
        self.closing.set()
        self.listener.close()
        for s in self.sockets:
            try:
                s.close()
            except OSError:
                pass


@pytest.fixture
def proxied_url(url: str) -> Iterator[tuple]:
    parts = urllib.parse.urlsplit(url)
    proxy = FreezingProxy(parts.hostname or "127.0.0.1", parts.port or 3306)
    netloc = parts.netloc.rsplit("@", 1)
    host = f"127.0.0.1:{proxy.port}"
    new = urllib.parse.urlunsplit(
        (parts.scheme, f"{netloc[0]}@{host}" if len(netloc) == 2 else host, parts.path, parts.query, parts.fragment)
    )
    yield new, proxy
    proxy.close()


LEASE = 2.0  # seconds; the request timeout is lease / 5


def test_sync_run_while_leader_ends_by_the_deadline(proxied_url: tuple, service: str) -> None:
    url, proxy = proxied_url
    # The client's own request timeout bounds how long closing waits for the cut-off server.
    with mysqlleader.Client(url, request_timeout=0.5) as client, \
            mysqlleader.Elector(client, service, node_id="cut-off", lease=LEASE, resign_on_close=False) as e:
        deadlines: List[float] = []
        stopped: List[float] = []

        def work(stop: threading.Event) -> None:
            threading.Timer(0.5, proxy.freeze).start()
            while not stop.is_set():
                before = time.monotonic()
                deadlines.append(before + e.valid_for_ms / 1000.0)
                stop.wait(0.01)
            stopped.append(time.monotonic())
            assert not e.is_leader, "stop is set only once this node no longer leads"

        with pytest.raises(mysqlleader.LeadershipLostError) as lost:
            e.run_while_leader(work)
        assert lost.value.reason is mysqlleader.StopReason.DEADLINE_PASSED, lost.value.reason
        print(f"stop set {1000 * (stopped[0] - max(deadlines)):.1f} ms after the last local deadline seen "
              f"(lease {LEASE * 1000:.0f} ms)")


def test_async_run_while_leader_cancels_at_the_deadline(proxied_url: tuple, service: str) -> None:
    url, proxy = proxied_url

    async def main() -> None:
        client = mysqlleader.Client(url, request_timeout=0.5)
        async with mysqlleader.aio.Elector(client, service, node_id="cut-off", lease=LEASE, resign_on_close=False) as e:
            cancelled_while_leading: List[bool] = []

            async def work() -> None:
                asyncio.get_running_loop().call_later(0.5, proxy.freeze)
                try:
                    await asyncio.sleep(60)
                except asyncio.CancelledError:
                    cancelled_while_leading.append(e.is_leader)
                    raise

            with pytest.raises(mysqlleader.LeadershipLostError) as lost:
                await asyncio.wait_for(e.run_while_leader(work), 30)
            assert lost.value.reason is mysqlleader.StopReason.DEADLINE_PASSED, lost.value.reason
            assert cancelled_while_leading == [False], "cancelled once this node no longer leads"
        client.close()

    asyncio.run(main())
