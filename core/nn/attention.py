"""Attention: MultiheadAttention (torch's parameter layout) and scaled_dot_product_attention."""
from __future__ import annotations

import math

from .. import amp_policy, ops
from .. import dtypes as D
from ..amp_policy import active as _amp
from ..errors import EmberValueError, ShapeError
from ..functional import linear, softmax
from ..tensor import Tensor
from . import init
from .linear import Linear
from .module import Module
from .parameter import Parameter

# ember.nn.functional, handed down when it loads (it re-exports this module's functions):
# the Modules call F.<name> through it, as torch's do, so replacing F.dropout reaches them
F = None


__all__ = ["MultiheadAttention"]


# -- functional forms ---------------------------------------------------------------------


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor,
                                 attn_mask: Tensor | None = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """softmax(q k^T * scale + mask) v over (..., L, E) queries and (..., S, E) keys.

    A bool attn_mask marks the positions that may be attended (True = keep); a float one
    is added to the scores.  is_causal masks keys after each query (top-left aligned).

    PyTorch
    -------
    ``torch.nn.functional.scaled_dot_product_attention``
    """
    if _amp and amp_policy.on("scaled_dot_product_attention"):      # autocast (amp_policy.py)
        return amp_policy.call(
            "scaled_dot_product_attention", scaled_dot_product_attention, query, key, value,
            attn_mask, dropout_p, is_causal, scale, enable_gqa)
    if query.ndim < 2 or key.ndim < 2 or value.ndim < 2:
        raise ShapeError("scaled_dot_product_attention: query, key and value need at least "
                         f"2 dims (..., L, E); got {tuple(query.shape)}, {tuple(key.shape)}, "
                         f"{tuple(value.shape)}")
    if is_causal and attn_mask is not None:
        raise EmberValueError("scaled_dot_product_attention: pass either attn_mask or "
                              "is_causal=True, not both")
    length, source = query._data.shape[-2], key._data.shape[-2]
    if enable_gqa and query.ndim >= 3:
        hq, hk = query._data.shape[-3], key._data.shape[-3]
        if hq % hk:
            raise ShapeError(f"scaled_dot_product_attention: {hq} query heads are not a "
                             f"multiple of {hk} key/value heads")
        key, value = _repeat_heads(key, hq // hk), _repeat_heads(value, hq // hk)
    if scale is None:
        scale = 1.0 / math.sqrt(query._data.shape[-1])
    scores = (query * scale) @ key.mT
    if is_causal:
        rows = ops.arange(length, device=query.device).reshape(length, 1)
        attn_mask = rows >= ops.arange(source, device=query.device).reshape(1, source)
    if attn_mask is not None:
        if attn_mask._dtype is D.bool_:
            scores = ops.where(attn_mask, scores, -math.inf)
        else:
            scores = scores + attn_mask
    weights = softmax(scores, -1)
    if dropout_p > 0.0:
        weights = F.dropout(weights, dropout_p)
    return weights @ value


def _repeat_heads(x: Tensor, times: int) -> Tensor:
    if times == 1:
        return x
    shape = x._data.shape
    lead, h = shape[:-3], shape[-3]
    x = x.unsqueeze(-3).expand(lead + (h, times) + shape[-2:])
    return x.reshape(lead + (h * times,) + shape[-2:])


# -- modules ------------------------------------------------------------------------------


class NonDynamicallyQuantizableLinear(Linear):
    """torch's name for MultiheadAttention.out_proj (kept so reprs and state dicts match)."""


class MultiheadAttention(Module):
    """Attention over num_heads subspaces: softmax(Q K^T / sqrt(d)) V, projected back.

    Masks follow torch.nn.MultiheadAttention: a bool attn_mask or key_padding_mask marks
    the positions that may NOT be attended (True = masked); a float mask is added to the
    scores.  is_causal=True without an attn_mask builds the causal mask.

    PyTorch
    -------
    ``torch.nn.MultiheadAttention``
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0,
                 bias: bool = True, add_bias_kv: bool = False, add_zero_attn: bool = False,
                 kdim: int | None = None, vdim: int | None = None, batch_first: bool = False,
                 device=None, dtype=None) -> None:
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0:
            raise EmberValueError(f"MultiheadAttention: embed_dim and num_heads must be "
                                  f"positive, got {embed_dim} and {num_heads}")
        if embed_dim % num_heads:
            raise EmberValueError(f"MultiheadAttention: embed_dim ({embed_dim}) must be "
                                  f"divisible by num_heads ({num_heads})")
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        kw = dict(dtype=dtype, device=device)
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(ops.empty(3 * embed_dim, embed_dim, **kw))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        else:
            self.q_proj_weight = Parameter(ops.empty(embed_dim, embed_dim, **kw))
            self.k_proj_weight = Parameter(ops.empty(embed_dim, self.kdim, **kw))
            self.v_proj_weight = Parameter(ops.empty(embed_dim, self.vdim, **kw))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(ops.empty(3 * embed_dim, **kw))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **kw)
        if add_bias_kv:
            self.bias_k = Parameter(ops.empty(1, 1, embed_dim, **kw))
            self.bias_v = Parameter(ops.empty(1, 1, embed_dim, **kw))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.zeros_(self.in_proj_bias)
            init.zeros_(self.out_proj.bias)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
            init.xavier_normal_(self.bias_v)

    def _projections(self):
        e = self.embed_dim
        if self._qkv_same_embed_dim:
            w = self.in_proj_weight
            ws = (w[:e], w[e:2 * e], w[2 * e:])
        else:
            ws = (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight)
        b = self.in_proj_bias
        bs = (None, None, None) if b is None else (b[:e], b[e:2 * e], b[2 * e:])
        return ws, bs

    def forward(self, query: Tensor, key: Tensor, value: Tensor,
                key_padding_mask: Tensor | None = None, need_weights: bool = True,
                attn_mask: Tensor | None = None, average_attn_weights: bool = True,
                is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
        unbatched = query.ndim == 2
        if query.ndim not in (2, 3) or key.ndim != query.ndim or value.ndim != query.ndim:
            raise ShapeError(f"MultiheadAttention: expected query, key and value all 2-D "
                             f"(unbatched) or all 3-D, got {tuple(query.shape)}, "
                             f"{tuple(key.shape)}, {tuple(value.shape)}")
        if unbatched:
            query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        elif self.batch_first:
            query, key, value = (t.transpose(0, 1) for t in (query, key, value))
        length, n, e = query.shape
        if e != self.embed_dim:
            raise ShapeError(f"MultiheadAttention: expected query with embed_dim "
                             f"{self.embed_dim} in its last dim, got {tuple(query.shape)}")
        h, hd = self.num_heads, self.head_dim
        (wq, wk, wv), (bq, bk, bv) = self._projections()
        q, k, v = linear(query, wq, bq), linear(key, wk, bk), linear(value, wv, bv)
        mask = self._float_mask(attn_mask, key_padding_mask, is_causal, length,
                                key.shape[0], n, q)
        if self.bias_k is not None:
            k = ops.cat([k, self.bias_k.expand(1, n, e)])
            v = ops.cat([v, self.bias_v.expand(1, n, e)])
            if mask is not None:
                mask = F.pad(mask, (0, 1))
        # (S, N, E) -> (N*H, S, hd): heads become batch entries
        q = q.reshape(length, n * h, hd).transpose(0, 1)
        k = k.reshape(k.shape[0], n * h, hd).transpose(0, 1)
        v = v.reshape(v.shape[0], n * h, hd).transpose(0, 1)
        if self.add_zero_attn:
            zeros = ops.zeros(n * h, 1, hd, dtype=k.dtype, device=k.device)
            k, v = ops.cat([k, zeros], 1), ops.cat([v, zeros], 1)
            if mask is not None:
                mask = F.pad(mask, (0, 1))
        scores = (q * (1.0 / math.sqrt(hd))) @ k.mT
        if mask is not None:
            scores = scores + mask
        weights = softmax(scores, -1)
        if self.training and self.dropout > 0.0:
            weights = F.dropout(weights, self.dropout)
        out = (weights @ v).transpose(0, 1).reshape(length * n, e)
        out = linear(out, self.out_proj.weight, self.out_proj.bias).reshape(length, n, e)
        if unbatched:
            out = out.squeeze(1)
        elif self.batch_first:
            out = out.transpose(0, 1)
        if not need_weights:
            return out, None
        weights = weights.reshape(n, h, length, weights.shape[-1])
        if average_attn_weights:
            weights = ops.sum(weights, 1) / h
        if unbatched:
            weights = weights.squeeze(0)
        return out, weights

    def _float_mask(self, attn_mask, key_padding_mask, is_causal, length, source, n, like):
        """attn_mask and key_padding_mask merged into one additive (N*H or 1, L, S) mask."""
        h = self.num_heads
        if is_causal and attn_mask is None:
            rows = ops.arange(length, device=like.device).reshape(length, 1)
            attn_mask = rows < ops.arange(source, device=like.device).reshape(1, source)
        mask = None
        if attn_mask is not None:
            mask = _additive(attn_mask, like)
            if mask.ndim == 2:
                if tuple(mask.shape) != (length, source):
                    raise ShapeError(f"MultiheadAttention: the 2-D attn_mask should have "
                                     f"shape {(length, source)}, got {tuple(mask.shape)}")
                mask = mask.unsqueeze(0)
            elif tuple(mask.shape) != (n * h, length, source):
                raise ShapeError(f"MultiheadAttention: the 3-D attn_mask should have shape "
                                 f"{(n * h, length, source)}, got {tuple(mask.shape)}")
        if key_padding_mask is not None:
            if tuple(key_padding_mask.shape) != (n, source):
                raise ShapeError(f"MultiheadAttention: key_padding_mask should have shape "
                                 f"{(n, source)}, got {tuple(key_padding_mask.shape)}")
            pad = _additive(key_padding_mask, like).reshape(n, 1, 1, source)
            pad = pad.expand(n, h, 1, source).reshape(n * h, 1, source)
            mask = pad if mask is None else mask + pad
        return mask


def _additive(mask: Tensor, like: Tensor) -> Tensor:
    if mask._dtype is D.bool_:
        return ops.where(mask, -math.inf, ops.zeros((), dtype=like.dtype, device=like.device))
    return mask.to(like.dtype)
