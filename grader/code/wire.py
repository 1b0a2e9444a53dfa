"""Plain data over a pipe: the only thing that crosses between a learner's code and the grader.

A frame is ``>II`` (length of a JSON header, length of a binary blob), the header (UTF-8 JSON)
and the blob. Values in the header are tagged so that nothing is ambiguous::

    None, True, False, 3, 2.5, "text"        as JSON
    {"l": [...]}  list      {"t": [...]}  tuple      {"d": [[key, value], ...]}  dict
    {"T": [dtype, shape, offset, nbytes]}    a torch.Tensor: its bytes are blob[offset:offset+nbytes]
    {"X": "MyTensor"}                        anything else: only its type's name crosses

Decoding (:func:`decode`) is strict and is the grader's side of the trust boundary: every byte
may come from hostile code. It reads at most :attr:`WireLimits.header_bytes` +
:attr:`WireLimits.blob_bytes`, refuses deep nesting, unknown tags, duplicate keys, lone
surrogates and tensors whose dtype, shape and byte count disagree, and builds fresh objects
(a tensor is a copy of the bytes); no pickle, no code, no learner object ever comes out.

This file is also copied into the sandbox (next to ``solution_server.py``), so it imports only
the standard library; torch is used when a tensor is met, never imported for that.
"""
from __future__ import annotations

import ctypes
import json
import os
import select
import struct
import sys
import time
from dataclasses import dataclass

TYPE_CHECKING = False       # no typing at run time: this file runs in the sandbox too (stdlib, imported fast)
if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from types import ModuleType
    from typing import Any, Protocol

    from torch import Tensor

    # A header node: a JSON value as json.loads gives it (the decoder checks it, tag by tag), or
    # one the encoder builds. A decoded value is plain data of any shape (lists, tuples, dicts,
    # scalars, tensors, NotPlainData).
    Node = Any

    class _Codec(Protocol):
        items: int
        limits: WireLimits

HEAD = struct.Struct(">II")
DTYPES = ("float16", "bfloat16", "float32", "float64", "complex64", "complex128",
          "int8", "int16", "int32", "int64", "uint8", "bool")
SCALARS = (type(None), bool, int, float, str)


@dataclass(frozen=True)
class WireLimits:
    """How much one frame may hold."""

    header_bytes: int = 1 << 20     # the JSON part
    blob_bytes: int = 16 << 20      # the tensors' bytes
    depth: int = 32                 # nesting of lists, tuples, dicts
    items: int = 200_000            # values in one frame
    ndim: int = 16                  # dimensions of one tensor
    text: int = 100_000             # characters of one string


class WireError(Exception):
    """A frame that breaks the rules (malformed, too large, too deep, ...)."""


class WireTimeout(WireError):
    """No (complete) frame before the deadline."""


class WireClosed(WireError):
    """The other end closed the pipe."""


# ------------------------------------------------------------------ encoding


def _one_more(codec: _Codec, depth: int) -> None:
    """Count one more value of an encoder's or decoder's message, within its limits."""
    codec.items += 1
    if codec.items > codec.limits.items:
        raise WireError(f"more than {codec.limits.items} values")
    if depth > codec.limits.depth:
        raise WireError(f"nested deeper than {codec.limits.depth} levels")


class Encoder:
    """Turns plain data into a header tree and blobs; anything else becomes ``{"X": name}``."""

    def __init__(self, limits: WireLimits = WireLimits(), strict: bool = False) -> None:
        self.limits = limits
        self.strict = strict        # refuse what is not plain data (the grader's own requests)
        self.blobs: list[bytes] = []
        self.size = 0
        self.items = 0

    def encode(self, obj: Any, depth: int = 0) -> Node:
        _one_more(self, depth)
        t = type(obj)
        if t in SCALARS:
            if t is str and len(obj) > self.limits.text:
                raise WireError(f"a string longer than {self.limits.text} characters")
            return obj
        if t is list or t is tuple:
            return {"l" if t is list else "t": [self.encode(x, depth + 1) for x in obj]}
        if t is dict:
            pairs: list[list[Node]] = []
            for k, v in obj.items():
                if type(k) not in SCALARS:
                    return self._foreign("dict with a key of type " + type(k).__name__[:100])
                pairs.append([self.encode(k, depth + 1), self.encode(v, depth + 1)])
            return {"d": pairs}
        torch = sys.modules.get("torch")
        if torch is not None and t is torch.Tensor:
            return self._tensor(obj, torch)
        return self._foreign(_type_name(obj))

    def _foreign(self, name: str) -> dict[str, str]:
        if self.strict:
            raise WireError(f"a {name} is not plain data")
        return {"X": name}

    def _tensor(self, t: Tensor, torch: ModuleType) -> Node:
        try:
            t = t.detach()
            if t.layout != torch.strided or t.device.type != "cpu":
                t = t.to_dense().cpu() if t.layout != torch.strided else t.cpu()
            t = t.resolve_conj().resolve_neg().contiguous()
            dtype = str(t.dtype).replace("torch.", "")
            if dtype not in DTYPES:
                return self._foreign(f"torch.Tensor of dtype {dtype}")
            n = t.numel() * t.element_size()
            data = ctypes.string_at(t.data_ptr(), n) if n else b""
        except Exception as e:  # a tensor that cannot be read out
            return self._foreign(f"torch.Tensor that cannot be read ({type(e).__name__})")
        if self.size + n > self.limits.blob_bytes:
            raise WireError(f"more than {_mib(self.limits.blob_bytes)} of tensor data")
        self.blobs.append(data)
        offset, self.size = self.size, self.size + n
        return {"T": [dtype, list(t.shape), offset, n]}


def _type_name(obj: object) -> str:
    try:
        name = type(obj).__qualname__
    except Exception:
        name = "object"
    return str(name)[:100]


def _mib(n: int) -> str:
    return f"{n / (1 << 20):g} MiB" if n >= 1 << 20 else f"{n} bytes"


def pack(header: Mapping[str, Node], blobs: Iterable[bytes] = (), limits: WireLimits = WireLimits()) -> bytes:
    """One frame: the header dict (JSON) and the blobs it refers to."""
    text = json.dumps(header, ensure_ascii=True, allow_nan=True, separators=(",", ":")).encode()
    blob = b"".join(blobs)
    if len(text) > limits.header_bytes:
        raise WireError(f"a header of {len(text)} bytes (the limit is {limits.header_bytes})")
    if len(blob) > limits.blob_bytes:
        raise WireError(f"{len(blob)} bytes of tensor data (the limit is {_mib(limits.blob_bytes)})")
    return HEAD.pack(len(text), len(blob)) + text + blob


def frame(header: Mapping[str, Node], values: Mapping[str, object], limits: WireLimits = WireLimits(),
          strict: bool = False) -> bytes:
    """A frame whose header holds ``values`` (name -> Python value), encoded; ``strict``: a
    value that is not plain data is a :class:`WireError`, not a stand-in."""
    enc = Encoder(limits, strict)
    body = dict(header)
    for name, value in values.items():
        body[name] = enc.encode(value)
    return pack(body, enc.blobs, limits)


# ------------------------------------------------------------------ reading


def write_all(fd: int, data: bytes, deadline: float | None = None) -> None:
    """Write everything (a non-blocking fd waits with select, at most until ``deadline``)."""
    view = memoryview(data)
    while view:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise WireTimeout("the other end does not read")
            _, ready, _ = select.select([], [fd], [], left)
            if not ready:
                continue
        try:
            n = os.write(fd, view)
        except BlockingIOError:
            continue
        except (BrokenPipeError, ConnectionError):
            raise WireClosed("the other end closed the pipe") from None
        view = view[n:]


def _read_exact(fd: int, n: int, deadline: float | None) -> bytes:
    parts: list[bytes] = []
    while n:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise WireTimeout("no reply in time")
            ready, _, _ = select.select([fd], [], [], left)
            if not ready:
                continue
        try:
            chunk = os.read(fd, min(n, 1 << 20))
        except BlockingIOError:
            continue
        if not chunk:
            raise WireClosed("the pipe was closed" + (" in the middle of a frame" if parts else ""))
        parts.append(chunk)
        n -= len(chunk)
    return b"".join(parts)


def read_frame(fd: int, deadline: float | None = None,
               limits: WireLimits = WireLimits()) -> tuple[dict[str, Node], bytes]:
    """Read one frame: (header dict, blob). Sizes are checked before anything is read."""
    n_text, n_blob = HEAD.unpack(_read_exact(fd, HEAD.size, deadline))
    if n_text > limits.header_bytes:
        raise WireError(f"a reply header of {n_text} bytes (the limit is {limits.header_bytes})")
    if n_blob > limits.blob_bytes:
        raise WireError(f"a reply of {_mib(n_blob)} of tensor data (the limit is {_mib(limits.blob_bytes)})")
    text = _read_exact(fd, n_text, deadline)
    blob = _read_exact(fd, n_blob, deadline)
    return parse_header(text, limits), blob


def parse_header(text: bytes, limits: WireLimits = WireLimits()) -> dict[str, Node]:
    try:
        obj = json.loads(text.decode("utf-8"), object_pairs_hook=_no_duplicates)
    except RecursionError:
        raise WireError("the reply is nested too deeply") from None
    except (UnicodeDecodeError, ValueError) as e:
        raise WireError(f"the reply is not valid JSON ({str(e)[:80]})") from None
    if type(obj) is not dict:
        raise WireError("the reply is not a JSON object")
    header: dict[str, Node] = obj
    return header


def _no_duplicates(pairs: list[tuple[str, Node]]) -> dict[str, Node]:
    d: dict[str, Node] = {}
    for k, v in pairs:
        if k in d:
            raise ValueError(f"duplicate key {k[:20]!r}")
        d[k] = v
    return d


# ------------------------------------------------------------------ decoding


class NotPlainData:
    """Stands for a value that was not plain data (only its type's name crossed)."""

    __slots__ = ("type_name",)

    def __init__(self, type_name: str) -> None:
        self.type_name = type_name

    def __repr__(self) -> str:
        return f"<{self.type_name}: not plain data>"

    def __eq__(self, other: object) -> bool:
        return False

    def __ne__(self, other: object) -> bool:
        return True

    def __bool__(self) -> bool:
        return False

    __hash__ = None     # type: ignore[assignment]  # unhashable (object's __hash__ is a method: None says so)


class Decoder:
    """The strict reverse of :class:`Encoder`."""

    def __init__(self, blob: bytes, limits: WireLimits = WireLimits()) -> None:
        self.blob = blob
        self.limits = limits
        self.items = 0

    def decode(self, node: Node, depth: int = 0) -> Any:
        _one_more(self, depth)
        t = type(node)
        if node is None or t is bool or t is int or t is float:
            return node
        if t is str:
            return _text(node, self.limits)
        if t is not dict or len(node) != 1:
            raise WireError(f"an untagged {t.__name__} where a value was expected")
        ((tag, body),) = node.items()
        if tag in ("l", "t"):
            if type(body) is not list:
                raise WireError("a list or tuple that is not a JSON array")
            items = [self.decode(x, depth + 1) for x in body]
            return items if tag == "l" else tuple(items)
        if tag == "d":
            if type(body) is not list:
                raise WireError("a dict that is not a JSON array of pairs")
            out: dict[Any, Any] = {}
            for pair in body:
                if type(pair) is not list or len(pair) != 2:
                    raise WireError("a dict entry that is not a [key, value] pair")
                key = self.decode(pair[0], depth + 1)
                if type(key) not in SCALARS:
                    raise WireError("a dict key that is not a scalar")
                out[key] = self.decode(pair[1], depth + 1)
            return out
        if tag == "T":
            return self._tensor(body)
        if tag == "X":
            return NotPlainData(_text(body, self.limits)[:100] if type(body) is str else "object")
        raise WireError(f"an unknown tag {str(tag)[:20]!r}")

    def _tensor(self, body: Node) -> Tensor:
        if type(body) is not list or len(body) != 4:
            raise WireError("a tensor that is not [dtype, shape, offset, nbytes]")
        dtype, shape, offset, nbytes = body
        if type(dtype) is not str or dtype not in DTYPES:
            raise WireError(f"a tensor of unknown dtype {str(dtype)[:20]!r}")
        if type(shape) is not list or len(shape) > self.limits.ndim or \
                any(type(s) is not int or not 0 <= s <= 1 << 40 for s in shape):
            raise WireError("a tensor with an invalid shape")
        if type(offset) is not int or type(nbytes) is not int or offset < 0 or nbytes < 0 or \
                offset + nbytes > len(self.blob):
            raise WireError("a tensor whose bytes are not in the frame")
        import torch
        dt = getattr(torch, dtype)
        numel = 1
        for s in shape:
            numel *= s
        size = torch.empty((), dtype=dt).element_size()
        if numel * size != nbytes:
            raise WireError(f"a tensor of shape {tuple(shape)} and dtype {dtype} with {nbytes} bytes")
        if nbytes == 0:
            return torch.empty(shape, dtype=dt)
        raw = bytearray(self.blob[offset:offset + nbytes])
        if dt is torch.bool:  # a byte other than 0 or 1 is not a valid bool: read as bytes, then != 0
            return torch.frombuffer(raw, dtype=torch.uint8).ne(0).reshape(shape)
        return torch.frombuffer(raw, dtype=dt).reshape(shape)


def _text(s: str, limits: WireLimits) -> str:
    if len(s) > limits.text:
        raise WireError(f"a string longer than {limits.text} characters")
    try:
        s.encode("utf-8")
    except UnicodeEncodeError:
        raise WireError("a string with a lone surrogate") from None
    return s


def decode(node: Node, blob: bytes = b"", limits: WireLimits = WireLimits()) -> Any:
    """A Python value from a header node and its frame's blob (raises :class:`WireError`)."""
    try:
        return Decoder(blob, limits).decode(node)
    except RecursionError:
        raise WireError("nested too deeply") from None
    except (ValueError, TypeError, RuntimeError, OverflowError, MemoryError) as e:
        raise WireError(f"a value that cannot be rebuilt ({type(e).__name__})") from None
