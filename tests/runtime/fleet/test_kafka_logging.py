"""librdkafka's own log lines go through Python logging, never raw onto stderr."""

from __future__ import annotations

import logging
import subprocess
import sys
import textwrap


def _run(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=60)


def test_client_logs_reach_python_logging_not_stderr() -> None:
    # A producer for a port nobody listens on: librdkafka logs connection
    # failures (level 3, error).  Raw, they would be "%3|...|FAIL|rdkafka#..." on stderr.
    got = _run("""
        import logging, sys, time
        from chronolog.runtime.fleet import kafka_clients
        seen = []
        class Keep(logging.Handler):
            def emit(self, record):
                seen.append(record.getMessage())
        logging.getLogger("chronolog.librdkafka").addHandler(Keep())
        logging.getLogger("chronolog.librdkafka").propagate = False
        p = kafka_clients.producer({"bootstrap.servers": "127.0.0.1:1", "reconnect.backoff.ms": 10})
        end = time.monotonic() + 5
        while not seen and time.monotonic() < end:
            p.poll(0.1)
        print(len(seen), seen[0] if seen else "")
    """)
    assert got.returncode == 0, got.stderr
    count, _, first = got.stdout.strip().partition(" ")
    assert int(count) >= 1 and "127.0.0.1:1" in first
    assert "rdkafka#" not in got.stderr and "|FAIL|" not in got.stderr


def test_raw_client_would_print_to_stderr() -> None:
    """The control: without the logger, the same client writes to stderr (so the
    test above can fail)."""
    got = _run("""
        import time
        from confluent_kafka import Producer
        p = Producer({"bootstrap.servers": "127.0.0.1:1", "reconnect.backoff.ms": 10})
        end = time.monotonic() + 3
        while time.monotonic() < end:
            p.poll(0.1)
    """)
    assert "rdkafka#producer" in got.stderr


def test_info_level_lines_hidden_by_default() -> None:
    from chronolog.runtime.fleet import kafka_clients

    assert kafka_clients.LOGGER.getEffectiveLevel() >= logging.WARNING or "CHRONOLOG_LIBRDKAFKA_LOG" in __import__("os").environ


def test_take_waits_for_one_record_only_then_takes_what_is_fetched():
    from chronolog.runtime.fleet.kafka_clients import take

    class Fetched:
        def __init__(self, records: list) -> None:
            self.records, self.calls = records, []

        def poll(self, timeout: float):  # type: ignore[no-untyped-def]
            self.calls.append(("poll", timeout))
            return self.records.pop(0) if self.records else None

        def consume(self, n: int, timeout: float) -> list:
            self.calls.append(("consume", n, timeout))
            got, self.records = self.records[:n], self.records[n:]
            return got

    three = Fetched(["a", "b", "c"])
    assert take(three, most=2, wait=0.5) == ["a", "b"]
    assert three.calls == [("poll", 0.5), ("consume", 1, 0)]  # never waits for a full batch
    none = Fetched([])
    assert take(none) == [] and none.calls == [("poll", 0.01)]
