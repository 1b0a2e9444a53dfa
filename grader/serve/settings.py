"""What `grader serve` is started with."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

POLICIES = ("best", "last")


@dataclass(frozen=True)
class Settings:
    database: str | None = None     # a URL, or a SQLite file (default ./grader.db)
    exercises: str | None = None    # the bank (default: the bundled one)
    spec: str | None = None         # the spec its references derive from (default: the bundled one)
    course: str | None = None       # the assessments file (default: the bank folder's assessments.yaml, if any)
    workers: int = 2                # grading worker processes (answers, validation)
    job_workers: int = 1            # job processes (code submissions, batches, regrades)
    timeout_s: float = 2.0          # per answer, as `grader grade --timeout`
    memory_mb: int = 1024           # per worker, above its size after loading the bank
    policy: str = "best"            # gradebook: the best or the last attempt of each problem
    max_body: int = 1 << 20         # a JSON request body, bytes
    max_upload: int = 16 << 20      # a batch file (the answers reader's own limit)
    max_code: int = 1 << 20         # a code file (grader.code.grade's limit)
    max_answers: int = 500          # answers in one submission
    rate: float = 50.0              # requests per second per token, sustained
    burst: int = 100                # ... and in a burst
    max_queued_jobs: int = 5        # a learner's code jobs waiting at once
    ready_timeout_s: float = 5.0    # /readyz: the canary answer and the database write, each within this
    auth_failures: int = 20         # failed authentications per client address, and per token prefix, ...
    auth_window_s: float = 300.0    # ... in this window; then 429 until it ends (0 failures: no throttling)
    error_burst: int = 50           # 4xx answers to one client address in error_window_s, ...
    error_window_s: float = 10.0    # ... past which each further 4xx answer to it waits error_delay_s
    error_delay_s: float = 0.25     # (0: none waits; grader.serve.limits.ErrorBackoff)
    shared_limits: bool | None = None   # the per-learner guard and rate limit in the database (None:
    #                                     on PostgreSQL, where several instances may share it; grader.serve.shared)
    guard_lease_s: float = 30.0     # a guard's row left by a killed instance is taken over after this long
    token_cache_s: float = 1.0      # a valid token is looked up again after this long (revocation delay)
    web_secret: bytes | None = None # signs the pages' sessions (grader.serve.secret); None: made at start
    job_executor: Any = None        # makes the job executor (on_progress) -> JobExecutor; None: local processes
    #                                 (`--scheduler`: a Dask cluster's, grader.cluster.jobs.DaskJobExecutor)
    freeze_heap: bool = False       # once started, the heap so far is moved out of the cycle collector's
    #                                 reach (gc.freeze): only a process the service owns (`grader serve`)
    lti_interval_s: float = 5.0     # the LTI outbox's sender looks for scores to post this often (0: no sender;
    #                                 tests drive grader.serve.lti.outbox.Sender.run_once themselves)
    lti_lease_s: float = 120.0      # a passback claimed by an instance that died is taken over after this
    #                                 long (longer than a passback's requests take: 4 x 10 s at most)
    public_url: str | None = None   # the address learners reach grader at (https://grader.example.edu): every
    #                                 LTI URL is built on it, never on the request's Host (None: the request's;
    #                                 checked by grader.serve.lti.registry.check_public_url)
    now: Callable[[], datetime] | None = None   # the clock of assessments' windows (UTC); None: the system's
    #                                             (tests set one: grader.serve.course.clock)
