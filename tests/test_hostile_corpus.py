"""The hostile corpus (tests/corpus/, issue 13): `grader grade` and `grader check-spec` on every
case, as separate processes, each with its peak memory (the child's, from wait4) under 1 GiB and
a hang guard of 10 s per file.

- answers: 0 points for every hostile answer, a message for each, exit status 0 (grading ran),
  and the control learner in the same file graded in full;
- answers files: each refused or read as the docs say, with its path in the message; the
  control learner's file beside it graded in full; exit status 2 where a file could not be
  read at all or an answer was refused for its key, 0 otherwise;
- spec files: an error at the file's location for each (file:line:column where the problem
  has a line), exit status 2; specs whose checks are over the memory budget load, and each such
  check is an error saying it was refused before anything was allocated, exit status 1.
"""
from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "corpus"))
import hostile_corpus as hc  # noqa: E402

GIB = 1024 ** 3
PER_FILE_S = 10.0           # the bound per file: a hang guard, not a speed target
ROOT = Path(__file__).resolve().parents[1]


def run(args, files: int = 1, cwd=None) -> tuple:
    """(exit status, stdout, stderr, peak RSS in bytes, seconds) of ``python -m grader ARGS`` in a
    child process; killed (and the test failed) past PER_FILE_S per file it reads."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        start = time.monotonic()
        proc = subprocess.Popen([sys.executable, "-m", "grader", *map(str, args)], stdout=out, stderr=err,
                                stdin=subprocess.DEVNULL, cwd=cwd or ROOT, env=env, start_new_session=True)
        limit = PER_FILE_S * max(files, 1) + 20.0       # + the start (imports), on a busy machine
        while True:
            pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() - start > limit:
                os.killpg(proc.pid, signal.SIGKILL)
                os.wait4(proc.pid, 0)
                pytest.fail(f"grader {' '.join(map(str, args))[:200]} ran past {limit:.0f} s")
            time.sleep(0.02)
        seconds = time.monotonic() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        return (proc.returncode, out.read().decode("utf-8"), err.read().decode("utf-8", "replace"),
                usage.ru_maxrss * 1024, seconds)


def test_the_corpus_has_500_cases_and_its_record_is_current():
    data = hc.record()
    assert data["total"] >= 500
    families = {c["family"] for kind in ("answers", "files", "specs") for c in data[kind]}
    assert {"magnitude", "exactness", "farming", "unicode", "yaml", "keys", "encoding", "special", "size",
            "sizes"} <= families
    committed = json.loads((Path(hc.__file__).parent / "expected.json").read_text(encoding="utf-8"))
    assert committed == json.loads(json.dumps(data, ensure_ascii=False)), \
        "tests/corpus/expected.json is stale: run python tests/corpus/hostile_corpus.py"


# ---------------------------------------------------------------- answers

def _families() -> dict:
    out: dict = {}
    for c in hc.answer_cases():
        out.setdefault(c.family, []).append(c)
    out["surrogates"] = hc.surrogate_cases()
    return out


FAMILIES = _families()


@pytest.fixture(scope="module")
def bank_points():
    from grader.bank import load_bank
    return {p.id: float(p.points) for p in load_bank().problems}


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_every_hostile_answer_gets_0_and_a_message_and_the_control_is_graded(family, tmp_path, bank_points):
    cases = FAMILIES[family]
    path = tmp_path / f"{family}.yaml"
    path.write_text(hc.answers_file(cases, deep_comment=family == "surrogates"), encoding="utf-8",
                    errors="surrogatepass")
    code, out, err, rss, _ = run(["grade", "--jobs", "2", "--format", "json", path])
    assert code == 0, err[-2000:]
    assert rss < GIB, f"peak RSS {rss / 2**20:.0f} MiB"
    data = json.loads(out)
    subs = {}
    for s in data["submissions"]:
        assert s["learner"] not in subs, f"{s['learner']} reported twice"
        subs[s["learner"]] = s
    assert set(subs) == {c.id for c in cases} | {hc.CONTROL_LEARNER}
    assert data["summary"]["answers"] == len(cases) + len(hc.CONTROL)          # none lost, none twice
    for c in cases:
        [r] = subs[c.id]["results"]
        assert r["id"] == c.problem
        assert r["status"] in c.expect, (c.id, c.answer if len(str(c.answer)) < 200 else "…", r)
        assert r["score"] == 0 and r["correct"] is not True, (c.id, r)
        assert r["feedback"].strip() and c.says in r["feedback"], (c.id, r["feedback"])
        # pending or not, an answer's points stay in max_score: nothing raises a percentage
        assert r["max_score"] == bank_points[c.problem], (c.id, r)
        assert subs[c.id]["max_score"] == sum(bank_points.values())
    control = subs[hc.CONTROL_LEARNER]
    assert all(r["correct"] is True for r in control["results"]), control
    assert control["score"] == sum(bank_points[p] for p in hc.CONTROL)


# ---------------------------------------------------------------- answers files

@pytest.fixture(scope="module")
def control_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("control") / "control.yaml"
    path.write_text(hc.answers_file([], control=True), encoding="utf-8")
    return path


def _target(case, folder: Path) -> tuple:
    """(the path given to grader grade, the hostile file's own path)."""
    made = hc.build_file(case, folder / "answers.yaml")
    return (folder if case.via_folder else made), made


def _check_file_case(case, made: Path, data: dict):
    """The file's message is there (at its path) and its partly read learners are graded."""
    if case.error:
        mine = [e["message"] for e in data["errors"] if (e["location"] or "").startswith(str(made))]
        mine += [r["feedback"] for s in data["submissions"] if s["file"] == str(made) for r in s["results"]]
        assert any(case.error in m for m in mine), (case.id, mine[:5])
    learners = {s["learner"] for s in data["submissions"]}
    assert set(case.graded) <= learners, (case.id, learners)


def _control_graded(data):
    [control] = [s for s in data["submissions"] if s["learner"] == hc.CONTROL_LEARNER]
    assert len(control["results"]) == len(hc.CONTROL) and all(r["correct"] for r in control["results"])


SPECIAL = [c for c in hc.file_cases() if c.family in ("special", "size")]
OTHERS = [c for c in hc.file_cases() if c.family not in ("special", "size")]


@pytest.mark.parametrize("case", SPECIAL, ids=lambda c: c.id)
def test_a_special_or_oversized_file_is_refused_alone_and_the_control_is_graded(case, tmp_path, control_file):
    target, made = _target(case, tmp_path)
    code, out, err, rss, _ = run(["grade", "--jobs", "1", "--format", "json", target, control_file], files=2)
    assert code == case.exit, err[-2000:]
    assert rss < GIB
    data = json.loads(out)
    _check_file_case(case, made, data)
    _control_graded(data)


@pytest.mark.parametrize("exit_status", [0, 2])
def test_hostile_answers_files_together_each_reported_and_the_control_graded(exit_status, tmp_path, control_file):
    """Every YAML, key and encoding case with this exit status, in one run: each file's message
    at its path, the control graded; exit 2 only if some file could not be read at all or an
    answer was refused for its key (no problem id: null, a number, a list)."""
    cases = [c for c in OTHERS if c.exit == exit_status]
    made = {}
    for c in cases:
        folder = tmp_path / c.id
        folder.mkdir()
        made[c.id] = _target(c, folder)
    code, out, err, rss, _ = run(["grade", "--jobs", "2", "--format", "json",
                                  *(made[c.id][0] for c in cases), control_file], files=len(cases) + 1)
    assert code == exit_status, err[-2000:]
    assert rss < GIB
    data = json.loads(out)
    for c in cases:
        _check_file_case(c, made[c.id][1], data)
        if exit_status == 2 and not c.graded:      # a file refused whole (none of it graded) says so
            located = [e for e in data["errors"] if (e["location"] or "").startswith(str(made[c.id][1]))]
            assert located and all("the whole file is refused" in e["message"] for e in located), (c.id, located)
    _control_graded(data)


# ---------------------------------------------------------------- specs

@pytest.fixture(scope="module")
def spec_runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("specs")
    load, later = root / "load", root / "run"
    load.mkdir()
    later.mkdir()
    cases = hc.spec_cases()
    for c in cases:
        hc.build_spec(c, (later if c.runtime else load) / f"{c.id}.yaml")
    n_load = sum(not c.runtime for c in cases)
    loaded = run(["check-spec", load], files=n_load)
    ran = run(["check-spec", "--memory-budget", "1GiB", "--format", "json", later], files=len(cases) - n_load)
    return cases, load, loaded, ran


def test_every_hostile_spec_is_a_located_error(spec_runs):
    cases, load, (code, out, err, rss, _), _ = spec_runs
    assert code == 2, err[-2000:]
    assert rss < GIB
    assert "Traceback" not in err
    lines = err.splitlines()
    for c in cases:
        if c.runtime:
            continue
        pattern = re.compile("^error: " + re.escape(str(load / f"{c.id}.yaml")) + c.where + ": .*" + re.escape(c.error))
        assert any(pattern.search(line) for line in lines), (c.id, [x[:300] for x in lines if c.id in x])


def test_checks_over_the_memory_budget_are_refused_before_anything_is_allocated(spec_runs):
    cases, _, _, (code, out, err, rss, _) = spec_runs
    assert code == 1, err[-2000:]
    # the measuring process (torch) included; each refused check would need 20 GiB to 28 TiB
    assert rss < GIB, f"peak RSS {rss / 2**20:.0f} MiB"
    claims = json.loads(out)["claims"]
    assert len(claims) == sum(c.runtime for c in cases)
    for claim in claims:
        assert claim["verdict"] == "error"
        summary = claim["evidence"]["summary"]
        assert re.search(r"equivalence check at .*\.yaml:\d+:\d+: .*refused before anything was allocated: "
                         r"it would need about [0-9.,]+ [GT]iB of memory", summary), summary
        assert "where the budget is 1.0 GiB (--memory-budget)" in summary
