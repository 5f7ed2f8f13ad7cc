"""Print the CUDA elementwise plan (INFINIOP_VERBOSE=1 line) the library
chooses for issue #19's silu/sigmoid shapes and a few views, one line each.

    PYTHONPATH=python INFINIOP_LIBRARY_PATH=build-gpu python3 bench/elt_plans.py

Needs a CUDA device and torch; runs each call once (no timing)."""
import os

os.environ["INFINIOP_VERBOSE"] = "1"

import torch  # noqa: E402

import infiniop  # noqa: E402


def main():
    d, b, h, f = "cuda", torch.bfloat16, torch.float16, torch.float32
    cases = [
        torch.randn(65536, dtype=h, device=d),  # decode-sized contiguous
        torch.randn(1, 4096, dtype=b, device=d),
        torch.randn(1000001, dtype=f, device=d),
        torch.randn(1, 7814, dtype=b, device=d).expand(3571, 7814),  # rows broadcast along dim 0
        torch.randn(5000, 5000, dtype=b, device=d).t(),  # transposed input
        torch.randn(4099, 1031, dtype=h, device=d).t(),  # transposed, odd extents
        torch.randn(8, 1024, 32, 128, dtype=h, device=d).permute(0, 2, 1, 3),  # keeps the last dim
        torch.randn(4097, 3585, dtype=b, device=d)[1:, 1:],  # sliced rows, odd offset
        torch.randn(1000, 1, dtype=f, device=d).expand(1000, 1000),  # broadcast along the last dim
    ]
    for x in cases:
        infiniop.silu(x, out=torch.empty(x.shape, dtype=x.dtype, device=d))
    torch.cuda.synchronize()


if __name__ == "__main__":
    main()
