"""Read bank files into a :class:`~grader.bank.model.Bank`, reporting every error at once."""
from __future__ import annotations

import difflib
import math
import re
from pathlib import Path

from collections.abc import Callable, Iterable
from typing import Any

from grader.files import yamlio
from grader.errors import ErrorList, GraderError, InputError, Location, SpecError
from grader.files.yamlio import YDict, YList

from grader.answers.kinds import FIELD_KINDS, KINDS as ANSWER_KINDS
from grader.answers.kinds.base import BankSite

from .titles import MAX_TITLE, derive_title
from .model import Bank, BankMistake, Derive, Measure, Problem, Variant, frozen, plain
from .rubric import read_rubric

FILE_KEYS = {"subject", "problems"}
# the keys of every problem; each kind adds its own (its FIELDS, grader.answers.kinds)
COMMON_KEYS = {
    "id", "prompt", "kind", "points", "reference", "source", "tolerance", "sig_figs", "feedback", "mistakes",
    "derive", "measure", "variant", "note", "partial", "attempts", "title", "rubric",
}
PROBLEM_KEYS = COMMON_KEYS | set(FIELD_KINDS)
SOURCE_KEYS = {"document", "section"}
FEEDBACK_KEYS = {"wrong"}
DERIVE_KEYS = {"formula", "at"}
MEASURE_KEYS = {"quantity", "at", "axis"}
VARIANT_KEYS = {"seed_from", "choose"}
MISTAKE_KEYS = {"answer", "formula", "at", "feedback"}
PARTIAL_KEYS = {"answer", "credit"}
HINTS = {("a mistake", "credit"): "partial credit is given under the problem's 'partial: [{answer, credit}]'"}
ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_\-]*/[A-Za-z0-9][A-Za-z0-9_.\-]*$")
SKIP_DIRS = {"code", "__pycache__"}
COURSE_FILES = {"assessments.yaml", "assessments.yml"}   # the course's (grader.bank.assessments), at the top


def bank_files(path: str | Path) -> list[Path]:
    """The bank's YAML files under ``path`` (a file or a folder; ``code/`` folders are the code
    exercises' own and are skipped)."""
    p = Path(path)
    if p.is_file():
        return [p]
    if not p.is_dir():
        raise InputError("no such file or folder", Location(str(p)))
    files = []
    for q in sorted(p.rglob("*")):
        rel = q.relative_to(p).parts
        if any(part in SKIP_DIRS or part.startswith(".") for part in rel[:-1]):
            continue
        if len(rel) == 1 and q.name in COURSE_FILES:
            continue
        if q.is_file() and q.suffix in (".yaml", ".yml"):
            files.append(q)
    if not files:
        raise InputError("no exercise files (*.yaml) in this folder", Location(str(p)))
    return files


def load_bank(path: str | Path | None = None, *, spec: str | Path | None = None) -> Bank:
    """Read every bank file under ``path`` (None: the bundled ``exercises/``); raises one
    :class:`ErrorList` with every problem found, each at file:line:column."""
    if path is None:
        from grader.files.bundled import bundled
        path = bundled("exercises")
    errors: list[GraderError] = []
    problems: list[Problem] = []
    seen: dict[str, Location] = {}
    files = bank_files(path)
    for f in files:
        try:
            doc = yamlio.load_file(f)
        except InputError as e:
            errors.append(e)
            continue
        for problem in _problems_of(doc, f, errors):
            if problem.id in seen:
                errors.append(SpecError(f"duplicate problem id {problem.id!r} (first at {seen[problem.id]})",
                                        problem.location))
                continue
            seen[problem.id] = problem.location or Location(str(f))
            problems.append(problem)
    if errors:
        raise ErrorList(errors)
    root = str(path) if Path(path).is_dir() else None
    return Bank(tuple(problems), tuple(str(f) for f in files), None if spec is None else str(spec), root)


def _problems_of(doc: Any, file: Path, errors: list[GraderError]) -> list[Problem]:
    where = Location(str(file), 1, 1)
    if not isinstance(doc, YDict):
        errors.append(SpecError("expected a mapping with 'subject' and 'problems'", where))
        return []
    errors.extend(unknown_keys(doc, FILE_KEYS, "a bank file"))
    subject = str(doc.get("subject", ""))
    items = doc.get("problems")
    if not isinstance(items, YList):
        errors.append(SpecError("'problems' must be a list of problems", doc.loc_of("problems")))
        return []
    out: list[Problem] = []
    for i, item in enumerate(items):
        loc = items.loc_of(i)
        try:
            out.append(_problem(item, loc, subject, file))
        except ErrorList as e:
            errors.extend(e.errors)
    return out


def unknown_keys(mapping: Any, known: Iterable[str], what: str) -> list[SpecError]:
    """An error for each key of ``mapping`` not in ``known``, at its file:line:column, with the
    known keys and the closest one ("did you mean ...?")."""
    out: list[SpecError] = []
    if not isinstance(mapping, YDict):
        return out
    for key in mapping:
        if key in known:
            continue
        close = difflib.get_close_matches(str(key), sorted(known), n=1, cutoff=0.7)
        hint = HINTS.get((what, key)) or (f"did you mean {close[0]!r}?" if close else "")
        out.append(SpecError(f"unknown key {key!r} in {what}" + (f"; {hint}" if hint else "")
                             + f" (known keys: {', '.join(sorted(known))})", mapping.key_loc(key)))
    return out


def _nested_keys(item: Any, kind: Any) -> list[SpecError]:
    """Unknown keys in the problem's own mappings: source, feedback, derive, measure, variant,
    each mistake and each partial-credit entry."""
    errs: list[SpecError] = []
    entry = ANSWER_KINDS.get(kind) if isinstance(kind, str) else None
    derive_keys = set(entry.derive_keys) if entry is not None else DERIVE_KEYS
    for key, known in (("source", SOURCE_KEYS), ("feedback", FEEDBACK_KEYS), ("measure", MEASURE_KEYS),
                       ("variant", VARIANT_KEYS), ("derive", derive_keys)):
        errs += unknown_keys(item.get(key), known, f"'{key}'")
    for key, known, what in (("mistakes", MISTAKE_KEYS, "a mistake"), ("partial", PARTIAL_KEYS, "a 'partial' entry")):
        entries = item.get(key)
        for entry in entries if isinstance(entries, list) else ():
            errs += unknown_keys(entry, known, what)
    return errs


def _credit(v: Any) -> bool:
    """A partial credit: a finite number from 0 to 1 (``.nan``, ``.inf`` and text are not)."""
    return not isinstance(v, bool) and isinstance(v, (int, float)) and math.isfinite(v) and 0 <= v <= 1


def _problem(item: Any, loc: Location, subject: str, file: Path) -> Problem:
    errs: list[GraderError] = []

    def err(msg: str, key: str | None = None) -> None:
        errs.append(SpecError(msg, item.loc_of(key) if key is not None and isinstance(item, YDict) else loc))

    if not isinstance(item, YDict):
        raise ErrorList([SpecError("a problem must be a mapping (id, prompt, kind, points, reference, ...)", loc)])
    errs += unknown_keys(item, PROBLEM_KEYS, "a problem")
    errs += _nested_keys(item, item.get("kind"))
    pid = item.get("id")
    if not isinstance(pid, str) or not ID.match(pid):
        err("'id' must look like SUBJECT/NAME, e.g. 17-08/example-1.d_k", "id")
        pid = str(pid)
    kind: Any = item.get("kind")
    if not isinstance(kind, str) or kind not in ANSWER_KINDS:         # the registry (grader.answers.kinds)
        err(f"'kind' must be one of {', '.join(ANSWER_KINDS)}", "kind")
    prompt: Any = item.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        err("'prompt' must be the question's text", "prompt")
    points = item.get("points", 1)
    if isinstance(points, bool) or not isinstance(points, (int, float)) or not math.isfinite(points) or points < 0:
        err(f"'points' must be a finite number >= 0, got {points!r}", "points")
        points = 0
    entry = ANSWER_KINDS.get(kind) if isinstance(kind, str) else None
    if "reference" not in item and (entry is None or entry.reference):
        err("missing 'reference' (the verified right answer)")
    reference = plain(item.get("reference"))
    fields: dict[str, Any] = {}
    if entry is not None:           # the kind's own fields, read and validated by the kind
        site = BankSite(item, err, file.parent)
        fields = {key: read(site) for key, read in entry.fields.items()}
        for key in item:
            if key in FIELD_KINDS and key not in entry.fields:
                err(f"'{key}' is a field of {' and '.join(FIELD_KINDS[key])} problems, not of {kind} problems", key)
    feedback = item.get("feedback", {})
    if not isinstance(feedback, dict):
        err("'feedback' must map an outcome (correct, wrong, ...) to a text", "feedback")
        feedback = {}
    derive = _derive(item, entry, err, file)
    measure = _measure(item, err)
    variant = _variant(item, err)
    if variant is not None and derive is None:
        err("a problem with a 'variant' needs a 'derive' formula for its reference", "variant")
    if variant is not None and entry is not None and not entry.drawn:
        article = "an" if str(kind)[:1] in "aeiou" else "a"
        err(f"{article} {kind} problem cannot have a 'variant' (its reference is not drawn per learner)", "variant")
    mistakes = _mistakes(item, err)
    partial: tuple[tuple[float, Any], ...] = ()
    if "partial" in item:
        raw = item["partial"]
        if not isinstance(raw, list) or not all(isinstance(x, dict) and "answer" in x and _credit(x.get("credit"))
                                                for x in raw):
            err("'partial' must be a list of {answer, credit} (credit: fraction of the points, a number from 0 to 1)",
                "partial")
        else:
            partial = tuple((float(x["credit"]), plain(x["answer"])) for x in raw)
    sig_figs = item.get("sig_figs")
    if sig_figs is not None and (not isinstance(sig_figs, int) or sig_figs < 1):
        err("'sig_figs' must be a positive integer", "sig_figs")
    attempts = item.get("attempts")
    if attempts is not None and (isinstance(attempts, bool) or not isinstance(attempts, int) or attempts < 1):
        err("'attempts' must be a positive integer (how many submissions of this problem count)", "attempts")
    rubric = read_rubric(item.get("rubric"), item.loc_of("rubric"), float(points), errs, unknown_keys)
    title = item.get("title")
    if title is not None and (not isinstance(title, str) or not title.strip() or "\n" in title.strip()
                              or len(title.strip()) > MAX_TITLE):
        err(f"'title' must be a short text on one line (at most {MAX_TITLE} characters)", "title")
    title = title.strip() if isinstance(title, str) and title.strip() else derive_title(str(prompt or ""))
    source = item.get("source", "")
    if isinstance(source, dict):
        source = " ".join(str(source.get(k, "")) for k in ("document", "section")).strip()
    if errs:
        raise ErrorList(errs)
    return Problem(
        id=pid, kind=kind, points=points, prompt=prompt.strip(), reference=reference, location=loc,
        subject=subject, source=str(source), tolerance=plain(item.get("tolerance")), sig_figs=sig_figs,
        feedback=frozen(plain(feedback)), mistakes=mistakes, derive=derive, measure=measure, variant=variant,
        partial=partial, note=str(item.get("note", "")), attempts=attempts, title=title, rubric=rubric,
        **fields,
    )


Err = Callable[..., None]


def _at(raw: Any, err: Err, key: str) -> Any:
    if raw is None:
        return frozen()
    if not isinstance(raw, dict) or not all(isinstance(k, str) for k in raw):
        err("'at' must map symbol names to values", key)
        return frozen()
    return frozen(plain(raw))


def _derive(item: Any, entry: Any, err: Err, file: Path) -> Derive | None:
    """``derive``: its ``at``, and its formula as the problem's kind writes it (the kind's ``read_derive``)."""
    raw = item.get("derive")
    if raw is None:
        return None
    if not isinstance(raw, dict):
        err("'derive' must be {formula, at} (or {lhs, op, rhs, at} for a relation)", "derive")
        return None
    at = _at(raw.get("at"), err, "derive")
    if entry is None:
        return None
    got = entry.read_derive(raw, BankSite(item, err, file.parent))
    if got is None:
        return None
    formula, op = got
    return Derive(formula, at, op)


def _measure(item: Any, err: Err) -> Measure | None:
    raw = item.get("measure")
    if raw is None:
        return None
    if not isinstance(raw, dict) or not isinstance(raw.get("quantity"), str):
        err("'measure' must be {quantity, at}, e.g. {quantity: params, at: {d: 512, h: 8}}", "measure")
        return None
    axis = raw.get("axis")
    if axis is not None and (not isinstance(axis, int) or isinstance(axis, bool) or axis < 0):
        err("'measure.axis' must be an axis index (0, 1, ...) of a measured shape", "measure")
    at = raw.get("at")
    if isinstance(at, list):
        entry = ANSWER_KINDS.get(item.get("kind")) if isinstance(item.get("kind"), str) else None
        if entry is None or not entry.measure_points or not at:
            points_kinds = " or ".join(f"an {k}" if k[0] in "aeiou" else f"a {k}"
                                       for k, v in ANSWER_KINDS.items() if v.measure_points)
            err(f"'measure.at' may be a list of points only for {points_kinds}", "measure")
            return None
        points = tuple(_at(p, err, "measure") for p in at)
        return Measure(raw["quantity"], frozen(), points, axis)
    return Measure(raw["quantity"], _at(at, err, "measure"), (), axis)


def _variant(item: Any, err: Err) -> Variant | None:
    raw = item.get("variant")
    if raw is None:
        return None
    choose = raw.get("choose") if isinstance(raw, dict) else None
    if (not isinstance(choose, dict) or not choose
            or not all(isinstance(v, list) and v and all(isinstance(x, int) and not isinstance(x, bool) for x in v)
                       for v in choose.values())):
        err("'variant' must be {seed_from: learner, choose: {symbol: [integers], ...}}", "variant")
        return None
    seed_from = raw.get("seed_from", "learner")
    if seed_from != "learner":
        err("'variant.seed_from' must be 'learner'", "variant")
    return Variant(seed_from, tuple((str(k), tuple(v)) for k, v in choose.items()))


def _mistakes(item: Any, err: Err) -> tuple[BankMistake, ...]:
    raw = item.get("mistakes", [])
    if not isinstance(raw, list):
        err("'mistakes' must be a list of {answer or formula, feedback}", "mistakes")
        return ()
    positioned: Any = raw           # a YList when it has entries (the default [] has none)
    out = []
    for i, m in enumerate(raw):
        if not isinstance(m, dict) or not isinstance(m.get("feedback"), str) or ("answer" in m) == ("formula" in m):
            err("each mistake needs 'feedback' and exactly one of 'answer' or 'formula'", "mistakes")
            continue
        out.append(BankMistake(m["feedback"], plain(m.get("answer")), m.get("formula"),
                           frozen(plain(m.get("at") or {})), positioned.loc_of(i)))
    return tuple(out)


