"""Compare the CLI's output with an earlier commit's, on the bundled bank and spec.

    .venv/bin/python scripts/compare_cli.py [--base REV] [--keep DIR]

Runs the same commands with this tree's ``grader`` and with the one of ``--base`` (extracted
with ``git archive`` into a temporary folder, run with this venv's Python and packages):
``grader grade`` on a generated class (text, json, junit), one submission as gradescope,
``grader check-spec`` (text, json, junit, verbose) and ``grader exercises``. The inputs are
generated once from the bank's YAML (PyYAML only, no grader code), so both sides read the same
files. Standard output, standard error and the exit status must be identical once the
hidden-free parts are set aside: timings (check-spec's per-claim seconds) and absolute paths
(each side's own folder, the inputs' folder). Exit 0 when every output matches, 1 otherwise
(the differences are printed).
"""
from __future__ import annotations

import argparse
import difflib
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
LEARNERS = 24


def _problems() -> list[dict]:
    out = []
    for f in sorted((ROOT / "exercises").rglob("*.yaml")):
        if "code" in f.relative_to(ROOT / "exercises").parts[:-1]:
            continue
        doc = yaml.safe_load(f.read_text(encoding="utf-8"))
        out.extend(doc.get("problems") or [])
    return out


def _answer(p: dict, rng: random.Random):
    """One answer to problem ``p``: right, a known mistake, a wrong value, something unreadable."""
    kind, ref = p.get("kind"), p.get("reference")
    mistakes = [m["answer"] for m in p.get("mistakes") or [] if "answer" in m]
    partial = [x["answer"] for x in p.get("partial") or []]
    if kind == "free_text":
        return rng.choice(["Q from the decoder, K and V from the encoder.", "Each head has its own projections."])
    if kind == "choice":
        return rng.choice([ref, ref, *p.get("choices", {}), "Z", "the first one"])
    r = rng.random()
    if r < 0.45:
        if isinstance(ref, list):
            return rng.choice([ref, "(" + ", ".join(map(str, ref)) + ")", "x".join(map(str, ref))])
        return ref
    if r < 0.75 and (mistakes or partial):
        return rng.choice(mistakes + partial)
    if kind in ("number", "quantity"):
        return rng.choice([str(rng.randint(1, 10**6)), "2^20", "1.5e6", "banana", "16 MiB", -3])
    if kind == "expression":
        return rng.choice(["4d^2", "8nd^2 + 4n^2d", "d/h", "import os", "4*d**2 + 4*d", "(d"])
    if kind == "relation":
        return rng.choice(["n > d", "n < 2d", "n >= 2*d", "n >"])
    if kind == "shape":
        return rng.choice(["(128, 64)", "(64, 128)", [128], "128 by 64"])
    return ref


def make_inputs(folder: Path, code: bool = True) -> dict:
    """The answer files both sides grade; returns the paths the commands use."""
    rng = random.Random(11)
    problems = [p for p in _problems() if p.get("kind") != "code"]
    cls = folder / "class"
    cls.mkdir(parents=True)
    for i in range(LEARNERS):
        answers = {p["id"]: _answer(p, rng) for p in problems if rng.random() < 0.9}
        if i == 3:
            answers["17-08/no-such-problem"] = 42
        (cls / f"learner-{i:02d}.yaml").write_text(
            yaml.safe_dump({"learner": f"learner-{i:02d}", "answers": answers}, allow_unicode=True), encoding="utf-8")
    (cls / "many.yaml").write_text(yaml.safe_dump({"submissions": [
        {"learner": "m1", "answers": {p["id"]: _answer(p, rng) for p in problems[:10]}},
        {"learner": "m2", "answers": "not a mapping"}]}, allow_unicode=True), encoding="utf-8")
    for f in sorted((ROOT / "tests" / "hostile").glob("*")):
        shutil.copy(f, cls / f"hostile-{f.name}")
    with_code, code = code, folder / "code"
    code.mkdir()
    shutil.copy(ROOT / "exercises" / "17-08" / "code" / "solution.py", code / "good.py")
    shutil.copy(ROOT / "tests" / "broken_solutions" / "forgot_w_o.py", code / "broken.py")
    (code / "answers.yaml").write_text(yaml.safe_dump({"submissions": [
        {"learner": "coder-1", "answers": {"17-08/code-mha": "good.py"}},
        {"learner": "coder-2", "answers": {"17-08/code-mha": "broken.py"}},
        {"learner": "coder-3", "answers": {"17-08/code-mha": "missing.py"}}]}), encoding="utf-8")
    one = folder / "one.yaml"
    one.write_text(yaml.safe_dump({"learner": "solo", "answers": {p["id"]: _answer(p, rng) for p in problems}},
                                  allow_unicode=True), encoding="utf-8")
    return {"class": str(cls), "code": str(code / "answers.yaml") if with_code else None, "one": str(one)}


def commands(inputs: dict) -> dict:
    grade = ["grade", "--jobs", "2", inputs["class"], *([inputs["code"]] if inputs["code"] else [])]
    return {
        "grade-text": grade,
        "grade-json": grade + ["--format", "json"],
        "grade-junit": grade + ["--format", "junit"],
        "grade-gradescope": ["grade", inputs["one"], "--format", "gradescope"],
        "grade-one-text": ["grade", "--jobs", "1", inputs["one"]],
        "check-spec-text": ["check-spec"],
        "check-spec-verbose": ["check-spec", "-v"],
        "check-spec-json": ["check-spec", "--format", "json"],
        "check-spec-junit": ["check-spec", "--format", "junit"],
        "check-spec-only": ["check-spec", "--only", "s-obj*"],
        "exercises-text": ["exercises"],
        "exercises-json": ["exercises", "--format", "json", "--learner", "alice"],
    }


def run_side(root: Path, inputs: dict, out: Path, inputs_dir: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, PYTHONPATH=str(root), COLUMNS="160", NO_COLOR="1", PYTHONHASHSEED="0")
    for name, args in commands(inputs).items():
        p = subprocess.run([sys.executable, "-m", "grader", *args], cwd=root, env=env, capture_output=True,
                           text=True, encoding="utf-8", errors="replace", timeout=900)
        (out / f"{name}.out").write_text(normalize(p.stdout, root, inputs_dir), encoding="utf-8")
        (out / f"{name}.err").write_text(normalize(p.stderr, root, inputs_dir), encoding="utf-8")
        (out / f"{name}.rc").write_text(f"{p.returncode}\n", encoding="utf-8")


_TIMES = [
    (re.compile(r'"seconds": [0-9.e-]+'), '"seconds": <s>'),
    (re.compile(r'time="[0-9.]+"'), 'time="<s>"'),
    (re.compile(r"\b[0-9]+\.[0-9]+ ?s\b"), "<s> s"),
]


def normalize(text: str, root: Path, inputs_dir: Path) -> str:
    # the inputs as grader names them: absolute, or relative to the side's folder when inside it
    relative = os.path.relpath(inputs_dir, root)
    for path, name in ((str(inputs_dir), "<inputs>"), (str(root), "<root>"), (relative, "<inputs>")):
        text = text.replace(path, name)
    for pattern, repl in _TIMES:
        text = pattern.sub(repl, text)
    return text


def _compare(a_dir: Path, b_dir: Path, names, label: str) -> int:
    bad = 0
    for name in names:
        before = bad
        for ext in ("out", "err", "rc"):
            a = (a_dir / f"{name}.{ext}").read_text(encoding="utf-8")
            b = (b_dir / f"{name}.{ext}").read_text(encoding="utf-8")
            if a != b:
                bad += 1
                print(f"DIFFERS: {name}.{ext}")
                sys.stdout.writelines(list(difflib.unified_diff(
                    a.splitlines(True), b.splitlines(True), f"{label}/{name}.{ext}", f"here/{name}.{ext}"))[:80])
        rc = (b_dir / f"{name}.rc").read_text().strip()
        size = len((b_dir / f"{name}.out").read_text(encoding="utf-8"))
        print(f"{name}: exit {rc}, {size:,} characters of output" + (", identical" if bad == before else ""))
    print(f"{len(names)} commands compared with {label}: "
          + ("all identical (timings and paths aside)" if not bad else f"{bad} outputs differ"))
    return 1 if bad else 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--base", default="645204d", help="the commit to compare with (default: %(default)s)")
    ap.add_argument("--save", type=Path, default=None,
                    help="only run this tree's commands and save their (normalized) outputs in this folder")
    ap.add_argument("--against", type=Path, default=None,
                    help="compare with outputs saved by --save instead of running --base")
    args = ap.parse_args()
    # not under /tmp: the sandbox (bubblewrap) gives learner code a private /tmp
    (ROOT / "build").mkdir(exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix="compare-cli-", dir=ROOT / "build"))
    try:
        inputs_dir = tmp / "inputs"
        # With --base, the base's grader runs from a folder the sandbox does not show to learner
        # code (it shows the installed grader): code answers are compared only with --save/--against.
        inputs = make_inputs(inputs_dir, code=args.save is not None or args.against is not None)
        names = list(commands(inputs))
        run_side(ROOT, inputs, tmp / "out-here", inputs_dir)
        if args.save:
            shutil.copytree(tmp / "out-here", args.save, dirs_exist_ok=True)
            print(f"{len(names)} outputs saved in {args.save}")
            return 0
        if args.against:
            return _compare(args.against, tmp / "out-here", names, str(args.against))
        base = tmp / "base"
        base.mkdir()
        archive = subprocess.run(["git", "archive", args.base], cwd=ROOT, capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(base)], input=archive, check=True)
        run_side(base, inputs, tmp / "out-base", inputs_dir)
        return _compare(tmp / "out-base", tmp / "out-here", names, args.base)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
