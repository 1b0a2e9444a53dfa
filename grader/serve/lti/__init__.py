"""LTI 1.3 Advantage, the tool side (issue 30): the course's LMS launches grader and gets its
grades back.

- :mod:`.keys`: the tool's RSA key pairs (in the database), rotation, the public key set;
- :mod:`.registry`: the platforms (LMSs) registered with ``grader lti add-platform`` and their
  deployments; the tool's configuration to paste into an LMS.

The HTTP side is in :mod:`grader.serve.routes` (``/.well-known/jwks.json``, ``/lti/...``).
"""
