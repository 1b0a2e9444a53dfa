"""Read YAML (and JSON) safely, with positions.

- Only plain data: PyYAML's safe constructors (C-accelerated when available).
- A duplicate key, an alias or anchor reuse (so no YAML bombs), or a file over
  ``max_bytes`` is an :class:`InputError` carrying file:line:column.
- Mappings come back as :class:`YDict` and sequences as :class:`YList`, which
  remember where each key, value and item stands, so that later stages can
  report errors at the right line.
"""
from __future__ import annotations

from pathlib import Path

import yaml

from .errors import InputError, Location

_Base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

DEFAULT_MAX_BYTES = 16 * 1024 * 1024


class YDict(dict):
    """A dict that knows the location of itself, its keys and its values."""

    loc: Location
    key_locs: dict
    value_locs: dict

    def loc_of(self, key) -> Location:
        """Where the value of ``key`` stands (or the mapping itself if absent)."""
        return self.value_locs.get(key, self.loc)

    def key_loc(self, key) -> Location:
        return self.key_locs.get(key, self.loc)


class YList(list):
    """A list that knows the location of itself and of each item."""

    loc: Location
    item_locs: list

    def loc_of(self, index: int) -> Location:
        return self.item_locs[index] if 0 <= index < len(self.item_locs) else self.loc


def loc_of(value, default: Location | None = None) -> Location | None:
    """The location of a YDict/YList, or ``default`` for plain values."""
    return getattr(value, "loc", default)


def _loader_class(name: str):
    class Loader(_Base):
        def _loc(self, node) -> Location:
            m = node.start_mark
            return Location(name, m.line + 1, m.column + 1)

        def construct_object(self, node, deep=False):
            if node in self.constructed_objects or node in self.recursive_objects:
                raise InputError("aliases (*name) are not allowed", self._loc(node))
            return super().construct_object(node, deep=deep)

        def construct_yaml_map(self, node):
            data = YDict()
            data.loc = self._loc(node)
            data.key_locs, data.value_locs = {}, {}
            yield data
            self.flatten_mapping(node)
            for key_node, value_node in node.value:
                key = self.construct_object(key_node, deep=True)
                try:
                    hash(key)
                except TypeError:
                    raise InputError("a mapping key must be a plain value", self._loc(key_node)) from None
                if key in data:
                    first = data.key_locs[key]
                    raise InputError(
                        f"duplicate key {key!r} (first at line {first.line})", self._loc(key_node)
                    )
                data[key] = self.construct_object(value_node, deep=True)
                data.key_locs[key] = self._loc(key_node)
                data.value_locs[key] = self._loc(value_node)

        def construct_yaml_seq(self, node):
            data = YList()
            data.loc = self._loc(node)
            data.item_locs = [self._loc(n) for n in node.value]
            yield data
            data.extend(self.construct_object(n, deep=True) for n in node.value)

        def flatten_mapping(self, node):
            for key_node, _ in node.value:
                if key_node.tag == "tag:yaml.org,2002:merge":
                    raise InputError("merge keys (<<) are not allowed", self._loc(key_node))

    Loader.add_constructor("tag:yaml.org,2002:map", Loader.construct_yaml_map)
    Loader.add_constructor("tag:yaml.org,2002:seq", Loader.construct_yaml_seq)
    return Loader


def loads(text: str, name: str = "<input>", *, max_bytes: int = DEFAULT_MAX_BYTES, multi: bool = False):
    """Parse YAML text; ``multi`` returns the list of all documents."""
    if len(text.encode("utf-8", "surrogatepass")) > max_bytes:
        raise InputError(f"file is larger than {max_bytes} bytes", Location(name))
    loader = _loader_class(name)(text)
    try:
        if multi:
            docs = []
            while loader.check_data():
                docs.append(loader.get_data())
            return docs
        return loader.get_single_data()
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        where = Location(name, mark.line + 1, mark.column + 1) if mark else Location(name)
        raise InputError(f"invalid YAML: {e.problem or e.context}", where) from None
    except yaml.YAMLError as e:
        raise InputError(f"invalid YAML: {e}", Location(name)) from None
    except RecursionError:
        raise InputError("YAML nested too deeply", Location(name)) from None
    finally:
        loader.dispose()


def load_file(path, *, max_bytes: int = DEFAULT_MAX_BYTES, multi: bool = False):
    """Read and parse one YAML or JSON file; every failure is an InputError."""
    p = Path(path)
    try:
        size = p.stat().st_size
        if size > max_bytes:
            raise InputError(f"file is larger than {max_bytes} bytes ({size})", Location(str(path)))
        raw = p.read_bytes()
    except OSError as e:
        raise InputError(f"cannot read file: {e.strerror or e}", Location(str(path))) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(f"not UTF-8 text (byte {e.start})", Location(str(path))) from None
    return loads(text, str(path), max_bytes=max_bytes, multi=multi)
