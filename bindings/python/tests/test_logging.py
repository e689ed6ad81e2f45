"""The library's log records reach Python's ``logging`` (logger ``mysqlleader``), once per change
of condition: a wrong password is logged once, not once per attempt."""

from __future__ import annotations

import logging
import time

import pytest

import mysqlleader


def with_password(url: str, password: str) -> str:
    scheme, rest = url.split("://", 1)
    creds, host = rest.rsplit("@", 1)
    user = creds.split(":", 1)[0]
    return f"{scheme}://{user}:{password}@{host}"


def test_a_failed_login_is_logged_once(url: str, service: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="mysqlleader")
    # A password no message could hold by chance (the 1045 message itself says "wrong user name
    # or password").
    password = "pw-Zq7x-not-the-password"
    with mysqlleader.Elector(with_password(url, password), service, node_id="a", lease=1, retry_interval=0.05) as e:
        time.sleep(1.5)  # about 30 attempts
        assert not e.is_leader
    failed = [r for r in caplog.records if r.name == "mysqlleader" and "election call failed" in r.getMessage()]
    assert len(failed) == 1, [r.getMessage() for r in caplog.records]
    # A refused login is an error retrying cannot fix (issue 26): ERROR, and the record says so.
    assert failed[0].levelno == logging.ERROR
    assert "retrying cannot fix it" in failed[0].getMessage()
    assert "1045" in failed[0].getMessage() or "Access denied" in failed[0].getMessage()
    leaked = [r.getMessage() for r in caplog.records if password in r.getMessage()]
    assert not leaked, f"no password in a log record: {leaked}"


def test_leadership_is_logged(url: str, service: str, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="mysqlleader")
    with mysqlleader.Elector(url, service, node_id="a", lease=2) as e:
        assert e.wait_for_leadership(10)
    messages = [r.getMessage() for r in caplog.records if r.name == "mysqlleader"]
    assert any("started leading" in m for m in messages), messages


def test_records_carry_service_node_and_term_as_extras(url: str, service: str, caplog: pytest.LogCaptureFixture) -> None:
    """Issue 26, item 8: the library's records carry ``service``, ``node`` and ``term`` as
    attributes of the LogRecord (``extra``), not only inside the message."""
    caplog.set_level(logging.INFO, logger="mysqlleader")
    with mysqlleader.Elector(url, service, node_id="node a", lease=2) as e:
        assert e.wait_for_leadership(10)
        term = e.term
    records = [r for r in caplog.records if r.name == "mysqlleader"]
    started = [r for r in records if r.getMessage().startswith("started leading")]
    assert len(started) == 1, [r.getMessage() for r in records]
    record = started[0]
    assert getattr(record, "service") == service
    assert getattr(record, "node") == "node a", "a node id with a space in it"
    assert getattr(record, "term") == term and isinstance(getattr(record, "term"), int)
    assert getattr(record, "mysqlleader_fields")["term"] == str(term)
    # A record without a term: the attribute is there, None.
    begun = [r for r in records if r.getMessage().startswith("elector started")]
    assert begun and getattr(begun[0], "service") == service and getattr(begun[0], "term") is None
    # The attributes work in a format string.
    line = logging.Formatter("%(levelname)s %(service)s/%(node)s@%(term)s %(message)s").format(record)
    assert line.startswith(f"INFO {service}/node a@{term} started leading"), line


def test_debug_records_are_forwarded(url: str, service: str, caplog: pytest.LogCaptureFixture) -> None:
    """DEBUG records reach ``logging`` when the logger is enabled for DEBUG (a failed call after
    the first is logged at DEBUG), with their extras; none when it is not."""
    bad = with_password(url, "pw-not-the-password")
    caplog.set_level(logging.INFO, logger="mysqlleader")
    with mysqlleader.Elector(bad, service, node_id="a", lease=1, retry_interval=0.05):
        time.sleep(0.6)
    assert not [r for r in caplog.records if r.levelno == logging.DEBUG]
    caplog.clear()
    caplog.set_level(logging.DEBUG, logger="mysqlleader")
    with mysqlleader.Elector(bad, service + "-d", node_id="a", lease=1, retry_interval=0.05):
        time.sleep(0.6)
    again = [r for r in caplog.records if r.levelno == logging.DEBUG and "failed again" in r.getMessage()]
    assert again, [r.getMessage() for r in caplog.records]
    assert getattr(again[0], "service") == service + "-d"
