import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest

# The parsed-library cache (libcache.py) of a test run stays out of the user's ~/.cache; subprocesses inherit it.
os.environ["FIRSTFAULT_CACHE_DIR"] = tempfile.mkdtemp(prefix="firstfault-test-cache-")
atexit.register(shutil.rmtree, os.environ["FIRSTFAULT_CACHE_DIR"], ignore_errors=True)

from firstfault.engine import Engine

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
REALRUN = FIXTURES / "realrun"
CLEAN = FIXTURES / "clean"
EXAMPLES = ROOT / "examples"

# The fields every reference file needs, for tests that write their own (the patterns follow).
REFERENCE_HEAD = '''id = "{id}"
title = "A failure"
category = "process"
tier = "rank-crash"
severity = "error"
status = "experimental"
summary = "s"
mechanism = "m"
references = ["https://example.org/x"]
'''


@pytest.fixture(scope="session")
def engine() -> Engine:
    return Engine()
