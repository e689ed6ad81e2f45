"""One node of the multi-process tests: an Elector in a process of its own.

    python elector_node.py URL SERVICE NODE LEASE_S RETRY_S [sigterm]

With ``sigterm`` it calls ``elector.resign_on_sigterm()``: SIGTERM then resigns before the
process ends (by that signal); without it SIGTERM ends the process at once, holding the seat.

It reports on stdout, one JSON object a line, every time stamped with ``time.monotonic()``
(CLOCK_MONOTONIC: one clock for every process of the machine):

* ``{"type": "ready"}`` once the elector runs;
* ``{"type": "event", "t": ..., "kind": "STARTED_LEADING", "term": ..., ...}`` per event;
* ``{"type": "leading", "before": b, "after": a, "term": ..., "until": u}`` for every sample
  of ``snapshot()`` that said this node leads: the sample was taken between ``b`` and ``a``, and
  ``u = b + valid_for`` is no later than the node's real local deadline;
* ``{"type": "resigned", ...}`` / ``{"type": "closed"}`` after those commands.

It reads commands on stdin, one a line: ``resign`` and ``close`` (also on end of input).
"""

from __future__ import annotations

import json
import sys
import threading
import time

import mysqlleader


def main() -> int:
    url, service, node, lease_s, retry_s = sys.argv[1:6]
    out_lock = threading.Lock()

    def emit(**fields: object) -> None:
        line = json.dumps(fields)
        with out_lock:
            sys.stdout.write(line + "\n")
            sys.stdout.flush()

    def on_event(event: mysqlleader.Event) -> None:
        emit(
            type="event",
            t=time.monotonic(),
            kind=event.kind.name,
            term=event.term,
            reason=event.reason.name,
            leader_id=event.leader_id,
            valid_for_ms=event.valid_for_ms,
        )

    elector = mysqlleader.Elector(
        url, service, node_id=node, lease=float(lease_s), retry_interval=float(retry_s), on_event=on_event
    )
    if sys.argv[6:7] == ["sigterm"]:
        elector.resign_on_sigterm()
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            before = time.monotonic()
            try:
                status = elector.snapshot()
            except mysqlleader.InvalidStateError:
                return
            after = time.monotonic()
            if status.is_leader:
                emit(type="leading", before=before, after=after, term=status.term,
                     until=before + status.valid_for_ms / 1000.0)
            time.sleep(0.02)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    emit(type="ready", t=time.monotonic())

    for line in sys.stdin:
        command = line.strip()
        if command == "resign":
            before = time.monotonic()
            resigned = elector.resign()
            emit(type="resigned", before=before, after=time.monotonic(), resigned=resigned)
        elif command == "close":
            break
    stop.set()
    elector.close()
    sampler.join(5)
    emit(type="closed", t=time.monotonic())
    return 0


if __name__ == "__main__":
    sys.exit(main())
