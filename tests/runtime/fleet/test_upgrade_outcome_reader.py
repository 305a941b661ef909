"""``chronolog upgrade`` reads the control topic with a client made before the request is sent
(``runtime/fleet/upgrade.OutcomeReader``, made with the ``RequestSender`` before the plan), so
that the outcome is read as soon as a service writes it rather than after a new client's
connection and a read of the whole topic.  Without a broker: the clients are stand-ins that
record when they are made and used (the input topic is looked up before the request too:
a metadata request for every topic); the reader's own loop runs (it skips other requests'
outcomes and returns this one's)."""

from __future__ import annotations

from dataclasses import dataclass

import orjson

from chronolog.cli.main import main
from chronolog.runtime.fleet import upgrade as fleet_upgrade
from chronolog.versions import UpgradeRequest

NEW = "Q(X) :- Diamondminus[0,4] P(X)\n"


@dataclass
class Record:
    k: bytes | None
    v: bytes

    def key(self) -> bytes | None:
        return self.k

    def value(self) -> bytes:
        return self.v

    def error(self) -> None:
        return None


def test_the_outcome_reader_is_made_before_the_request_and_reads_its_outcome(tmp_path, monkeypatch, capsys):
    events: list[str] = []
    sent: list[UpgradeRequest] = []

    class Sender:
        def __init__(self, bootstrap: str, prefix: str, conf: dict) -> None:
            events.append("sender made")

        def look_up(self) -> list[int]:
            events.append("input topic looked up")
            return [0]

        def send(self, request: UpgradeRequest) -> None:
            events.append("request sent")
            sent.append(request)

    class Control:
        """The control topic as a consumer reads it: an epoch record, another request's outcome,
        then (once the request is sent) this one's."""

        def __init__(self) -> None:
            self.queue = [Record(b"output-0", b'{"committed":4,"partition":0}'),
                          Record(b"upgrade-other", orjson.dumps({"upgrade": "other", "version": "v0", "at": "1",
                                                                  "service": "chain"}))]

        def poll(self, timeout: float) -> Record | None:
            if not self.queue and sent and "outcome written" not in events:
                events.append("outcome written")
                self.queue.append(Record(sent[0].key, orjson.dumps({"upgrade": sent[0].id, "version": sent[0].version,
                                                                     "at": sent[0].at, "service": "chain"})))
            return self.queue.pop(0) if self.queue else None

        def close(self) -> None:
            events.append("reader closed")

    def reader(bootstrap: str, topic: str, conf: dict, name: str) -> Control:
        assert topic == "fleet.control"
        events.append("reader made")
        return Control()

    monkeypatch.setattr(fleet_upgrade, "RequestSender", Sender)
    monkeypatch.setattr(fleet_upgrade, "from_the_start", reader)
    program = tmp_path / "new.mtl"
    program.write_text(NEW)
    assert main(["upgrade", str(program), "--bootstrap", "127.0.0.1:9", "--topic-prefix", "fleet", "--at", "3",
                 "--timeout", "5"]) == 0
    assert events == ["sender made", "reader made", "input topic looked up", "request sent", "outcome written",
                      "reader closed"]
    assert f"upgraded: program version {sent[0].version} from T=3" in capsys.readouterr().out
