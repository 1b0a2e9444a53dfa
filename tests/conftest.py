"""Test-session settings shared by every test file."""
import atexit
import os
import shutil
import tempfile

# The demonstrations' results (kind: demonstrate) are cached on disk; the tests use a cache of
# their own, empty at the start of the session and removed at its end (set before any test
# starts a measuring process, which inherits it). The first test that runs the bundled spec
# trains its models; the others read them.
_CACHE = tempfile.mkdtemp(prefix="grader-test-cache-")
os.environ["GRADER_CACHE_DIR"] = _CACHE
atexit.register(shutil.rmtree, _CACHE, True)
