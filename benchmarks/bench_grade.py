"""Benchmark `grader grade`: a class of 1,000 learners, unique symbolic answers against a
naive SymPy grader, and the one-answer call the service lives on, measured in one run.

1. Class: 1,000 learners answer every problem of the bundled bank, with the duplication real
   classes have (most give one of a few forms of the right answer or a known mistake; a tail
   writes something of their own). Timed end to end from the files on disk: read, plan,
   dedupe, check the unique answers in the worker pool, score, write JSON.
2. Unique symbolic answers (every one different, ~half right): our grader (the same pipeline,
   nothing to dedupe) against ``simplify(parse_expr(a) - parse_expr(b)) == 0`` run on the same
   trusted, generated text, with the verdicts compared one by one. Two rates of ours: end to
   end (reading the YAML file and writing the JSON report included, which the naive loop does
   not do) and grading alone (plan, check, score: like for like with the naive loop).

    .venv/bin/python benchmarks/bench_grade.py [--learners 1000] [--unique 400] [--jobs 2] [--repeat 5] [--calls 2000]

This machine's speed wanders (a shared VM): the unique answers are timed ``--repeat`` times,
ours and the naive grader interleaved, and the medians compared; the class's first run (cold,
as one ``grader grade`` is) is the figure, and every run is printed.

3. One answer at a time: ``grader.api.grade_answer`` on the class's answers (every problem,
   right and wrong forms, variants with their learner), ``--calls`` calls one after another
   from one thread, each a full call (policy, a check in the bank's check process, the
   result); the latency's median and 99th percentile, after the check processes have started
   (the first call, which starts them, is reported apart).

The naive grader's ``parse_expr`` runs ``eval``: it is the baseline here only, on text this
script generates itself, never on a learner's answer.
"""
from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from pathlib import Path

import yaml

# Forms a class gives per kind, most common first: (answer, weight). The bank's own
# mistakes are added per problem; a tail of unique answers is generated.
RIGHT_FORMS = {
    "17-08/params-formula": ["4*d**2 + 4*d", "4d^2 + 4d", "4d² + 4d", "4d(d+1)", "4*d_model^2 + 4*d_model", "4·d² + 4·d"],
    "17-08/flops-formula": ["8*n*d**2 + 4*n**2*d", "8nd^2 + 4n^2d", "4nd(2d + n)", "8·n·d² + 4·n²·d"],
    "17-08/d_k-formula": ["d/h", "d_model/h"],
    "17-08/attn-memory-formula": ["4*b*h*n**2", "4bhn^2", "4·b·h·n²"],
    "17-08/crossover": ["n > 2*d", "n > 2d", "2d < n"],
    "17-08/concat-width-formula": ["d", "d_model", "h*(d/h)"],
    "17-08/article.concat-size": ["d", "d_model"],
    "17-08/practice-4.bytes": ["16777216 bytes", "16 MiB", "16.8 MB", "2^24 B", "16.777216 MB"],
    "17-08/example-2.params": [1048576, "1,048,576", "2^20", "4*512^2", "1.048576e6"],
    "17-08/example-3.total_flops": [343597383680, "343,597,383,680", "3.44e11", "343.6B"],
    "17-08/example-1.q_i_shape": ["(128, 64)", "128x64", "[128,64]", "128×64"],
    "17-08/softmax-largest-weight": ["[1/128, 1)", "1/128 <= w < 1", "[0.0078125, 1)"],
}


def class_answers(bank, learners: int, seed: int = 0) -> list[dict]:
    rng = random.Random(seed)
    subs = []
    for i in range(learners):
        answers = {}
        for p in bank.problems:
            if p.kind == "code":
                continue
            forms = RIGHT_FORMS.get(p.id) or [p.reference if not isinstance(p.reference, list) else
                                              "(" + ", ".join(map(str, p.reference)) + ")"]
            mistakes = [m.answer for m in p.mistakes if m.answer is not None]
            r = rng.random()
            if p.kind == "free_text":
                answers[p.id] = rng.choice(["Q from the decoder, K and V from the encoder.",
                                            "Each head has its own projections.", "4d² either way."])
            elif p.kind == "choice":
                answers[p.id] = rng.choice([p.reference] * 6 + [c for c, _ in p.choices])
            elif r < 0.70:
                answers[p.id] = forms[min(int(rng.expovariate(1.2)), len(forms) - 1)]
            elif r < 0.92 and mistakes:
                answers[p.id] = rng.choice(mistakes)
            elif p.kind in ("number", "quantity"):
                answers[p.id] = str(rng.randint(1, 10**6))          # the long tail: unique guesses
            elif p.kind in ("expression", "relation"):
                answers[p.id] = f"{rng.randint(2, 9)}*d**2" if p.kind == "expression" else f"n > {rng.randint(3, 9)}*d"
            else:
                answers[p.id] = forms[0]
        subs.append({"learner": f"learner-{i:04d}", "answers": answers})
    return subs


def unique_symbolic(n: int, seed: int = 1) -> list[tuple[str, str, str]]:
    """(problem id, learner text in our syntax, the same in Python syntax for the naive grader)."""
    rng = random.Random(seed)
    out, seen = [], set()
    while len(out) < n:
        a, b, c = rng.randint(1, 12), rng.randint(1, 12), rng.randint(1, 30)
        right = rng.random() < 0.5
        form = rng.randrange(4)
        if right:
            # 8nd² + 4n²d written differently, plus a zero term that makes the text unique
            texts = [f"4*n*d*(2*d + n) + {c}*n*d - {c}*d*n",
                     f"(8*d + 4*n)*n*d + {c}*(n - n)*d",
                     f"{a}*n*d**2 + (8 - {a})*n*d**2 + 4*n**2*d + {c}*d - {c}*d",
                     f"2*n*d*(4*d + 2*n) + ({b} - {b})*n"][form]
        else:
            texts = [f"{a}*n*d**2 + {b}*n**2*d + {c}*d",
                     f"4*n*d*({a}*d + n) + {c}",
                     f"(8*d + {b}*n)*n*d + {c}*n",
                     f"{a}*n*d**2 + 4*n**2*d - {c}*d"][form]
        if texts in seen:
            continue
        seen.add(texts)
        out.append(("17-08/flops-formula", texts, texts))
    return out


def naive(pairs, reference="8*n*d**2 + 4*n**2*d"):
    from sympy import simplify, symbols
    from sympy.core.cache import clear_cache
    from sympy.parsing.sympy_parser import parse_expr   # baseline only: trusted generated text
    clear_cache()       # each repeat as cold as the first: SymPy would otherwise remember the answers
    local = dict(zip(("n", "d"), symbols("n d", positive=True, integer=True)))
    ref = parse_expr(reference, local_dict=local)
    verdicts = []
    t = time.perf_counter()
    for _, _, text in pairs:
        verdicts.append(simplify(parse_expr(text, local_dict=local) - ref) == 0)
    return verdicts, time.perf_counter() - t


def timed_grade(bank, paths, jobs):
    from grader.reports.grades import as_json
    from grader.grade.pool import AnswerLimits
    from grader.grade.run import grade
    from grader.grade.submissions import load_submissions
    t = time.perf_counter()
    loaded = load_submissions(paths)
    t_read = time.perf_counter()
    report = grade(bank, loaded, jobs=jobs, limits=AnswerLimits(timeout_s=5.0))
    t_grade = time.perf_counter()
    as_json(report)
    t_end = time.perf_counter()
    return report, {"read_s": t_read - t, "grade_s": t_grade - t_read, "write_s": t_end - t_grade,
                    "total_s": t_end - t}


def one_answer_latency(bank, subs, calls: int) -> dict:
    """grade_answer, one call after another: (first call, p50, p99, mean) in milliseconds."""
    from grader.api import close, grade_answer
    work = [(pid, raw, s["learner"]) for s in subs for pid, raw in s["answers"].items()]
    t = time.perf_counter()
    grade_answer(bank, *work[0][:2], learner=work[0][2])
    first = time.perf_counter() - t
    times = []
    for i in range(calls):
        pid, raw, learner = work[(i * 7919) % len(work)]        # spread over the class's answers
        t = time.perf_counter()
        grade_answer(bank, pid, raw, learner=learner)
        times.append(time.perf_counter() - t)
    close(bank)
    times.sort()
    return {"first_ms": first * 1e3, "p50_ms": times[len(times) // 2] * 1e3,
            "p99_ms": times[min(len(times) - 1, int(len(times) * 0.99))] * 1e3,
            "mean_ms": sum(times) / len(times) * 1e3, "calls": calls}


def naive_apart(pairs):
    """:func:`naive` in a forked process of its own: SymPy's caches, which it fills, would
    otherwise slow down the grader's next run in this process (its forked workers inherit them)."""
    import multiprocessing as mp
    with mp.get_context("fork").Pool(1) as pool:
        return pool.apply(naive, (pairs,))


def _median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if len(xs) % 2 else (xs[len(xs) // 2 - 1] + xs[len(xs) // 2]) / 2


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--learners", type=int, default=1000)
    ap.add_argument("--unique", type=int, default=400)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=5, help="runs of each measurement (medians are reported)")
    ap.add_argument("--calls", type=int, default=2000, help="grade_answer calls timed one by one")
    args = ap.parse_args()

    from grader.bank import load_bank
    bank = load_bank()
    bank.subject  # the spec, loaded once as `grader grade` does
    with tempfile.TemporaryDirectory() as tmp:
        subs = class_answers(bank, args.learners)
        # one file per learner, as a class hands them in
        for s in subs:
            Path(tmp, f"{s['learner']}.yaml").write_text(yaml.safe_dump(s, allow_unicode=True))
        # the first run is cold, as one `grader grade` is (units, derived mistakes, caches): reported
        # as measured; the later runs show the spread
        # (only the figures are kept: a class's reports held in memory would slow the forks below)
        runs = [(r.stats, tt) for r, tt in (timed_grade(bank, [tmp], args.jobs) for _ in range(args.repeat))]
        stats, t = runs[0]
        n = stats["answers"]
        print(f"class: {args.learners} learners x {len(bank)} problems = {n} answers, "
              f"{stats['unique']} unique after dedupe")
        print(f"  end to end, first run (read {t['read_s']:.2f} s, grade {t['grade_s']:.2f} s, json {t['write_s']:.2f} s): "
              f"{n / t['total_s']:,.0f} answers/s")
        print(f"  grading alone (plan, dedupe, check, score), first run: {n / t['grade_s']:,.0f} answers/s")
        if len(runs) > 1:
            print("  end to end, every run: " + ", ".join(f"{n / tt['total_s']:,.0f}" for _, tt in runs) + " answers/s")

        pairs = unique_symbolic(args.unique)
        Path(tmp, "sym").mkdir()
        Path(tmp, "sym", "unique.yaml").write_text(yaml.safe_dump(
            {"submissions": [{"learner": f"u{i}", "answers": {pid: text}} for i, (pid, text, _) in enumerate(pairs)]}))
        ours_s, grading_s, naive_s = [], [], []
        for _ in range(args.repeat):        # interleaved: a slow spell of the machine hits both
            ours, tu = timed_grade(bank, [Path(tmp, "sym")], args.jobs)
            verdicts, t_naive = naive_apart(pairs)
            ours_s.append(tu["total_s"])
            grading_s.append(tu["grade_s"])
            naive_s.append(t_naive)
        ours1, tu1 = timed_grade(bank, [Path(tmp, "sym")], 1)
    got = [s.results[0].correct for s in ours.submissions]
    got1 = [s.results[0].correct for s in ours1.submissions]
    agree = sum(a == b for a, b in zip(got, verdicts))
    rate_naive = len(pairs) / _median(naive_s)
    rate = len(pairs) / _median(ours_s)
    print(f"unique symbolic answers: {len(pairs)} ({sum(verdicts)} right by the naive grader); "
          f"medians of {args.repeat} interleaved runs")
    print(f"  naive simplify(parse_expr(a) - parse_expr(b)) == 0, one process: {rate_naive:,.1f} answers/s "
          f"(runs: {', '.join(f'{len(pairs) / x:,.1f}' for x in naive_s)})")
    print(f"  grader grade --jobs {args.jobs} (end to end): {rate:,.1f} answers/s = {rate / rate_naive:,.1f}x naive "
          f"(runs: {', '.join(f'{len(pairs) / x:,.0f}' for x in ours_s)})")
    rate_g = len(pairs) / _median(grading_s)
    print(f"  grading alone (plan, check, score; no file read, no JSON), --jobs {args.jobs}: {rate_g:,.1f} answers/s "
          f"= {rate_g / rate_naive:,.1f}x naive (runs: {', '.join(f'{len(pairs) / x:,.0f}' for x in grading_s)})")
    rate1 = len(pairs) / tu1["total_s"]
    print(f"  grader grade --jobs 1 (end to end, one run): {rate1:,.1f} answers/s = {rate1 / rate_naive:,.1f}x naive")
    print(f"  same verdicts: {agree}/{len(pairs)} (jobs {args.jobs}), "
          f"{sum(a == b for a, b in zip(got1, verdicts))}/{len(pairs)} (jobs 1); "
          f"undecided: {sum(g is None for g in got)}")
    one = one_answer_latency(bank, subs, args.calls)
    print(f"one answer (grader.api.grade_answer, the bank's check processes): {one['calls']} calls one after another: "
          f"p50 {one['p50_ms']:.2f} ms, p99 {one['p99_ms']:.2f} ms, mean {one['mean_ms']:.2f} ms "
          f"(the first call, which starts the check processes: {one['first_ms']:.0f} ms)")
    print(json.dumps({"one_answer_p50_ms": round(one["p50_ms"], 2), "one_answer_p99_ms": round(one["p99_ms"], 2)}))
    print(json.dumps({"class_answers_per_s": round(n / t["total_s"]), "unique_ratio": round(rate / rate_naive, 1),
                      "unique_ratio_grading_alone": round(rate_g / rate_naive, 1)}))


if __name__ == "__main__":
    main()
