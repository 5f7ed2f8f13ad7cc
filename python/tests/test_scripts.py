"""scripts/install-deps.sh: which packages each set installs, and what it says
when it cannot install them. Runs the script with stand-ins for dpkg-query,
id, sudo and apt-get on PATH (nothing is installed for real)."""

import os
import subprocess
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "install-deps.sh"
BENCH = ["cmake", "gcc", "make"]
TEST_ONLY = ["g++", "python3", "python3-venv", "pkg-config", "clang-14", "libclang-rt-14-dev", "libomp-14-dev",
             "llvm-14", "valgrind"]


def _stubs(d: Path, uid: int, installed, sudo_ok: bool):
    d.mkdir(exist_ok=True)
    log = d / "apt.log"
    scripts = {
        # dpkg-query -W -f='${Status}' PKG: "installed" for the listed packages
        "dpkg-query": 'for p; do :; done; case " $STUB_INSTALLED " in *" $p "*) printf "install ok installed";; *) exit 1;; esac',
        "id": f'[ "$1" = -u ] && echo {uid} || echo "uid={uid}"',
        "sudo": 'if [ "$1" = -n ] && [ "$2" = true ]; then exit %d; fi; shift; exec "$@"' % (0 if sudo_ok else 1),
        "apt-get": f'echo "apt-get $*" >> {log}',
    }
    for name, body in scripts.items():
        p = d / name
        p.write_text("#!/bin/sh\n" + body + "\n")
        p.chmod(0o755)
    env = dict(os.environ, PATH=f"{d}:/usr/bin:/bin", STUB_INSTALLED=" ".join(installed))
    return env, log


def _run(tmp_path, args, uid=0, installed=(), sudo_ok=False):
    env, log = _stubs(tmp_path / "bin", uid, installed, sudo_ok)
    p = subprocess.run(["bash", str(SCRIPT), *args], env=env, capture_output=True, text=True, timeout=60)
    return p, (log.read_text() if log.exists() else "")


def test_nothing_to_do_is_silent(tmp_path):
    p, apt = _run(tmp_path, ["test"], installed=BENCH + TEST_ONLY + ["libdnnl-dev"])
    assert p.returncode == 0 and p.stdout == "" and p.stderr == "" and apt == ""


@pytest.mark.parametrize("which,expected", [("bench", BENCH), ("test", BENCH + TEST_ONLY), ("", BENCH + TEST_ONLY)])
def test_root_installs_exactly_its_set_and_says_so(tmp_path, which, expected):
    p, apt = _run(tmp_path, [which] if which else [], installed=["libdnnl-dev"])
    assert p.returncode == 0, p.stderr
    assert f"installing {' '.join(expected)}" in p.stdout
    install_lines = [line for line in apt.splitlines() if " install " in line]
    assert len(install_lines) == 1
    assert install_lines[0].split()[-len(expected):] == expected
    if which == "bench":
        assert "clang" not in apt and "valgrind" not in apt and "python3" not in apt


def test_not_root_without_sudo_names_the_packages(tmp_path):
    p, apt = _run(tmp_path, ["bench"], uid=1000, installed=["make"])
    assert p.returncode == 1
    assert "missing packages: cmake gcc" in p.stderr
    assert "sudo apt-get install cmake gcc" in p.stderr
    assert apt == ""  # apt-get was never run (no raw lock error)


def test_not_root_with_sudo_uses_it(tmp_path):
    p, apt = _run(tmp_path, ["bench"], uid=1000, installed=["cmake", "gcc", "libdnnl-dev"], sudo_ok=True)
    assert p.returncode == 0, p.stderr
    assert "installing make" in p.stdout and "install -y -qq --no-install-recommends make" in apt


def test_not_root_only_optional_missing_continues(tmp_path):
    p, apt = _run(tmp_path, ["bench"], uid=1000, installed=BENCH)
    assert p.returncode == 0
    assert "optional libdnnl-dev" in p.stderr and apt == ""


def test_unknown_set_is_a_usage_error(tmp_path):
    p, _ = _run(tmp_path, ["everything"])
    assert p.returncode == 2 and "usage" in p.stderr
