"""Read YAML (and JSON) safely, with positions.

- Only plain data. The text is *composed* into nodes (libyaml's C parser and composer when
  available) and the nodes are turned into data here, in one walk: no PyYAML constructor
  machinery, no tag can make an object.
- A duplicate key, an alias or anchor reuse (so no YAML bombs), a merge key (``<<``), a tag
  that is not plain data, nesting deeper than Python's recursion limit, or a file over
  ``max_bytes`` is an :class:`InputError` carrying file:line:column. (libyaml's composer
  recurses in C: text that may nest deeper than :data:`C_DEPTH_LIMIT` is composed in Python.)
- Mappings come back as :class:`YDict` and sequences as :class:`YList`, which remember where
  each key, value and item stands, so that later stages can report errors at the right line.
- Files (:func:`read_bytes`, :func:`read_text`, in :mod:`grader.files.textfiles`): regular files only (a FIFO, a device, a socket
  or a folder, or a link to one, is refused before it is opened for reading, and again on the
  opened descriptor), read with a bound rather than trusting ``st_size``; UTF-8, or UTF-16/32
  with a byte order mark. In an answers file, bytes that are not text become U+FFFD, which
  the answer rule reports per answer; elsewhere they refuse the file.

Two ways of reading scalars:

- data files (the bank, the spec; the default): PyYAML's safe types (YAML 1.1 resolution).
- learners' answers files (``answers=True``): YAML 1.2 core-like, and every scalar as written.
  Plain ``123`` or ``-5`` (a canonical decimal integer: no ``+``, no leading zero, at most
  :data:`MAX_INT_DIGITS` digits, so that its text is what the learner wrote) is an int, ``true``/``false`` a bool, ``null``/``~``/empty
  None, ``.nan``/``.inf`` a float (refused later as not finite); everything else stays the
  text the learner wrote (``0100``, ``1:04``, ``0x100``, ``yes``, ``1.05e6``, ``+64``), for the
  grader to read itself. Only the core tags (``!!str !!int !!float !!bool !!null !!seq !!map``)
  are allowed. A duplicate key or another tag does not refuse the file: its value becomes a
  :class:`Refused` (message, location, source text), so that one learner's entry or one
  answer is refused and the rest is still read. A key that is not a plain value (a list, a
  mapping, a tag other than the core ones) becomes a :class:`BadKey`, so that its entry alone is
  refused. Aliases and merge keys still refuse the whole file.
"""
from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from grader.errors import InputError, Location
from grader.files.textfiles import DEFAULT_MAX_BYTES, read_text

if TYPE_CHECKING:      # the C loader where libyaml is built in; typed as the Python one it mirrors
    _Base = yaml.SafeLoader
else:
    _Base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

MAX_INT_DIGITS = 4300       # Python's own limit for converting between int and text
C_DEPTH_LIMIT = 2000        # deeper (by a cheap upper bound) is composed in Python: libyaml's
                            # composer recurses in C and overflows the stack near 50,000 levels

_T = "tag:yaml.org,2002:"
STR, INT, FLOAT, BOOL, NULL, SEQ, MAP = (_T + n for n in ("str", "int", "float", "bool", "null", "seq", "map"))
TIMESTAMP, MERGE, VALUE = _T + "timestamp", _T + "merge", _T + "value"
_PLAIN = "?plain"           # an untagged plain scalar: typed by the answers schema

_CANONICAL_INT = re.compile(r"(?:0|-?[1-9][0-9]{0,%d})\Z" % (MAX_INT_DIGITS - 1))
_DECIMAL_INT = re.compile(r"[-+]?[0-9]+\Z")
_DECIMAL_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?\Z")
_NONFINITE = {f"{s}.{w}": float(f"{s}{w[:3]}") for s in ("", "+", "-") for w in ("inf", "Inf", "INF")}
_NONFINITE.update({f".{w}": float("nan") for w in ("nan", "NaN", "NAN")})
_BOOLS = {"true": True, "True": True, "TRUE": True, "false": False, "False": False, "FALSE": False}
_NULLS = ("", "~", "null", "Null", "NULL")
_LEADING = re.compile(r"^[ \t?:-]*", re.M)


# Parsed YAML is plain data of any shape (a YDict's keys and values, a YList's items are
# scalars, YDicts, YLists or Refused): its readers check its shape, hence Any.
class YDict(dict[Any, Any]):
    """A dict that knows the location of itself, its keys and its values."""

    loc: Location
    key_locs: dict[Any, Location]
    value_locs: dict[Any, Location]

    def loc_of(self, key: Any) -> Location:
        """Where the value of ``key`` stands (or the mapping itself if absent)."""
        return self.value_locs.get(key, self.loc)

    def key_loc(self, key: Any) -> Location:
        return self.key_locs.get(key, self.loc)


class YList(list[Any]):
    """A list that knows the location of itself and of each item."""

    loc: Location
    item_locs: list[Location]

    def loc_of(self, index: int) -> Location:
        return self.item_locs[index] if 0 <= index < len(self.item_locs) else self.loc


@dataclass(frozen=True)
class Refused:
    """In an answers file: a value that is not read (a duplicate key's, or one with a tag that
    is not plain data), with why, where, and its text as written (cut at 200 characters)."""

    message: str
    location: Location
    source: str = ""
    first: Location | None = None       # a duplicate key: where the key stood first


@dataclass(frozen=True)
class BadKey:
    """In an answers file: a mapping key that is not a plain value (a list, a mapping, a tag that
    is not plain data), kept as a key of its own so that only its entry is refused: ``what`` it
    is ("a list", "a mapping", "a tagged value"), its text as written, where it stands."""

    what: str
    source: str
    location: Location

    def __repr__(self) -> str:
        return self.source


def loc_of(value: object, default: Location | None = None) -> Location | None:
    """The location of a YDict/YList, or ``default`` for plain values."""
    loc: Location | None = getattr(value, "loc", default)
    return loc


class _DataLoader(_Base):
    """PyYAML's safe resolver (YAML 1.1 types); nodes only, turned into data by :class:`_Reader`."""


class _AnswersLoader(_Base):
    """Resolves nothing: a plain scalar is marked, a quoted one is text (see :func:`_answer_scalar`)."""

    def resolve(self, kind: type[Node], value: str | None, implicit: tuple[bool, bool]) -> str:
        if kind is ScalarNode:
            return _PLAIN if implicit[0] else STR
        return SEQ if kind is SequenceNode else MAP


class _PyDataLoader(yaml.SafeLoader):
    """The pure-Python composer, for text nested too deeply for libyaml's (RecursionError)."""


class _PyAnswersLoader(yaml.SafeLoader):
    resolve = _AnswersLoader.resolve


def _short(tag: str) -> str:
    return "!!" + tag[len(_T):] if tag.startswith(_T) else tag


def _tag_message(tag: str) -> str:
    return f"tag {_short(tag)} is not allowed (only plain data: text, numbers, true/false, null, lists and mappings)"


_SURROGATES = re.compile("[\ud800-\udfff]")
NOT_TEXT = "\ufffd"             # what stands in an answers file for what is not valid Unicode


_SPECIAL = {"true": True, "false": False, "": None, "~": None, "null": None, **_NONFINITE}
_MISSING = object()


def _answer_scalar(value: str) -> Any:
    """An untagged plain scalar of an answers file (module doc). String methods first: most
    scalars are problem ids and formulas, refused by the first test."""
    if value.isdigit():
        if value.isascii() and (value[0] != "0" or len(value) == 1) and len(value) <= MAX_INT_DIGITS:
            return int(value)
        return value
    special = _SPECIAL.get(value, _MISSING)
    if special is not _MISSING:
        return special
    if value[0] == "-" and _CANONICAL_INT.match(value):
        return int(value)
    return value


_DATA_SCALARS: dict[str, Callable[[SafeConstructor, ScalarNode], Any]] = {
    INT: SafeConstructor.construct_yaml_int, FLOAT: SafeConstructor.construct_yaml_float,
    BOOL: SafeConstructor.construct_yaml_bool, NULL: SafeConstructor.construct_yaml_null,
    TIMESTAMP: SafeConstructor.construct_yaml_timestamp,
}


class _Reader:
    """Turns one document's nodes into YDict/YList/scalars, checking as it goes."""

    def __init__(self, loader: yaml.SafeLoader, name: str, text: str, answers: bool):
        self.loader, self.name, self.text, self.answers = loader, name, text, answers
        self.seen: set[Node] = set()

    def loc(self, node: Node) -> Location:
        m = node.start_mark
        return Location(self.name, m.line + 1, m.column + 1)

    def source(self, node: Node) -> str:
        text = self.text[node.start_mark.index:node.end_mark.index]
        return text if len(text) <= 200 else text[:200] + "…"

    def refuse(self, message: str, node: Node) -> Refused:
        """An answers file's value that is not read; elsewhere, the file is refused."""
        if not self.answers:
            raise InputError(message, self.loc(node))
        return Refused(message, self.loc(node), self.source(node))

    def build(self, node: Node) -> Any:
        seen = self.seen
        if node in seen:
            raise InputError("aliases (*name) are not allowed", self.loc(node))
        seen.add(node)
        cls = node.__class__
        if cls is ScalarNode:
            tag = node.tag
            if tag is _PLAIN:           # most scalars of an answers file: no method call
                return _answer_scalar(node.value)
            # cls is ScalarNode: an identity test (the hot path), which mypy does not narrow on
            return node.value if tag == STR else self.scalar(node)  # type: ignore[arg-type]
        want = MAP if cls is MappingNode else SEQ
        if node.tag != want:
            return self.refuse(_tag_message(node.tag), node)
        return self.mapping(node) if cls is MappingNode else self.sequence(node)

    def scalar(self, node: ScalarNode) -> Any:
        """A scalar that is neither plain in an answers file nor text (:meth:`build` does those)."""
        tag, value = node.tag, node.value
        if self.answers:
            return self.core_tagged(node)
        if tag == VALUE:
            return value
        if tag == MERGE:
            raise InputError("merge keys (<<) are not allowed", self.loc(node))
        make = _DATA_SCALARS.get(tag)
        if make is None:
            return self.refuse(_tag_message(tag), node)
        if tag == INT and len(value) > MAX_INT_DIGITS:
            raise InputError(f"integer too large ({len(value):,} digits; at most {MAX_INT_DIGITS:,})", self.loc(node))
        try:
            return make(self.loader, node)
        except (ValueError, TypeError, OverflowError, IndexError, KeyError, AttributeError, yaml.YAMLError) as e:
            raise InputError(f"cannot read {value[:40]!r} as {_short(tag)}", self.loc(node)) from None

    def core_tagged(self, node: ScalarNode) -> Any:
        """An explicitly tagged scalar of an answers file: the core tags, read as plain ones are."""
        tag, value = node.tag, node.value
        if tag == INT and _DECIMAL_INT.match(value):
            return _answer_scalar(value)
        if tag == FLOAT and (_DECIMAL_FLOAT.match(value) or value in _NONFINITE):
            return _answer_scalar(value)
        if tag == BOOL and value in _BOOLS:
            return _BOOLS[value]
        if tag == NULL and value in _NULLS:
            return None
        if tag in (INT, FLOAT, BOOL, NULL):
            return self.refuse(f"{value[:40]!r} is not a {_short(tag)} (decimal numbers, true/false, null)", node)
        return self.refuse(_tag_message(tag), node)

    def mapping(self, node: Node) -> YDict:
        data = YDict()
        data.loc = self.loc(node)
        key_locs: dict[Any, Location] = {}
        value_locs: dict[Any, Location] = {}
        data.key_locs, data.value_locs = key_locs, value_locs
        name, build, seen = self.name, self.build, self.seen
        for key_node, value_node in node.value:
            m = key_node.start_mark
            where = Location(name, m.line + 1, m.column + 1)
            if key_node.__class__ is not ScalarNode:
                if not self.answers:
                    raise InputError("a mapping key must be a plain value", where)
                build(key_node)         # walked all the same: no alias or merge key slips through
                what = "a list" if key_node.__class__ is SequenceNode else "a mapping"
                key = BadKey(what, self.source(key_node), where)
            else:
                if key_node.value == "<<" and key_node.tag in (_PLAIN, MERGE):
                    raise InputError("merge keys (<<) are not allowed", where)
                key = build(key_node)
            if isinstance(key, Refused):
                if not self.answers:
                    raise InputError(key.message, key.location)
                key = BadKey("a tagged value", key.source, key.location)
            if key in data:
                first = key_locs[key]
                message = (f"duplicate key {key!r} (first at line {first.line}"
                           + (f", column {first.column})" if first.line == where.line else ")"))
                if not self.answers:
                    raise InputError(message, where)
                build(value_node)           # walked all the same: no alias slips through
                data[key] = Refused(message, where, self.source(value_node), key_locs[key])
                value_locs[key] = where
                continue
            if value_node.__class__ is ScalarNode and value_node.tag is _PLAIN and value_node not in seen:
                seen.add(value_node)            # build(), inlined for the commonest value
                data[key] = _answer_scalar(value_node.value)
            else:
                data[key] = build(value_node)
            key_locs[key] = where
            m = value_node.start_mark
            value_locs[key] = Location(name, m.line + 1, m.column + 1)
        return data

    def sequence(self, node: Node) -> YList:
        data = YList()
        data.loc = self.loc(node)
        data.item_locs = [self.loc(n) for n in node.value]
        data.extend([self.build(n) for n in node.value])
        return data


def _depth_bound(text: str) -> int:
    """An upper bound of the nesting depth, cheaply: block collections nest by indentation (or
    by the leading ``- ``/``? ``/``: `` of one line), flow collections by their brackets."""
    block = max(map(len, _LEADING.findall(text)), default=0)
    return block + 2 + text.count("[") + text.count("{")


def _loader(text: str, answers: bool) -> yaml.SafeLoader:
    if _Base is yaml.SafeLoader or _depth_bound(text) > C_DEPTH_LIMIT:
        return (_PyAnswersLoader if answers else _PyDataLoader)(text)
    return (_AnswersLoader if answers else _DataLoader)(text)


def loads(text: str, name: str = "<input>", *, max_bytes: int = DEFAULT_MAX_BYTES, multi: bool = False,
          answers: bool = False) -> Any:
    """Parse YAML text; ``multi`` returns the list of all documents; ``answers`` reads a
    learner's answers file (module doc)."""
    try:
        size = len(text.encode("utf-8"))
    except UnicodeEncodeError as e:     # a lone surrogate: text no file could hold (decode() never makes one)
        if not answers:
            line = text.count("\n", 0, e.start) + 1
            raise InputError("not valid Unicode (a lone surrogate)",
                             Location(name, line, e.start - (text.rfind("\n", 0, e.start) + 1) + 1)) from None
        text = _SURROGATES.sub(NOT_TEXT, text)      # reported per answer, as bytes that were not UTF-8 are
        size = len(text.encode("utf-8"))
    if size > max_bytes:
        raise InputError(f"file is larger than {max_bytes} bytes", Location(name))
    loader = _loader(text, answers)
    try:
        if multi:
            docs: list[Any] = []
            while loader.check_node():
                # check_node() is true: get_node() returns a node, never None
                docs.append(_Reader(loader, name, text, answers).build(loader.get_node()))  # type: ignore[arg-type]
            return docs
        node = loader.get_single_node()
        return None if node is None else _Reader(loader, name, text, answers).build(node)
    except yaml.MarkedYAMLError as e:
        raise _marked_error(e, name, text) from None
    except yaml.reader.ReaderError as e:        # a character YAML does not allow: where it stands
        at = max(0, min(int(e.position), len(text)))
        line = text.count("\n", 0, at) + 1
        where = Location(name, line, at - (text.rfind("\n", 0, at) + 1) + 1)
        raise InputError(f"invalid YAML: {e.reason}: character U+{ord(e.character) if isinstance(e.character, str) else e.character:04X}"
                         if e.character is not None else f"invalid YAML: {e.reason}", where) from None
    except yaml.YAMLError as e:
        raise InputError(f"invalid YAML: {e}", Location(name)) from None
    except RecursionError:
        raise InputError("YAML nested too deeply", Location(name)) from None
    finally:
        loader.dispose()


def load_file(path: str | os.PathLike[str], *, max_bytes: int = DEFAULT_MAX_BYTES, multi: bool = False,
              answers: bool = False) -> Any:
    """Read and parse one YAML or JSON file (:func:`read_text`); every failure is an InputError."""
    text = read_text(path, max_bytes=max_bytes, answers=answers)
    return loads(text, str(path), max_bytes=max_bytes, multi=multi, answers=answers)


def _marked_error(e: "yaml.MarkedYAMLError", name: str, text: str) -> InputError:
    """PyYAML's error at a place in the file. An error found at the end of the file about a
    flow collection or a quote left open (``{a: 1``) is reported where it was opened (PyYAML's
    mark would point past the last line)."""
    mark = e.problem_mark or e.context_mark
    last_line = text.count("\n") - (1 if text.endswith("\n") else 0)
    at_end = mark is not None and (mark.line > last_line or mark.index >= len(text.rstrip()))
    opened = e.context_mark
    if at_end and opened is not None and opened.index < len(text):
        what = text[opened.index]
        closer = {"{": "}", "[": "]", '"': '"', "'": "'"}.get(what)
        if closer:
            return InputError(f"invalid YAML: {what!r} is never closed (no {closer!r} before the end of the file)",
                              Location(name, opened.line + 1, opened.column + 1))
        return InputError(f"invalid YAML: {e.problem or e.context} (the file ends first)",
                          Location(name, opened.line + 1, opened.column + 1))
    if mark is not None and mark.line > last_line:      # past the last line: at the end of the last one
        lines = text.rstrip("\n").split("\n")
        return InputError(f"invalid YAML: {e.problem or e.context} (at the end of the file)",
                          Location(name, len(lines), len(lines[-1]) + 1))
    where = Location(name, mark.line + 1, mark.column + 1) if mark else Location(name)
    return InputError(f"invalid YAML: {e.problem or e.context}", where)
