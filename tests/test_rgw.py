"""The real object store of the tests (testing/rgw.py): a Ceph RADOS Gateway on 127.0.0.1 stores and reads objects,
LanceDB writes and reads a table on it, conditional writes are honoured, the read-only key pair cannot write, and a
cluster is stopped exactly by its own pids."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import lancedb
import obstore
import pyarrow as pa
import pytest

from testing import rgw as rgw_cluster
from testing.rgw import Rgw, S3Org


def test_objects_are_stored_listed_and_read_back(s3_org: S3Org, rgw: Rgw) -> None:
    store = s3_org.object_store()
    obstore.put(store, "org/a.txt", b"alpha")
    obstore.put(store, "org/sub/b.bin", bytes(range(256)) * 4096)  # 1 MiB
    assert bytes(obstore.get(store, "org/a.txt").bytes()) == b"alpha"
    assert bytes(obstore.get(store, "org/sub/b.bin").bytes()) == bytes(range(256)) * 4096
    listed = {m["path"]: m["size"] for batch in obstore.list(store, prefix="org") for m in batch}
    assert listed == {"org/a.txt": 5, "org/sub/b.bin": 1024 * 1024}
    # the same object through a second client (curl, SigV4): it is the gateway that stores it
    assert rgw.request("GET", f"/{s3_org.bucket}/org/a.txt") == (200, b"alpha")
    obstore.delete(store, "org/a.txt")
    with pytest.raises(FileNotFoundError):
        obstore.get(store, "org/a.txt")


def test_each_test_gets_its_own_empty_bucket(s3_org: S3Org, rgw: Rgw) -> None:
    other = rgw.new_org()
    assert other.bucket != s3_org.bucket
    obstore.put(other.object_store(), "org/x", b"1")
    assert [m for batch in obstore.list(s3_org.object_store()) for m in batch] == []


def test_the_environment_points_at_the_store(s3_org: S3Org) -> None:
    assert os.environ["AWS_ENDPOINT_URL"] == s3_org.endpoint
    assert os.environ["AWS_ACCESS_KEY_ID"] == s3_org.access_key
    assert os.environ["AWS_SECRET_ACCESS_KEY"] == s3_org.secret_key
    assert os.environ["AWS_REGION"] == s3_org.region
    assert s3_org.uri == f"s3://{s3_org.bucket}/org"


def test_conditional_create_is_honoured(s3_org: S3Org) -> None:
    """What LanceDB's commits rely on: a second ``If-None-Match: *`` PUT of a key fails."""
    store = s3_org.object_store()
    obstore.put(store, "org/probe", b"first", mode="create")
    with pytest.raises(obstore.exceptions.AlreadyExistsError):
        obstore.put(store, "org/probe", b"second", mode="create")
    assert bytes(obstore.get(store, "org/probe").bytes()) == b"first"


def test_lancedb_writes_and_reads_a_table_from_the_environment(s3_org: S3Org) -> None:
    """Endpoint and keys come from the AWS_* variables the fixture set: no storage_options."""
    db = lancedb.connect(s3_org.uri)
    rows = [{"key": f"r\x1f{i}", "body": f"memory {i}", "vector": [float(i), 1.0, 0.0, 0.5]} for i in range(200)]
    table = db.create_table("memories", data=rows)
    table.add([{"key": "r\x1f200", "body": "memory 200", "vector": [200.0, 1.0, 0.0, 0.5]}])
    again = lancedb.connect(s3_org.uri).open_table("memories")  # a new connection reads what the first wrote
    assert again.count_rows() == 201
    assert again.version == table.version
    hit = again.search([3.0, 1.0, 0.0, 0.5]).limit(1).to_list()[0]
    assert hit["key"] == "r\x1f3"
    keys = {f"org/memories.lance/{p}" for p in ("_versions", "data")}
    store = s3_org.object_store()
    listed = {m["path"] for batch in obstore.list(store, prefix="org/memories.lance") for m in batch}
    assert keys <= {str(Path(p).parent) for p in listed}


def test_the_read_only_key_reads_and_cannot_write(s3_org: S3Org) -> None:
    lancedb.connect(s3_org.uri).create_table("memories", data=[{"key": "a", "n": 1}, {"key": "b", "n": 2}])
    reader = lancedb.connect(s3_org.uri, storage_options=s3_org.storage_options(read_only=True))
    table = reader.open_table("memories")
    assert sorted(table.to_arrow().column("key").to_pylist()) == ["a", "b"]
    with pytest.raises(Exception, match="(?i)403|AccessDenied|permission"):
        table.add(pa.table({"key": ["c"], "n": [3]}))
    with pytest.raises(Exception, match="(?i)403|AccessDenied|permission"):
        reader.create_table("other", data=[{"key": "x", "n": 0}])
    ro = s3_org.object_store(read_only=True)
    with pytest.raises(obstore.exceptions.PermissionDeniedError):
        obstore.put(ro, "org/written-by-reader", b"no")
    with pytest.raises(obstore.exceptions.PermissionDeniedError):
        obstore.delete(ro, "org/memories.lance/_versions/1.manifest")
    assert lancedb.connect(s3_org.uri).open_table("memories").count_rows() == 2


def test_a_cluster_stops_exactly_its_own_daemons(rgw: Rgw) -> None:
    """A second cluster beside the session's: its own ports, folder and pids; stopping it ends those processes,
    removes its folder, and leaves the session's gateway answering."""
    second = rgw_cluster.start(Path(tempfile.mkdtemp(prefix="gitmem-rgw-")))
    try:
        pids = {name: p.pid for name, p in second.procs.items()}
        assert set(pids) == {"mon.a", "osd.0", "client.rgw.test"}
        assert second.endpoint != rgw.endpoint
        for name in pids:  # every daemon's files are under the cluster's own folder
            assert (second.root / "log" / f"{name}.log").exists()
        assert (second.root / "run" / "mon.a.asok").exists()
        second.new_org()
    finally:
        second.stop()
    for pid in pids.values():
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    assert not second.root.exists()
    assert rgw.new_org().bucket  # the session's cluster still answers
