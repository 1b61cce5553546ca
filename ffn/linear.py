"""An affine layer ``y = x @ W + b`` in the row-vector convention."""

from __future__ import annotations

from ffn import _validate as check
from ffn._layer import Layer, forward_pass, one_thread, or_zero, quiet
from ffn._validate import FloatArray


class Linear(Layer):
    """``y = x @ W + b``, with ``W`` of shape ``(in_features, out_features)``.

    ``W`` is the transpose of PyTorch's ``nn.Linear.weight``.

    Args:
        W: weight matrix ``(in_features, out_features)``.
        b: bias ``(out_features,)``, or None.

    Raises:
        TypeError: for data that is not real numbers, or of two dtypes.
        ValueError: for a ``W`` that is not 2-D, or a ``b`` of the wrong shape.
    """

    W: FloatArray  # (in_features, out_features), a read-only copy
    b: FloatArray | None  # (out_features,)

    def __init__(self, W: object, b: object = None) -> None:
        axes = {"W": "in_features out_features", "b": "out_features"}
        w, size = check.params({"W": W, "b": b}, axes, ("b",))
        self.in_features, self.out_features = size["in_features"], size["out_features"]
        super().__init__(check.shared_dtype(w), self.in_features, self.out_features,
                         "in_features", w)

    @forward_pass
    @quiet
    def forward(self, x: object) -> FloatArray:
        """``y = x @ W + b`` for ``x`` of shape ``(..., in_features)``."""
        x = self._flatten(x)  # (N, in_features)
        self._save_for_backward(x)
        return self._unflatten(x @ self.W + or_zero(self.b))  # (..., out_features)

    @one_thread
    @quiet
    def backward(self, dy: object) -> FloatArray:
        """Gradients of the last forward: sets ``grads`` (W, b) and returns ``dL/dx``."""
        dy = self._flatten_grad(dy)  # (N, out_features)
        (x,) = self._saved_tensors
        self._set_grads(W=x.T @ dy, b=dy.sum(axis=0))
        return self._unflatten(dy @ self.W.T)  # (..., in_features)

    def __repr__(self) -> str:
        return (f"Linear(in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.b is not None}, dtype={self.dtype})")
