"""Numbers and quantities as texts write them: the one reader under both the spec's stated
figures (:mod:`grader.claims.figures`) and the learners' answers (:mod:`grader.answers.numbers`,
:mod:`grader.answers.units`), so that both read the same text the same way.

A literal is a number with, around it:

- an approximation mark in front: ``≈``, ``~``, ``about``, ``approx.``, ``approximately``,
  ``roughly``, ``around``, ``circa``, ``ca.`` (:func:`strip_approx`);
- the number: ``64``, ``-3``, ``0.125``, ``.5``, thousands separators in groups of three
  (``1,048,576``, ``1 048 576``, ``1_048_576``, ``1'048'576``), exponents (``1.05e6``,
  ``1.05×10^6``, ``1.05·10⁶``);
- a magnitude (decimal, short scale): ``k``/``K``/``thousand`` 10³, ``M``/``million`` 10⁶,
  ``B``/``bn``/``G``/``billion`` 10⁹, ``T``/``trillion`` 10¹², ``quadrillion`` 10¹⁵, ``%``
  10⁻². Lower-case ``m`` and ``b`` are refused as ambiguous (milli or million, bit or billion);
- then a count noun (``parameters``, ``FLOPs``, ``dims``: :data:`COUNT_NOUNS`, which do not
  change the number) or, where a quantity is read, a unit (:data:`UNITS`: SI and IEC bytes,
  bits, times, FLOPs; a whitelist of spellings mapped to pint unit names — the text never
  reaches pint's parser). Where a quantity is read, a bare ``B`` is a byte (``16 B``);
  elsewhere it is a billion (``34.4B``).

Values are exact (:class:`fractions.Fraction`), never floats; nothing is evaluated. The stated
precision is kept: ``place`` is the worth of the last significant digit (an integer's trailing
zeros are not counted: ``275000000000`` is 3 significant figures), ``stated_place`` the worth of
the last digit written (``1000``: 10⁰).

Pint (one registry per process, built on first use from ``units.txt``: milliseconds) gives the
unit factors: :func:`factor`. Importing this module imports neither pint nor SymPy.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from pathlib import Path
from typing import Any


class TextError(ValueError):
    """A text that is nearly a number but cannot be read as one; the message says why."""


APPROX_MARK = re.compile(
    r"(?:≈|~|∼|(?:approximately|approx\.?|about|roughly|around|circa|ca\.)(?=[\s0-9.+\-]|$))\s*",
    re.IGNORECASE)

SUPERSCRIPTS = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁺⁻", "0123456789+-")
DASHES = str.maketrans({"\u2212": "-", "\u2013": "-", "\u2012": "-", "\uFE63": "-", "\uFF0D": "-"})

NUMBER = re.compile(
    r"""(?P<sign>[+-])?\s*
    (?P<int>[0-9]{1,3}(?:(?P<sep>[,_'\u00a0\u202f\u2009 ])[0-9]{3})(?:(?P=sep)[0-9]{3})*(?![0-9])|[0-9]+)?
    (?:\.(?P<frac>[0-9]+)?)?
    (?:
        [eE](?P<e>[+-]?[0-9]+)
      | \s*[×xX*·⋅]\s*10\s*(?:\^|\*\*)\s*(?P<lp>\()?\s*(?P<e2>[+-]?[0-9]+)\s*(?(lp)\))
      | \s*[×xX*·⋅]\s*10(?P<sup>[⁺⁻]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+)
    )?""",
    re.VERBOSE,
)

SCALES = {"k": 3, "K": 3, "thousand": 3, "M": 6, "million": 6, "B": 9, "bn": 9, "G": 9, "billion": 9,
          "T": 12, "trillion": 12, "quadrillion": 15, "%": -2}
SCALE_WORDS = {k: v for k, v in SCALES.items() if len(k) > 1}
AMBIGUOUS = {"m": "m is ambiguous (milli or million): write M or million",
             "b": "b is ambiguous (bit or billion): write B or billion"}
# Words that say what is counted; they do not change the number. Longest first (matched as suffixes).
COUNT_NOUNS = tuple(sorted((
    "flops", "flop", "parameters", "params", "weights", "elements", "entries", "matrices",
    "attention matrices", "heads", "dims", "dimensions", "tokens", "layers", "values", "numbers",
    "operations", "multiplications", "additions", "multiply-adds", "rows", "columns", "positions",
    "scores", "logits", "activations"), key=len, reverse=True))

# spelling -> (pint unit name, what it measures)
UNITS: dict[str, tuple[str, str]] = {}
DATA = "an amount of data"


def _add(names: tuple[str, ...], pint_name: str, what: str) -> None:
    for n in names:
        UNITS[n] = (pint_name, what)


_add(("B", "byte", "bytes", "Byte", "Bytes", "octet", "octets"), "byte", DATA)
_add(("bit", "bits"), "bit", DATA)
for _si, _bin, _word, _binword in (("k", "Ki", "kilo", "kibi"), ("M", "Mi", "mega", "mebi"),
                                   ("G", "Gi", "giga", "gibi"), ("T", "Ti", "tera", "tebi"),
                                   ("P", "Pi", "peta", "pebi")):
    _add((f"{_si}B", f"{_si.upper()}B", f"{_word}byte", f"{_word}bytes"), f"{_word}byte", DATA)
    _add((f"{_bin}B", f"{_binword}byte", f"{_binword}bytes"), f"{_binword}byte", DATA)
    _add((f"{_si}bit", f"{_si.upper()}bit", f"{_word}bit", f"{_word}bits", f"{_si}bits"), f"{_word}bit", DATA)
_add(("s", "sec", "secs", "second", "seconds"), "second", "a time")
_add(("ms", "millisecond", "milliseconds"), "millisecond", "a time")
_add(("us", "µs", "μs", "microsecond", "microseconds"), "microsecond", "a time")
_add(("ns", "nanosecond", "nanoseconds"), "nanosecond", "a time")
_add(("min", "mins", "minute", "minutes"), "minute", "a time")
_add(("h", "hr", "hrs", "hour", "hours"), "hour", "a time")
_add(("FLOP", "FLOPs", "flop", "flops", "FLOPS"), "flop", "a number of operations")
for _si, _word in (("k", "kilo"), ("M", "mega"), ("G", "giga"), ("T", "tera"), ("P", "peta")):
    _add((f"{_si}FLOP", f"{_si}FLOPs", f"{_si}FLOPS", f"{_word}flop", f"{_word}flops"), f"{_word}flop",
         "a number of operations")

# rates and ratios (grader/claims/dimensions.py): FLOP/s, bytes/s, tokens/s, FLOP/byte, bytes/token
RATE = "a rate"
_add(("FLOP/s", "FLOPs/s", "flop/s", "flops/s"), "flop / second", RATE)
for _si, _word in (("k", "kilo"), ("M", "mega"), ("G", "giga"), ("T", "tera"), ("P", "peta")):
    _add((f"{_si}FLOPS", f"{_si}FLOP/s", f"{_si}FLOPs/s"), f"{_word}flop / second", RATE)
for _b in ("B", "kB", "KB", "MB", "GB", "TB", "PB", "KiB", "MiB", "GiB", "TiB", "PiB", "bytes", "byte"):
    _add((f"{_b}/s",), f"{UNITS[_b][0]} / second", RATE)
    _add((f"{_b}/token",), f"{UNITS[_b][0]} / token", RATE)
    _add((f"{_b}/parameter", f"{_b}/param"), f"{UNITS[_b][0]} / parameter", RATE)
_add(("tokens/s", "token/s", "tok/s"), "token / second", RATE)
_add(("ops/byte", "op/byte", "FLOP/byte", "FLOPs/byte", "flops/byte", "FLOP/B", "FLOPs/B"), "flop / byte", RATE)

BASE_UNIT = {DATA: "byte", "a time": "second", "a number of operations": "flop"}
DEFINITIONS = Path(__file__).with_name("units.txt")


@lru_cache(maxsize=1)
def registry() -> Any:
    """The process's pint registry, built once on first use from :data:`DEFINITIONS` (the units
    of :data:`UNITS` only: milliseconds, where pint's full default registry takes ~0.2 s)."""
    import pint
    return pint.UnitRegistry(str(DEFINITIONS))


@lru_cache(maxsize=512)
def factor(unit: str, to: str) -> Fraction | None:
    """Exact factor from pint unit ``unit`` to ``to``; None when they measure different things."""
    import pint
    try:
        mag: Any = registry().Quantity(1, unit).to(to).magnitude
    except pint.DimensionalityError:
        return None
    return Fraction(mag) if isinstance(mag, int) else Fraction(repr(float(mag)))


@dataclass(frozen=True)
class Literal:
    """A number as written (see the module's text). ``unit`` is the spelling of a unit of
    :data:`UNITS` (only where units were asked for), ``noun`` the count noun, if any."""

    value: Fraction
    sig_figs: int
    place: int
    stated_place: int
    approx: bool = False
    scaled: bool = False
    point: bool = False
    unit: str | None = None
    noun: str | None = None

    @property
    def half_unit(self) -> Fraction:
        return Fraction(10) ** self.place / 2


def strip_approx(text: str) -> tuple[bool, str]:
    """``(True, "34.4B")`` from ``"≈ 34.4B"``; ``(False, text)`` when there is no mark."""
    text = text.strip()
    m = APPROX_MARK.match(text)
    return (True, text[m.end():].strip()) if m else (False, text)


def split_number(text: str) -> tuple[re.Match[str], str] | None:
    """The number at the start of ``text`` and what follows it (stripped); None: no number."""
    m = NUMBER.match(text)
    if not m or not (m.group("int") or m.group("frac")):
        return None
    return m, text[m.end():].strip()


def read_literal(text: str, *, units: bool = False, nouns: bool = True, bare_b_is_byte: bool = True,
                 max_digits: int = 400, max_exponent: int = 400) -> Literal | None:
    """Read ``text`` as a literal (approximation mark allowed); None when it is not one (the
    caller may read it otherwise: arithmetic, a ratio). :class:`TextError` for a literal that
    cannot be read (an ambiguous ``m``, too many digits)."""
    approx, body = strip_approx(text.translate(DASHES))
    found = split_number(body)
    if found is None:
        return None
    m, rest = found
    tail = read_tail(rest, units=units, nouns=nouns, bare_b_is_byte=bare_b_is_byte)
    if tail is None:
        return None
    scale, unit, noun = tail
    whole = (m.group("int") or "").replace(m.group("sep") or "\x00", "")
    frac = m.group("frac") or ""
    exp_text = m.group("e") or m.group("e2") or (m.group("sup") or "").translate(SUPERSCRIPTS) or "0"
    exponent = int(exp_text) + scale
    if abs(exponent) > max_exponent or len(whole) + len(frac) > max_digits:
        raise TextError(f"number too large or too precise (at most {max_digits} digits and "
                        f"exponents up to {max_exponent})")
    digits = (whole + frac).lstrip("0")
    mantissa = int(whole + frac or "0")
    stated = exponent - len(frac)
    place = stated
    point = bool(frac) or "." in body[: m.end()]
    if point:
        sig = len(digits) if digits else max(len(frac), 1)    # 16.0: 3; 0.0: 1
    else:
        kept = digits.rstrip("0")
        place += len(digits) - len(kept)
        sig = max(len(kept), 1)
    value = Fraction(mantissa) * Fraction(10) ** stated
    if m.group("sign") == "-":
        value = -value
    return Literal(value, sig, place, stated, approx, scale != 0 or _has_scale(rest), point, unit, noun)


def _has_scale(rest: str) -> bool:
    head = rest.split()[0] if rest.split() else ""
    return head in SCALES or head.lower() in SCALE_WORDS


def read_tail(rest: str, *, units: bool, nouns: bool, bare_b_is_byte: bool = True
              ) -> tuple[int, str | None, str | None] | None:
    """``(power of ten, unit spelling, noun)`` from what follows a number: ``"M"``,
    ``"million bytes"``, ``"MiB"``, ``"GFLOPs"``, ``"parameters"``; None: not a known tail."""
    if not rest:
        return 0, None, None
    if units and rest in UNITS and (bare_b_is_byte or rest != "B"):
        return 0, rest, None
    words = rest.split()
    if units and len(words) == 2 and words[1] in UNITS and words[1] != "B":
        head = scale_of(words[0])
        if head is not None:
            return head, words[1], None
    s = scale_of(rest)
    if s is not None:
        return s, None, None
    if nouns:
        low = rest.lower()
        for noun in COUNT_NOUNS:
            if low.endswith(noun):
                head_text = rest[: -len(noun)]
                if head_text and not head_text[-1].isspace() and head_text.strip() not in SCALES:
                    continue            # "xflops": not the noun
                s = scale_of(head_text.strip())
                if s is not None:
                    return s, None, rest[-len(noun):]
    return None


def scale_of(word: str) -> int | None:
    """The power of ten of a magnitude word or suffix (``""`` is 0); None: not one."""
    if not word:
        return 0
    if word in SCALES:
        return SCALES[word]
    if word.lower() in SCALE_WORDS:
        return SCALE_WORDS[word.lower()]
    if word in AMBIGUOUS:
        raise TextError(AMBIGUOUS[word])
    return None
