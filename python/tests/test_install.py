"""`pip install` from a clean checkout into a fresh virtual environment.

Copies the working tree's files (tracked and untracked-but-not-ignored, as a
clean checkout of it would have them) to a temporary directory, creates an
empty venv, builds a wheel with `pip wheel ./python` (scikit-build-core runs
CMake: both libraries inside the wheel, $ORIGIN run path), installs it, and
uses the package from another directory with no environment variable set.
Slow (it compiles the library: a few minutes on 2 cores), so it runs when
INFINIOP_TEST_INSTALL=1 (scripts/test.sh sets it unless INFINIOP_QUICK=1).
The CUDA backend is left out of this build to keep it short
(-C cmake.define.INFINIOP_CUDA=OFF); INFINIOP_TEST_INSTALL_CUDA=1 keeps the
default (AUTO: built when nvcc is found).

When the interpreter running the tests has PyTorch, the fresh venv sees it
too (a .pth file naming its site-packages), so the build (under pip's build
isolation) compiles the native PyTorch binding, libinfiniop_torch.so; the
test then checks that torch.ops.infiniop.* are the native operators and that
nothing in the wheel needs a library path: it runs with LD_LIBRARY_PATH
unset, and no bundled library links a libcudart (the CUDA runtime is linked
statically).
"""

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

slow = pytest.mark.skipif(
    os.environ.get("INFINIOP_TEST_INSTALL") != "1",
    reason="slow (builds the library in a fresh venv): set INFINIOP_TEST_INSTALL=1 (scripts/test.sh does)",
)


def _tomllib():
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        tomllib = pytest.importorskip("tomli")
    return tomllib


def test_root_and_python_pyproject_agree():
    tomllib = _tomllib()
    py = tomllib.loads((REPO / "python" / "pyproject.toml").read_text())
    root = tomllib.loads((REPO / "pyproject.toml").read_text())
    for t in (py, root):
        t["project"].pop("readme")
        sk = t["tool"]["scikit-build"]
        sk.pop("build-dir")
        sk["cmake"].pop("source-dir")
        sk["wheel"].pop("packages")
        t["tool"].pop("pytest")
    assert py == root
    # and the C library's version
    cm = (REPO / "CMakeLists.txt").read_text()
    assert f"VERSION {py['project']['version']} " in cm


def _clean_checkout(dst: Path):
    files = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=REPO, check=True, capture_output=True,
    ).stdout.split(b"\0")
    for f in files:
        if not f:
            continue
        src = REPO / f.decode()
        if not src.is_file():  # deleted in the working tree
            continue
        out = dst / f.decode()
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, out)


def _run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    assert p.returncode == 0, f"{' '.join(map(str, cmd))} failed:\n{p.stdout[-4000:]}\n{p.stderr[-4000:]}"
    return p


@slow
@pytest.mark.skipif(shutil.which("git") is None or not (REPO / ".git").exists(), reason="needs a git checkout")
def test_fresh_venv_pip_install(tmp_path):
    src = tmp_path / "src"
    _clean_checkout(src)
    venv = tmp_path / "venv"
    _run([sys.executable, "-m", "venv", str(venv)])
    py = venv / "bin" / "python"
    torch_site = None
    try:
        import torch

        torch_site = str(Path(torch.__file__).resolve().parents[1])
    except ImportError:
        pass
    if torch_site:
        site = _run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip()
        Path(site, "outer_site.pth").write_text(torch_site + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("INFINIOP_", "PYTHON")) and k != "LD_LIBRARY_PATH"}
    env["CMAKE_BUILD_PARALLEL_LEVEL"] = env.get("CMAKE_BUILD_PARALLEL_LEVEL", str(min(os.cpu_count() or 2, 4)))
    cfg = [] if os.environ.get("INFINIOP_TEST_INSTALL_CUDA") == "1" else ["-C", "cmake.define.INFINIOP_CUDA=OFF"]
    dist = tmp_path / "dist"
    _run([str(py), "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(dist), *cfg, "./python"], cwd=src, env=env)

    wheels = list(dist.glob("infiniop-*.whl"))
    assert len(wheels) == 1, wheels
    names = set(zipfile.ZipFile(wheels[0]).namelist())
    for n in ("infiniop/__init__.py", "infiniop/torch_ops.py", "infiniop/lib/libinfiniop.so", "infiniop/lib/libinfinirt.so"):
        assert n in names, (n, sorted(names))
    assert "py3-none-linux" in wheels[0].name
    x = tmp_path / "whl"
    zipfile.ZipFile(wheels[0]).extractall(x)
    if shutil.which("readelf"):
        dyn = _run(["readelf", "-d", str(x / "infiniop/lib/libinfiniop.so")]).stdout
        assert "$ORIGIN" in dyn and "libinfinirt.so" in dyn, dyn
        for lib in ("libinfiniop.so", "libinfinirt.so"):
            dyn = _run(["readelf", "-d", str(x / "infiniop/lib" / lib)]).stdout
            assert "libcudart" not in dyn, dyn  # the CUDA runtime is linked in, not needed beside
            assert "/usr/local/cuda" not in dyn and "targets/x86_64-linux" not in dyn, dyn  # no toolkit run path
    if torch_site:
        assert "infiniop/lib/libinfiniop_torch.so" in names, sorted(names)
        if shutil.which("readelf"):
            dyn = _run(["readelf", "-d", str(x / "infiniop/lib/libinfiniop_torch.so")]).stdout
            assert "libtorch_cpu.so" in dyn and "$ORIGIN" in dyn and torch_site not in dyn, dyn

    # --ignore-installed: the outer site (torch's, via outer_site.pth) may hold
    # this package's Python files (scripts/test.sh installs them there); pip
    # would take that for this wheel already installed and skip it.
    _run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--ignore-installed", str(wheels[0])], env=env)
    code = (
        "import numpy as np, infiniop, sys\n"
        "y = infiniop.sigmoid(np.array([0.0, 2.0, -2.0], np.float32))\n"
        "np.testing.assert_allclose(y, 1 / (1 + np.exp(-np.array([0.0, 2.0, -2.0]))), rtol=1e-6)\n"
        "print(infiniop.library_path()); print(infiniop.__version__, infiniop.library_version(), infiniop.cpu_isa())\n"
    )
    work = tmp_path / "elsewhere"
    work.mkdir()
    out = _run([str(py), "-c", code], cwd=work, env=env).stdout.split("\n")
    site = _run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['platlib'])"], env=env).stdout.strip()
    assert out[0].startswith(site) and out[0].endswith("infiniop/lib/libinfiniop.so"), out
    ver, libver, isa = out[1].split()
    assert ver == libver
    assert isa in ("avx512bf16", "avx512", "avx2", "generic")

    if torch_site:
        code_t = (
            "import torch, infiniop, infiniop.torch_ops as t\n"
            "assert t.NATIVE, infiniop._native.info()\n"
            "x = torch.randn(4, 64)\n"
            "torch.testing.assert_close(torch.ops.infiniop.silu(x), torch.nn.functional.silu(x))\n"
            "print(infiniop._native.info()['path'])\n"
        )
        out = _run([str(py), "-c", code_t], cwd=work, env=env).stdout.strip()
        assert out.startswith(site) and out.endswith("libinfiniop_torch.so"), out

    # INFINIOP_LIBRARY_PATH still overrides the bundled copy; a wrong one is an error
    env2 = dict(env, INFINIOP_LIBRARY_PATH=str(x / "infiniop" / "lib"))
    out = _run([str(py), "-c", code], cwd=work, env=env2).stdout.split("\n")
    assert out[0].startswith(str(x)), out
    env3 = dict(env, INFINIOP_LIBRARY_PATH=str(tmp_path / "nowhere"))
    p = subprocess.run([str(py), "-c", code], cwd=work, env=env3, capture_output=True, text=True)
    assert p.returncode != 0 and "LibraryNotFoundError" in p.stderr and "nowhere" in p.stderr
