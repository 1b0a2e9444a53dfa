"""`grader serve`: the grading service, an HTTP API (FastAPI on uvicorn) over the engine.

- :mod:`.app` builds the FastAPI application (``create_app(settings)``); :mod:`.routes` holds
  one router per resource; :mod:`.auth` the bearer tokens, roles and rate limits;
  :mod:`.schemas` the request and response models (the OpenAPI contract).
- :mod:`.engine` is the only module that calls the engine (``grader.api``, the bank,
  ``grader.code.grade``): in worker processes (:mod:`.workers`: one request's hostile answer never
  blocks another's) and job processes (:mod:`.jobs`: code, batches, regrades, rows in the
  database, queued again after a crash).
- :mod:`.store` and :mod:`.gradebook` read and write the database (:mod:`grader.db`).

Nothing is acknowledged before it is committed: a submission is stored, then graded, then
answered.
"""
