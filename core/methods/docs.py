"""Docstrings of Tensor's methods that are bound without one (lambdas and wrappers in the
method table): a summary per name, and for every in-place form ``name_`` one line pointing
at ``name``.  Each ends with its PyTorch section (``torch.Tensor.name``), as every public
callable's docstring does (docs/api/tensor)."""
from __future__ import annotations

from .._doc import generated

SUMMARY = {
    "add": "``self + alpha * other`` (``alpha`` scales ``other``).",
    "sub": "``self - alpha * other`` (``alpha`` scales ``other``).",
    "split": "The tensor split along ``dim`` into pieces of ``size`` elements (an int) or of "
             "the given sizes (a list): a tuple of views.",
    "chunk": "The tensor split into ``chunks`` pieces along ``dim``: a tuple of views.",
    "reshape": "The tensor with a new shape of the same number of elements (a view where "
               "possible); one dim may be -1.",
    "view": "A view of the tensor with a new shape (``x.view(2, 3)``, ``x.view(-1)``).",
    "view_as": "``self.view(other.shape)``.",
    "reshape_as": "``self.reshape(other.shape)``.",
    "expand_as": "``self.expand(other.shape)``: a broadcast view.",
    "T": "The tensor with its dims reversed (a matrix's transpose).",
    "mT": "The transpose of the last two dims.",
    "mH": "The conjugate transpose of the last two dims (the transpose of a real tensor).",
    "H": "The conjugate transpose of a matrix (the transpose of a real tensor).",
    "adjoint": "The conjugate transpose of the last two dims.",
    "t": "The transpose of a matrix (a 0-d or 1-d tensor as it is).",
    "repeat": "The tensor tiled: repeated ``sizes[i]`` times along dim i.",
    "where": "``ember.where(condition, self, other)``.",
    "take": "The elements at ``index`` of the flattened tensor.",
    "gather": "Values along ``dim`` at ``index``: ``out[i][j] = self[index[i][j]][j]`` for dim 0.",
    "scatter_add": "A copy with ``src`` added at ``index`` along ``dim``.",
    "index_add": "A copy with ``alpha * source`` added at ``index`` along ``dim``.",
    "matmul": "``self @ other``, the matrix product.",
    "addcmul": "``self + value * tensor1 * tensor2``.",
    "addcdiv": "``self + value * tensor1 / tensor2``.",
    "lerp": "``self + weight * (end - self)``.",
    "polygamma": "``ember.polygamma(n, self)``: the n-th derivative of digamma.",
    "uniform_": "Fill with samples uniform on [``a``, ``b``).",
    "normal_": "Fill with samples of a normal distribution (``mean``, ``std``).",
    "bernoulli_": "Fill with 0/1 samples that are 1 with probability ``p``.",
    "exponential_": "Fill with samples of an exponential distribution (rate ``lambd``).",
    "log_normal_": "Fill with samples whose log is normal (``mean``, ``std``).",
    "geometric_": "Fill with samples of a geometric distribution (success probability ``p``).",
    "cauchy_": "Fill with samples of a Cauchy distribution (``median``, ``sigma``).",
    "cpu": "The tensor on the CPU (itself when it is there).",
    "float": "The tensor as float32.",
    "double": "The tensor as float64.",
    "half": "The tensor as float16.",
    "cfloat": "The tensor as complex64.",
    "cdouble": "The tensor as complex128.",
    "bfloat16": "The tensor as bfloat16.",
    "int": "The tensor as int32.",
    "long": "The tensor as int64.",
    "bool": "The tensor as bool.",
    "short": "The tensor as int16.",
    "byte": "The tensor as uint8.",
    "char": "The tensor as int8.",
    "type_as": "The tensor in ``other``'s dtype.",
    "detach": "A tensor sharing this one's memory, outside the autograd graph.",
    "detach_": "Detach this tensor from the autograd graph in place.",
    "requires_grad_": "Set ``requires_grad`` (True by default) and return the tensor.",
    "new_zeros": "Zeros of ``size`` with this tensor's dtype and device (unless given).",
    "new_ones": "Ones of ``size`` with this tensor's dtype and device (unless given).",
    "new_full": "``size`` filled with ``fill_value``, this tensor's dtype and device by default.",
    "new_tensor": "A new tensor of ``data`` with this tensor's dtype and device by default.",
    "new_empty": "A tensor of ``size`` with this tensor's dtype and device (zeros in ember).",
    "new_empty_strided": "``ember.empty_strided(size, stride)`` with this tensor's dtype and "
                         "device (zeros in ember; the strides are checked, not kept).",
    "fill_": "Fill with ``value`` in place.",
    "zero_": "Fill with zeros in place.",
    "resize_as_": "Resize in place to ``other``'s shape.",
    "fill_diagonal_": "Fill the main diagonal with ``fill_value`` in place.",
    "coalesce": "The tensor itself: ember tensors are dense, so nothing to coalesce.",
    "is_coalesced": "True: an ember tensor is dense.",
    "backward": "Compute the gradient of this tensor with respect to the graph's leaves, "
                "accumulated into their ``.grad`` (``gradient`` for a non-scalar tensor).",
    "retain_grad": "Keep ``.grad`` for this non-leaf tensor after ``backward``.",
    "retains_grad": "Whether ``retain_grad()`` was called on this non-leaf tensor.",
    "is_cpu": "Whether the tensor is on the CPU.",
    "layout": "The tensor's layout, always ``ember.strided`` (every ember tensor is dense).",
    "is_mps": "Always False (ember has no MPS backend).",
    "is_xpu": "Always False (ember has no XPU backend).",
    "is_sparse": "Always False (every ember tensor is dense).",
    "is_quantized": "Always False (ember has no quantized tensors).",
    "is_meta": "Always False (ember has no meta tensors).",
    "is_complex": "Whether the dtype is complex (complex64 or complex128).",
    "split_with_sizes": "The tensor split along ``dim`` into pieces of the given sizes.",
    "to_sparse_coo": "The tensor in the sparse COO layout (``to_sparse()``).",
    "hardshrink": "``nn.functional.hardshrink(x, lambd)``: 0 where ``|x| <= lambd``.",
    "prelu": "``nn.functional.prelu(x, weight)``: x where positive, ``weight * x`` elsewhere.",
    "apply_": "Replace each element with ``callable(element)`` (Python, element by element: "
              "slow).",
    "map_": "Replace each element with ``callable(element, other)``, ``tensor`` broadcast to "
            "this shape.",
    "map2_": "Replace each element with ``callable(element, x_element, y_element)``.",
    "is_signed": "Whether the dtype holds negative values (every dtype but bool and uint8).",
    "is_same_size": "Whether ``other`` has the same shape.",
    "is_nonzero": "Whether a one-element tensor is nonzero (``bool(x)``; raises for other "
                  "sizes).",
    "itemsize": "The size of one element in bytes.",
    "nbytes": "The size of the elements in bytes.",
    "ndimension": "The number of dims (as ``dim()``).",
    "get_device": "The device index (-1 on the CPU).",
    "pin_memory": "The tensor itself: ember has no pinned memory (copies go through the host).",
    "is_pinned": "False: ember has no pinned memory.",
    "share_memory_": "Raises NotInEmberError: ember sends tensors between processes by value.",
    "is_shared": "False: ember has no shared-memory tensors.",
    "name": "Always None (ember tensors carry no autograd name).",
}
# what differs from PyTorch's method, where something does
DIFFERS = {
    "view": "``torch.Tensor.view``; ``view(dtype)`` (reinterpreting the bits) raises: use "
            "``.to(dtype)``.",
    "share_memory_": "None as a working method: ``torch.Tensor.share_memory_`` shares the "
                     "memory; ember raises (see Differences from PyTorch).",
}


def document(methods: dict) -> None:
    """Give every method bound without a docstring its own (a property's summary has no
    colon: Sphinx's napoleon reads "X: text" as a type and a description); a method object
    bound under two names keeps the first name's."""
    for name, fn in methods.items():
        if name.startswith("_"):
            continue
        target = fn.__func__ if isinstance(fn, staticmethod) else fn
        if getattr(target, "__doc__", None):
            continue
        counterpart = DIFFERS.get(name, f"torch.Tensor.{name}")
        if name in SUMMARY:
            text = SUMMARY[name]
        elif name.endswith("_") and name[:-1] in methods:
            text = (f"In place: the result of ``x.{name[:-1]}(...)`` written into ``x``, which "
                    "is returned.")
        else:
            continue
        try:
            target.__doc__ = generated(text, counterpart)
        except (AttributeError, TypeError):      # a builtin's docstring cannot be set
            pass
