"""The store that ignores conditional writes (testing/s3proxy.py): behind it a real gateway overwrites what a
conditional PUT should have refused, and every other request works as on the gateway itself."""

from __future__ import annotations

import lancedb
import obstore
import pytest

from testing.rgw import Rgw, S3Org
from testing.s3proxy import ignoring_conditions

WRONG_ETAG = "0123456789abcdef0123456789abcdef"  # RGW 16 compares If-Match with the unquoted ETag


def _secrets(rgw: Rgw) -> dict[str, str]:
    return {rgw.access_key: rgw.secret_key, rgw.read_access_key: rgw.read_secret_key}


def test_two_conditional_creates_of_one_key_both_succeed(s3_ignoring_conditions: S3Org, rgw: Rgw) -> None:
    store = s3_ignoring_conditions.object_store()
    obstore.put(store, "org/probe", b"first", mode="create")
    obstore.put(store, "org/probe", b"second", mode="create")  # the gateway itself answers 412 to this
    assert bytes(obstore.get(store, "org/probe").bytes()) == b"second"
    # the object is the gateway's, not the proxy's: read directly from it
    assert rgw.request("GET", f"/{s3_ignoring_conditions.bucket}/org/probe") == (200, b"second")


def test_a_conditional_update_with_a_wrong_etag_overwrites(s3_ignoring_conditions: S3Org) -> None:
    store = s3_ignoring_conditions.object_store()
    obstore.put(store, "org/doc", b"v1")
    obstore.put(store, "org/doc", b"v2", mode={"e_tag": WRONG_ETAG})
    assert bytes(obstore.get(store, "org/doc").bytes()) == b"v2"


def test_the_conditions_were_signed_and_the_proxy_signs_again(rgw: Rgw) -> None:
    """object_store signs If-None-Match: removing it unsigned would be a 403, not an ignored condition. The proxy
    reproduces the client's signature before signing the request again without the header."""
    with ignoring_conditions(rgw.endpoint, _secrets(rgw)) as proxy:
        org = rgw.new_org(endpoint=proxy.endpoint)
        store = org.object_store()
        obstore.put(store, "org/a", b"1", mode="create")
        obstore.put(store, "org/a", b"2", mode="create")
        assert (proxy.dropped, proxy.resigned, proxy.mismatches) == (2, 2, 0)
    with ignoring_conditions(rgw.endpoint, {}) as unknown_keys:  # cannot sign again: the gateway refuses
        store = rgw.new_org(endpoint=unknown_keys.endpoint).object_store()
        with pytest.raises(Exception, match="(?i)403|SignatureDoesNotMatch|permission|forbidden"):
            obstore.put(store, "org/a", b"1", mode="create")
        assert unknown_keys.mismatches == 1


def test_the_gateway_without_the_proxy_refuses_the_second_create(s3_org: S3Org) -> None:
    store = s3_org.object_store()
    obstore.put(store, "org/probe", b"first", mode="create")
    with pytest.raises(obstore.exceptions.AlreadyExistsError):
        obstore.put(store, "org/probe", b"second", mode="create")
    with pytest.raises(obstore.exceptions.PreconditionError):
        obstore.put(store, "org/probe", b"third", mode={"e_tag": WRONG_ETAG})
    assert bytes(obstore.get(store, "org/probe").bytes()) == b"first"


def test_lancedb_works_through_the_proxy(s3_ignoring_conditions: S3Org) -> None:
    """Everything but the conditions is forwarded unchanged: LanceDB creates, appends to and reads a table
    (from the AWS_* environment the fixture set)."""
    db = lancedb.connect(s3_ignoring_conditions.uri)
    table = db.create_table("memories", data=[{"key": f"k{i}", "n": i} for i in range(50)])
    table.add([{"key": "k50", "n": 50}])
    reread = lancedb.connect(s3_ignoring_conditions.uri).open_table("memories")
    assert reread.count_rows() == 51
    assert sorted(reread.to_arrow().column("n").to_pylist()) == list(range(51))
