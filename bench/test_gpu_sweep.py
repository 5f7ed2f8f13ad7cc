"""Tests of bench/gpu_sweep.py's case generator (no GPU, no torch needed),
and, where torch and the CPU library are there, one end-to-end CPU run.

    python3 -m pytest -q bench/test_gpu_sweep.py
"""

import json
import math
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gpu_sweep as gs  # noqa: E402

ALL = gs.cases()


def by_op(op, cs=ALL):
    return [c for c in cs if c.op == op]


def test_deterministic_for_a_seed():
    a = [(c.name, c.cat, {k: v.as_dict() for k, v in c.views().items()}) for c in gs.cases(seed=7)]
    b = [(c.name, c.cat, {k: v.as_dict() for k, v in c.views().items()}) for c in gs.cases(seed=7)]
    assert a == b
    assert [c.name for c in gs.cases(seed=8)] != [c.name for c in gs.cases(seed=7)]
    assert [c.name for c in gs.run_order(gs.cases(seed=7))] == [c.name for c in gs.run_order(gs.cases(seed=7))]


def test_counts_and_no_duplicates():
    for op in gs.OPS:
        mine = by_op(op)
        assert len([c for c in mine if c.cat != "random"]) >= 40, op
        assert len([c for c in mine if c.cat == "random"]) == 16, op
        assert len({c.key() for c in mine}) == len(mine), op
    assert len(gs.run_order(ALL)) == len(ALL)
    assert {c.name for c in gs.run_order(ALL)} == {c.name for c in ALL}


def test_issue_named_cases_present():
    names = {c.name for c in ALL}
    for n in ("sigmoid bf16 5000x5000 transposed", "silu f32 1000001", "causal_softmax f16 12x197x197",
              "silu f16 65536", "causal_softmax f16 40x777x777", "causal_softmax bf16 2x16x1500x1500",
              "layer_norm bf16 8192x1280", "layer_norm bf16 12608x768", "add_rms_norm bf16 512x14336",
              "add_rms_norm bf16 256x65536"):
        assert n in names, n
    assert gs.run_order(ALL)[0].cat == "named"


def test_categories_covered():
    for op in gs.OPS:
        mine = by_op(op)
        cats = {c.cat for c in mine}
        assert {"named", "decode", "view", "dtype", "random", "tiny"} <= cats, (op, cats)
        kinds = {c.layout.split(":")[0] for c in mine}
        assert {"contig", "sliced", "permuted"} <= kinds, (op, kinds)
        if op != "add_rms_norm":  # add_rms_norm needs a unit last stride (SPEC)
            assert "transposed" in kinds, op
        if op in ("silu", "sigmoid"):
            assert "bcast" in kinds
            assert {c.dtype for c in mine} == {"f16", "bf16", "f32", "f64"}
            assert any(len(c.shape) == 0 for c in mine) and any(len(c.shape) == 1 for c in mine)
            assert any(len(c.shape) >= 3 for c in mine)
        else:
            assert {c.dtype for c in mine} == {"f16", "bf16", "f32"}, op
        if op in ("add_rms_norm", "layer_norm", "silu", "sigmoid"):
            ds = {c.shape[-1] for c in mine if c.shape}
            for D in (768, 896, 1280, 1536, 3584, 5120, 7168, 14336):
                assert D in ds, (op, D)
        if op in ("add_rms_norm", "layer_norm"):
            rows = {math.prod(c.shape[:-1]) for c in mine}
            assert 1 in rows and 65536 in rows, op
            assert any(c.shape[-1] >= 32768 and math.prod(c.shape[:-1]) <= 64 for c in mine), op  # few long rows
            assert any(len(c.shape) == 3 for c in mine) and any(len(c.shape) == 4 for c in mine), op
            assert {"contig", "strided", "bcast"} <= {c.wlayout for c in mine}, op
    pairs = {(c.dtype, c.wdtype) for c in by_op("add_rms_norm")}
    assert pairs == {("f16", "f16"), ("f16", "bf16"), ("f16", "f32"), ("bf16", "bf16"), ("bf16", "f16"),
                     ("bf16", "f32"), ("f32", "f32")}
    assert any(not c.bias for c in by_op("layer_norm"))
    sm = by_op("causal_softmax")
    assert all(c.shape[-1] >= c.shape[-2] >= 1 for c in sm)
    assert any(c.shape[-2] % 2 and c.shape[-1] % 2 and c.shape[-1] > c.shape[-2] > 1 for c in sm)
    assert any(c.shape[-2] == 1 for c in sm) and any(len(c.shape) == 4 for c in sm) and any(len(c.shape) == 2 for c in sm)


def test_byte_range():
    for op in gs.OPS:
        bs = [c.nbytes() for c in by_op(op)]
        assert min(bs) < 16e3, op
        assert max(bs) <= gs.MAX_BYTES, op
        assert max(bs) >= 0.4e9, op
        assert sum(b >= gs.BIG_BYTES for b in bs) >= 5, op
        assert sum(b < gs.SMALL_BYTES for b in bs) >= 5, op
    # the largest storage fits an H100 many times over
    assert max(v.storage * gs.ITEMSIZE[c.dtype] for c in ALL for v in c.views().values()) <= 2.2e9


def test_views_valid_for_their_storage():
    for c in ALL:
        for name, v in c.views().items():
            assert len(v.shape) == len(v.strides), (c.name, name)
            assert v.in_bounds(), (c.name, name, v.as_dict())
            bcast = (name in ("w", "bias") and c.wlayout == "bcast") or (name not in ("w", "bias") and c.layout.startswith("bcast"))
            if not bcast:
                assert v.non_overlapping(), (c.name, name, v.as_dict())
            if c.op == "add_rms_norm" and name in ("a", "b") and c.shape[-1] > 1:
                assert v.strides[-1] == 1, c.name  # SPEC: unit last stride
            if name in ("w", "bias"):
                assert v.shape == (c.shape[-1],)
            else:
                assert v.shape == c.shape
        assert c.input_view().contiguous() == (c.layout == "contig") or c.input_view().numel() <= 1 or \
            c.layout.startswith("permuted"), c.name


def test_view_helpers_by_enumeration():
    """in_bounds / non_overlapping agree with enumerating every address."""
    import itertools
    shapes = [(3, 4), (2, 3, 5), (4, 1, 3)]
    for shp in shapes:
        nd = len(shp)
        vs = [gs.v_contig(shp), gs.v_transposed(shp), gs.v_sliced(shp, 3, 2, 1, 2), gs.v_sliced(shp, 1, 1, 2, 1)]
        vs += [gs.v_permuted(shp, list(p)) for p in itertools.permutations(range(nd))]
        vs += [gs.v_bcast(shp, d) for d in range(nd)]
        for v in vs:
            addrs = [v.offset + sum(i * s for i, s in zip(idx, v.strides)) for idx in itertools.product(*map(range, shp))]
            assert all(0 <= a < v.storage for a in addrs) == v.in_bounds()
            if v.non_overlapping():
                assert len(set(addrs)) == len(addrs)
            assert v.unique() == len(set(addrs))


def test_chunks_cover_every_element_once():
    for shape, keep, limit in (((5, 7, 3), 1, 8), ((2, 3, 4, 5), 2, 25), ((10,), 0, 3), ((), 0, 4), ((4, 6), 1, 100)):
        seen = {}
        import itertools
        for idx in gs.chunks(shape, keep, limit):
            full = list(idx) + [slice(None)] * (len(shape) - len(idx))
            ranges = [range(*s.indices(n)) for s, n in zip(full, shape)]
            n = 0
            for e in itertools.product(*ranges):
                seen[e] = seen.get(e, 0) + 1
                n += 1
            assert n <= max(limit, math.prod(shape[len(shape) - keep:]) if keep else 1)
        assert len(seen) == math.prod(shape) and set(seen.values()) == {1}, shape


def test_quick_cpu_selection_and_shards():
    q = gs.quick_cpu_cases(ALL)
    assert {c.op for c in q} == set(gs.OPS)
    assert all(c.nbytes() <= 2e6 for c in q)
    order = gs.run_order(ALL)
    shards = [order[k::3] for k in range(3)]
    assert sorted(c.name for s in shards for c in s) == sorted(c.name for c in order)


def test_list_runs_without_torch():
    r = subprocess.run([sys.executable, os.path.join(HERE, "gpu_sweep.py"), "--list"], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    assert "add_rms_norm bf16 256x65536" in r.stdout and "cases; per operator" in r.stdout


def _cpu_library():
    try:
        import torch  # noqa: F401
        sys.path.insert(0, os.path.join(HERE, "..", "python"))
        import infiniop
        infiniop.library_path()
        return True
    except Exception:
        return False


@pytest.mark.skipif(not _cpu_library(), reason="needs torch and the library (INFINIOP_LIBRARY_PATH)")
def test_cpu_end_to_end(tmp_path):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(HERE, "..", "python") + os.pathsep + env.get("PYTHONPATH", "")
    r = subprocess.run([sys.executable, os.path.join(HERE, "gpu_sweep.py"), "--device", "cpu", "--quick",
                        "--compile", "off", "--category", "view,tiny", "--out", str(tmp_path)],
                       capture_output=True, text=True, timeout=600, env=env)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    doc = json.load(open(tmp_path / "sweep.json"))
    assert doc["cases"] and all(c["check"]["ok"] for c in doc["cases"])
    assert set(doc["summary"]) == set(gs.OPS)
    assert (tmp_path / "sweep.md").exists()
