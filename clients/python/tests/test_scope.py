"""Scopes: the committed vectors, the rules, properties and a fuzzed parser.

keys/testdata/scope-vectors.json is the file Go's TestScopeVectors
checks: a change to the Go encoding, digest or keys that this package
does not follow fails here. KVSHARE_FUZZ_SEED picks the seed of the
random cases (printed on failure), KVSHARE_FUZZ_N their number.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
from pathlib import Path

import pytest

import kvshare_node as kv
from kvshare_node import scope as scopes

VECTORS = json.loads((Path(__file__).resolve().parents[3] / "keys" / "testdata" / "scope-vectors.json").read_text())
SEED = int(os.environ.get("KVSHARE_FUZZ_SEED") or "45")
N = int(os.environ.get("KVSHARE_FUZZ_N") or "20000")

BASE = kv.Scope.from_fields(VECTORS["scopes"][0]["scope"])


def test_field_order_is_the_encodings() -> None:
    assert list(scopes.FIELD_NAMES) == VECTORS["field_order"]
    assert [f.name for f in kv.Scope.__dataclass_fields__.values()] == VECTORS["field_order"]


@pytest.mark.parametrize("v", VECTORS["scopes"], ids=[v["comment"] for v in VECTORS["scopes"]])
def test_every_vector_fields_to_encoding_to_digest_to_keys(v: dict) -> None:
    s = kv.Scope.from_fields(v["scope"])
    assert s.fields() == v["scope"]
    assert s.encode() == v["encoding"]
    assert s.encode_bytes().hex() == v["encoding_hex"]
    assert hashlib.sha256(s.encode_bytes()).hexdigest() == v["sha256"]
    assert s.digest().hex() == v["digest"] == v["sha256"][:32]
    assert kv.Scope.parse(v["encoding"]) == s
    assert kv.Scope.parse(bytes.fromhex(v["encoding_hex"])) == s
    assert v["keys"], "a vector without keys checks nothing"
    for k in v["keys"]:
        assert s.key(k["prefix"], bytes.fromhex(k["name_hex"])) == k["key"]


def test_unscoped_keys_are_todays() -> None:
    for k in VECTORS["unscoped_keys"]:
        assert kv.unscoped_key(k["prefix"], bytes.fromhex(k["name_hex"])) == k["key"]


@pytest.mark.parametrize("r", VECTORS["refused"], ids=[r["comment"] for r in VECTORS["refused"]])
def test_every_refused_text_is_refused_naming_its_field(r: dict) -> None:
    with pytest.raises(kv.InvalidScopeError) as e:
        kv.Scope.parse(r["encoding"])
    assert e.value.field == r["field"], e.value


def test_the_vectors_digests_differ() -> None:
    digests = [v["digest"] for v in VECTORS["scopes"]]
    assert len(set(digests)) == len(digests) >= 4


BAD_FIELDS = [
    ("model", "", "empty"),
    ("revision", "", "empty"),
    ("kv_dtype", "", "empty"),
    ("hash_algorithm", "", "empty"),
    ("model", "m" * 257, "over the limit"),
    ("adapter", "a\nb", "control character"),
    ("tenant", "t\x7f", "control character"),
    ("tenant", "t\x85", "control character"),
    ("quantization", "\ud800", "UTF-8"),
    ("model", b"bytes", "want str"),
    ("tokens_per_block", 0, "at least 1"),
    ("kv_heads", 0, "at least 1"),
    ("head_dim", 0, "at least 1"),
    ("layers", 0, "at least 1"),
    ("tp_size", 0, "at least 1"),
    ("pp_size", 0, "at least 1"),
    ("head_dim", 1 << 32, "want 0 to"),
    ("first_layer", -1, "want 0 to"),
    ("kv_heads", True, "want int"),
    ("kv_heads", "8", "want int"),
    ("tp_rank", 1, "below tp_size"),
    ("pp_rank", 3, "below pp_size"),
]


@pytest.mark.parametrize("field,value,why", BAD_FIELDS, ids=[f"{f}={v!r}"[:40] for f, v, _ in BAD_FIELDS])
def test_a_broken_rule_is_refused_naming_the_field(field: str, value: object, why: str) -> None:
    s = BASE.replace(**{field: value})
    for call in (s.validate, s.encode, s.digest, lambda: s.key("kvshare", b"row")):
        with pytest.raises(kv.InvalidScopeError) as e:
            call()
        assert e.value.field == field and why in e.value.reason, e.value
        assert isinstance(e.value, ValueError)


def test_every_broken_field_is_named_in_order() -> None:
    s = BASE.replace(model="", layers=0, tenant="\x00")
    with pytest.raises(kv.InvalidScopeError) as e:
        s.validate()
    assert [f for f, _ in e.value.faults] == ["model", "layers", "tenant"]


def test_the_layer_range_ends_within_32_bits() -> None:
    BASE.replace(first_layer=(1 << 32) - 1, layers=1).validate()
    with pytest.raises(kv.InvalidScopeError) as e:
        BASE.replace(first_layer=(1 << 32) - 1, layers=2).validate()
    assert e.value.field == "layers"


def test_limits_are_inclusive() -> None:
    s = BASE.replace(model="m" * 256, tenant="é" * 128, head_dim=(1 << 32) - 1)
    assert kv.Scope.parse(s.encode()) == s


def test_from_fields_refuses_unknown_missing_and_bad_numbers_together() -> None:
    f = BASE.fields()
    del f["tenant"]
    f["tokens_per_block"] = "016"
    f["colour"] = "red"
    with pytest.raises(kv.InvalidScopeError) as e:
        kv.Scope.from_fields(f)
    assert [x for x, _ in e.value.faults] == ["tokens_per_block", "tenant", "colour"]


def test_a_forgotten_field_is_a_type_error() -> None:
    f = {k: v for k, v in BASE.fields().items() if k != "tp_size"}
    with pytest.raises(TypeError):
        kv.Scope(**f)  # type: ignore[arg-type]


@pytest.mark.parametrize("prefix", ["", "/kv", "kv/", "kv//x", "kv/./x", "..", "kv x", "kv/s1-" + "0" * 32, "k" * 129])
def test_a_bad_prefix_is_refused(prefix: str) -> None:
    with pytest.raises(kv.InvalidPrefixError):
        BASE.key(prefix, b"row")
    with pytest.raises(kv.InvalidPrefixError):
        kv.unscoped_key(prefix, b"row")


@pytest.mark.parametrize("name", [b"", b"x" * 513, "row"])
def test_a_bad_name_is_refused(name: object) -> None:
    with pytest.raises(kv.InvalidNameError):
        BASE.key("kvshare", name)  # type: ignore[arg-type]


# ---- properties and fuzzing ------------------------------------------------


def random_text(rng: random.Random, required: bool) -> str:
    alphabet = "abcXYZ019/-_.@:,;é日🙂 "
    n = rng.randint(1 if required else 0, 24)
    return "".join(rng.choice(alphabet) for _ in range(n))


def random_scope(rng: random.Random) -> kv.Scope:
    f: dict[str, object] = {}
    for name in scopes.FIELD_NAMES:
        required = name in ("model", "revision", "kv_dtype", "hash_algorithm")
        f[name] = rng.choice([1, 2, 7, 16, 128, (1 << 32) - 1]) if name in scopes.NUMBER_FIELDS else random_text(rng, required)
    f["first_layer"] = rng.randint(0, 1000)
    f["layers"] = rng.randint(1, 1000)
    f["tp_size"] = rng.randint(1, 8)
    f["tp_rank"] = rng.randrange(f["tp_size"])  # type: ignore[arg-type]
    f["pp_size"] = rng.randint(1, 8)
    f["pp_rank"] = rng.randrange(f["pp_size"])  # type: ignore[arg-type]
    return kv.Scope.from_fields(f)


def other_value(rng: random.Random, s: kv.Scope, name: str) -> object:
    """A value of field name, different from s's, that keeps s valid
    (a rank needs a size over 1 to have another value)."""
    old = getattr(s, name)
    while True:
        if name in ("tp_rank", "pp_rank"):
            v: object = rng.randrange(getattr(s, name[:3] + "size"))
        elif name in ("tp_size", "pp_size"):
            v = old + rng.randint(1, 8)
        elif name == "first_layer":
            v = rng.randint(0, 1 << 20)
        elif name in scopes.NUMBER_FIELDS:
            v = rng.randint(1, 1 << 20)
        else:
            v = random_text(rng, True) + rng.choice(["", "x", ",", "0:"])
        if v != old:
            return v


def test_scopes_differing_in_any_one_field_never_share_a_digest() -> None:
    rng = random.Random(SEED)
    changed = {name: 0 for name in scopes.FIELD_NAMES}
    for i in range(max(200, N // 20)):
        s = random_scope(rng)
        name = scopes.FIELD_NAMES[i % len(scopes.FIELD_NAMES)]
        if name in ("tp_rank", "pp_rank") and getattr(s, name[:3] + "size") == 1:
            s = s.replace(**{name[:3] + "size": 4})
        t = s.replace(**{name: other_value(rng, s, name)})
        t.validate()
        assert t != s
        assert t.encode() != s.encode(), f"seed {SEED}: {name}"
        assert t.digest() != s.digest(), f"seed {SEED}: {name} changed, the digest did not"
        assert t.key("kvshare", b"row") != s.key("kvshare", b"row")
        assert kv.Scope.parse(t.encode()) == t
        changed[name] += 1
    assert all(changed.values()), changed


def test_the_same_scope_gives_the_same_key_in_another_process() -> None:
    rng = random.Random(SEED)
    ss = [random_scope(rng) for _ in range(20)]
    code = ("import json,sys,kvshare_node as kv\n"
            "print(json.dumps([kv.Scope.parse(t).key('kvshare/p', b'row-0') for t in json.load(sys.stdin)]))")
    out = subprocess.run(["/usr/bin/python3", "-c", code], input=json.dumps([s.encode() for s in ss]), text=True,
                         capture_output=True, check=True, env=dict(os.environ, PYTHONHASHSEED="random"),
                         cwd=Path(__file__).resolve().parents[1])
    assert json.loads(out.stdout) == [s.key("kvshare/p", b"row-0") for s in ss]


def test_go_prints_the_same_keys(kvshare_bin: str) -> None:
    """`kvshare key` (Go) and Scope.key make the same keys of random scopes."""
    rng = random.Random(SEED)
    for _ in range(8):
        s = random_scope(rng)
        flags = [f"--{name.replace('_', '-')}={v}" for name, v in s.fields().items()]
        out = subprocess.run([kvshare_bin, "key", *flags, "--prefix", "kv/py", "--hex", "00ff", "726f77"],
                             capture_output=True, text=True)
        assert out.returncode == 0, out.stderr
        assert out.stdout.split() == [s.key("kv/py", b"\x00\xff"), s.key("kv/py", b"row")], s


def _at(rng: random.Random, b: bytearray) -> int:
    return rng.randrange(len(b) + 1)


# Edits of an encoding's bytes: the byte-level ones, and those that aim at
# the netstrings (a digit for a digit, a token of the grammar inserted).
EDITS = [
    lambda rng, b: b.__setitem__(slice(i := _at(rng, b), i + 1), bytes([rng.randrange(256)])),
    lambda rng, b: b.__delitem__(slice(_at(rng, b), None)),
    lambda rng, b: b.__delitem__(slice(i := _at(rng, b), i + rng.randint(1, 4))),
    lambda rng, b: b.__setitem__(slice(i := _at(rng, b), i), rng.randbytes(rng.randint(1, 8))),
    lambda rng, b: b.__setitem__(slice(i := _at(rng, b), i),
                                 rng.choice([b"0", b"1:", b",", b":", b"\x80", b"9" * rng.randint(1, 12)])),
    lambda rng, b: [b.__setitem__(i, rng.choice(b"0123456789")) for i in range(len(b)) if 0x30 <= b[i] <= 0x39
                    and rng.random() < 0.05],
]


def mutate(rng: random.Random, text: bytes) -> bytes:
    b = bytearray(text)
    for _ in range(rng.randint(1, 4)):
        rng.choice(EDITS)(rng, b)
    return bytes(b)


def test_parse_of_random_and_mutated_texts_raises_only_its_own_error() -> None:
    rng = random.Random(SEED)
    seeds = [v["encoding"].encode() for v in VECTORS["scopes"]] + [r["encoding"].encode() for r in VECTORS["refused"]]
    accepted = 0
    for i in range(N):
        if i % 10 == 0:
            text: bytes | str = rng.randbytes(rng.randint(0, 64))
        elif i % 10 == 1:
            text = mutate(rng, random_scope(rng).encode_bytes()).decode("utf-8", "surrogateescape")
        else:
            text = mutate(rng, rng.choice(seeds))
        try:
            s = kv.Scope.parse(text)
        except kv.InvalidScopeError:
            continue
        except Exception as e:  # noqa: BLE001 - the property under test
            raise AssertionError(f"seed {SEED}, case {i}: {text!r}: {type(e).__name__}: {e}") from e
        accepted += 1
        b = text.encode("utf-8") if isinstance(text, str) else text
        assert s.encode_bytes() == b, f"seed {SEED}, case {i}: accepted {text!r}, which is not its encoding"
    assert accepted > 0, "no mutation survived: the mutations only test the header"
