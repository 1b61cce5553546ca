"""What every layer shares, so each layer class keeps only its math.

A layer owns read-only copies of its parameters and of its last input, so a ``backward`` gives
the gradients of the forward that ran. A layer holds one pass at a time (``backward`` follows
the latest ``forward``): give each thread its own. A second thread is refused, not trusted:
each layer marks its ``forward`` with ``@forward_pass`` and its ``backward`` and
``forward_trace`` with ``@one_thread``, so they run one thread at a time (``forward`` first
forgetting the last pass), and a ``backward`` runs only in the thread of the last ``forward``.
The marks are written at each method, where a reader sees them;
``tests/test_contract.py`` finds any layer method left without one.
"""

from __future__ import annotations

import functools
import math
import threading
from collections.abc import Callable
from typing import Any, NamedTuple, TypeVar

import numpy as np
from numpy.typing import DTypeLike

from ffn import _validate as check
from ffn._validate import FloatArray

F = TypeVar("F", bound=Callable[..., Any])


def quiet(f: F) -> F:
    """Run ``f`` without numpy's warnings: NaN and inf propagate silently in every layer."""
    return np.errstate(over="ignore", invalid="ignore", divide="ignore")(f)


def readonly_copy(array: FloatArray) -> FloatArray:
    """A copy that nobody can write to: neither the caller (it is a copy) nor anyone else."""
    copy = np.array(array, copy=True)
    copy.flags.writeable = False
    return copy


def or_zero(bias: FloatArray | None) -> FloatArray | float:
    """``bias``, or 0.0 for an absent one: a Python float, so it keeps the array's dtype."""
    return 0.0 if bias is None else bias


def random_weights(seed: object, dtype: DTypeLike, *shapes: tuple[int, int]) -> list[FloatArray]:
    """Normal weights with std ``1 / sqrt(fan_in)``, drawn in float64 in order, then rounded."""
    rng = np.random.default_rng(check.seed(seed))
    drawn = [rng.standard_normal(shape) / math.sqrt(shape[0]) for shape in shapes]
    return [w.astype(check.float_dtype(dtype)) for w in drawn]


def one_thread(method: F) -> F:
    """A layer's ``method`` run by one thread at a time: another thread meanwhile is refused."""
    return _guarded(method, starts_pass=False)


def forward_pass(method: F) -> F:
    """A layer's ``forward``: ``one_thread``, and the last pass forgotten first (a forward that
    fails leaves nothing for ``backward``)."""
    return _guarded(method, starts_pass=True)


def _guarded(method: F, starts_pass: bool) -> F:
    """``method`` behind the layer's lock, held by one thread at a time (ours may re-enter)."""
    @functools.wraps(method)
    def guarded(self: Layer, *args: Any, **kwargs: Any) -> Any:
        if not self._lock.acquire(blocking=False):  # held by another thread
            raise RuntimeError(f"{type(self).__name__} is being used by another thread: a layer "
                               "holds one pass at a time; give each thread its own layer")
        try:
            if starts_pass:
                self._saved_tensors, self._saved_by = (), None
            return method(self, *args, **kwargs)
        finally:
            self._lock.release()
    guarded.guard = "forward_pass" if starts_pass else "one_thread"  # type: ignore[attr-defined]
    return guarded  # type: ignore[return-value]


class SavedPass(NamedTuple):
    """One forward's record, all its ``backward`` reads: a composite keeps one per child run."""

    tensors: tuple[Any, ...]  # what the forward saved (rows (N, ...), or children's passes)
    lead: tuple[int, ...]  # the leading axes of its input
    thread: int | None  # the thread that ran it; None: no pass


class Layer:
    """Input checks, ``(..., d)`` flattened to rows and back, the saved pass, the gradients.

    As in a ``torch.autograd.Function``, ``forward`` saves what ``backward`` needs with
    ``_save_for_backward(...)`` and ``backward`` reads it back from ``_saved_tensors``.
    """

    _caller = "layer"  # what messages call an instance: "call layer(x) first"

    def __init__(self, dtype: np.dtype[Any], d_in: int, d_out: int, in_name: str,
                 params: dict[str, FloatArray | None]) -> None:
        self._dtype = dtype
        self._d_in, self._d_out, self._in_name = d_in, d_out, in_name
        for name, p in params.items():  # self.W1, self.b1, ...: set once, read-only copies
            setattr(self, name, None if p is None else readonly_copy(p))
        self._param_names = tuple(params)
        self._lead: tuple[int, ...] = ()  # leading axes of the last input, (...)
        self._saved_tensors: tuple[Any, ...] = ()  # what backward needs: rows (N, ...), passes
        self._saved_by: int | None = None  # the thread whose forward saved them; None: no pass
        self._grads: dict[str, FloatArray | None] = {}
        self._lock = threading.RLock()

    def __setattr__(self, name: str, value: object) -> None:
        # A layer's public attributes are set once: rebinding `activation` would not change
        # the function the layer runs, so refuse it instead of giving a silent wrong answer.
        if not name.startswith("_") and name in self.__dict__:
            raise AttributeError(f"{type(self).__name__}.{name} is read-only")
        super().__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        if not name.startswith("_"):
            raise AttributeError(f"{type(self).__name__}.{name} is read-only")
        super().__delattr__(name)

    def __getstate__(self) -> dict[str, Any]:  # copy.deepcopy and pickle: a lock of its own
        return {k: v for k, v in self.__dict__.items() if k != "_lock"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state, _lock=threading.RLock())
        for name, value in state.items():  # deepcopy and pickle make new arrays, writable ones
            if not name.startswith("_") and isinstance(value, np.ndarray):
                value.flags.writeable = False

    @property
    def d_in(self) -> int:
        """Features of the input's last axis: ``x`` is ``(..., d_in)``."""
        return self._d_in

    @property
    def d_out(self) -> int:
        """Features of the output's last axis: ``layer(x)`` is ``(..., d_out)``."""
        return self._d_out

    @property
    def dtype(self) -> np.dtype[np.floating[Any]]:
        """The parameters' dtype: inputs are cast to it; outputs and gradients have it."""
        return self._dtype

    @property
    def grads(self) -> dict[str, FloatArray | None]:
        """Gradients of the last ``backward``, one per parameter (None for an absent bias)."""
        return self._grads

    def named_parameters(self) -> dict[str, FloatArray | None]:
        """Every parameter by name (None for an absent bias): the keys of ``grads``."""
        return {name: getattr(self, name) for name in self._param_names}

    def __call__(self, *args: Any, **kwargs: Any) -> FloatArray:  # layer(x) is layer.forward(x)
        return self.forward(*args, **kwargs)  # type: ignore[no-any-return, attr-defined]

    def _flatten(self, x: object) -> FloatArray:
        """``x`` ``(..., d_in)`` checked, copied and flattened to rows ``(N, d_in)``."""
        array = check.layer_input(x, self._dtype, self._d_in, self._in_name)
        self._lead = array.shape[:-1]
        return np.array(array.reshape(math.prod(self._lead), self._d_in))  # (N, d_in)

    def _save_for_backward(self, *saved: Any) -> None:
        """Save what ``backward`` needs (PyTorch's ``ctx.save_for_backward``); the pass is done."""
        self._saved_tensors, self._saved_by = saved, threading.get_ident()

    def saved_pass(self) -> SavedPass:
        """The last forward's record: a composite keeps its children's, so that its
        ``backward`` needs no second forward, and a child called in between changes nothing."""
        return SavedPass(self._saved_tensors, self._lead, self._saved_by)

    @one_thread
    def backward_of(self, saved: SavedPass, dy: object) -> FloatArray:
        """``backward`` of the forward that ``saved`` (from ``saved_pass``) records; sets
        ``grads``. The layer's own last pass stays its last pass."""
        own = self.saved_pass()
        self._saved_tensors, self._lead, self._saved_by = saved
        try:
            return self.backward(dy)  # type: ignore[no-any-return, attr-defined]
        finally:
            self._saved_tensors, self._lead, self._saved_by = own

    def _unflatten(self, rows: FloatArray) -> FloatArray:
        """Rows ``(N, d)`` back to the leading axes of the last input: ``(..., d)``."""
        return rows.reshape(*self._lead, rows.shape[-1])

    def _saved_views(self, *arrays: FloatArray) -> list[FloatArray]:
        """Read-only views of rows (the saved ones by default), unflattened like the last input."""
        views = [self._unflatten(a).view() for a in arrays or self._saved_tensors]
        for view in views:
            view.flags.writeable = False  # backward will use them
        return views

    def _flatten_grad(self, dy: object) -> FloatArray:
        """``dy`` checked against the last forward's output, flattened to rows ``(N, d_out)``."""
        if self._saved_by not in (None, threading.get_ident()):
            raise RuntimeError(f"{type(self).__name__}.backward() in another thread than its last "
                               "forward: a layer holds one pass at a time; give each thread its "
                               "own layer")
        out_shape = None if self._saved_by is None else (*self._lead, self._d_out)
        return check.output_grad(dy, out_shape, self._dtype, self._caller).reshape(-1, self._d_out)

    def _set_grads(self, **grads: FloatArray | None) -> None:
        """Store the gradients, one per parameter; an absent parameter's gradient is None."""
        self._grads = {k: None if p is None else grads[k]
                       for k, p in self.named_parameters().items()}
