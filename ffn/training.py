"""Fitting a feed-forward block to data: mean squared error, SGD or Adam, ffn's own backward."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ffn import _validate as check
from ffn._layer import quiet
from ffn._validate import FloatArray
from ffn.feedforward import FeedForward

OPTIMIZERS: tuple[str, ...] = ("adam", "sgd")
"""Valid ``optimizer`` names for ``fit``."""

# Adam's constants, as in Kingma & Ba (2015) and the defaults of PyTorch's torch.optim.Adam.
ADAM_BETA1 = 0.9  # decay of the running mean of the gradient
ADAM_BETA2 = 0.999  # decay of the running mean of the squared gradient
ADAM_EPS = 1e-8  # keeps the step finite where the squared-gradient average is ~0


@dataclass(frozen=True, eq=False)
class FitResult:
    """What ``fit`` returns: the trained block and the loss along the way."""

    block: FeedForward  # a new block: the one passed to fit is unchanged
    losses: FloatArray  # (steps + 1,) float64: losses[t] is the loss after t updates


@quiet  # inf and NaN give inf or NaN silently, as in every layer
def mean_squared_error(y: object, target: object) -> float:
    """Mean of ``(y - target) ** 2`` over every entry, in float64, as a Python float.

    A TypeError for data that is not real numbers, a ValueError for two shapes or no entries.
    """
    y_arr = check.float_array(y, "y")
    t_arr = check.float_array(target, "target")
    if y_arr.shape != t_arr.shape:
        raise ValueError(f"y has shape {y_arr.shape} but target has shape {t_arr.shape}")
    if y_arr.size == 0:
        raise ValueError("y and target are empty: the mean squared error is undefined")
    return _mse(y_arr, t_arr)


def _mse(y: FloatArray, target: FloatArray) -> float:
    """``mean_squared_error`` of two checked arrays of one shape (fit checks them once)."""
    diff = y.astype(np.float64) - target.astype(np.float64)
    return float(np.mean(diff * diff))


def _check_data(block: FeedForward, X: object, Y: object) -> tuple[FloatArray, FloatArray]:
    """``X`` and ``Y`` as ``(n, d_model)`` arrays of the block's dtype, finite."""
    arrays = []
    for name, value in (("X", X), ("Y", Y)):
        array = check.float_array(value, name)
        if array.ndim != 2 or array.shape[1] != block.d_model or array.shape[0] == 0:
            raise ValueError(f"{name} must have shape (n, d_model) = (n, {block.d_model}) "
                             f"with n >= 1, got shape {array.shape}")
        if not np.all(np.isfinite(array)):
            raise ValueError(f"{name} contains NaN or infinity")
        arrays.append(array.astype(block.dtype, copy=False))
    X_arr, Y_arr = arrays
    if X_arr.shape != Y_arr.shape:
        raise ValueError(f"X has shape {X_arr.shape} but Y has shape {Y_arr.shape}")
    return X_arr, Y_arr


def _make_block(like: FeedForward, params: dict[str, FloatArray]) -> FeedForward:
    """A block of ``like``'s class and activation over ``params`` (it copies them)."""
    return type(like)(params["W1"], params.get("b1"), params["W2"], params.get("b2"),
                      activation=like.activation)


def fit(block: FeedForward, X: object, Y: object, steps: int, lr: float,
        optimizer: str = "adam") -> FitResult:
    """Train a copy of ``block`` so that ``block(X)`` approaches ``Y`` in mean squared error.

    Each step, on all of ``X`` (full-batch): forward, ``dL/dy = 2 (y - Y) / y.size``,
    ``backward``, then SGD (``w -= lr * g``) or Adam (Kingma & Ba 2015) on every weight.

    Args:
        block: the starting point; it is not modified.
        X: inputs ``(n, d_model)``, finite; cast to the block's dtype.
        Y: targets ``(n, d_model)``, finite; cast to the block's dtype.
        steps: number of updates, a positive int.
        lr: learning rate, a positive finite number.
        optimizer: ``"adam"`` or ``"sgd"`` (see ``ffn.OPTIMIZERS``).

    Returns:
        The trained block (a new one, like ``block``) and the loss after 0, 1, ..., steps updates.

    Raises:
        TypeError, ValueError: for arguments of the wrong type, shape or range, a block with NaN
            or infinite weights, or data whose loss overflows before any update.
        FloatingPointError: if the loss becomes NaN or infinite (the learning rate is too large).
    """
    if not isinstance(block, FeedForward):
        raise TypeError(f"block must be an ffn.FeedForward, got {type(block).__name__}")
    if not all(np.isfinite(w).all() for w in block.named_parameters().values() if w is not None):
        raise ValueError("block has NaN or infinite weights: no step can fit them")
    X_arr, Y_arr = _check_data(block, X, Y)
    steps = check.positive_int(steps, "steps")
    rate = check.real(lr, "lr", 0.0, math.inf, high_open=True, low_open=True)
    check.choice(optimizer, "optimizer", OPTIMIZERS)

    # Our own writable copies: a block's weights are read-only.
    params = {k: np.array(w) for k in ("W1", "b1", "W2", "b2") if (w := getattr(block, k))
              is not None}
    first = {name: np.zeros_like(w) for name, w in params.items()}  # Adam's m
    second = {name: np.zeros_like(w) for name, w in params.items()}  # Adam's v
    losses = np.empty(steps + 1)  # (steps + 1,)

    current = _make_block(block, params)
    # Overflow in a diverging run is reported once, as FloatingPointError, below.
    with np.errstate(over="ignore", invalid="ignore"):
        for t in range(steps + 1):
            y = current(X_arr)  # (n, d_model)
            losses[t] = _mse(y, Y_arr)
            if not math.isfinite(losses[t]) and t == 0:  # not lr's doing: no step was taken
                raise ValueError(f"the loss before any update is {losses[t]}: X and Y are too "
                                 f"large for the block ({block.dtype}) or the loss (float64)")
            if not math.isfinite(losses[t]):
                raise FloatingPointError(
                    f"the loss became {losses[t]} after {t} steps: lower lr (it is {rate})")
            if t == steps:
                break
            current.backward((2.0 / y.size) * (y - Y_arr))  # dL/dy of the mean squared error
            for name, w in params.items():
                g = current.grads[name]
                assert g is not None  # present exactly when the parameter is
                if optimizer == "sgd":
                    w -= rate * g
                    continue
                m, v = first[name], second[name]
                m[...] = ADAM_BETA1 * m + (1.0 - ADAM_BETA1) * g
                v[...] = ADAM_BETA2 * v + (1.0 - ADAM_BETA2) * g * g
                m_hat = m / (1.0 - ADAM_BETA1 ** (t + 1))  # bias correction: m, v start at 0
                v_hat = v / (1.0 - ADAM_BETA2 ** (t + 1))
                w -= rate * m_hat / (np.sqrt(v_hat) + ADAM_EPS)
            # A fresh block over the updated arrays: no reliance on the block's internals.
            current = _make_block(block, params)
    return FitResult(block=current, losses=losses)
