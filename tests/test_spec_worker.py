"""The measuring process: a claim whose measurements run past its time limit, or kill the
process, is that claim's error, and the claims after it are measured by a fresh process.

A stand-in process (FAKE, below) speaks the protocol of grader.claims.worker, so that hanging
and crashing happen on cue; its answers are worked out by hand."""
import sys

from grader.claims.load import load_subject
from grader.claims.run import run_subject
from grader.claims.measurer import Measurer
from spec_helpers import claim, write_spec

# params of mha(8, 2): 4·8² + 4·8 = 288; flops.total hangs; attention.count dies by SIGSEGV;
# attention.elements exits with status 3 after printing to stderr.
FAKE = r'''
import json, os, signal, sys, time
print(json.dumps({"ready": True, "cuda": False, "torch": "fake"}), flush=True)
for line in sys.stdin:
    msg = json.loads(line)
    print(json.dumps({"start": msg["claim"]}), flush=True)
    out = []
    for r in msg["requests"]:
        q = r["quantity"]
        if q == "flops.total":
            time.sleep(600)
        if q == "attention.count":
            os.kill(os.getpid(), signal.SIGSEGV)
        if q == "attention.elements":
            print("something broke in C", file=sys.stderr, flush=True)
            sys.exit(3)
        out.append({"value": 4 * r["at"]["d"] ** 2 + 4 * r["at"]["d"]} if q == "params"
                   else {"error": "ValueError: no such thing"})
    print(json.dumps({"done": msg["claim"], "results": out, "seconds": 0.001}), flush=True)
'''


def measure_check(quantity):
    at = "{d: 8, h: 2}" if quantity == "params" else "{d: 8, h: 2, n: 4}"    # params take no n
    return f'{{kind: measure, quantity: {quantity}, at: {at}, claimed: "288"}}'


def fake_measurer(tmp_path):
    script = tmp_path / "fake_worker.py"
    script.write_text(FAKE, encoding="utf-8")
    return Measurer(command=[sys.executable, str(script)])


def test_a_hang_and_a_crash_are_their_claims_errors_and_the_rest_is_measured(tmp_path):
    p = write_spec(tmp_path,
                   claim("first", "holds", [measure_check("params")]),
                   claim("hangs", "holds", [measure_check("flops.total")]),
                   claim("after-hang", "holds", [measure_check("params")]),
                   claim("segfaults", "holds", [measure_check("attention.count")]),
                   claim("symbolic", "holds", ['{kind: numeric, expr: "d/h", at: {d: 8, h: 2}, claimed: "4"}']),
                   claim("exits", "holds", [measure_check("attention.elements")]),
                   claim("last", "holds", [measure_check("params")]),
                   claim("fails", "holds", [measure_check("flops.qk")]))
    with fake_measurer(tmp_path) as measurer:
        r = {x.claim.id: x for x in run_subject(load_subject(p), measurer=measurer, timeout=1).results}
        restarts = measurer.restarts
    assert {k: v.verdict for k, v in r.items()} == {
        "first": "holds", "hangs": "error", "after-hang": "holds", "segfaults": "error", "symbolic": "holds",
        "exits": "error", "last": "holds", "fails": "error"}
    assert "time limit of 1 s exceeded while measuring" in r["hangs"].evidence
    assert "died (signal SIGSEGV) while measuring this claim" in r["segfaults"].evidence
    assert "died (exit status 3)" in r["exits"].evidence and "something broke in C" in r["exits"].evidence
    assert "measurement failed: ValueError: no such thing" in r["fails"].evidence
    assert "measured params = 288" in r["last"].evidence
    assert restarts == 3            # after the hang, the segfault and the exit


def test_a_process_that_cannot_start_fails_every_measured_claim_and_no_other(tmp_path):
    p = write_spec(tmp_path,
                   claim("m1", "holds", [measure_check("params")]),
                   claim("s", "holds", ['{kind: numeric, expr: "d/h", at: {d: 8, h: 2}, claimed: "4"}']),
                   claim("m2", "holds", [measure_check("params")]))
    broken = Measurer(command=[sys.executable, "-c", "raise SystemExit('no torch here')"])
    with broken:
        r = {x.claim.id: x for x in run_subject(load_subject(p), measurer=broken).results}
    assert r["s"].verdict == "holds"
    for cid in ("m1", "m2"):
        assert r[cid].verdict == "error"
        assert "the measuring process could not start" in r[cid].evidence and "no torch here" in r[cid].evidence


def test_the_time_limit_counts_from_the_start_of_the_claims_measurements(tmp_path):
    # the stand-in takes 1.5 s to be ready (as torch's import does); a 1 s limit still holds:
    # nothing before the claim's own measurements is counted to it
    slow_start = FAKE.replace('print(json.dumps({"ready"', 'time.sleep(1.5)\nprint(json.dumps({"ready"')
    script = tmp_path / "slow_start.py"
    script.write_text(slow_start, encoding="utf-8")
    p = write_spec(tmp_path, claim("m", "holds", [measure_check("params")]))
    with Measurer(command=[sys.executable, str(script)]) as measurer:
        (res,) = run_subject(load_subject(p), measurer=measurer, timeout=1).results
    assert res.verdict == "holds", res.evidence


def test_a_process_that_never_gets_ready_is_given_up(tmp_path):
    p = write_spec(tmp_path, claim("m", "holds", [measure_check("params")]),
                   claim("s", "holds", ['{kind: numeric, expr: "d/h", at: {d: 8, h: 2}, claimed: "4"}']))
    stuck = Measurer(command=[sys.executable, "-c", "import time; time.sleep(600)"], ready_timeout=1)
    with stuck:
        r = {x.claim.id: x for x in run_subject(load_subject(p), measurer=stuck).results}
    assert r["s"].verdict == "holds"
    assert r["m"].verdict == "error" and "the measuring process was not ready within 1 s" in r["m"].evidence


def test_a_process_that_dies_between_claims_is_restarted_a_few_times_only(tmp_path):
    # ready, then gone before reading a claim: no claim is to blame, so it is started again; the
    # third time in a row the claims fail with why, instead of restarting for ever
    quitter = [sys.executable, "-c", 'import json; print(json.dumps({"ready": True}), flush=True)']
    p = write_spec(tmp_path, claim("m", "holds", [measure_check("params")]))
    with Measurer(command=quitter) as measurer:
        (res,) = run_subject(load_subject(p), measurer=measurer).results
        restarts = measurer.restarts
    assert res.verdict == "error" and "keeps dying between claims (exit status 0)" in res.evidence
    # three processes in all: the first dies either before the claim is queued (then the claim's
    # submit starts the second, and one restart follows) or after (two restarts); never more
    assert restarts in (1, 2), restarts
