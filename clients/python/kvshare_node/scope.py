"""Scopes: the facts that make two engines' KV blocks interchangeable.

The same value as the Go module ``keys`` (``keys.Scope``), with the same
canonical encoding (version 1), digest and keys, so that a Python router
or tool recomputes the keys an engine's rows are stored under. The
committed vectors (``keys/testdata/scope-vectors.json``) pin all three
for both languages.

Encoding: ``kvscope1;`` then the 17 fields in :data:`FIELD_NAMES` order,
each as ``<UTF-8 byte length in decimal>:<value>,`` (numbers as decimal
digits without leading zeros). Digest: the first 16 bytes of the
encoding's SHA-256. Key: ``prefix + "/s1-" + digest hex + "/v1/" +
hex(name)``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from dataclasses import dataclass
from typing import Mapping

from .errors import InvalidNameError, InvalidPrefixError, InvalidScopeError

__all__ = ["Scope", "FIELD_NAMES", "NUMBER_FIELDS", "unscoped_key", "MAX_FIELD_BYTES", "DIGEST_BYTES",
           "MAX_PREFIX_BYTES", "MAX_NAME_BYTES"]

#: The longest text field, in UTF-8 bytes (keys.MaxScopeFieldBytes).
MAX_FIELD_BYTES = 256
#: The digest's length in bytes (keys.ScopeDigestBytes): 128 bits.
DIGEST_BYTES = 16
#: The longest key prefix (keys.MaxPrefixBytes) and name (keys.MaxNameBytes).
MAX_PREFIX_BYTES = 128
MAX_NAME_BYTES = 512

_HEADER = b"kvscope1;"
_U32_MAX = (1 << 32) - 1

#: Every field in the order of the canonical encoding (keys.ScopeFieldNames).
#: The order is part of version 1: never reordered, never extended.
FIELD_NAMES = (
    "model", "revision", "adapter", "kv_dtype", "quantization",
    "tokens_per_block", "kv_heads", "head_dim", "first_layer", "layers",
    "tp_rank", "tp_size", "pp_rank", "pp_size",
    "hash_algorithm", "hash_seed", "tenant",
)
#: The fields that are numbers (unsigned 32-bit); the others are text.
NUMBER_FIELDS = frozenset({"tokens_per_block", "kv_heads", "head_dim", "first_layer", "layers",
                           "tp_rank", "tp_size", "pp_rank", "pp_size"})
# Required: text non-empty, numbers at least 1.
_REQUIRED = frozenset({"model", "revision", "kv_dtype", "hash_algorithm",
                       "tokens_per_block", "kv_heads", "head_dim", "layers", "tp_size", "pp_size"})


def _text_fault(v: object, required: bool) -> str:
    """"" when v may be a text field, else why not (keys.textFault)."""
    if not isinstance(v, str):
        return f"a {type(v).__name__}, want str"
    if v == "" and required:
        return "empty (required)"
    try:
        b = v.encode("utf-8")
    except UnicodeEncodeError as e:
        return f"not valid UTF-8 (a lone surrogate at character {e.start})"
    if len(b) > MAX_FIELD_BYTES:
        return f"{len(b)} bytes, over the limit of {MAX_FIELD_BYTES}"
    for i, ch in enumerate(v):
        c = ord(ch)
        if c < 0x20 or 0x7F <= c <= 0x9F:  # Go's unicode.IsControl: the C0 and C1 controls, DEL
            return f"control character U+{c:04X} at offset {len(v[:i].encode('utf-8'))}"
    return ""


def _number_fault(v: object, required: bool) -> str:
    if isinstance(v, bool) or not isinstance(v, int):
        return f"a {type(v).__name__}, want int"
    if not 0 <= v <= _U32_MAX:
        return f"{v}, want 0 to {_U32_MAX}"
    if required and v == 0:
        return "0, want at least 1"
    return ""


def _decimal_fault(v: bytes) -> str:
    """"" when v is a number as the encoding writes it, else why not."""
    if not v:
        return "empty number"
    for b in v:
        if not 0x30 <= b <= 0x39:
            return f"number {v!r} holds {_describe(b)}"
    if len(v) > 1 and v[0] == 0x30:
        return f"number {v.decode()!r} has a leading zero"
    if int(v) > _U32_MAX:
        return f"number {v.decode()}, over the limit of {_U32_MAX}"
    return ""


def _describe(b: int) -> str:
    return f"byte {chr(b)!r} (0x{b:02x})" if 0x20 <= b < 0x7F else f"byte 0x{b:02x}"


@dataclass(frozen=True, slots=True, kw_only=True)
class Scope:
    """What makes KV blocks interchangeable: two engines share a block
    only when every field is equal (``keys.Scope``).

    Every field is given by name, none has a default: a field forgotten
    is a TypeError, never a scope silently shared with another layout.
    Text is compared byte for byte, never normalized ("fp16" and
    "float16" are two scopes: a miss, never a wrong hit). :meth:`validate`
    checks the rules; :meth:`encode`, :meth:`digest` and :meth:`key`
    validate first.
    """

    model: str  #: the model; required
    revision: str  #: the weights revision; required
    adapter: str  #: the LoRA adapter; "" is the base model
    kv_dtype: str  #: element type of K and V ("fp16", "fp8_e4m3"); required
    quantization: str  #: quantization beyond the dtype; "" is none
    tokens_per_block: int  #: at least 1
    kv_heads: int  #: KV heads a block holds (its TP shard's); at least 1
    head_dim: int  #: at least 1
    first_layer: int  #: the first layer a block holds
    layers: int  #: how many from there; at least 1
    tp_rank: int  #: below tp_size
    tp_size: int  #: at least 1
    pp_rank: int  #: below pp_size
    pp_size: int  #: at least 1
    hash_algorithm: str  #: the algorithm of the block hashes (the names); required
    hash_seed: str  #: their seed as text; "" is unseeded
    tenant: str  #: whose blocks; "" is none

    def faults(self) -> list[tuple[str, str]]:
        """Every broken rule as (field, reason), in the fields' order."""
        out = []
        for name in FIELD_NAMES:
            v = getattr(self, name)
            check = _number_fault if name in NUMBER_FIELDS else _text_fault
            if reason := check(v, name in _REQUIRED):
                out.append((name, reason))
        bad = {f for f, _ in out}
        if "tp_rank" not in bad and "tp_size" not in bad and self.tp_size > 0 and self.tp_rank >= self.tp_size:
            out.append(("tp_rank", f"{self.tp_rank}, want below tp_size ({self.tp_size})"))
        if "pp_rank" not in bad and "pp_size" not in bad and self.pp_size > 0 and self.pp_rank >= self.pp_size:
            out.append(("pp_rank", f"{self.pp_rank}, want below pp_size ({self.pp_size})"))
        if "first_layer" not in bad and "layers" not in bad and self.first_layer + self.layers > 1 << 32:
            out.append(("layers", f"first_layer {self.first_layer} + layers {self.layers} is past the last layer "
                                  f"number ({_U32_MAX})"))
        return out

    def validate(self) -> None:
        """Raise :class:`InvalidScopeError` naming every broken field (the first as ``field``)."""
        if faults := self.faults():
            raise InvalidScopeError(faults)

    def encode_bytes(self) -> bytes:
        """The canonical encoding (version 1) as UTF-8 bytes: what is hashed."""
        self.validate()
        out = bytearray(_HEADER)
        for name in FIELD_NAMES:
            v = getattr(self, name)
            b = str(v).encode("utf-8") if name in NUMBER_FIELDS else v.encode("utf-8")
            out += b"%d:%b," % (len(b), b)
        return bytes(out)

    def encode(self) -> str:
        """The canonical encoding: exactly the bytes of Go's ``Scope.MarshalText``."""
        return self.encode_bytes().decode("utf-8")

    def digest(self) -> bytes:
        """The first 16 bytes of the encoding's SHA-256 (``Scope.Digest``)."""
        return hashlib.sha256(self.encode_bytes()).digest()[:DIGEST_BYTES]

    def key(self, prefix: str, name: bytes) -> str:
        """The store key of ``name`` under ``prefix`` and this scope:
        ``prefix/s1-<32 hex>/v1/hex(name)`` (``keys.NewScopedStem``)."""
        _check_prefix(prefix)
        return f"{prefix}/s1-{self.digest().hex()}/v1/{_name_hex(name)}"

    def fields(self) -> dict[str, str]:
        """Every field by name, numbers in decimal: what :meth:`from_fields` reads."""
        return {name: str(getattr(self, name)) for name in FIELD_NAMES}

    def replace(self, **changes: object) -> "Scope":
        """A copy with ``changes`` (not validated)."""
        return dataclasses.replace(self, **changes)

    @classmethod
    def from_fields(cls, fields: Mapping[str, object]) -> "Scope":
        """Build and validate a scope from its fields by name (``keys.ScopeFromFields``).

        Numbers may be ints or decimal text without a leading zero. Every
        field must be given; an unknown or missing name, a bad number and
        every broken rule are refused together (:class:`InvalidScopeError`).
        """
        faults: list[tuple[str, str]] = []
        values: dict[str, object] = {}
        for name in FIELD_NAMES:
            if name not in fields:
                faults.append((name, "missing"))
                continue
            v = fields[name]
            if name in NUMBER_FIELDS and isinstance(v, str):
                reason = _decimal_fault(v.encode("utf-8", "surrogatepass"))
                if reason:
                    faults.append((name, reason))
                    continue
                v = int(v)
            values[name] = v
        faults += [(name, "not a field of a scope") for name in sorted(set(fields) - set(FIELD_NAMES))]
        if faults:
            raise InvalidScopeError(faults)
        s = cls(**values)  # type: ignore[arg-type]
        s.validate()
        return s

    @classmethod
    def parse(cls, text: str | bytes) -> "Scope":
        """Read a canonical encoding, as :meth:`encode` writes it, and nothing
        else (``keys.ParseScope``): another header or version, a length with
        a leading zero or unlike its value, a number with a leading zero or
        over 2³²-1, a missing ',', bytes after the last field, or a scope
        that does not validate raise :class:`InvalidScopeError`, naming the
        field ("" when the fault is no one field's) and the offset.
        """
        if isinstance(text, str):
            try:
                b = text.encode("utf-8")
            except UnicodeEncodeError as e:
                raise InvalidScopeError([("", f"not valid UTF-8 (a lone surrogate at character {e.start})")]) from None
        elif isinstance(text, (bytes, bytearray, memoryview)):
            b = bytes(text)
        else:
            raise InvalidScopeError([("", f"a {type(text).__name__}, want str or bytes")])
        if not b.startswith(_HEADER):
            raise InvalidScopeError([("", f"does not start with {_HEADER.decode()!r} (version 1 of the encoding)")])
        off = len(_HEADER)
        values: dict[str, object] = {}
        for name in FIELD_NAMES:
            v, nxt, reason = _netstring(b, off)
            if not reason and name in NUMBER_FIELDS:
                reason = _decimal_fault(v)
            if not reason and name not in NUMBER_FIELDS:
                try:
                    values[name] = v.decode("utf-8")
                except UnicodeDecodeError as e:
                    reason = f"not valid UTF-8 (at offset {e.start})"
            if reason:
                raise InvalidScopeError([(name, f"at offset {off}: {reason}")])
            if name in NUMBER_FIELDS:
                values[name] = int(v)
            off = nxt
        if off != len(b):
            raise InvalidScopeError([("", f"{len(b) - off} bytes after the last field (tenant), at offset {off}")])
        s = cls(**values)  # type: ignore[arg-type]
        s.validate()
        return s


def _netstring(b: bytes, off: int) -> tuple[bytes, int, str]:
    """One field, length ':' value ',', at b[off:]: (value, offset after ',', "") or why not."""
    colon = off
    while colon < len(b) and 0x30 <= b[colon] <= 0x39:
        colon += 1
    digits = b[off:colon]
    if off >= len(b):
        return b"", 0, "missing (the text ends)"
    if not digits:
        return b"", 0, f"{_describe(b[off])} where its length's decimal digits should start"
    if len(digits) > 1 and digits[0] == 0x30:
        return b"", 0, f"length {digits.decode()!r} has a leading zero"
    if colon >= len(b) or b[colon] != 0x3A:
        return b"", 0, f"length {digits.decode()!r} is not followed by ':'"
    if len(digits) > 3 or int(digits) > MAX_FIELD_BYTES:
        return b"", 0, f"length {digits.decode()}, over the limit of {MAX_FIELD_BYTES}"
    n = int(digits)
    start = colon + 1
    if len(b) - start < n + 1:
        return b"", 0, f"length {n}, but the text ends first"
    if b[start + n] != 0x2C:
        return b"", 0, f"{_describe(b[start + n])} at offset {start + n} where ',' should end the value"
    return b[start:start + n], start + n + 1, ""


_SEGMENT = re.compile(r"[A-Za-z0-9._-]+\Z")
_SCOPE_SEGMENT = re.compile(r"s1-[0-9a-f]{32}\Z")


def _check_prefix(prefix: str) -> None:
    """Raise InvalidPrefixError unless prefix keeps the key rules (keys.NewStem)."""
    if not isinstance(prefix, str) or not prefix:
        raise InvalidPrefixError(f"{prefix!r}: empty, or not a str")
    if len(prefix.encode("utf-8", "surrogatepass")) > MAX_PREFIX_BYTES:
        raise InvalidPrefixError(f"{len(prefix.encode('utf-8', 'surrogatepass'))} bytes, over the limit of {MAX_PREFIX_BYTES}")
    for seg in prefix.split("/"):
        if not _SEGMENT.match(seg) or seg in (".", "..") or _SCOPE_SEGMENT.match(seg):
            raise InvalidPrefixError(f"{prefix!r}: segment {seg!r} (segments are A-Z a-z 0-9 . _ - between single '/', "
                                     "not '.' or '..', not of a scope segment's form s1-<32 hex>)")


def _name_hex(name: bytes) -> str:
    if not isinstance(name, (bytes, bytearray, memoryview)):
        raise InvalidNameError(f"a {type(name).__name__}, want bytes")
    if not 1 <= len(name) <= MAX_NAME_BYTES:
        raise InvalidNameError(f"{len(name)} bytes, want 1 to {MAX_NAME_BYTES}")
    return bytes(name).hex()


def unscoped_key(prefix: str, name: bytes) -> str:
    """The key of ``name`` without a scope: ``prefix/v1/hex(name)`` (``keys.NewStem``)."""
    _check_prefix(prefix)
    return f"{prefix}/v1/{_name_hex(name)}"
