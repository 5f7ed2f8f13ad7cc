import os
import sys
from pathlib import Path

import pytest

try:  # the installed package, or else the source tree beside these tests
    import infiniop  # noqa: F401
except ImportError:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

# Running from a source checkout: use its build/ unless told otherwise, so
# that an installed (non-editable) package still finds the fresh libraries.
_BUILD = Path(__file__).resolve().parents[2] / "build"
if "INFINIOP_LIBRARY_PATH" not in os.environ and (_BUILD / "libinfiniop.so").exists():
    os.environ["INFINIOP_LIBRARY_PATH"] = str(_BUILD)


@pytest.fixture(scope="session", autouse=True)
def _library():
    import infiniop

    try:
        infiniop.load_library(os.environ.get("INFINIOP_LIBRARY_PATH"))
    except infiniop.LibraryNotFoundError as e:
        pytest.fail(str(e), pytrace=False)
    yield
