"""Hypothesis strategies for hostile input, shared by tests/test_fuzz.py.

- :func:`any_text`: any Unicode, lone surrogates and controls included;
- :func:`math_text`: text made of the pieces math answers and attacks are made of (numbers of
  every size, operators, functions, confusable digits and letters, invisible characters);
- :func:`formula`: well-formed-ish formulas from a small grammar (so the deep paths run: the
  parser's bounds, the polynomial and sampling paths, SymPy);
- :func:`answer_value`: what a learner can put in an answers file (text, integers of any size,
  floats, lists, mappings, null, booleans);
- :func:`yaml_text`, :func:`mutated`: YAML-shaped text, and a document with random edits;
- :func:`report`: a grading report with hostile strings everywhere (for the output writers).
"""
from __future__ import annotations

from hypothesis import strategies as st

PIECES = [
    "1e99999", "1e-99999", "1e5000", "1e400", "10^10^10", "2^(2^30)", "9**9**9", "exp(", "log(", "sqrt(", "abs(",
    "min(", "max(", "(", ")", "[", "]", "^", "**", "*", "/", "+", "-", "!", ",", ".", " ", "  ", "d", "n", "h", "b",
    "d_k", "d_model", "x", "e", "E", "0", "1", "2", "4", "64", "512", "1048576", "9" * 60, "×", "·", "²", "³",
    "⁻", "¹", "⁰", "√", "≥", "≤", ">", "<", "=", "==", "∞", "nan", "inf", "π", "MiB", "MB", "B", "bytes", "bits",
    "KiB", "GB", "s", "ms", "k", "M", "billion", "%", "by", "{", "}", "|", ":", "∈", "and", "or", "_", "__", "'",
    '"', "`", "lambda", "import", "\u0661", "\uff14", "\u0501", "\u202e", "\u200b", "\ufffd", "\ud800", "\x00",
    "\x1b", "\n", "\t", "\u00a0", "\u2028", "1,048,576", "1 048 576", "1_048_576", "16.8", ".5", "0x40", "1:04",
]


def any_text(max_size: int = 60):
    return st.text(st.characters(exclude_categories=()), max_size=max_size)


def math_text(max_pieces: int = 24):
    return st.lists(st.sampled_from(PIECES), max_size=max_pieces).map("".join)


_LEAVES = st.one_of(
    st.sampled_from(["d", "n", "h", "b", "d_k", "d_model", "1e99999", "1e-400", "10^400", "0", "0.5", "exp(-300)",
                     "1e5000", "2^20", "sqrt(2)", "log(2)", "exp(1)", "(-1)", "1/3"]),
    st.integers(0, 10 ** 8).map(str),
    st.integers(1, 2000).map(lambda k: f"exp(-{k})"),
    st.integers(1, 5000).map(lambda k: f"10^-{k}"),
)


def formula(max_leaves: int = 10):
    def grow(children):
        return st.one_of(
            st.tuples(children, st.sampled_from(["+", "-", "*", "/", "^", " ", "**"]), children)
            .map(lambda t: f"({t[0]}){t[1]}({t[2]})"),
            st.tuples(st.sampled_from(["exp", "log", "sqrt", "abs", "min", "max", "ln"]), children)
            .map(lambda t: f"{t[0]}({t[1]})"),
            st.tuples(children, st.sampled_from(["²", "³", "⁻¹", "^1000", "^(1/2)"])).map(lambda t: f"({t[0]}){t[1]}"),
        )
    return st.recursive(_LEAVES, grow, max_leaves=max_leaves)


def relation():
    return st.tuples(formula(6), st.sampled_from([">", "<", ">=", "<=", "≥", "=", " > "]), formula(6)) \
        .map(lambda t: f"{t[0]} {t[1]} {t[2]}")


def answer_value():
    scalar = st.one_of(
        any_text(), math_text(), formula(), relation(), st.integers(), st.integers(-10 ** 4000, 10 ** 4000),
        st.floats(allow_nan=True, allow_infinity=True), st.booleans(), st.none(),
    )
    return st.one_of(
        scalar, scalar, scalar,
        st.lists(st.one_of(st.integers(-10 ** 500, 10 ** 500), st.text(max_size=8), st.floats(), st.booleans(),
                           st.lists(st.integers(), max_size=2)), max_size=20),
        st.dictionaries(st.text(max_size=4), st.integers(), max_size=3),
    )


YAML_PIECES = [
    ":", ": ", "- ", "-", "[", "]", "{", "}", ",", "&a", "*a", "&b ", "*b", "<<", "? ", "!!", "!!str ", "!!int ",
    "!!float ", "!!binary ", "!!set ", "!!python/object:os.system ", "!x ", "%YAML 1.1\n", "%TAG ! tag:x:\n", "---\n",
    "...\n", "|\n", ">\n", "'", '"', "\\", "\\u", "\\ud800", "\\x00", "#", "\n", "  ", "\t", "learner", "answers",
    "submissions", "17-08/practice-1", "17-08/params-formula", "null", "~", "true", "0x40", "0100", "1:04", ".nan",
    ".inf", "1e99999", "9" * 50, "64", "d^2", "\ufeff", "\ufffd", "\u2028", "\x85", "é", "\u202e",
]


def yaml_text(max_pieces: int = 40):
    return st.lists(st.one_of(st.sampled_from(YAML_PIECES), st.text(max_size=3)), max_size=max_pieces).map("".join)


def mutated(document: str, max_edits: int = 6):
    """``document`` with up to ``max_edits`` random edits: a span replaced by YAML or math pieces."""
    n = len(document)
    edit = st.tuples(st.integers(0, n), st.integers(0, 40),
                     st.one_of(st.sampled_from(YAML_PIECES + PIECES), st.text(max_size=4), st.just("")))

    def apply(edits):
        text = document
        for at, length, piece in sorted(edits, reverse=True):
            text = text[:at] + piece + text[at + length:]
        return text
    return st.lists(edit, max_size=max_edits).map(apply)


def report():
    """A grading Report (grader.grade.run) whose strings are hostile."""
    from grader.errors import InputError, Location
    from grader.grade.run import Report, Result, SubmissionResult

    text = st.one_of(any_text(30), math_text(8))
    loc = st.one_of(st.none(), st.builds(Location, st.one_of(st.none(), text), st.one_of(st.none(), st.integers(1, 10 ** 6)),
                                         st.one_of(st.none(), st.integers(1, 10 ** 4))))
    points = st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.0, 10.0])
    result = st.builds(
        lambda id, answer, frac, pts, correct, feedback, status, read_as, variant, location: Result(
            id, answer, 0.0 if correct is None else frac * pts, pts, correct, feedback, status, read_as, variant,
            location, pts if correct is None else 0.0),
        text, st.one_of(text, st.integers(-10 ** 400, 10 ** 400), st.lists(st.one_of(st.integers(), text), max_size=4),
                        st.none(), st.booleans(), st.floats(allow_nan=False)),
        st.sampled_from([0.0, 0.5, 1.0]), points, st.sampled_from([True, False, None]), text,
        st.sampled_from(["correct", "partial", "wrong", "invalid", "unknown", "needs_person", "error"]),
        st.one_of(st.none(), text), st.one_of(st.none(), text), loc)

    def submission(learner, file, location, results, unanswered):
        return SubmissionResult(learner, file, location, tuple(results), sum(r.score for r in results),
                                sum(r.max_score for r in results) + 5, tuple(unanswered),
                                sum(r.pending_points for r in results))
    sub = st.builds(submission, text, text, loc, st.lists(result, max_size=5), st.lists(text, max_size=3))
    error = st.builds(InputError, text, loc)
    return st.builds(lambda subs, errors: Report(tuple(subs), tuple(errors), bool(errors)),
                     st.lists(sub, min_size=1, max_size=3), st.lists(error, max_size=3))
