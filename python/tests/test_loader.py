"""Finding the shared libraries, and what is said when they are missing."""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import infiniop

PKG_PARENT = str(Path(infiniop.__file__).resolve().parents[1])


def _run(code, env_updates, cwd="/"):
    env = dict(os.environ)
    env.pop("INFINIOP_LIBRARY_PATH", None)
    env.update(env_updates)
    env["PYTHONPATH"] = PKG_PARENT + os.pathsep + env.get("PYTHONPATH", "")
    return subprocess.run([sys.executable, "-c", code], env=env, cwd=cwd, capture_output=True, text=True, timeout=60)


def _lib_dir():
    return Path(infiniop.library_path()).parent


def test_explicit_directory_and_file():
    d = _lib_dir()
    infiniop.load_library(d)
    assert Path(infiniop.library_path()).parent == d
    infiniop.load_library(d / "libinfiniop.so")
    np.testing.assert_allclose(infiniop.sigmoid(np.zeros(3, np.float32)), 0.5)


def test_explicit_bad_path_keeps_loaded_library(tmp_path):
    before = infiniop.library_path()
    with pytest.raises(infiniop.LibraryNotFoundError) as ei:
        infiniop.load_library(tmp_path)
    msg = str(ei.value)
    assert str(tmp_path) in msg and "INFINIOP_LIBRARY_PATH" in msg and "cmake" in msg
    assert infiniop.library_path() == before
    np.testing.assert_allclose(infiniop.sigmoid(np.zeros(2, np.float32)), 0.5)


def test_env_var_directory_and_file():
    d = _lib_dir()
    code = "import infiniop, numpy as np; infiniop.silu(np.ones(2, np.float32)); print(infiniop.library_path())"
    for value in (str(d), str(d / "libinfiniop.so")):
        p = _run(code, {"INFINIOP_LIBRARY_PATH": value})
        assert p.returncode == 0, p.stderr
        assert Path(p.stdout.strip()).parent == d


def test_env_var_wrong_says_how_to_fix(tmp_path):
    code = "import infiniop, numpy as np; infiniop.silu(np.ones(2, np.float32))"
    p = _run(code, {"INFINIOP_LIBRARY_PATH": str(tmp_path / "nowhere")})
    assert p.returncode != 0
    assert "LibraryNotFoundError" in p.stderr
    assert "INFINIOP_LIBRARY_PATH" in p.stderr and "cmake" in p.stderr and "nowhere" in p.stderr


def test_import_needs_no_library(tmp_path):
    p = _run("import infiniop; print(infiniop.InfiniopError.__name__)", {"INFINIOP_LIBRARY_PATH": str(tmp_path)})
    assert p.returncode == 0, p.stderr


@pytest.mark.skipif(
    not (Path(PKG_PARENT).parent / "build" / "libinfiniop.so").exists(),
    reason="not running from a source checkout with build/",
)
def test_source_checkout_build_dir():
    code = "import infiniop, numpy as np; infiniop.sigmoid(np.ones(2, np.float32)); print(infiniop.library_path())"
    p = _run(code, {})
    assert p.returncode == 0, p.stderr
    assert Path(p.stdout.strip()).parent == Path(PKG_PARENT).parent / "build"


# ---------------------------------------------------------------- queries

ISAS = ["generic", "avx2", "avx512", "avx512bf16"]


def test_versions_agree():
    assert infiniop.library_version() == infiniop.__version__
    cm = (Path(__file__).resolve().parents[2] / "CMakeLists.txt")
    if cm.exists():
        assert f"VERSION {infiniop.__version__} " in cm.read_text()


def test_cpu_isa_and_its_cap():
    best = infiniop.cpu_isa()
    assert best in ISAS
    code = "import infiniop; print(infiniop.cpu_isa())"
    lib = str(_lib_dir())
    for cap in ISAS:
        p = _run(code, {"INFINIOP_LIBRARY_PATH": lib, "INFINIOP_CPU_ISA": cap})
        assert p.returncode == 0, p.stderr
        got = p.stdout.strip()
        # capped at `cap`, never above what this CPU has
        assert got == ISAS[min(ISAS.index(cap), ISAS.index(best))], (cap, got, best)


def test_queries_need_the_library(tmp_path):
    p = _run("import infiniop; infiniop.cpu_isa()", {"INFINIOP_LIBRARY_PATH": str(tmp_path)})
    assert p.returncode != 0 and "LibraryNotFoundError" in p.stderr
