"""The operator functions' names: one list for the __all__ of both modules
that define them, infiniop._ops (any array) and infiniop.torch_ops (PyTorch
tensors), which do not import each other."""

OPERATORS = [
    "add_rms_norm",
    "layer_norm",
    "causal_softmax",
    "causal_softmax_",
    "silu",
    "silu_",
    "sigmoid",
    "sigmoid_",
]
