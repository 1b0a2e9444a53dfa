"""Nothing acknowledged is lost: concurrent submissions, the server SIGKILLed in the middle,
restarted; every submission that got a 2xx is in the database with its grade, none twice,
and code jobs queued before the crash finish after it."""
from __future__ import annotations

import threading
import time

import httpx
import pytest

from serve_helpers import LiveServer, make_bank, stored_submissions, users

LEARNERS = [f"load-{i}" for i in range(6)]
PER_LEARNER = 40
ANSWERS = [{"17-08/practice-1": 64}, {"17-08/params-formula": "4d^2 + 4d", "17-08/quiz-3": "B"},
           {"17-08/example-1.q_i_shape": [128, 64], "17-08/crossover": "n > 2d", "17-08/practice-1": "65"}]
SCORES = [1, 2, 3]       # each body's score, by hand: 64 right; the formula right and B wrong; shape and relation right


def _client_loop(url, token, learner, acked, errors, stop):
    """One learner submitting one after another; a request that fails (the server died) is sent
    again with the same Idempotency-Key until it is answered."""
    with httpx.Client(base_url=url, timeout=30, headers={"Authorization": f"Bearer {token}"}) as c:
        for i in range(PER_LEARNER):
            key, body = f"{learner}-{i}", {"answers": ANSWERS[i % 3]}
            while not stop.is_set():
                try:
                    r = c.post("/api/v1/submissions", json=body, headers={"Idempotency-Key": key})
                except httpx.TransportError:
                    errors.append(key)
                    time.sleep(0.1)
                    continue
                if r.status_code in (200, 201):
                    acked[key] = (r.json()["id"], r.json()["score"], i % 3)
                    break
                errors.append((key, r.status_code))
                time.sleep(0.1)


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
def test_sigkill_mid_load_loses_nothing(backend, tmp_path, request):
    bank = make_bank(tmp_path)
    database = (f"sqlite:///{tmp_path / 'grader.db'}" if backend == "sqlite"
                else request.getfixturevalue("postgres").new_database())
    tokens = users(database, coder="learner", **{name: "learner" for name in LEARNERS})
    server = LiveServer(database, bank, tmp_path, "--rate", "0").start()
    acked, errors, stop = {}, [], threading.Event()
    try:
        code = b"def add(a, b):\n    return a + b\n"
        with httpx.Client(base_url=server.url, timeout=30, headers={"Authorization": f"Bearer {tokens['coder']}"}) as c:
            jobs = [c.post("/api/v1/code-submissions", files={"file": ("add.py", code)},
                           data={"problem": "17-08/code-add"}) for _ in range(3)]
        assert [j.status_code for j in jobs] == [202] * 3
        threads = [threading.Thread(target=_client_loop, args=(server.url, tokens[name], name, acked, errors, stop))
                   for name in LEARNERS]
        for t in threads:
            t.start()
        deadline = time.monotonic() + 30
        while len(acked) < 40 and time.monotonic() < deadline:
            time.sleep(0.01)
        server.kill()                               # SIGKILL, mid-load
        killed_at = len(acked)
        time.sleep(0.5)
        server.start()
        for t in threads:
            t.join(timeout=120)
        stop.set()
        assert not any(t.is_alive() for t in threads)
        assert killed_at < len(LEARNERS) * PER_LEARNER          # the kill came in the middle
        assert any(isinstance(e, str) for e in errors), "no request was cut by the kill"
        assert len(acked) == len(LEARNERS) * PER_LEARNER

        deadline = time.monotonic() + 60
        while True:                 # submissions stored but cut before grading: graded at start-up
            received, by_key, n_answers = stored_submissions(database, LEARNERS)
            if received == 0 or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert received == 0
        assert set(by_key) == set(acked)                        # every acknowledged one, and only those
        for key, (sub_id, score, which) in acked.items():
            row = by_key[key]
            assert row.id == sub_id and row.status == "graded"
            assert row.score == score == SCORES[which]
            assert n_answers[sub_id] == len(ANSWERS[which])

        with httpx.Client(base_url=server.url, timeout=30, headers={"Authorization": f"Bearer {tokens['coder']}"}) as c:
            deadline = time.monotonic() + 180
            while time.monotonic() < deadline:
                states = [c.get(f"/api/v1/jobs/{j.json()['id']}").json() for j in jobs]
                if all(s["status"] in ("done", "failed") for s in states):
                    break
                time.sleep(0.3)
        assert [s["status"] for s in states] == ["done"] * 3, states
        assert [s["result"]["score"] for s in states] == [4, 4, 4]
    finally:
        stop.set()
        server.stop()
