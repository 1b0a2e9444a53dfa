"""grader.api: one answer graded as the batch grades it, from any thread, under its own time
limit; a reloaded bank is never served what was derived from the old one."""
import gc
import os
import random
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import pytest

import api_hooks
from grader import api
from grader.api import (AnswerLimits, LocalPoolExecutor, SerialExecutor, grade_answer, grade_class, grade_submission,
                        load_bank, result_json, submission_json, validate_answer)
from grader.grade.check import Checker, CodeTask
from grader.grade.pool import Failure
from grader.grade.submissions import Answer, Submission

TESTS = Path(__file__).resolve().parent
BANK = load_bank()


def _answer(p, rng):
    """Right, a known mistake, partial credit, wrong, unreadable, or hostile: an answer to ``p``."""
    mistakes = [m.answer for m in p.mistakes if m.answer is not None] + [a for _, a in p.partial]
    if p.kind == "free_text":
        return rng.choice(["Q from the decoder, K and V from the encoder.", 42])
    if p.kind == "choice":
        return rng.choice([p.reference, *dict(p.choices), "Z", "the last one"])
    r = rng.random()
    if r < 0.4:
        return p.reference if not isinstance(p.reference, list) else rng.choice(
            [p.reference, "(" + ", ".join(map(str, p.reference)) + ")"])
    if r < 0.65 and mistakes:
        return rng.choice(mistakes)
    return rng.choice({"number": ["123", "2^20", "banana", "1e999", [1, 2]],
                       "quantity": ["16 MiB", "3 parsecs", "16777216", "12 bytes"],
                       "expression": ["4d^2", "8nd^2 + 4n^2d", "d/h", "import os", "(d", "d**d**d"],
                       "relation": ["n > d", "n < 2d", "n >= 2*d", "n >"],
                       "shape": ["(64, 128)", [128], "128 by 64", "((("],
                       "interval": ["[0, 1]", "(0, 1)", [0, 1], "[1, 0]", "0 to"]}.get(p.kind, ["?"]))


def generated_class(learners=16, seed=5):
    rng = random.Random(seed)
    subs = []
    for i in range(learners):
        answers = [Answer(p.id, _answer(p, rng), None) for p in BANK.problems if p.kind != "code"]
        if i % 5 == 0:
            answers.append(Answer("17-08/no-such-problem", 3, None))
        if i % 7 == 0:
            answers.append(Answer("17-08/code-mha", "../outside.py", None))
        subs.append(Submission(f"learner-{i:02d}", tuple(answers), None, ""))
    return subs


@pytest.fixture(scope="module")
def batch():
    subs = generated_class()
    report = grade_class(BANK, subs, executor=LocalPoolExecutor(2), with_latex=True)
    return subs, report


def test_grade_answer_equals_the_batch_for_every_answer_of_a_class(batch):
    subs, report = batch
    statuses = set()
    for sub, graded in zip(subs, report.submissions):
        assert len(graded.results) == len(sub.answers)
        for ans, r in zip(sub.answers, graded.results):
            one = grade_answer(BANK, ans.problem_id, ans.raw, learner=sub.learner)
            assert one == r, (ans, sub.learner)
            statuses.add(r.status)
    # the class is a real mix: every way an answer can go
    assert {"correct", "wrong", "invalid", "unknown", "needs_person"} <= statuses   # (the bank gives no partial credit)
    assert any(r.variant for s in report.submissions for r in s.results)
    assert any(r.latex for s in report.submissions for r in s.results)


def test_the_batch_of_the_cli_grades_as_the_api(batch):
    """The CLI's path (a forked pool, the collector tuned) and grade_class agree (no LaTeX there)."""
    from grader.grade.run import grade
    from grader.grade.submissions import Loaded
    subs, report = batch
    cli = grade(BANK, Loaded(tuple(subs), (), False), jobs=2)
    assert [[replace(r, latex=None) for r in s.results] for s in report.submissions] == \
           [list(s.results) for s in cli.submissions]
    assert [submission_json(s) for s in cli.submissions] == [submission_json(s) for s in report.submissions]


def test_safe_from_eight_threads_at_once(batch):
    subs, _ = batch
    calls = [(ans.problem_id, ans.raw, sub.learner) for sub in subs[:6] for ans in sub.answers]
    serial = [grade_answer(BANK, pid, raw, learner=who) for pid, raw, who in calls]
    with ThreadPoolExecutor(8) as pool:
        threaded = list(pool.map(lambda c: grade_answer(BANK, c[0], c[1], learner=c[2]), calls))
    assert threaded == serial
    with ThreadPoolExecutor(8) as pool:         # whole submissions too
        both = list(pool.map(lambda s: grade_submission(BANK, s.learner, {a.problem_id: a.raw for a in s.answers}),
                             subs[:8]))
    for s, got in zip(subs[:8], both):
        assert got == grade_submission(BANK, s.learner, {a.problem_id: a.raw for a in s.answers})


def _in_thread(fn):
    box = []
    t = threading.Thread(target=lambda: box.append(fn()))
    t.start()
    t.join(30)
    assert not t.is_alive(), "the time limit did not hold"
    return box[0]


@pytest.mark.parametrize("hook", [api_hooks.Sleepy, api_hooks.Deaf])
def test_its_time_limit_holds_in_a_thread(hook, monkeypatch):
    """A check that would take a minute, in a check process, called from a thread that is not
    the main one: past the limit the answer is too complex to grade (the alarm stops a sleeping
    check; one that blocks the alarm is killed from outside after the grace)."""
    monkeypatch.setenv("PYTHONPATH", str(TESTS) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    monkeypatch.setattr(api, "_handler", lambda bank, key, spec, with_latex: hook((spec,)))
    bank = load_bank()                          # its own check processes, started with that path
    limits = AnswerLimits(timeout_s=0.3, grace_s=0.5)
    try:
        r = _in_thread(lambda: grade_answer(bank, "17-08/practice-1", "64", limits=limits))
        assert threading.current_thread() is threading.main_thread()
        assert (r.status, r.score, r.correct) == ("invalid", 0.0, False)
        assert r.feedback == "invalid answer: too complex to grade within 0.3 s"
        monkeypatch.undo()                      # and the next answer is graded as usual
        assert grade_answer(bank, "17-08/practice-1", "64").status == "correct"
    finally:
        api.close(bank)


def test_the_serial_executor_limits_time_in_a_thread_too(monkeypatch):
    def busy(self, payload):
        while True:                             # Python work that never ends
            sum(range(1000))

    monkeypatch.setattr(Checker, "check", busy)
    limits = AnswerLimits(timeout_s=0.3)
    r = _in_thread(lambda: grade_answer(BANK, "17-08/practice-1", "64", limits=limits, executor=SerialExecutor()))
    assert r.feedback == "invalid answer: too complex to grade within 0.3 s"


VARIANT = """subject: 17-08
problems:
  - id: 17-08/variant.d_k
    prompt: "d_model = {{d}}, h = {{h}}. What is d_k?"
    kind: number
    points: 1
    reference: 64
    derive: {{formula: d_k, at: {{d: 512, h: 8}}}}
    variant: {{seed_from: learner, choose: {{d: [{d}], h: [{h}]}}}}
"""


def test_a_reloaded_bank_is_never_served_stale_variants(tmp_path):
    f = tmp_path / "bank.yaml"
    f.write_text(VARIANT.format(d=512, h=8))
    old = load_bank(f)
    first = grade_answer(old, "17-08/variant.d_k", 64, learner="kim")
    assert (first.correct, first.variant) == (True, "variant d=512, h=8")
    seen = {}
    for d, h in ((768, 12), (2048, 16), (1024, 8)):
        f.write_text(VARIANT.format(d=d, h=h))
        del old
        gc.collect()                            # the old bank's objects gone: their ids free for reuse
        old = load_bank(f)
        want = d // h
        r = grade_answer(old, "17-08/variant.d_k", want, learner="kim")
        assert (r.correct, r.variant) == (True, f"variant d={d}, h={h}")
        assert grade_answer(old, "17-08/variant.d_k", 64, learner="kim").correct is (want == 64)
        report = grade_class(old, [Submission("kim", (Answer("17-08/variant.d_k", want, None),), None, "")])
        assert report.submissions[0].results[0] == replace(r, latex=None)
        seen[(d, h)] = r.variant
        api.close(old)
    assert len(set(seen.values())) == 3
    # two banks alive at once, same problem id, different draws: each answers for itself
    f.write_text(VARIANT.format(d=512, h=8))
    a = load_bank(f)
    f.write_text(VARIANT.format(d=4096, h=8))
    b = load_bank(f)
    assert grade_answer(a, "17-08/variant.d_k", 64, learner="kim").correct is True
    assert grade_answer(b, "17-08/variant.d_k", 512, learner="kim").correct is True
    assert grade_answer(a, "17-08/variant.d_k", 512, learner="kim").correct is False
    api.close(a)
    api.close(b)


def test_validate_answer_reads_without_grading():
    r = validate_answer(BANK, "17-08/params-formula", "4d(d+1)")
    assert r.ok and r.read_as == "4·d·(d + 1)" and r.error is None
    # SymPy's printers, on the parsed expression 4d² + 4d (SymPy expands 4d(d + 1) as it reads it)
    assert r.latex == "4 d^{2} + 4 d"
    assert r.mathml.startswith("<mrow>") and "<msup><mi>d</mi><mn>2</mn></msup>" in r.mathml
    bad = validate_answer(BANK, "17-08/params-formula", "4d^2 + ")
    assert not bad.ok and bad.read_as is None
    assert bad.column == 8                      # one past the '+': where the expression ends too soon
    assert "end" in bad.error
    rel = validate_answer(BANK, "17-08/crossover", "n > 2d")
    assert rel.ok and rel.latex == "n > 2 d"
    assert validate_answer(BANK, "17-08/example-2.params", "2^20").read_as == "2²⁰ = 1,048,576"
    assert validate_answer(BANK, "17-08/practice-4.bytes", "16 MiB").read_as == "16 MiB = 16,777,216 bytes"
    assert validate_answer(BANK, "17-08/example-1.q_i_shape", [128, 64]).read_as == "(128, 64)"
    assert validate_answer(BANK, "17-08/quiz-1", "c").read_as.startswith("C: ")
    assert validate_answer(BANK, "17-08/params-formula", "import os").ok is False
    assert validate_answer(BANK, "17-08/params-formula", "\x1b[2J").ok is False
    assert validate_answer(BANK, "17-08/no-such", "1").error == "unknown problem id '17-08/no-such'"
    # the same reading as the grade's
    graded = grade_answer(BANK, "17-08/params-formula", "4d(d+1)")
    assert graded.read_as == r.read_as and graded.latex == r.latex


def test_result_json_is_the_cli_json(batch):
    import json

    from grader.reports.grades import as_json
    _, report = batch
    data = json.loads(as_json(report))
    assert data["submissions"] == [json.loads(json.dumps(submission_json(s), default=str)) for s in report.submissions]
    first = report.submissions[0].results[0]
    assert data["submissions"][0]["results"][0] == json.loads(json.dumps(result_json(first), default=str))
    assert set(result_json(first)) == {"id", "answer", "score", "max_score", "pending_points", "correct", "feedback",
                                       "status", "read_as", "variant", "location"}


class Recording:
    """An executor that records its tasks and answers each code task with a canned grade."""

    def __init__(self):
        self.tasks = []

    def run(self, tasks, handler, *, limits, on_result=None):
        from grader.grade.results import AnswerGrade
        self.tasks.extend(p for _, p in tasks)
        return {tid: AnswerGrade(1.0, True, "ran", None, "correct") if isinstance(p, CodeTask) else Failure("error", "x")
                for tid, p in tasks}


def test_code_answers_go_through_the_executor(tmp_path):
    (tmp_path / "mine.py").write_text("x = 1\n")
    ex = Recording()
    s = grade_submission(BANK, "ann", {"17-08/code-mha": "mine.py", "17-08/practice-1": 64}, executor=ex,
                         base_dir=tmp_path)
    code = [t for t in ex.tasks if isinstance(t, CodeTask)]
    assert len(code) == 1 and Path(code[0].path) == (tmp_path / "mine.py").resolve()
    assert s.results[0].status == "correct" and s.results[0].feedback == "ran"
    assert s.results[1].status == "error"       # the executor's failure, reported on that answer alone


def test_a_claims_time_limit_holds_outside_the_main_thread(tmp_path, monkeypatch):
    """check_subject / check_claim from a thread that is not the main one: a symbolic check that
    never ends is the claim's time-out error, and the other claims are checked."""
    from spec_helpers import claim, write_spec

    from grader.claims import checks
    from grader.claims.load import load_subject
    kind = checks.KINDS["numeric"]

    def endless(ctx, check):
        while True:
            sum(range(1000))

    spec = write_spec(tmp_path, claim("slow", "holds", ["{kind: numeric, expr: 4*d^2, at: {d: 2}, claimed: '16'}"]),
                      claim("quick", "holds", ["{kind: identity, lhs: 4*d*(d+1), rhs: 4*d^2 + 4*d}"]))
    subject = load_subject(spec)
    monkeypatch.setitem(checks.KINDS, "numeric", replace(kind, run=endless))
    got = _in_thread(lambda: api.check_subject(subject, timeout=0.5))
    slow, quick = got.results
    assert slow.verdict == "error" and "time limit of 0.5 s exceeded" in slow.evidence
    assert quick.verdict == "holds"
    one = _in_thread(lambda: api.check_claim(subject, "slow", timeout=0.3))
    assert one.verdict == "error" and "time limit of 0.3 s exceeded" in one.evidence
    monkeypatch.undo()
    assert _in_thread(lambda: api.check_claim(subject, "slow", timeout=5)).verdict == "holds"


def test_close_stops_the_check_processes_and_a_later_call_starts_new_ones():
    bank = load_bank()
    assert grade_answer(bank, "17-08/practice-1", 64).status == "correct"
    first = api.executor_of(bank)
    workers = [w.popen for w in first._idle]
    assert workers and all(p.poll() is None for p in workers)
    api.close(bank)
    assert all(p.wait(timeout=10) is not None for p in workers)         # stopped
    assert grade_answer(bank, "17-08/practice-1", 65).status == "wrong"
    assert api.executor_of(bank) is not first
    api.close(bank)


def test_a_relations_mathml_is_well_formed_xml():
    """SymPy prints the operator of n < 2d bare (<mo><</mo>); the reading escapes it, so that a
    page's XML parser keeps it instead of dropping the reading."""
    from xml.etree import ElementTree as ET
    for text, op in (("n < 2d", "<"), ("n > 2d", ">"), ("n <= 2d", "≤")):
        r = validate_answer(BANK, "17-08/crossover", text)
        root = ET.fromstring(f"<math>{r.mathml.replace('&InvisibleTimes;', '&#x2062;')}</math>")
        assert [mo.text for mo in root.iter("mo")][0] == op, (text, r.mathml)


def test_totals_are_the_sums_of_grade_submission_and_of_the_service(batch):
    """The service assembles a submission answered one by one with the API's totals: the same
    object as the batch's for the same answers."""
    from grader.serve.engine import Engine
    _, report = batch
    engine = Engine()
    for s in report.submissions:
        t = api.totals(BANK, [(r.id, r.score, r.pending_points) for r in s.results])
        assert (t.score, t.max_score, t.unanswered, t.pending_points) == (s.score, s.max_score, s.unanswered,
                                                                          s.pending_points)
        want = api.submission_json(s)
        want["file"] = "answers"
        assert engine.assemble(s.learner, want["results"]) == want
