"""Recurrent layers: RNN, LSTM, GRU and their cells, with torch's parameters and gate order.

The layers are composites over ember ops (linear, sigmoid, tanh, slicing, cat), so they
have gradients and run on every device.  Per layer and direction, the input projection of
every time step is one matmul; only the hidden-to-hidden product and the gate arithmetic
run per step.  Gates are laid out as torch lays them (LSTM i, f, g, o; GRU r, z, n with
n = tanh(W_in x + b_in + r * (W_hn h + b_hn))), so state dicts load both ways.
"""
from __future__ import annotations

import math
import numbers
import warnings

from .. import amp_policy, ops
from ..amp_policy import active as _amp
from ..autograd import grad
from ..autograd.function import Function
from ..autograd.grad_mode import is_grad_enabled
from ..dispatch import run
from ..errors import EmberTypeError, EmberValueError, EmberWarning, ShapeError
from ..functional import linear
from ..ops.rnn import (
    gru_cell_op,
    gru_sequence_backward_op,
    gru_sequence_op,
    lstm_cell_op,
    lstm_sequence_backward_op,
    lstm_sequence_op,
)
from ..tensor import Tensor
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter
from .utils.rnn import PackedSequence

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]


# -- one time step: (input projection, h, c, W_hh^T, b_hh, W_hr) -> (h, c) -----------------
# W_hh comes transposed: a layer's steps make it contiguous once (_direction), and the
# small per-step product h @ W_hh^T then runs at full speed (BLAS is slow on a transposed
# operand when h has few rows); the whole-sequence ops take the view and lay it out
# themselves (their gradient comes in W_hh's own layout: no transposed copy either way).
# b_hh is None where the layer folded it into the input projection (every mode but GRU,
# whose b_hn sits inside r * (...)); W_hr is LSTM's projection (proj_size > 0) or None.

def _hidden(h, w_hh_t, b_hh):
    out = h @ w_hh_t
    return out if b_hh is None else out + b_hh


def _tanh_step(gi, h, c, w_hh_t, b_hh, w_hr):
    return ops.tanh(gi + _hidden(h, w_hh_t, b_hh)), None


def _relu_step(gi, h, c, w_hh_t, b_hh, w_hr):
    return ops.relu(gi + _hidden(h, w_hh_t, b_hh)), None


def _lstm_step(gi, h, c, w_hh_t, b_hh, w_hr):
    # the gates' arithmetic in one declared kernel (ops/rnn.py), its gradient in one more
    n = c._data.shape[-1]
    h, c = _Columns.apply(run(lstm_cell_op, gi + _hidden(h, w_hh_t, b_hh), c), n, 7 * n)
    return (h if w_hr is None else linear(h, w_hr)), c


def _gru_step(gi, h, c, w_hh_t, b_hh, w_hr):
    return run(gru_cell_op, gi, _hidden(h, w_hh_t, b_hh), h), None


_STEPS = {"RNN_TANH": _tanh_step, "RNN_RELU": _relu_step, "LSTM": _lstm_step,
          "GRU": _gru_step}
_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "LSTM": 4, "GRU": 3}


class _SplitRows(Function):
    """x split into consecutive row blocks, with ONE cat as its gradient.  Slicing each
    step out of x separately would cost, in backward, a zero tensor of x's full size per
    step and as many full-size additions."""

    @staticmethod
    def forward(ctx, x, sizes):
        return tuple(ops.split(x, sizes, 0))

    @staticmethod
    def backward(ctx, *grads):
        return ops.cat(grads), None


class _Columns(Function):
    """LSTM's h and c: the first two column blocks of n in lstm_cell's (N, width) output,
    with ONE cat as the gradient (zeros where a block got none, and for the columns the
    cell keeps for its own gradient): slicing each out separately would cost a zero
    tensor of the full size and an addition per block in backward."""

    @staticmethod
    def forward(ctx, x, n, width):
        ctx.n, ctx.width = n, width
        h, c, _ = ops.split(x, (n, n, width - 2 * n), 1)
        return h, c

    @staticmethod
    def backward(ctx, gh, gc):
        if gh is None and gc is None:
            return None, None, None
        like = gc if gh is None else gh
        rows = like._data.shape[0]
        rest = ops.zeros((rows, ctx.width - 2 * ctx.n), dtype=like.dtype, device=like.device)
        gh = ops.zeros_like(like) if gh is None else gh
        gc = ops.zeros_like(like) if gc is None else gc
        return ops.cat([gh, gc, rest], 1), None, None


def _or_zeros(g, rows: int, n: int, like):
    """An upstream gradient autograd left out (None) as the zeros the sequence gradient
    ops take: (rows, n) of like's dtype and device."""
    return ops.zeros((rows, n), dtype=like.dtype, device=like.device) if g is None else g


class _Recurrence(Function):
    """One direction of one LSTM or GRU layer over a whole sequence of equal-length steps,
    with its own backward: the whole time loop is one declared composite each way
    (ops/rnn.py's lstm_sequence, gru_sequence and their gradients: one kernel call on the
    CPU, the steps as ember ops on a device without them), and the recurrent weight's (and
    GRU's b_hh's) gradient is ONE product (sum) over all steps, where step-by-step autograd
    would make a (H, G*H) product and add it up once per step.  Differentiates again
    (create_graph) through the steps themselves (_differentiable_backward)."""

    @staticmethod
    def forward(ctx, gi, h, c, w_hh_t, b_hh, lstm, steps, reverse):
        rows = gi._data.shape[0] // steps
        n = h._data.shape[-1]
        h_in, c_in = h, c
        ctx.inputs = (gi, h_in, c_in, w_hh_t, b_hh)
        if lstm:
            # the whole time loop as one declared composite (ops/rnn.py): one kernel call
            # where the backend has it (the CPU's), else its steps as ember ops
            y = run(lstm_sequence_op, gi, h, c, w_hh_t, steps=steps, reverse=reverse)
            ctx.state = (y, steps, lstm, reverse, n)
            last = y[:rows] if reverse else y[(steps - 1) * rows:]
            return y[:, :n].contiguous(), last[:, :n].contiguous(), \
                last[:, n:2 * n].contiguous()
        if b_hh is None:
            b_hh = ops.zeros((w_hh_t._data.shape[1],), dtype=gi.dtype, device=gi.device)
            ctx.inputs = (gi, h_in, c_in, w_hh_t, None)
        y = run(gru_sequence_op, gi, h, w_hh_t, b_hh, steps=steps, reverse=reverse)
        ctx.state = (y, steps, lstm, reverse, n)
        last = y[:rows] if reverse else y[(steps - 1) * rows:]
        return y[:, :n].contiguous(), last[:, :n].contiguous()

    @staticmethod
    def backward(ctx, g_out, g_h, g_c=None):
        if is_grad_enabled():
            # create_graph: the saved activations carry no history, so differentiate the
            # steps themselves, run again with grad mode on (double backward is rare)
            return _Recurrence._differentiable_backward(ctx, g_out, g_h, g_c)
        if ctx.state[2]:
            return _Recurrence._lstm_backward(ctx, g_out, g_h, g_c)
        return _Recurrence._gru_backward(ctx, g_out, g_h)

    @staticmethod
    def _lstm_backward(ctx, g_out, g_h, g_c):
        # one call of lstm_sequence_backward: every step's d gates (= d gi: the bias is
        # folded into gi), d h0, d c0 and d W_hh^T over all steps (ops/rnn.py)
        y, steps, _, reverse, n = ctx.state
        gi, h0, c0, w_hh_t, _ = ctx.inputs
        rows = h0._data.shape[0]
        total = steps * rows
        d = run(lstm_sequence_backward_op, _or_zeros(g_out, total, n, y),
                _or_zeros(g_h, rows, n, y), _or_zeros(g_c, rows, n, y),
                y, h0, c0, w_hh_t, steps=steps, reverse=reverse)
        tail = d[total:total + rows]
        # d W_hh comes in W_hh's layout: w_hh_t's gradient is its transposed view
        return d[:total], tail[:, :n], tail[:, n:2 * n], \
            d[total + rows:].reshape(4 * n, n).mT, None, None, None, None

    @staticmethod
    def _gru_backward(ctx, g_out, g_h):
        # one call of gru_sequence_backward: d gi and d gh of every step, d h0, d W_hh^T
        # and d b_hh over all steps (ops/rnn.py)
        y, steps, _, reverse, n = ctx.state
        gi, h0, _, w_hh_t, b_hh = ctx.inputs
        rows = h0._data.shape[0]
        total = steps * rows
        d = run(gru_sequence_backward_op, _or_zeros(g_out, total, n, y),
                _or_zeros(g_h, rows, n, y), y, h0, w_hh_t, steps=steps, reverse=reverse)
        d_b = None if b_hh is None else d[-1]
        return d[:total], d[2 * total:2 * total + rows, :n], None, \
            d[2 * total + rows:-1].reshape(3 * n, n).mT, d_b, None, None, None

    @staticmethod
    def _differentiable_backward(ctx, g_out, g_h, g_c):
        gi, h, c, w_hh_t, b_hh = ctx.inputs
        steps, lstm, reverse = ctx.state[1:4]
        step = _lstm_step if lstm else _gru_step
        rows = gi._data.shape[0] // steps
        outs = _direction(step, gi, [rows] * steps, h, c, w_hh_t, b_hh, None, reverse,
                          whole=False)
        pairs = [(o, g) for o, g in zip(outs, (g_out, g_h, g_c)) if o is not None and
                 g is not None]
        inputs = (gi, h, c, w_hh_t, b_hh)
        wrt = [k for k, t in enumerate(inputs) if type(t) is Tensor and t.requires_grad]
        grads = grad([o for o, _ in pairs], [inputs[k] for k in wrt], [g for _, g in pairs],
                     create_graph=True, allow_unused=True)
        out = [None] * 8
        for k, g in zip(wrt, grads):
            out[k] = g
        return tuple(out)


def _direction(step, gi, sizes, h, c, w_hh_t, b_hh, w_hr, reverse, whole=True):
    """Run one direction of one layer over the steps of gi (rows of step t follow those of
    step t-1; sizes[t] rows each, non-increasing as in a PackedSequence).  Returns the
    outputs of every step stacked as rows, and the final h and c of every sequence.
    whole=False: step by step (autograd records each step), never as one _Recurrence."""
    if whole and step in (_lstm_step, _gru_step) and w_hr is None and len(set(sizes)) == 1:
        # equal lengths: the whole sequence as one autograd node (_Recurrence)
        lstm = step is _lstm_step
        outs = _Recurrence.apply(gi, h, c, w_hh_t, b_hh, lstm, len(sizes), reverse)
        return outs if lstm else (*outs, None)
    outs = [None] * len(sizes)
    steps = _SplitRows.apply(gi, sizes) if len(sizes) > 1 else (gi,)
    w_hh_t = w_hh_t.contiguous()
    if not reverse:
        done_h, done_c = [], []
        for t, n in enumerate(sizes):
            if n < h._data.shape[0]:       # the sequences past row n ended at step t - 1
                done_h.append(h[n:])
                h = h[:n]
                if c is not None:
                    done_c.append(c[n:])
                    c = c[:n]
            h, c = step(steps[t], h, c, w_hh_t, b_hh, w_hr)
            outs[t] = h
        if done_h:
            h = ops.cat([h] + done_h[::-1])
            c = None if c is None else ops.cat([c] + done_c[::-1])
    else:
        h0, c0 = h, c
        if sizes[-1] < h0._data.shape[0]:
            h = h0[:sizes[-1]]
            c = None if c0 is None else c0[:sizes[-1]]
        for t in range(len(sizes) - 1, -1, -1):
            n, rows = sizes[t], h._data.shape[0]
            if n > rows:                   # sequences that end at step t start here
                h = ops.cat([h, h0[rows:n]])
                c = None if c is None else ops.cat([c, c0[rows:n]])
            h, c = step(steps[t], h, c, w_hh_t, b_hh, w_hr)
            outs[t] = h
    return ops.cat(outs) if len(outs) > 1 else outs[0], h, c


def _check_size(name: str, value, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise EmberTypeError(f"{name} should be of type int, got: {type(value).__name__}")
    if value < minimum:
        raise EmberValueError(f"{name} must be {'positive' if minimum else 'non-negative'}, "
                              f"got {value}")
    return int(value)


def _reset_uniform(module: Module, hidden_size: int) -> None:
    # torch's default for every recurrent weight and bias: U(-1/sqrt(hidden), 1/sqrt(hidden))
    stdv = 1.0 / math.sqrt(hidden_size) if hidden_size > 0 else 0.0
    for p in module.parameters():
        init.uniform_(p, -stdv, stdv)


class RNNBase(Module):
    """The multi-layer, optionally bidirectional recurrent layer behind RNN, LSTM and GRU.

    Parameters are named and shaped as torch's: weight_ih_l{k}[_reverse] (gates * hidden,
    input), weight_hh_l{k}[_reverse] (gates * hidden, hidden or proj_size), bias_ih_l{k},
    bias_hh_l{k} and, for an LSTM with proj_size > 0, weight_hr_l{k} (proj_size, hidden).

    PyTorch
    -------
    ``torch.nn.RNNBase``
    """

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device=None,
                 dtype=None) -> None:
        super().__init__()
        if mode not in _GATES:
            raise EmberValueError(f"RNNBase: unrecognized RNN mode {mode!r}; expected one of "
                                  f"{', '.join(_GATES)}")
        name = "RNN" if mode.startswith("RNN") else mode
        if isinstance(dropout, bool) or not isinstance(dropout, numbers.Number) or not (
                0 <= dropout <= 1):
            raise EmberValueError(f"{name}: dropout should be a number in range [0, 1] "
                                  "representing the probability of an element being zeroed, "
                                  f"got {dropout!r}")
        hidden_size = _check_size("hidden_size", hidden_size, 1)
        num_layers = _check_size("num_layers", num_layers, 1)
        proj_size = _check_size("proj_size", proj_size, 0)
        if dropout > 0 and num_layers == 1:
            warnings.warn(f"{name}: dropout adds dropout after all but the last recurrent "
                          f"layer, so non-zero dropout expects num_layers greater than 1, "
                          f"but got dropout={dropout} and num_layers={num_layers}",
                          EmberWarning, stacklevel=3)
        if proj_size and mode != "LSTM":
            raise EmberValueError(f"{name}: proj_size argument is only supported for LSTM, "
                                  "not RNN or GRU")
        if proj_size >= hidden_size:
            raise EmberValueError(f"{name}: proj_size ({proj_size}) has to be smaller than "
                                  f"hidden_size ({hidden_size})")
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        directions = 2 if bidirectional else 1
        out_size = proj_size or hidden_size
        gates = _GATES[mode] * hidden_size
        self._all_weights = []
        for layer in range(num_layers):
            layer_input = input_size if layer == 0 else out_size * directions
            for direction in range(directions):
                suffix = f"_l{layer}" + ("_reverse" if direction else "")
                shapes = {"weight_ih": (gates, layer_input), "weight_hh": (gates, out_size)}
                if bias:
                    shapes.update(bias_ih=(gates,), bias_hh=(gates,))
                if proj_size:
                    shapes["weight_hr"] = (proj_size, hidden_size)
                names = []
                for kind, shape in shapes.items():
                    names.append(kind + suffix)
                    setattr(self, names[-1], Parameter(ops.empty(shape, dtype=dtype,
                                                                 device=device)))
                self._all_weights.append(names)
        self._flat_weights_names = [n for names in self._all_weights for n in names]
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _reset_uniform(self, self.hidden_size)

    def flatten_parameters(self) -> None:
        """A no-op: ember keeps no fused weight buffer to compact (torch's is for cuDNN)."""

    @property
    def _flat_weights(self) -> list[Tensor]:
        return [getattr(self, n) for n in self._flat_weights_names]

    @property
    def all_weights(self) -> list[list[Tensor]]:
        return [[getattr(self, n) for n in names] for names in self._all_weights]

    def _layer_weights(self, index: int):
        """(W_ih, W_hh, b_ih, b_hh, W_hr) of layer-and-direction `index` (None if absent)."""
        suffix = self._all_weights[index][0][len("weight_ih"):]
        p = self._parameters
        return (p["weight_ih" + suffix], p["weight_hh" + suffix], p.get("bias_ih" + suffix),
                p.get("bias_hh" + suffix), p.get("weight_hr" + suffix))

    # -- forward --------------------------------------------------------------------------
    def _name(self) -> str:
        return type(self).__name__

    def forward(self, input, hx=None):
        if _amp and self.mode == "GRU" and amp_policy.on("gru"):      # autocast
            return amp_policy.call("gru", RNNBase.forward, self, input, hx)
        lstm = self.mode == "LSTM"
        directions = 2 if self.bidirectional else 1
        packed = isinstance(input, PackedSequence)
        unbatched = False
        if packed:
            x, batch_sizes, sorted_indices, unsorted_indices = input
            sizes = batch_sizes.tolist()
            batch = sizes[0]
        else:
            if type(input) is not Tensor:
                raise EmberTypeError(f"{self._name()}: expected a Tensor or a PackedSequence "
                                     f"as input, got {type(input).__name__}")
            if input.ndim not in (2, 3):
                raise ShapeError(f"{self._name()}: Expected input to be 2D or 3D, got "
                                 f"{input.ndim}D instead")
            unbatched = input.ndim == 2
            if unbatched:
                input = input.unsqueeze(1)
            elif self.batch_first:
                input = input.transpose(0, 1)
            steps, batch = input._data.shape[:2]
            if steps == 0:
                raise ShapeError(f"{self._name()}: Expected sequence length to be larger "
                                 f"than 0, got input of shape {tuple(input.shape)}")
            sizes = [batch] * steps
            x = input.reshape(steps * batch, input._data.shape[2])
            sorted_indices = unsorted_indices = None
        if x._data.shape[-1] != self.input_size:
            raise ShapeError(f"{self._name()}: input.size(-1) must be equal to input_size. "
                             f"Expected {self.input_size}, got {x._data.shape[-1]}")
        h0, c0 = self._initial_state(hx, lstm, unbatched, batch, directions, x)
        if sorted_indices is not None:
            h0 = h0.index_select(1, sorted_indices)
            c0 = None if c0 is None else c0.index_select(1, sorted_indices)
        out, h_n, c_n = self._run(x, sizes, h0, c0, directions)
        if unsorted_indices is not None:
            h_n = h_n.index_select(1, unsorted_indices)
            c_n = None if c_n is None else c_n.index_select(1, unsorted_indices)
        if packed:
            output = PackedSequence(out, batch_sizes, sorted_indices, unsorted_indices)
        else:
            output = out.reshape(steps, batch, out._data.shape[-1])
            if unbatched:
                output = output.squeeze(1)
            elif self.batch_first:
                output = output.transpose(0, 1)
        if unbatched:
            h_n = h_n.squeeze(1)
            c_n = None if c_n is None else c_n.squeeze(1)
        return output, ((h_n, c_n) if lstm else h_n)

    def _initial_state(self, hx, lstm, unbatched, batch, directions, like):
        layers = self.num_layers * directions
        out_size = self.proj_size or self.hidden_size
        if hx is None:
            def zeros(n):
                return ops.zeros((layers, batch, n), dtype=like.dtype, device=like.device)
            return zeros(out_size), (zeros(self.hidden_size) if lstm else None)
        if lstm:
            if not isinstance(hx, (tuple, list)) or len(hx) != 2:
                raise EmberTypeError(f"{self._name()}: expected hx to be a tuple (h_0, c_0), "
                                     f"got {type(hx).__name__}")
            states = list(hx)
            expected = [(layers, batch, out_size), (layers, batch, self.hidden_size)]
        else:
            if type(hx) is not Tensor:
                raise EmberTypeError(f"{self._name()}: expected hx to be a Tensor, got "
                                     f"{type(hx).__name__}")
            states = [hx]
            expected = [(layers, batch, out_size)]
        for i, (state, shape) in enumerate(zip(states, expected)):
            if unbatched:
                if state.ndim != 2:
                    raise ShapeError(f"{self._name()}: for unbatched 2-D input, hx should "
                                     f"also be 2-D but got {state.ndim}-D tensor")
                states[i] = state = state.unsqueeze(1)
            elif state.ndim != 3:
                raise ShapeError(f"{self._name()}: for batched 3-D input, hx should also be "
                                 f"3-D but got {state.ndim}-D tensor")
            if tuple(state.shape) != shape:
                which = f"hidden[{i}]" if lstm else "hidden"
                raise ShapeError(f"{self._name()}: Expected {which} size {shape}, got "
                                 f"{list(state.shape)}")
        return states[0], (states[1] if lstm else None)

    def _run(self, x, sizes, h0, c0, directions):
        step = _STEPS[self.mode]
        fold = self.mode != "GRU"
        h_n, c_n = [], []
        for layer in range(self.num_layers):
            outs = []
            for direction in range(directions):
                index = layer * directions + direction
                w_ih, w_hh, b_ih, b_hh, w_hr = self._layer_weights(index)
                if fold and b_ih is not None:
                    b_ih, b_hh = b_ih + b_hh, None
                gi = linear(x, w_ih, b_ih)
                out, h, c = _direction(step, gi, sizes, h0[index],
                                       None if c0 is None else c0[index],
                                       w_hh.mT, b_hh, w_hr,
                                       reverse=direction == 1)
                outs.append(out)
                h_n.append(h)
                c_n.append(c)
            x = outs[0] if directions == 1 else ops.cat(outs, 1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = F.dropout(x, self.dropout)
        return x, ops.stack(h_n), (None if c0 is None else ops.stack(c_n))

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s


def _nonlinearity_mode(nonlinearity: str) -> str:
    if nonlinearity not in ("tanh", "relu"):
        raise EmberValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or "
                              "'relu'.")
    return "RNN_TANH" if nonlinearity == "tanh" else "RNN_RELU"


class RNN(RNNBase):
    """Elman RNN: h_t = tanh(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh) (or relu).

    PyTorch
    -------
    ``torch.nn.RNN``
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 nonlinearity: str = "tanh", bias: bool = True, batch_first: bool = False,
                 dropout: float = 0.0, bidirectional: bool = False, device=None,
                 dtype=None) -> None:
        super().__init__(_nonlinearity_mode(nonlinearity), input_size, hidden_size,
                         num_layers, bias, batch_first, dropout, bidirectional, 0, device,
                         dtype)
        self.nonlinearity = nonlinearity


class LSTM(RNNBase):
    """Long short-term memory; forward returns (output, (h_n, c_n)).

    PyTorch
    -------
    ``torch.nn.LSTM``
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device=None,
                 dtype=None) -> None:
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, proj_size, device, dtype)


class GRU(RNNBase):
    """Gated recurrent unit; forward returns (output, h_n).

    PyTorch
    -------
    ``torch.nn.GRU``
    """

    def __init__(self, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, device=None, dtype=None) -> None:
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, 0, device, dtype)


# -- cells ---------------------------------------------------------------------------------

class RNNCellBase(Module):
    """One time step: weight_ih (gates * hidden, input), weight_hh, bias_ih, bias_hh.

    PyTorch
    -------
    ``torch.nn.RNNCellBase``
    """

    _mode = "RNN_TANH"

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int,
                 device=None, dtype=None) -> None:
        super().__init__()
        self.input_size = input_size
        self.hidden_size = _check_size("hidden_size", hidden_size, 1)
        self.bias = bias
        kw = dict(dtype=dtype, device=device)
        gates = num_chunks * hidden_size
        self.weight_ih = Parameter(ops.empty(gates, input_size, **kw))
        self.weight_hh = Parameter(ops.empty(gates, hidden_size, **kw))
        if bias:
            self.bias_ih = Parameter(ops.empty(gates, **kw))
            self.bias_hh = Parameter(ops.empty(gates, **kw))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _reset_uniform(self, self.hidden_size)

    def _states(self, input: Tensor, hx, count: int):
        """input as (N, input_size) and the count states as (N, hidden), and whether the
        input came unbatched."""
        name = type(self).__name__
        if type(input) is not Tensor or input.ndim not in (1, 2):
            got = f"{input.ndim}D" if type(input) is Tensor else type(input).__name__
            raise ShapeError(f"{name}: Expected input to be 1D or 2D, got {got} instead")
        if input._data.shape[-1] != self.input_size:
            raise ShapeError(f"{name}: input has inconsistent input_size: got "
                             f"{input._data.shape[-1]} expected {self.input_size}")
        unbatched = input.ndim == 1
        if unbatched:
            input = input.unsqueeze(0)
        batch = input._data.shape[0]
        if hx is None:
            zeros = ops.zeros((batch, self.hidden_size), dtype=input.dtype,
                              device=input.device)
            return input, [zeros] * count, unbatched
        states = list(hx) if count == 2 and isinstance(hx, (tuple, list)) else [hx]
        if len(states) != count or any(type(s) is not Tensor for s in states):
            raise EmberTypeError(f"{name}: expected hx to be "
                                 f"{'a tuple (h_0, c_0)' if count == 2 else 'a Tensor'}")
        for i, s in enumerate(states):
            if s.ndim != input.ndim - unbatched:
                raise ShapeError(f"{name}: Expected hidden to be {input.ndim - unbatched}D "
                                 f"like the input, got {s.ndim}D instead")
            if unbatched:
                states[i] = s = s.unsqueeze(0)
            if tuple(s.shape) != (batch, self.hidden_size):
                raise ShapeError(f"{name}: hidden {i} has shape {tuple(s.shape)}, expected "
                                 f"{(batch, self.hidden_size)}")
        return input, states, unbatched

    def _step(self, input, h, c):
        b_ih, b_hh = self.bias_ih, self.bias_hh
        if self._mode != "GRU" and b_ih is not None:
            # b_hh folded into the input projection, as the layers do (RNNBase._run): the
            # step is then two products, each in autocast's dtype, as torch's cell's are
            b_ih, b_hh = b_ih + b_hh, None
        gi = linear(input, self.weight_ih, b_ih)
        return _STEPS[self._mode](gi, h, c, self.weight_hh.mT, b_hh, None)

    def extra_repr(self) -> str:
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        nonlinearity = getattr(self, "nonlinearity", "tanh")
        return s + (f", nonlinearity={nonlinearity}" if nonlinearity != "tanh" else "")


class RNNCell(RNNCellBase):
    """h' = tanh(W_ih x + b_ih + W_hh h + b_hh) (or relu).

    PyTorch
    -------
    ``torch.nn.RNNCell``
    """

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device=None, dtype=None) -> None:
        mode = _nonlinearity_mode(nonlinearity)
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self._mode = mode
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        input, (h,), unbatched = self._states(input, hx, 1)
        h, _ = self._step(input, h, None)
        return h.squeeze(0) if unbatched else h


class LSTMCell(RNNCellBase):
    """One LSTM step; forward returns (h', c').

    PyTorch
    -------
    ``torch.nn.LSTMCell``
    """

    _mode = "LSTM"

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input: Tensor, hx=None) -> tuple[Tensor, Tensor]:
        if _amp and amp_policy.on("lstm_cell"):      # autocast (amp_policy.py)
            return amp_policy.call("lstm_cell", LSTMCell.forward, self, input, hx)
        input, (h, c), unbatched = self._states(input, hx, 2)
        h, c = self._step(input, h, c)
        return (h.squeeze(0), c.squeeze(0)) if unbatched else (h, c)


class GRUCell(RNNCellBase):
    """One GRU step; forward returns h'.

    PyTorch
    -------
    ``torch.nn.GRUCell``
    """

    _mode = "GRU"

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None,
                 dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        if _amp and amp_policy.on("gru_cell"):      # autocast (amp_policy.py)
            return amp_policy.call("gru_cell", GRUCell.forward, self, input, hx)
        input, (h,), unbatched = self._states(input, hx, 1)
        h, _ = self._step(input, h, None)
        return h.squeeze(0) if unbatched else h
