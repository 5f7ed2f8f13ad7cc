#!/usr/bin/env python3
"""Write the seed corpus of fuzz/fuzz_ops.c into fuzz/corpus/.

Each seed is one hand-made case in the byte format of fuzz_ops.c (see
fuzz/README.md): valid calls of every operator in every dtype, strided and
negative layouts, broadcasting, exact in-place and shifted (partially
overlapping) outputs, and the error paths (NULL descriptors, bad dtypes,
huge shapes, strides whose byte extent overflows, bad epsilon). libFuzzer
mutates from here. Re-run after changing the format; crash reproducers found
by fuzzing are added as corpus/crash-* files by hand and never regenerated.
"""
import hashlib, os, struct, sys

OPS = {"add_rms_norm": 0, "causal_softmax": 1, "layer_norm": 2, "silu": 3, "sigmoid": 4}
NT = {"add_rms_norm": 5, "causal_softmax": 2, "layer_norm": 6, "silu": 2, "sigmoid": 2}
F16, BF16, F32, F64 = 0, 1, 2, 3  # index into fuzz_ops.c float_types

def dim(n):
    if n <= 8: return bytes([n])
    if n <= 56: return bytes([0xC0 + n - 9])
    special = {127: 0xF6, 128: 0xF7, 1023: 0xF8, 1024: 0xF9, 4097: 0xFA, 65537: 0xFB, 1 << 31: 0xFC, 1 << 32: 0xFD}
    if n in special: return bytes([special[n]])
    return b"\xfe" + struct.pack("<Q", n)

def dtype(code):
    """code: 0-3 a float type; ('enum', v) any enum value 0..23; ('raw', v) a 32-bit value."""
    if isinstance(code, int): return bytes([code])
    kind, v = code
    if kind == "enum": return bytes([0xC0 + v])  # 0xC0 % 24 == 0
    return b"\xf0" + struct.pack("<i", v)

def raw_stride(s):
    if -9 <= s <= 9: return bytes([s + 9])
    return b"\xfe" + struct.pack("<q", s)

def tensor(shape_mode=1, mutate=None, strides=None, natural=None, dt=None, null=False, free=None, bcast=None):
    """shape_mode 1: derived from the primary shape by the tensor's role.
    free: explicit shape (list). strides: raw list; natural: per-dim bytes
    (pad | 4 for negative); neither: NULL strides (contiguous)."""
    f = 0
    body = b""
    if free is not None:
        f |= 0
        body += bytes([len(free)]) + b"".join(dim(n) for n in free)
    else:
        f |= shape_mode
        if bcast is not None:
            f = (f & ~3) | 2
            body += bytes(bcast)
        if mutate is not None:
            f |= 4
            body += bytes([mutate[0]]) + dim(mutate[1])
    if natural is not None:
        f |= 2 << 3
        body += bytes(natural)
    elif strides is not None:
        f |= 3 << 3
        body += b"".join(raw_stride(s) for s in strides)
    if dt is not None:
        f |= 0x20
        body += dtype(dt)
    if null:
        f |= 0xC0
    return bytes([f]) + body

def case(op, shape, dt, tensors=None, flags=0, alias_pick=0, delta=0, eps_mode=0, eps=None, tail=b""):
    out = bytes([OPS[op], flags, alias_pick, delta & 0xFF, eps_mode])
    if eps_mode & 3 == 2:
        out += struct.pack("<f", eps)
    out += bytes([len(shape)]) + b"".join(dim(n) for n in shape) + dtype(dt)
    ts = tensors if tensors is not None else [tensor() for _ in range(NT[op])]
    out += b"".join(ts)
    out += struct.pack("<Q", 0x9E3779B97F4A7C15) + tail
    return out

def seeds():
    s = []
    for op in OPS:
        for dt in (F16, BF16, F32, F64):
            shape = {"causal_softmax": [2, 3, 5], "silu": [3, 7], "sigmoid": [2, 3, 4]}.get(op, [3, 17])
            s.append(case(op, shape, dt, flags=4))
        # strided and negative layouts (natural strides with padding / negation)
        nt = NT[op]
        nat = [tensor(natural=[1, 4 | 2, 0]) for _ in range(nt)]
        shape3 = [2, 3, 4] if op != "causal_softmax" else [2, 3, 5]
        s.append(case(op, shape3, F32, tensors=nat))
        # exact in-place (alias mode 2) of output 0 onto each input
        for i in range(nt):
            s.append(case(op, shape3, F16, flags=2 | 4, alias_pick=i * {"add_rms_norm": 2, "layer_norm": 3}.get(op, 1)))
        # shifted (partial overlap) outputs
        for d in (1, -1, 3, 64):
            s.append(case(op, shape3, F32, flags=3, alias_pick=nt - 1, delta=d))
        # empty tensors and a zero-length reduced dimension
        s.append(case(op, [0, 5], F32))
        s.append(case(op, [3, 0], F32))
        s.append(case(op, [], F32))
        s.append(case(op, [1], F32))
        # huge shapes and overflowing strides
        s.append(case(op, [1 << 32, 1 << 32, 5], F32))
        s.append(case(op, [3, 4], F32, tensors=[tensor(strides=[1 << 62, 1]) for _ in range(nt)]))
        s.append(case(op, [3, 4], F16, tensors=[tensor(strides=[-(1 << 61), -1]) for _ in range(nt)]))
        s.append(case(op, [2, 4], F32, tensors=[tensor(strides=[0, 1]) for _ in range(nt)]))
        # bad dtypes, NULL descriptors, mismatched shapes
        s.append(case(op, [2, 4], ("enum", 0)))
        s.append(case(op, [2, 4], ("raw", -7)))
        s.append(case(op, [2, 4], ("enum", 5)))
        s.append(case(op, [2, 4], F32, tensors=[tensor(null=(i == 0)) for i in range(nt)]))
        s.append(case(op, [2, 4], F32, tensors=[tensor(mutate=(1, 5)) if i == 1 else tensor() for i in range(nt)]))
        s.append(case(op, [2, 4], F32, tensors=[tensor(dt=F16) if i == nt - 1 else tensor() for i in range(nt)]))
        # NULL data pointer, oversized workspace, stale handle
        s.append(case(op, [2, 4], F32, flags=0x08, tail=b"\x00"))
        s.append(case(op, [2, 4], F32, flags=0x40 | 0x80, tail=struct.pack("<Q", 1 << 40)))
        # a pointer off by one byte (misaligned) on each tensor
        for i in range(nt):
            s.append(case(op, [2, 4], F16 if i % 2 else F32, flags=0x20, tail=bytes([i])))
    # epsilon: NaN, negative, infinity, huge
    for e in (float("nan"), -1.0, float("inf"), 1e30):
        s.append(case("add_rms_norm", [2, 8], F32, eps_mode=2, eps=e))
        s.append(case("layer_norm", [2, 8], F32, eps_mode=2, eps=e))
    # add_rms_norm weight dtypes; layer_norm without bias; bias pointer mismatch
    for a, w in ((F16, BF16), (BF16, F16), (F16, F32), (F32, F16)):
        s.append(case("add_rms_norm", [2, 33], a, tensors=[tensor() for _ in range(4)] + [tensor(dt=w)]))
    s.append(case("layer_norm", [4, 9], F16, tensors=[tensor() for _ in range(5)] + [tensor(null=True)]))
    s.append(case("layer_norm", [4, 9], F16, flags=0x10, tensors=[tensor() for _ in range(5)] + [tensor(null=True)]))
    # broadcasting input of the activations
    for op in ("silu", "sigmoid"):
        s.append(case(op, [3, 4, 5], F32, tensors=[tensor(), tensor(bcast=[1, 0b010])]))
        s.append(case(op, [3, 4, 5], BF16, tensors=[tensor(), tensor(strides=[0, 0, 1])]))
        s.append(case(op, [3, 4, 5], F64, tensors=[tensor(), tensor(free=[4, 1])]))
    # causal softmax with T < S, and long rows
    s.append(case("causal_softmax", [5, 3], F32))
    s.append(case("causal_softmax", [2, 1, 1025], F16))
    return s

def main():
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus")
    os.makedirs(out, exist_ok=True)
    for f in os.listdir(out):
        if f.startswith("seed-"): os.remove(os.path.join(out, f))
    for data in seeds():
        name = "seed-" + hashlib.sha1(data).hexdigest()[:16]
        with open(os.path.join(out, name), "wb") as fh:
            fh.write(data)
    print(f"{len(seeds())} seeds in {out}")

if __name__ == "__main__":
    sys.exit(main())
