"""`grader serve`: the grading service (FastAPI on uvicorn)."""
from __future__ import annotations

import logging
import socket
import sys

import click

from .db import DATABASE
from . import scheduler_option


def _public_url(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """``--public-url``: an absolute https URL (http only for a loopback host), no query or fragment."""
    if value is None:
        return None
    from grader.serve.lti.registry import LtiError, check_public_url
    try:
        return check_public_url(value)
    except LtiError as e:
        raise click.BadParameter(e.message) from None


@click.command("serve")
@DATABASE
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to listen on.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(0, 65535), help="Port.")
@click.option("--exercises", type=click.Path(exists=True), default=None,
              help="Exercise bank: a YAML file or a folder of them (default: the bundled bank).")
@click.option("--course", type=click.Path(exists=True, dir_okay=False), default=None,
              help="The assessments file (default: the bank folder's assessments.yaml, if any; "
                   "e.g. docs/examples/course.yaml for the bundled bank).")
@click.option("--spec", type=click.Path(exists=True), default=None,
              help="The spec the bank's references derive from (default: the bundled one).")
@click.option("--workers", default=2, show_default=True, type=click.IntRange(1, 64),
              help="Grading worker processes (answers are checked there, under limits).")
@click.option("--job-workers", default=1, show_default=True, type=click.IntRange(1, 64),
              help="Job processes (code submissions in the sandbox, batches, regrades).")
@click.option("--timeout", default=2.0, show_default=True, type=click.FloatRange(0.1, 60.0),
              help="Seconds one answer may take; past it the answer gets 0 as too complex to grade.")
@click.option("--policy", type=click.Choice(["best", "last"]), default="best", show_default=True,
              help="Gradebook: each problem's best attempt, or its last one.")
@click.option("--rate", default=50.0, show_default=True, type=click.FloatRange(0),
              help="Requests a second per token (0: no limit); past it, 429 with Retry-After.")
@click.option("--burst", default=100, show_default=True, type=click.IntRange(1), help="... in a burst.")
@click.option("--access-log/--no-access-log", default=False, show_default=True, help="Log every request.")
@click.option("--secret-file", type=click.Path(dir_okay=False), default="grader.secret", show_default=True,
              envvar="GRADER_SECRET_FILE",
              help="The secret that signs the pages' sessions, made there if missing (owner-readable only); "
                   "a restart keeps everyone signed in, a new secret signs everyone out. "
                   "Env: GRADER_SECRET_FILE.")
@click.option("--header-timeout", default=10.0, show_default=True, type=click.FloatRange(0.5, 3600),
              help="Seconds a client has to send a request's headers; past it, 408 and the connection is closed.")
@click.option("--body-timeout", default=60.0, show_default=True, type=click.FloatRange(0.5, 3600),
              help="Seconds a client has to send a request's body once its headers are in; past it, 408 and closed.")
@click.option("--keep-alive", default=5, show_default=True, type=click.IntRange(1, 3600),
              help="Seconds an idle kept-alive connection stays open.")
@click.option("--max-connections", default=1000, show_default=True, type=click.IntRange(1, 1_000_000),
              help="Open connections at most; one more is answered 503 and closed.")
@click.option("--lti-interval", default=5.0, show_default=True, type=click.FloatRange(0.05, 3600), metavar="SECONDS",
              help="How often the LTI outbox's sender looks for grades to post to the LMSs (docs/lti.md).")
@click.option("--lti-lease", default=120.0, show_default=True, type=click.FloatRange(1, 3600), metavar="SECONDS",
              help="A grade being posted by an instance that died is taken over by another after this long; "
                   "keep it longer than a post takes (up to 4 requests of 10 s).")
@click.option("--public-url", default=None, metavar="URL", envvar="GRADER_PUBLIC_URL", callback=_public_url,
              help="The address learners reach grader at (https://grader.example.edu): every LTI URL (the "
                   "launch's redirect_uri, deep links, /lti/config.json) is built on it, never on the request's "
                   "Host header. Set it in production, behind a proxy. Env: GRADER_PUBLIC_URL.")
@scheduler_option("Run the jobs on a Dask cluster: a scheduler's address (tcp://HOST:8786) or local:N "
                   "(see docs/cluster.md); --job-workers is then unused.")
def serve(database: str | None, host: str, port: int, exercises: str | None, course: str | None, spec: str | None,
          workers: int,
          job_workers: int, timeout: float, policy: str, rate: float, burst: int, access_log: bool,
          secret_file: str, header_timeout: float = 10.0, body_timeout: float = 60.0, keep_alive: int = 5,
          max_connections: int = 1000, scheduler: str | None = None, lti_interval: float = 5.0,
          lti_lease: float = 120.0, public_url: str | None = None) -> None:
    """Run the grading service: an HTTP API (OpenAPI at /openapi.json, docs at /docs) over the
    same engine as `grader grade`.

    \b
    The database is ./grader.db (SQLite) unless --database names another; a new one is
    created, one whose schema is behind is refused (run `grader db upgrade`).
    Accounts and tokens: `grader users add-instructor NAME`, `grader users import ROSTER.csv`.
    """
    from grader.db import Database
    from grader.serve.app import create_app
    from grader.web import install as install_pages
    from grader.serve.engine import Engine
    from grader.serve.protocol import protocol_class
    from grader.serve.settings import Settings
    import uvicorn

    from grader.errors import GraderError
    from grader.serve.secret import load_or_make
    try:
        web_secret = load_or_make(secret_file)
    except GraderError as e:
        raise click.BadParameter(e.message, param_hint="--secret-file") from None
    d = Database(database)
    try:
        d.lock()                        # one server per SQLite file (held until this process ends)
        why = d.unwritable(folder=True)
        if why:
            raise GraderError(f"{why}; the service needs to write it")
        if d.ensure_schema() == "created":
            click.echo(f"created the database {d.shown}", err=True)
    except GraderError as e:
        click.echo(f"error: {e.message}", err=True)
        sys.exit(2)
    finally:
        d.dispose()
    Engine(exercises, spec, course)     # an invalid bank or course is reported here, before anything listens
    if scheduler and not scheduler.strip().startswith("local"):   # an unusable cluster too (local:N starts with the app)
        from grader.api import ClusterError, check_cluster
        try:
            check_cluster(scheduler, nothing="the service did not start")
        except ClusterError as e:
            click.echo(f"error: {e.message}", err=True)
            click.get_current_context().exit(2)
    make_jobs = None
    if scheduler:
        from grader.api import cluster_job_executor
        make_jobs = cluster_job_executor(scheduler)
    settings = Settings(database=d.url, exercises=exercises, spec=spec, course=course, workers=workers, job_workers=job_workers,
                        timeout_s=timeout, policy=policy, rate=rate, burst=burst, web_secret=web_secret,
                        job_executor=make_jobs, lti_interval_s=lti_interval, lti_lease_s=lti_lease,
                        freeze_heap=True, public_url=public_url)
    # the event loop, the database writer and the workers' dispatcher are threads handing work
    # to each other: a shorter GIL switch interval lets a thread back from I/O run sooner
    sys.setswitchinterval(0.001)
    sock = listen(host, port)           # a busy port or an unusable address: one line, exit 2, nothing started
    port = sock.getsockname()[1]
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    base = f"http://{'[' + host + ']' if ':' in host else host}:{port}"
    click.echo(f"grader serve: {base}/learn (learners), {base}/staff (instructors), {base}/spec (authors), "
               f"{base}/docs (the API)  (database {d.shown}, {workers} grading workers)", err=True)
    app = create_app(settings, extensions=(install_pages,))
    # uvicorn's own cap answers 503 once the headers are in; the protocol's refuses at connect
    config = uvicorn.Config(app, host=host, port=port, loop="auto", access_log=access_log, log_level="info",
                            http=protocol_class(header_timeout, body_timeout, max_connections),
                            timeout_keep_alive=keep_alive, limit_concurrency=max_connections + 1,
                            timeout_graceful_shutdown=10, server_header=False)
    uvicorn.Server(config).run(sockets=[sock])


def listen(host: str, port: int) -> socket.socket:
    """A socket listening on ``host:port``, bound before anything says the service started (and
    handed to uvicorn); where it cannot be, one line on stderr and exit status 2."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        family, kind, proto, _, address = infos[0]
        sock = socket.socket(family, kind, proto)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(address)
            sock.listen(2048)
        except BaseException:
            sock.close()
            raise
    except (OSError, UnicodeError) as e:
        why = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        click.echo(f"error: cannot listen on {host}:{port}: {why}", err=True)
        sys.exit(2)
    sock.set_inheritable(True)
    return sock
