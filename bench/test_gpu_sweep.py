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


def test_issue19_cases_present():
    names = {c.name for c in ALL}
    for op in gs.OPS:
        for r in (1, 2, 4, 8):
            assert f"{op} bf16 {r}x4096" in names, (op, r)
        assert f"{op} bf16 1x65536" in names, op
        assert any(c.cat == "odd" for c in by_op(op)), op
    for n in ("causal_softmax f16 12x197x197", "causal_softmax bf16 32x7x1031", "causal_softmax f16 40x777x777",
              "causal_softmax bf16 2x16x1500x1500", "sigmoid bf16 5000x5000 transposed", "silu bf16 3571x7814 bcast:0",
              "sigmoid bf16 3571x7814 bcast:0", "layer_norm bf16 4096x768 transposed", "add_rms_norm bf16 256x65536",
              "add_rms_norm bf16 4096x768", "layer_norm bf16 8192x768"):
        assert n in names, n


def test_case_spec_round_trip_and_seed():
    for c in ALL[::7]:
        d = gs.Case.from_spec(c.spec())
        assert d.key() == c.key() and d.name == c.name
        assert gs.seed_of(c) == gs.seed_of(d)


def test_two_shards_cover_the_list():
    class A:
        seed, random, ops, category, cases, device, quick = 0, 16, None, None, None, "cuda", False
    a, b = A(), A()
    a.shard, b.shard = "0/2", "1/2"
    names = [c.name for c in gs.select(a)] + [c.name for c in gs.select(b)]
    assert sorted(names) == sorted(c.name for c in ALL) and len(set(names)) == len(names)


def _torch():
    try:
        import torch
        return torch
    except Exception:
        return None


@pytest.mark.skipif(_torch() is None, reason="needs torch")
def test_peers_do_the_library_work():
    """Eager silu/sigmoid write into the set's own output (out=); every peer
    output is contiguous, also for transposed and broadcast inputs; the
    timing rounds give every implementation a time."""
    import gpu_harness as H
    torch = _torch()
    dev = torch.device("cpu")
    for case in (gs.Case("sigmoid", "f32", (33, 17), layout="transposed"), gs.Case("silu", "f32", (9, 31), layout="bcast:0"),
                 gs.Case("layer_norm", "f32", (12, 40), layout="transposed"),
                 gs.Case("causal_softmax", "f32", (3, 5, 9), layout="permuted:1,0,2"),
                 gs.Case("add_rms_norm", "f32", (4, 3, 16), layout="permuted:1,0,2")):
        B = H.build(torch, case, dev, 2, None, seed=3)
        for name, f in B.eager.items():
            out = f(1)
            assert all(o.is_contiguous() for o in out), (case.name, name)
            assert H.check(torch, case, [(n, t if n in ("w", "bias") else t) for n, t in B.check_inputs()],
                           f(0)).ok, (case.name, name)
            if case.op in ("silu", "sigmoid"):
                assert out[0].data_ptr() == B.sets[1]["y"].data_ptr(), case.name
        nat = B.natural(*B.args(0))
        assert all(o.is_contiguous() for o in nat), case.name
        assert H.check(torch, case, B.check_inputs(), nat).ok, case.name
    t = H.Timer(torch, dev, 3).rounds({"a": (lambda i: torch.ones(8), None), "b": (lambda i: 1 / 0, None)}, 2, False)
    assert t["a"][0] > 0 and isinstance(t["b"], ZeroDivisionError)


def test_merge_and_text_chart(tmp_path):
    import gpu_harness as H
    def res(name, op, ratio, status="ok"):
        return {"case": name, "op": op, "status": status, "bytes": 1000, "impls": {"infiniop": {"time_us": 1.0, "timing": "graph"}},
                "ratio": ratio, "pct_copy": 50.0, "category": "x", "errors": [], "notes": []}
    # "b" not run in the first file (its budget), run in the second: the run counts
    for k, rs in enumerate(([res("a", "silu", 0.5), res("b", "silu", None, "not run")],
                            [res("b", "silu", 2.0), res("c", "sigmoid", 1.0)])):
        d = tmp_path / f"s{k}"
        d.mkdir()
        json.dump({"device": "d", "device_info": "d", "torch": "t", "cuda": "c", "commit": "x", "cpu_check": True,
                   "shard": f"{k}/2", "elapsed_s": 1.0, "cases": rs, "summary": H.summarize(rs)}, open(d / "sweep.json", "w"))
    r = subprocess.run([sys.executable, os.path.join(HERE, "gpu_sweep.py"), "--merge", str(tmp_path / "s0" / "sweep.json"),
                        str(tmp_path / "s1" / "sweep.json"), "--out", str(tmp_path / "m")], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stderr
    doc = json.load(open(tmp_path / "m" / "sweep.json"))
    assert len(doc["cases"]) == 3 and [c["status"] for c in doc["cases"]] == ["ok"] * 3
    assert abs(doc["summary"]["silu"]["geomean_ratio"] - 1.0) < 1e-9 and doc["summary"]["silu"]["min_ratio"] == 0.5
    txt = (tmp_path / "m" / "sweep-chart.txt").read_text()
    assert "silu: min 0.50x, geomean 1.00x" in txt


def test_compare_flags_only_cases_slower_in_time_and_over_copy(tmp_path):
    def res(name, lib, copy, status="ok"):
        return {"case": name, "status": status, "impls": {"infiniop": {"time_us": lib}, "copy": {"time_us": copy}}}
    base = [res("same", 10.0, 5.0), res("slower", 10.0, 5.0), res("card", 10.0, 5.0), res("faster", 10.0, 5.0),
            res("gone", 1.0, 1.0)]
    new = [res("same", 10.2, 5.0), res("slower", 12.0, 5.0), res("card", 12.0, 6.0), res("faster", 5.0, 5.0),
           res("new", 1.0, 1.0), res("failed", 99.0, 1.0, status="failed")]
    paths = []
    for k, cs in enumerate((base, new)):
        p = tmp_path / f"{k}.json"
        json.dump({"commit": str(k), "device_info": "d", "cases": cs}, open(p, "w"))
        paths.append(str(p))
    r = subprocess.run([sys.executable, os.path.join(HERE, "gpu_sweep.py"), "--compare", *paths, "--out", str(tmp_path)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    # "card": 1.2x the time, but its copy also took 1.2x: not slower
    assert r.stdout.strip().splitlines()[-1] == "slower: ^(slower)$"
    md = (tmp_path / "compare.md").read_text()
    assert "4 cases in both" in md and "| slower | 10.00 | 12.00 | 1.200 | 1.200 |" in md
    assert "| card | 10.00 | 12.00 | 1.200 | 1.000 |" in md and "gone" not in md and "failed" not in md
