from pathlib import Path

import pytest

from firstfault.engine import Engine

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
REALRUN = FIXTURES / "realrun"
CLEAN = FIXTURES / "clean"
EXAMPLES = ROOT / "examples"


@pytest.fixture(scope="session")
def engine() -> Engine:
    return Engine()
