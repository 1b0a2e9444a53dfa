"""Fuzzing the entry points that read untrusted text (issue 13), each bounded in time.

A hypothesis-driven harness: each target runs hypothesis in batches, sized from the time the
last batch took, until its share of time is spent (``--fuzz-seconds``, default 12 s a target,
about two minutes for the nine; ``pytest -m fuzz --fuzz-seconds 600`` fuzzes longer). A
failure is shrunk by hypothesis and fails the build. Every crash found so far is a regression
case in tests/corpus/fuzz_regressions.json, replayed first (and by
:func:`test_every_regression_case_still_passes` whatever the time given).

Invariants, for any input:
- no exception escapes an entry point but its documented error (Unreadable/InputError/ErrorList),
  and no answer ends as an internal error ("cannot grade automatically", "internal error");
- every answer given is reported exactly once (none lost, none counted twice);
- the report is always written, in every format, as text UTF-8 can encode;
- a hostile answer never scores: the right answer plus anything provably nonzero is not right.
"""
from __future__ import annotations

import json
import signal
import sys
import time
from fractions import Fraction
from pathlib import Path
from xml.etree import ElementTree as ET

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).parent / "fuzz"))
sys.path.insert(0, str(Path(__file__).parent / "corpus"))
import hostile_corpus as hc  # noqa: E402
import strategies as S  # noqa: E402

REGRESSIONS = json.loads((Path(__file__).parent / "corpus" / "fuzz_regressions.json").read_text(encoding="utf-8"))
INTERNAL = ("cannot grade automatically", "internal error")


def fuzz(seconds: float, strategy, check) -> int:
    """Run ``check`` on examples of ``strategy`` for about ``seconds``: hypothesis runs in batches,
    each sized from the time per example of the one before. Returns the examples run."""
    stop = time.monotonic() + seconds
    batch, total = 10, 0
    while time.monotonic() < stop:
        started = time.monotonic()

        @settings(max_examples=batch, deadline=None, database=None, phases=[Phase.generate, Phase.shrink],
                  suppress_health_check=list(HealthCheck))
        @given(strategy)
        def prop(x):
            check(x)

        prop()
        total += batch
        per = (time.monotonic() - started) / batch
        batch = int(min(max(0.8 * (stop - time.monotonic()) / max(per, 1e-4), 1), 200))
    return total


class TooSlow(Exception):
    pass


def limited(fn, *args, seconds: float = 4.0):
    """``fn(*args)`` under a SIGALRM time limit, as a grading worker runs a check (past it the
    answer is "too complex" there, not a failure here); None when it runs out."""
    def fire(signum, frame):
        raise TooSlow()
    old = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return fn(*args)
    except TooSlow:
        return None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def replay(target: str, check) -> None:
    for case in REGRESSIONS:
        if case["target"] == target:
            check(case["input"])


# ---------------------------------------------------------------- answers

@pytest.fixture(scope="module")
def specs():
    from grader.bank import load_bank
    from grader.grade import check
    bank = load_bank()
    return {pid: check.prepare(bank.get(pid), bank) for pid in
            (hc.NUMBER, hc.NUMBER_SMALL, hc.FLOPS, hc.QUANTITY, hc.EXPRESSION, hc.FLOPS_FORMULA, hc.D_K, hc.SHAPE,
             hc.RELATION, hc.CHOICE, hc.FREE)}


def _check_answer(specs):
    from grader.answers import check_answer

    def check(pair):
        pid, raw = pair
        out = limited(check_answer, specs[pid], raw)
        if out is None:
            return
        assert out.status in ("correct", "wrong", "invalid", "undecided", "needs_person"), out
        assert 0.0 <= out.credit <= 1.0
        assert not any(x in out.feedback for x in INTERNAL), (pid, raw, out)
        if out.status == "invalid":
            assert out.feedback.startswith("invalid answer: ") and out.credit == 0.0 and out.correct is False
        if out.correct is None:
            assert out.credit == 0.0
        out.feedback.encode("utf-8", "surrogatepass")
    return check


@pytest.mark.fuzz
def test_fuzz_answers_every_kind(specs, fuzz_seconds):
    check = _check_answer(specs)
    replay("answers", lambda x: check(tuple(x)))
    fuzz(fuzz_seconds, st.tuples(st.sampled_from(sorted(specs)), S.answer_value()), check)


NEAR = {    # a right answer, as a learner writes it, of problems that ask for an exact value
    hc.NUMBER: "4*512^2", hc.NUMBER_SMALL: "64", hc.FLOPS: "343597383680", hc.EXPRESSION: "4d^2 + 4d",
    hc.FLOPS_FORMULA: "8n d^2 + 4n^2 d", hc.D_K: "d/h", hc.QUANTITY: "16",
}


def _near_miss():
    """The right answer and a perturbation that is provably not 0."""
    tiny = st.one_of(
        st.integers(50, 10 ** 6).map(lambda k: f"exp(-{k})"),
        st.integers(1, 399).map(lambda k: f"10^-{k}"),
        st.tuples(st.integers(1, 10 ** 6), st.integers(1, 300)).map(lambda t: f"{t[0]}/10^{t[1]}"),
        st.integers(1, 300).map(lambda k: f"log(1 + 10^-{k})"),
        st.integers(2, 10 ** 6).map(lambda k: f"(sqrt({k}) - sqrt({k} - 1))/10^50"),
    )
    form = st.sampled_from(["{a} + {t}", "{a} - {t}", "({a})*(1 + {t})", "({a})*(1 - {t})", "{t} + {a}"])

    def build(args):
        pid, f, t = args
        right = NEAR[pid]
        text = f.format(a=right, t=t)
        return pid, (text + " MiB" if pid == hc.QUANTITY else text)
    return st.tuples(st.sampled_from(sorted(NEAR)), form, tiny).map(build)


@pytest.mark.fuzz
def test_fuzz_a_near_miss_never_scores(specs, fuzz_seconds):
    from grader.answers import check_answer

    def check(pair):
        pid, raw = pair
        out = limited(check_answer, specs[pid], raw)
        if out is None:         # a grading worker's time limit: "too complex", 0 points there too
            return
        # wrong (provably: a point where the difference is not 0), or invalid by the answer rule;
        # never right, and never left to a person
        assert out.status in ("wrong", "invalid") and out.credit == 0.0, (pid, raw, out)
        assert not any(x in out.feedback for x in INTERNAL), (pid, raw, out)
    replay("near_miss", lambda x: check(tuple(x)))
    fuzz(fuzz_seconds, _near_miss(), check)


@pytest.mark.fuzz
def test_fuzz_units_shapes_and_relations(fuzz_seconds):
    from grader.answers.model import Unreadable
    from grader.answers.shapes import read_shape
    from grader.answers.symbolic import check_relation, compare_relations, read_relation
    from grader.answers.units import read_quantity
    from grader.bank import load_bank
    table = load_bank().subject.table
    ref = read_relation("n > 2*d", table)[0]

    def check(pair):
        limited(read, *pair)

    def read(what, raw):
        try:
            if what == "quantity":
                q = read_quantity(raw, "byte")
                assert q.value is None or isinstance(q.value, Fraction)
            elif what == "shape":
                shape = read_shape(raw)
                assert len(shape) <= 16 and all(isinstance(n, int) and 0 <= n < 10 ** 12 for n in shape)
            else:
                rel = check_relation(read_relation(raw, table)[0])
                assert compare_relations(rel, ref, table)[0] in ("equal", "different", "undecided")
        except Unreadable as e:
            assert str(e)
    text = st.one_of(S.math_text(), S.formula(), S.relation(), S.any_text())
    replay("readers", lambda x: check(tuple(x)))
    fuzz(fuzz_seconds, st.tuples(st.sampled_from(["quantity", "shape", "relation"]),
                                 st.one_of(text, text.map(lambda t: t + " MiB"), S.answer_value())), check)


# ---------------------------------------------------------------- files

@pytest.mark.fuzz
def test_fuzz_yaml_reader(fuzz_seconds):
    from grader.files import textfiles, yamlio
    from grader.errors import InputError

    def check(args):
        text, answers, as_bytes = args
        try:
            if as_bytes:
                text = textfiles.decode(text.encode("utf-8", "surrogatepass"), "f", answers=answers)
            yamlio.loads(text, "f", answers=answers, multi=answers is False)
        except InputError as e:
            assert e.location is not None and e.message
    replay("yaml", lambda x: check(tuple(x)))
    fuzz(fuzz_seconds, st.tuples(st.one_of(S.yaml_text(), S.any_text(80)), st.booleans(), st.booleans()), check)


@pytest.mark.fuzz
def test_fuzz_spec_loader(fuzz_seconds):
    from grader.errors import ErrorList, GraderError
    from grader.claims import load
    worked = (Path(__file__).resolve().parents[1] / "docs" / "examples" / "worked.yaml").read_text(encoding="utf-8")

    def check(text):
        try:
            load.loads(text, "spec.yaml")
        except ErrorList as e:
            assert e.errors and all(err.location is not None for err in e.errors)
            str(e).encode("utf-8", "backslashreplace")
        except GraderError as e:
            assert e.location is not None
    replay("spec", check)
    fuzz(fuzz_seconds, S.mutated(worked), check)


# ---------------------------------------------------------------- output and the whole pipeline

def _writes_everything(report):
    from grader.reports.grades import render
    for fmt in ("text", "json", "junit") + (("gradescope",) if len(report.submissions) == 1 else ()):
        text = render(report, fmt)
        text.encode("utf-8")                    # never lost to a string UTF-8 cannot encode
        if fmt in ("json", "gradescope"):
            json.loads(text)
        elif fmt == "junit":
            ET.fromstring(text.split("\n", 1)[1])
        else:
            assert len(text.splitlines()) >= len(report.submissions)


@pytest.mark.fuzz
def test_fuzz_output_writers(fuzz_seconds):
    fuzz(fuzz_seconds, S.report(), _writes_everything)


def _answers_file():
    """The text of an answers file: submissions of random learners, keys and values, maybe mutated."""
    key = st.one_of(st.sampled_from([hc.NUMBER, hc.NUMBER_SMALL, hc.QUANTITY, hc.EXPRESSION, hc.SHAPE, hc.RELATION,
                                     hc.CHOICE, hc.FREE, hc.VARIANT, "17-08/none"]), S.any_text(12))
    learner = st.one_of(S.any_text(10), st.integers(), st.sampled_from(["alice", "bob", ""]))

    def lines(subs):
        out = ["submissions:"]
        for name, answers in subs:
            out.append(f"  - learner: {hc.yaml_value(name)}")
            out.append("    answers:")
            out.extend(f"      {hc.yaml_value(k)}: {hc.yaml_value(v)}" for k, v in answers)
            if not answers:
                out[-1] += " {}"
        return "\n".join(out) + "\n"
    subs = st.lists(st.tuples(learner, st.lists(st.tuples(key, S.answer_value()), max_size=6)), min_size=1, max_size=4)
    text = subs.map(lines)
    return st.one_of(text, text, text.flatmap(lambda t: S.mutated(t, 3)))


@pytest.mark.fuzz
def test_fuzz_grading_loses_nothing_and_always_writes(tmp_path, fuzz_seconds):
    from grader.bank import load_bank
    from grader.grade.pool import AnswerLimits as Limits
    from grader.grade.run import grade
    from grader.grade.submissions import load_submissions
    bank = load_bank()
    path = tmp_path / "answers.yaml"

    def check(text):
        path.write_bytes(text.encode("utf-8", "surrogatepass"))
        loaded = load_submissions([path])
        report = grade(bank, loaded, jobs=1, limits=Limits(timeout_s=2.0))
        assert len(report.submissions) == len(loaded.submissions)
        for sub, res in zip(loaded.submissions, report.submissions):
            assert [str(a.problem_id) for a in sub.answers] == [r.id for r in res.results]   # each once, in order
            for r in res.results:
                assert not any(x in r.feedback for x in INTERNAL), r
                assert r.score <= r.max_score and (r.correct is not None or r.score == 0)
        _writes_everything(report)
    replay("grade", check)
    fuzz(fuzz_seconds, _answers_file(), check)


def test_every_regression_case_still_passes(specs):
    """The crashes fuzzing and the hostile corpus found, replayed whatever --fuzz-seconds says."""
    targets = {c["target"] for c in REGRESSIONS}
    assert targets <= {"answers", "near_miss", "readers", "yaml", "spec", "grade"}
    check = _check_answer(specs)
    for case in REGRESSIONS:
        if case["target"] == "answers":
            check(tuple(case["input"]))
    assert len(REGRESSIONS) >= 10
