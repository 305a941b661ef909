"""The state stores: atomic writes, prefix scans, and RocksDB values never interpreted."""

from __future__ import annotations

import pytest
from hostile import Marker

from chronolog.state.store import MemoryStore, RocksStore


@pytest.fixture(params=["memory", "rocksdb"])
def store(request, tmp_path):
    return MemoryStore() if request.param == "memory" else RocksStore(tmp_path / "db")


def test_write_scan_delete_clear(store):
    store.write([("j:log:1", b"a"), ("j:log:2", b"b"), ("offsets", b"{}"), ("j:sent:1", b"c")], [])
    assert sorted(store.scan("j:")) == [("j:log:1", b"a"), ("j:log:2", b"b"), ("j:sent:1", b"c")]
    store.write([("snapshot", b"s")], ["j:log:1"])
    assert store.get("j:log:1") is None and store.get("snapshot") == b"s"
    assert sorted(k for k, _ in store.scan("j:")) == ["j:log:2", "j:sent:1"]
    store.clear()
    assert list(store.scan("")) == [] and store.get("offsets") is None


def test_a_pickle_planted_in_rocksdb_comes_back_as_bytes_and_never_runs(tmp_path):
    """rocksdict's default mode would unpickle a value stored as an object; the store's raw mode does not."""
    from rocksdict import Rdict

    marker = tmp_path / "ran"

    def plant(path):  # rocksdict's default mode stores the object pickled, tagged as such
        db = Rdict(str(path))
        db["snapshot"] = Marker(marker)
        db.close()

    plant(tmp_path / "control")
    Rdict(str(tmp_path / "control")).get("snapshot")  # the control: default mode runs it
    assert marker.exists()
    marker.unlink()
    plant(tmp_path / "db")
    store = RocksStore(tmp_path / "db")
    value = store.get("snapshot")
    assert value is None or isinstance(value, bytes)
    assert all(isinstance(v, bytes) for _, v in store.scan(""))
    assert not marker.exists()
