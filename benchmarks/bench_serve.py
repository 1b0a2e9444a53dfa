"""Benchmark `grader serve`: sustained submissions a second, latency, errors and lost
submissions, on SQLite (WAL, synchronous=FULL), with the server and the load generator on the
same machine.

A live server (`python -m grader serve`, real uvicorn) on 127.0.0.1 and a closed-loop load
generator: ``--connections`` learners, each on its own keep-alive connection, each sending its
next submission when the last is answered (one of a learner's submissions is graded at a time).
The generator is a small asyncio HTTP/1.1 client (not httpx) so that it leaves the CPU to the
server. It is bounded: ``--seconds`` of load and at most ``--max-requests`` per phase, after
a ``--warmup``. Two phases:

1. one-answer submissions (a number, a formula, a shape, ... in turn);
2. whole-class submissions: every problem of the bundled bank but the code one (43 answers),
   with the answers a class gives (``bench_grade.class_answers``);
3. one-answer submissions "under attack": the same honest learners while ``--attackers``
   processes (default 4) replay the hostile-service corpus of issue #26
   (tests/serve/hostile_service.py: wrong tokens, other learners' data, injection, bad and deep
   bodies, out-of-range queries, hostile batches and uploads, malformed headers) in a loop,
   each on its own connection, until the phase ends. It prints the honest learners' rate, p50 and
   p99 beside the quiet phase's, and ``honest p99 under attack / quiet p99`` (target <= 2, and 0
   errors for the honest learners). The corpus's browser cases (CSRF, sessions) and slow-client
   actions are not in the loop. It also prints the CPU seconds the server's main process, its
   workers and job processes, the honest load generator and the attackers used in the phase
   (and the server and generator in the quiet one-answer phase): on one machine the attackers'
   own processes take CPU from the server as well.

"lost": submissions answered 2xx whose id is not in the database, graded, afterwards.
Figures are printed, not asserted (the target on a 2-core machine: >= 500 one-answer
submissions/s, p99 <= 150 ms, 0 errors, 0 lost; under attack, p99 <= 2x the quiet p99).

    .venv/bin/python benchmarks/bench_serve.py [--seconds 10] [--connections 16] [--workers 2] [--attackers 4]
"""
from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

ONE_ANSWER = [("17-08/practice-1", "64"), ("17-08/params-formula", "4d^2 + 4d"), ("17-08/example-1.q_i_shape", [128, 64]),
              ("17-08/practice-4.bytes", "16 MiB"), ("17-08/quiz-2", "D"), ("17-08/crossover", "n > 2d"),
              ("17-08/example-2.params", 786432), ("17-08/flops-formula", "4nd^2 + 2n^2d")]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Conn:
    """One keep-alive HTTP/1.1 connection: POST JSON, read the status and the body."""

    def __init__(self, port: int, token: str):
        self.port, self.token = port, token
        self.reader = self.writer = None

    async def open(self):
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)

    async def post(self, path: str, body: bytes, key: str) -> tuple[int, bytes]:
        head = (f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {self.token}\r\n"
                f"Content-Type: application/json\r\nIdempotency-Key: {key}\r\nContent-Length: {len(body)}\r\n\r\n")
        self.writer.write(head.encode() + body)
        status_line = await self.reader.readline()
        if not status_line:
            raise ConnectionError("closed")
        status = int(status_line.split()[1])
        length = 0
        while True:
            line = await self.reader.readline()
            if line in (b"\r\n", b""):
                break
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        return status, await self.reader.readexactly(length)

    def close(self):
        if self.writer:
            self.writer.close()


async def _phase(port, tokens, bodies, seconds, warmup, max_requests, tag):
    """Closed loop over all connections: (latencies of the measured 2xx, acked ids, errors, elapsed)."""
    conns = [Conn(port, t) for t in tokens]
    for c in conns:
        await c.open()
    lat, acked, errors = [], [], []
    state = {"n": 0, "measure_from": None}
    t0 = time.perf_counter()
    measure_from = t0 + warmup
    end = measure_from + seconds

    async def run(ci, c):
        i = 0
        while time.perf_counter() < end and state["n"] < max_requests:
            body = bodies[(ci * 7 + i) % len(bodies)]
            i += 1
            start = time.perf_counter()
            try:
                status, data = await c.post("/api/v1/submissions", body, f"{tag}-{ci}-{i}")
            except (ConnectionError, asyncio.IncompleteReadError, OSError) as e:
                errors.append(repr(e))
                await asyncio.sleep(0.05)
                c.close()
                await c.open()
                continue
            done = time.perf_counter()
            if status in (200, 201):
                acked.append(json.loads(data)["id"])
                if start >= measure_from:
                    lat.append(done - start)
                    state["n"] += 1
            else:
                errors.append(f"{status}: {data[:200]!r}")
    await asyncio.gather(*(run(i, c) for i, c in enumerate(conns)))
    elapsed = min(time.perf_counter(), end) - measure_from
    for c in conns:
        c.close()
    return lat, acked, errors, elapsed


def _cpu_s(pid: int) -> float:
    """User and system CPU seconds of one process so far (0 when it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _tree(pid: int) -> list[int]:
    """``pid`` and its descendants (from /proc: Linux only; [pid] elsewhere)."""
    kids: dict[int, list[int]] = {}
    for d in Path("/proc").glob("[0-9]*"):
        try:
            ppid = int(d.joinpath("stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        kids.setdefault(ppid, []).append(int(d.name))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += kids.get(p, [])
    return out


def server_cpu(pid: int) -> tuple[float, float]:
    """CPU seconds so far of the server's main process and of its children (grading workers, job
    processes) alive now."""
    return _cpu_s(pid), sum(_cpu_s(p) for p in _tree(pid) if p != pid)


def pct(values, q):
    v = sorted(values)
    return v[min(len(v) - 1, int(q * len(v)))] * 1000 if v else float("nan")


def _attacker(port, tokens, ctx, n, seconds, out, families=None):
    """One attacker: the hostile corpus in a loop (starting at its own place in it) for ``seconds``;
    puts (requests sent, answers 5xx, first 5xx) on ``out``."""
    import httpx
    sys.path.insert(0, str(ROOT / "tests" / "serve"))
    from hostile_service import attack_cases, replay
    cases = [c for c in attack_cases() if families is None or c.family in families]
    sent, bad, first = 0, 0, None
    cpu0 = time.process_time()
    end = time.monotonic() + seconds
    source = f"127.0.0.{2 + n}"     # attackers come from addresses of their own, as they would
    with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30,
                      transport=httpx.HTTPTransport(local_address=source)) as client:
        i = n * 7
        while time.monotonic() < end and sent < 1_000_000:
            case = cases[i % len(cases)]
            i += 1
            try:
                r = replay(client, case, ctx, tokens, port, source=source)
            except (httpx.HTTPError, OSError):
                continue
            status = r if isinstance(r, int) else r.status_code
            sent += 1
            if status >= 500:
                bad += 1
                first = first or f"{case.id}: {status}"
    out.put((sent, bad, first, time.process_time() - cpu0))


def _attack_setup(port: int, tokens: dict) -> dict:
    """Alice's submission, as the corpus expects (its people were made before the server started:
    no second process opens the database while the server runs)."""
    import urllib.request
    req = urllib.request.Request(f"http://127.0.0.1:{port}/api/v1/submissions", method="POST",
                                 data=json.dumps({"answers": {"17-08/practice-1": 64}}).encode(),
                                 headers={"Authorization": f"Bearer {tokens['alice']}",
                                          "Content-Type": "application/json"})
    sub = json.loads(urllib.request.urlopen(req, timeout=60).read())
    return {"alice_sub": sub["id"], "alice_answer": sub["results"][0]["answer_id"], "alice_job": "0" * 32}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=10.0, help="measured seconds of load per phase")
    ap.add_argument("--warmup", type=float, default=2.0, help="seconds of load before measuring")
    ap.add_argument("--max-requests", type=int, default=50_000, help="measured submissions per phase, at most")
    ap.add_argument("--connections", type=int, default=16, help="learners sending at once, one connection each")
    ap.add_argument("--workers", type=int, default=2, help="grading worker processes of the server")
    ap.add_argument("--class-seconds", type=float, default=None, help="seconds for the whole-class phase")
    ap.add_argument("--attackers", type=int, default=4, help="processes replaying the hostile corpus (0: no attack phase)")
    ap.add_argument("--attack-families", default=None,
                    help="only these families of the corpus, comma-separated (default: all; e.g. tokens,bodies)")
    args = ap.parse_args(argv)

    from grader.bank import load_bank
    from grader.db import Database
    from grader.serve.accounts import add_user
    from bench_grade import class_answers

    tmp = Path(tempfile.mkdtemp(prefix="bench-serve-"))
    url = f"sqlite:///{tmp / 'grader.db'}"
    db = Database(url)
    db.ensure_schema()
    learners = [f"learner-{i:04d}" for i in range(args.connections)]
    tokens = [add_user(db, name, "learner").token for name in learners]
    # the hostile corpus's people (hostile_service: mallory, alice, prof)
    tokens_a = {who: add_user(db, who, role).token for who, role in
                (("mallory", "learner"), ("alice", "learner"), ("prof", "instructor"))}
    db.dispose()
    bank = load_bank()
    n_class = sum(p.kind != "code" for p in bank.problems)
    one = [json.dumps({"answers": {pid: raw}}).encode() for pid, raw in ONE_ANSWER]
    whole = [json.dumps({"answers": s["answers"]}).encode() for s in class_answers(bank, 50, seed=3)]
    assert all(len(json.loads(b)["answers"]) == n_class for b in whole)

    port = free_port()
    log = open(tmp / "serve.log", "w")
    server = subprocess.Popen([sys.executable, "-m", "grader", "serve", "--database", url, "--port", str(port),
                               "--workers", str(args.workers), "--rate", "0"], cwd=tmp, stdout=log,
                              stderr=subprocess.STDOUT, start_new_session=True)
    try:
        import urllib.request
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2)
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    print((tmp / "serve.log").read_text()[-2000:])
                    raise SystemExit("the server did not start")
                time.sleep(0.2)
        try:
            import uvloop
            runner = uvloop.run
        except ImportError:
            runner = asyncio.run
        print(f"bench_serve: SQLite (WAL, synchronous=FULL), {args.workers} grading workers, "
              f"{args.connections} connections, {os.cpu_count()} CPUs shared by server and load generator")
        results, all_acked, quiet_cpu = {}, [], ""
        for name, bodies, seconds in (("one-answer", one, args.seconds),
                                      (f"whole-class ({n_class} answers)", whole, args.class_seconds or args.seconds)):
            main0, kids0, me0, t0 = *server_cpu(server.pid), time.process_time(), time.perf_counter()
            lat, acked, errors, elapsed = runner(_phase(port, tokens, bodies, seconds, args.warmup,
                                                        args.max_requests, name.split()[0]))
            main1, kids1, me1, t1 = *server_cpu(server.pid), time.process_time(), time.perf_counter()
            quiet_cpu = quiet_cpu or (f"CPU seconds in the {t1 - t0:.1f} s of the one-answer phase: server "
                                      f"{main1 - main0:.1f} (main process), {kids1 - kids0:.1f} (its workers and "
                                      f"job processes); load generator {me1 - me0:.1f}")
            all_acked += acked
            rate = len(lat) / elapsed if elapsed > 0 else 0.0
            results[name] = (rate, pct(lat, 0.5), pct(lat, 0.99), len(errors))
            print(f"{name:<26} {len(lat):>6} submissions in {elapsed:5.1f} s = {rate:7.1f} submissions/s, "
                  f"p50 {pct(lat, 0.5):6.1f} ms, p99 {pct(lat, 0.99):6.1f} ms, errors {len(errors)}"
                  + (f" (first: {errors[0]})" if errors else ""))
        print(quiet_cpu)
        if args.attackers:
            ctx = _attack_setup(port, tokens_a)
            families = set(args.attack_families.split(",")) if args.attack_families else None
            out = multiprocessing.get_context("fork").Queue()
            attack_s = args.warmup + args.seconds + 1.0
            attackers = [multiprocessing.get_context("fork").Process(
                target=_attacker, args=(port, tokens_a, ctx, n, attack_s, out, families), daemon=True)
                for n in range(args.attackers)]
            for a in attackers:
                a.start()
            time.sleep(0.5)          # the attack is under way before the honest learners start
            main0, kids0, me0, t0 = *server_cpu(server.pid), time.process_time(), time.perf_counter()
            lat, acked, errors, elapsed = runner(_phase(port, tokens, one, args.seconds, args.warmup,
                                                        args.max_requests, "attack"))
            main1, kids1, me1, t1 = *server_cpu(server.pid), time.process_time(), time.perf_counter()
            reports = [out.get(timeout=attack_s + 120) for _ in attackers]
            for a in attackers:
                a.join(timeout=30)
            all_acked += acked
            rate = len(lat) / elapsed if elapsed > 0 else 0.0
            results["attack"] = (rate, pct(lat, 0.5), pct(lat, 0.99), len(errors))
            sent, bad = sum(r[0] for r in reports), sum(r[1] for r in reports)
            firsts = [r[2] for r in reports if r[2]]
            print(f"{'one-answer under attack':<26} {len(lat):>6} submissions in {elapsed:5.1f} s = {rate:7.1f} "
                  f"submissions/s, p50 {pct(lat, 0.5):6.1f} ms, p99 {pct(lat, 0.99):6.1f} ms, errors {len(errors)}"
                  + (f" (first: {errors[0]})" if errors else ""))
            print(f"attackers: {args.attackers} ({args.attack_families or 'every family'}), {sent} hostile requests ({sent / attack_s:.0f}/s), {bad} answered 5xx"
                  + (f" (first: {firsts[0]})" if firsts else ""))
            quiet = results["one-answer"]
            attack_cpu = sum(r[3] for r in reports)
            print(f"CPU seconds in the {t1 - t0:.1f} s of the phase (of {(t1 - t0) * (os.cpu_count() or 1):.1f} on "
                  f"{os.cpu_count()} CPUs): server {main1 - main0:.1f} (main process), {kids1 - kids0:.1f} (its "
                  f"workers and job processes); honest load generator {me1 - me0:.1f}; attackers {attack_cpu:.1f} "
                  f"(in their {attack_s:.1f} s)")
            print(f"honest rate under attack / quiet = {rate / quiet[0] if quiet[0] else float('nan'):.2f}; "
                  f"p50 {pct(lat, 0.5):.1f} vs {quiet[1]:.1f} ms; p99 {pct(lat, 0.99):.1f} vs {quiet[2]:.1f} ms")
            print(f"honest p99 under attack / quiet p99 = {pct(lat, 0.99) / quiet[2]:.2f} (target <= 2), "
                  f"honest errors under attack: {len(errors)}")
        db = Database(url)
        from sqlalchemy import select
        from grader.db.models import Submission
        with db.read() as conn:
            graded = set(conn.execute(select(Submission.id).where(Submission.status == "graded")).scalars())
        db.dispose()
        lost = sum(1 for i in all_acked if i not in graded)
        print(f"lost: {lost} of {len(all_acked)} acknowledged submissions not in the database, graded")
        r1 = results["one-answer"]
        summary = {"one_answer_per_s": round(r1[0], 1), "one_answer_p50_ms": round(r1[1], 1),
                   "one_answer_p99_ms": round(r1[2], 1),
                   "class_per_s": round(results[list(results)[1]][0], 1),
                   "class_p99_ms": round(results[list(results)[1]][2], 1),
                   "errors": sum(r[3] for r in results.values()), "lost": lost}
        if "attack" in results:
            ra = results["attack"]
            summary.update({"attack_per_s": round(ra[0], 1), "attack_p50_ms": round(ra[1], 1),
                            "attack_p99_ms": round(ra[2], 1), "attack_p99_ratio": round(ra[2] / r1[2], 2),
                            "attack_errors": ra[3], "attack_5xx": bad})
        print(json.dumps(summary))
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
        try:
            os.killpg(server.pid, 9)
        except (ProcessLookupError, PermissionError):
            pass
        log.close()
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
