"""The shared test vectors (nodewire/testdata/vectors.json), both ways.

The Go codec checks the same file: a protocol change that one side does
not follow fails the other's tests.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kvshare_node import errors, wire

VECTORS = Path(__file__).resolve().parents[3] / "nodewire" / "testdata" / "vectors.json"
DOC = json.loads(VECTORS.read_text())
TYPES = {name: t for t, name in wire.TYPE_NAMES.items()}


def message(type_name: str, f: dict[str, Any]) -> wire.Message:
    """Build the message a vector's fields describe."""
    t = TYPES[type_name]
    if t in (wire.PUBLISH, wire.FETCH):
        groups = [wire.Group(g["region"], list(g["slots"]), [bytes.fromhex(n) for n in g["names"]]) for g in f["groups"]]
        return wire.Transfer(t == wire.FETCH, f["lend"], f["deadline_ns"], groups)
    if t == wire.LOOKUP:
        return wire.Lookup(f["every"], [[bytes.fromhex(n) for n in g] for g in f["groups"]])
    if t in (wire.OUTCOME, wire.PRESENCE):
        rest = {k: v for k, v in f.items() if k != "rows"}
        cls = wire.Outcome if t == wire.OUTCOME else wire.Presence
        return cls(rows=bytes(f["rows"]), **rest)
    if t == wire.STATS_REPLY:
        return wire.StatsReply(dict(f))
    cls = {wire.HELLO: wire.Hello, wire.WELCOME: wire.Welcome, wire.LEND: wire.Lend, wire.LENT: wire.Lent,
           wire.ACCEPTED: wire.Accepted, wire.QUIESCED: wire.Quiesced, wire.CANCEL: wire.Cancel,
           wire.RETURN: wire.Return, wire.RETURNED: wire.Returned, wire.HELD: wire.Held, wire.STATS: wire.Stats,
           wire.CLIENT_GOODBYE: wire.ClientGoodbye, wire.NODE_GOODBYE: wire.NodeGoodbye,
           wire.REFUSED: wire.Refused}[t]
    return cls(**f)


def normal(m: wire.Message) -> wire.Message:
    """Make a decoded message comparable (arrays as lists, bytes as bytes)."""
    if isinstance(m, wire.Transfer):
        m.groups = [wire.Group(g.region, list(g.slots), [bytes(n) for n in g.names]) for g in m.groups]
    return m


GOOD = [v for v in DOC["vectors"] if "fields" in v]
BAD = [v for v in DOC["vectors"] if "error" in v]


def test_the_file_is_version_1_with_both_kinds() -> None:
    assert DOC["protocol_version"] == wire.VERSION
    assert len(GOOD) >= 20 and len(BAD) >= 20
    # Every message type of the protocol has a vector that decodes.
    assert {TYPES[v["type"]] for v in GOOD} == set(wire.TYPE_NAMES)


@pytest.mark.parametrize("v", GOOD, ids=[v["name"] for v in GOOD])
def test_vector_decodes_to_its_fields_and_encodes_to_its_hex(v: dict[str, Any]) -> None:
    frame = bytes.fromhex(v["hex"])
    h, got = wire.decode(frame, DOC["max_body"])
    want = message(v["type"], v["fields"])
    assert h.type == TYPES[v["type"]]
    assert h.request_id == v.get("request", 0)
    assert normal(got) == want
    assert wire.encode(want, v.get("request", 0)) == frame


@pytest.mark.parametrize("v", BAD, ids=[v["name"] for v in BAD])
def test_bad_vector_fails_with_its_code(v: dict[str, Any]) -> None:
    with pytest.raises(errors.NodeError) as e:
        wire.decode(bytes.fromhex(v["hex"]), DOC["max_body"])
    assert e.value.code == v["error"]["code"], e.value
    assert e.value.name == v["error"]["code_name"]
    assert not e.value.refused


def test_refusal_of_an_unknown_code_keeps_its_number() -> None:
    v = next(v for v in GOOD if v["name"] == "refused-unknown-code")
    _, m = wire.decode(bytes.fromhex(v["hex"]), DOC["max_body"])
    assert isinstance(m, wire.Refused)
    e = errors.error_for_code(m.code, m.field, m.message)
    assert isinstance(e, errors.UnknownCodeError)
    assert e.code == v["fields"]["code"] and e.refused
    assert str(v["fields"]["code"]) in str(e)


def test_every_code_of_the_protocols_table_has_its_exception() -> None:
    import re

    table = (VECTORS.parents[1] / "PROTOCOL.md").read_text()
    rows = re.findall(r"^\| (\d+) \| ([a-z-]+) \| `Err(\w+)` \|", table, re.M)
    assert len(rows) >= 14
    for code, name, sentinel in rows:
        e = errors.error_for_code(int(code))
        assert e.code == int(code) and e.name == name
        assert type(e).__name__ == sentinel + "Error", f"code {code}: ErrX is XError"


@pytest.mark.parametrize("names", [
    [b"h" * 16] * 300,  # one length, as block hashes are: ends from a range
    [b"a", b"bb" * 256, b"ccc"],  # lengths that differ: a running sum
    [bytearray(b"x" * 8), memoryview(b"y" * 8)],  # bytes-like, one length
    [],
], ids=["one-length", "mixed", "bytes-like", "none"])
def test_a_views_names_field_is_the_wires(names: list) -> None:
    """The names field a checked view sends is the one wire.encode_body
    makes from the names themselves, whichever way its ends are computed."""
    from kvshare_node.lend import _names_field

    checked, field = _names_field(names, "publish.groups[0]")
    want = wire.encode_body(wire.Lookup(False, [[bytes(n) for n in names]]))[5:]  # every, group count
    assert field == want
    assert [bytes(n) for n in checked] == [bytes(n) for n in names]
