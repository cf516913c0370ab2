"""Attention: MultiheadAttention (torch's parameter layout) and scaled_dot_product_attention."""
from __future__ import annotations

import math
import warnings

from .. import amp_policy, ops
from .. import dtypes as D
from ..amp_policy import active as _amp
from ..errors import EmberTypeError, EmberValueError, EmberWarning, ShapeError
from ..functional import linear, softmax
from ..tensor import Tensor
from . import init
from .linear import NonDynamicallyQuantizableLinear
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


def _mha_check(ok: bool, message: str) -> None:
    if not ok:
        raise ShapeError(f"multi_head_attention_forward: {message}")


def _canonical_mask(mask: Tensor | None, name: str, like: Tensor) -> Tensor | None:
    """A bool mask (True = masked) as an additive float one in like's dtype."""
    if mask is None:
        return None
    if mask._dtype is not D.bool_ and mask._dtype.category != D.FLOAT:
        raise EmberTypeError(f"multi_head_attention_forward: {name} must be bool or floating, "
                             f"got {mask._dtype.name}; pass mask.bool() or a float mask")
    return _additive(mask, like) if mask._dtype is D.bool_ else mask


def multi_head_attention_forward(
        query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
        in_proj_weight: Tensor | None, in_proj_bias: Tensor | None, bias_k: Tensor | None,
        bias_v: Tensor | None, add_zero_attn: bool, dropout_p: float,
        out_proj_weight: Tensor, out_proj_bias: Tensor | None, training: bool = True,
        key_padding_mask: Tensor | None = None, need_weights: bool = True,
        attn_mask: Tensor | None = None, use_separate_proj_weight: bool = False,
        q_proj_weight: Tensor | None = None, k_proj_weight: Tensor | None = None,
        v_proj_weight: Tensor | None = None, static_k: Tensor | None = None,
        static_v: Tensor | None = None, average_attn_weights: bool = True,
        is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
    """MultiheadAttention's forward over (L, N, E) query and (S, N, E) key and value (or
    unbatched (L, E), (S, E)): project, split into num_heads, softmax(q k^T / sqrt(d) +
    masks) v, project back; returns (output, weights averaged over heads or per head, or
    None without need_weights).  Bool masks mark the positions NOT attended.

    PyTorch
    -------
    ``torch.nn.functional.multi_head_attention_forward``
    """
    batched = query.ndim == 3
    _mha_check(query.ndim in (2, 3), f"query should be an unbatched 2-D or batched 3-D "
                                     f"tensor, got {query.ndim}-D")
    _mha_check(key.ndim == query.ndim and value.ndim == query.ndim,
               f"for a {query.ndim}-D query, expected key and value {query.ndim}-D, got "
               f"{key.ndim}-D and {value.ndim}-D")
    if key_padding_mask is not None:
        _mha_check(key_padding_mask.ndim == query.ndim - 1,
                   f"for a {query.ndim}-D query, expected key_padding_mask None or "
                   f"{query.ndim - 1}-D, got {key_padding_mask.ndim}-D")
    if attn_mask is not None:
        _mha_check(attn_mask.ndim in (2, 3), f"expected attn_mask None, 2-D or 3-D, got "
                                             f"{attn_mask.ndim}-D")
        if not batched and attn_mask.ndim == 3:
            want = (num_heads, query.shape[0], key.shape[0])
            _mha_check(tuple(attn_mask.shape) == want, f"expected attn_mask of shape {want},"
                                                       f" got {tuple(attn_mask.shape)}")
    if not batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    length, n, e = query.shape
    if key_padding_mask is not None and attn_mask is not None and \
            key_padding_mask._dtype is not attn_mask._dtype:
        warnings.warn("multi_head_attention_forward: a key_padding_mask and an attn_mask of "
                      "different dtypes are deprecated (as in torch); pass both bool or both "
                      "float", EmberWarning, stacklevel=2)
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", query)
    if is_causal and attn_mask is None:
        raise EmberValueError("multi_head_attention_forward: is_causal is a hint that "
                              "attn_mask is the causal mask and needs attn_mask; build one "
                              "with nn.Transformer.generate_square_subsequent_mask(L)")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None            # scaled_dot_product_attention builds it
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", query)
        if key_padding_mask is not None:
            is_causal = False
    _mha_check(e == embed_dim_to_check, f"expected embedding dim {embed_dim_to_check}, "
                                        f"got {e}")
    hd = e // num_heads
    _mha_check(hd * num_heads == e, f"embed_dim {e} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        _mha_check(tuple(key.shape[:2]) == tuple(value.shape[:2]),
                   f"key's sequence and batch dims {tuple(key.shape[:2])} do not match "
                   f"value's {tuple(value.shape[:2])}")
        _mha_check(all(w is not None for w in (q_proj_weight, k_proj_weight, v_proj_weight)),
                   "use_separate_proj_weight=True needs q_proj_weight, k_proj_weight and "
                   "v_proj_weight")
        ws = (q_proj_weight, k_proj_weight, v_proj_weight)
    else:
        _mha_check(tuple(key.shape) == tuple(value.shape),
                   f"key shape {tuple(key.shape)} does not match value shape "
                   f"{tuple(value.shape)}")
        _mha_check(in_proj_weight is not None,
                   "use_separate_proj_weight=False needs in_proj_weight")
        ws = (in_proj_weight[:e], in_proj_weight[e:2 * e], in_proj_weight[2 * e:])
    bs = (None,) * 3 if in_proj_bias is None else (
        in_proj_bias[:e], in_proj_bias[e:2 * e], in_proj_bias[2 * e:])
    q, k, v = (linear(x, w, b) for x, w, b in zip((query, key, value), ws, bs))
    source = key.shape[0]
    if attn_mask is not None:
        if attn_mask.ndim == 2:
            _mha_check(tuple(attn_mask.shape) == (length, source),
                       f"the 2-D attn_mask should have shape {(length, source)}, got "
                       f"{tuple(attn_mask.shape)}")
            attn_mask = attn_mask.unsqueeze(0)
        else:
            _mha_check(tuple(attn_mask.shape) == (n * num_heads, length, source),
                       f"the 3-D attn_mask should have shape "
                       f"{(n * num_heads, length, source)}, got {tuple(attn_mask.shape)}")
    if (bias_k is None) != (bias_v is None):
        raise EmberValueError("multi_head_attention_forward: pass both bias_k and bias_v, "
                              "or neither")
    if bias_k is not None:
        if static_k is not None or static_v is not None:
            raise EmberValueError("multi_head_attention_forward: bias_k/bias_v cannot be "
                                  "added to a static key or value")
        k = ops.cat([k, bias_k.expand(1, n, e)])
        v = ops.cat([v, bias_v.expand(1, n, e)])
        attn_mask = None if attn_mask is None else F.pad(attn_mask, (0, 1))
        key_padding_mask = None if key_padding_mask is None else F.pad(key_padding_mask,
                                                                       (0, 1))
    # (S, N, E) -> (N*H, S, hd): heads become batch entries
    q = q.reshape(length, n * num_heads, hd).transpose(0, 1)
    for name, static in (("static_k", static_k), ("static_v", static_v)):
        if static is not None:
            _mha_check(static.shape[0] == n * num_heads and static.shape[2] == hd,
                       f"expected {name} of shape ({n * num_heads}, S, {hd}), got "
                       f"{tuple(static.shape)}")
    k = k.reshape(k.shape[0], n * num_heads, hd).transpose(0, 1) if static_k is None \
        else static_k
    v = v.reshape(v.shape[0], n * num_heads, hd).transpose(0, 1) if static_v is None \
        else static_v
    if add_zero_attn:
        zeros = ops.zeros(n * num_heads, 1, hd, dtype=k.dtype, device=k.device)
        k, v = ops.cat([k, zeros], 1), ops.cat([v, zeros], 1)
        attn_mask = None if attn_mask is None else F.pad(attn_mask, (0, 1))
        key_padding_mask = None if key_padding_mask is None else F.pad(key_padding_mask,
                                                                       (0, 1))
    source = k.shape[1]
    if key_padding_mask is not None:
        _mha_check(tuple(key_padding_mask.shape) == (n, source),
                   f"expected key_padding_mask of shape {(n, source)}, got "
                   f"{tuple(key_padding_mask.shape)}")
        pad = key_padding_mask.reshape(n, 1, 1, source).expand(n, num_heads, 1, source)
        pad = pad.reshape(n * num_heads, 1, source)
        attn_mask = pad if attn_mask is None else attn_mask + pad
    if not training:
        dropout_p = 0.0
    if need_weights:
        scores = (q * math.sqrt(1.0 / hd)) @ k.mT
        if attn_mask is not None:
            scores = attn_mask + scores
        weights = softmax(scores, -1)
        if dropout_p > 0.0:
            weights = F.dropout(weights, p=dropout_p)
        out = (weights @ v).transpose(0, 1).reshape(length * n, e)
        out = linear(out, out_proj_weight, out_proj_bias).reshape(length, n, -1)
        weights = weights.reshape(n, num_heads, length, source)
        if average_attn_weights:
            weights = weights.mean(1)
        if not batched:
            out, weights = out.squeeze(1), weights.squeeze(0)
        return out, weights
    if attn_mask is not None:
        attn_mask = attn_mask.unsqueeze(0) if attn_mask.shape[0] == 1 else attn_mask.reshape(
            n, num_heads, -1, source)
    out = scaled_dot_product_attention(
        q.reshape(n, num_heads, length, hd), k.reshape(n, num_heads, source, hd),
        v.reshape(n, num_heads, source, hd), attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(n * length, e)
    out = linear(out, out_proj_weight, out_proj_bias).reshape(length, n, -1)
    return (out if batched else out.squeeze(1)), None


# -- modules ------------------------------------------------------------------------------


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

    def forward(self, query: Tensor, key: Tensor, value: Tensor,
                key_padding_mask: Tensor | None = None, need_weights: bool = True,
                attn_mask: Tensor | None = None, average_attn_weights: bool = True,
                is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
        if query.ndim not in (2, 3) or key.ndim != query.ndim or value.ndim != query.ndim:
            raise ShapeError(f"MultiheadAttention: expected query, key and value all 2-D "
                             f"(unbatched) or all 3-D, got {tuple(query.shape)}, "
                             f"{tuple(key.shape)}, {tuple(value.shape)}")
        if query.shape[-1] != self.embed_dim:
            raise ShapeError(f"MultiheadAttention: expected query with embed_dim "
                             f"{self.embed_dim} in its last dim, got {tuple(query.shape)}")
        batch_first = self.batch_first and query.ndim == 3
        if batch_first:
            query, key, value = (t.transpose(0, 1) for t in (query, key, value))
        if is_causal and attn_mask is None:
            # ember builds the causal mask is_causal stands for (torch's functional form
            # asks for it)
            length, source = query.shape[0], key.shape[0]
            rows = ops.arange(length, device=query.device).reshape(length, 1)
            attn_mask = rows < ops.arange(source, device=query.device).reshape(1, source)
        separate = not self._qkv_same_embed_dim
        out, weights = multi_head_attention_forward(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn, self.dropout,
            self.out_proj.weight, self.out_proj.bias, training=self.training,
            key_padding_mask=key_padding_mask, need_weights=need_weights,
            attn_mask=attn_mask, use_separate_proj_weight=separate,
            q_proj_weight=self.q_proj_weight, k_proj_weight=self.k_proj_weight,
            v_proj_weight=self.v_proj_weight, average_attn_weights=average_attn_weights,
            is_causal=is_causal)
        return (out.transpose(0, 1) if batch_first else out), weights


def _additive(mask: Tensor, like: Tensor) -> Tensor:
    if mask._dtype is D.bool_:
        return ops.where(mask, -math.inf, ops.zeros((), dtype=like.dtype, device=like.device))
    return mask.to(like.dtype)
