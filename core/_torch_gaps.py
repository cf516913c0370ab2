"""The PyTorch names programs use, in one place: what `ember torch-api` counts,
and what the honest errors for a name ember lacks are made from.

COMMON lists, per namespace, the torch names that programs commonly use: every public
class of torch.nn, function of torch.nn.functional and optimizer of torch.optim (torch
2.13), and a curated list of torch.* functions and Tensor methods (those that the program
corpus in benchmarks/programs uses, and the ones tutorials and example repositories use
most).  Which of them ember has is read from ember itself at run time, so this module only
ever lists names, never what is implemented.  HINTS says, for some names ember lacks, what
to use instead.
"""
from __future__ import annotations

from .errors import NotInEmberError, UnsupportedError

DOCTOR = "see `ember torch-api` for what ember covers"

_NN = """
AdaptiveAvgPool1d AdaptiveAvgPool2d AdaptiveAvgPool3d AdaptiveLogSoftmaxWithLoss
AdaptiveMaxPool1d AdaptiveMaxPool2d AdaptiveMaxPool3d AlphaDropout AvgPool1d AvgPool2d
AvgPool3d BCELoss BCEWithLogitsLoss BatchNorm1d BatchNorm2d BatchNorm3d Bilinear Buffer CELU
CTCLoss ChannelShuffle CircularPad1d CircularPad2d CircularPad3d ConstantPad1d ConstantPad2d
ConstantPad3d Conv1d Conv2d Conv3d ConvTranspose1d ConvTranspose2d ConvTranspose3d
CosineEmbeddingLoss CosineSimilarity CrossEntropyLoss DataParallel Dropout Dropout1d Dropout2d
Dropout3d ELU Embedding EmbeddingBag FeatureAlphaDropout Flatten Fold FractionalMaxPool2d
FractionalMaxPool3d GELU GLU GRU GRUCell GaussianNLLLoss GroupNorm Hardshrink Hardsigmoid
Hardswish Hardtanh HingeEmbeddingLoss HuberLoss Identity InstanceNorm1d InstanceNorm2d
InstanceNorm3d KLDivLoss L1Loss LPPool1d LPPool2d LPPool3d LSTM LSTMCell LayerNorm LazyLinear
LeakyReLU Linear LocalResponseNorm LogSigmoid LogSoftmax MSELoss MarginRankingLoss MaxPool1d
MaxPool2d MaxPool3d MaxUnpool1d MaxUnpool2d MaxUnpool3d Mish Module ModuleDict ModuleList
MultiLabelMarginLoss MultiLabelSoftMarginLoss MultiMarginLoss MultiheadAttention NLLLoss PReLU
PairwiseDistance Parameter ParameterDict ParameterList PixelShuffle PixelUnshuffle
PoissonNLLLoss RMSNorm RNN RNNBase RNNCell RNNCellBase RReLU ReLU ReLU6 ReflectionPad1d
ReflectionPad2d ReflectionPad3d ReplicationPad1d ReplicationPad2d ReplicationPad3d SELU
Sequential SiLU Sigmoid SmoothL1Loss SoftMarginLoss Softmax Softmax2d Softmin Softplus
Softshrink Softsign SyncBatchNorm Tanh Tanhshrink Threshold Transformer TransformerDecoder
TransformerDecoderLayer TransformerEncoder TransformerEncoderLayer TripletMarginLoss
TripletMarginWithDistanceLoss Unflatten Unfold Upsample UpsamplingBilinear2d
UpsamplingNearest2d ZeroPad1d ZeroPad2d ZeroPad3d functional init utils parameter
"""

_F = """
adaptive_avg_pool1d adaptive_avg_pool2d adaptive_avg_pool3d adaptive_max_pool1d
adaptive_max_pool2d adaptive_max_pool3d affine_grid alpha_dropout avg_pool1d avg_pool2d
avg_pool3d batch_norm bilinear binary_cross_entropy binary_cross_entropy_with_logits celu
channel_shuffle conv1d conv2d conv3d conv_transpose1d conv_transpose2d conv_transpose3d
cosine_embedding_loss cosine_similarity cross_entropy ctc_loss dropout dropout1d dropout2d
dropout3d elu embedding embedding_bag feature_alpha_dropout fold gaussian_nll_loss gelu glu
grid_sample group_norm gumbel_softmax hardshrink hardsigmoid hardswish hardtanh
hinge_embedding_loss huber_loss instance_norm interpolate kl_div l1_loss layer_norm
leaky_relu linear local_response_norm log_softmax logsigmoid lp_pool1d lp_pool2d
margin_ranking_loss max_pool1d max_pool2d max_pool3d max_unpool1d max_unpool2d mish mse_loss
multi_head_attention_forward multi_margin_loss multilabel_margin_loss
multilabel_soft_margin_loss nll_loss normalize one_hot pad pairwise_distance pdist
pixel_shuffle pixel_unshuffle poisson_nll_loss prelu relu relu6 relu_ rms_norm rrelu
scaled_dot_product_attention selu sigmoid silu smooth_l1_loss soft_margin_loss softmax
softmin softplus softshrink softsign tanh tanhshrink threshold triplet_margin_loss unfold
upsample upsample_bilinear upsample_nearest
"""

_OPTIM = """
ASGD Adadelta Adafactor Adagrad Adam AdamW Adamax LBFGS NAdam Optimizer RAdam RMSprop Rprop
SGD SparseAdam lr_scheduler swa_utils
"""

_TORCH = """
Tensor Size Generator device dtype float float32 float64 double half float16 bfloat16 int
int8 int16 int32 int64 long short uint8 bool cfloat complex64
FloatTensor DoubleTensor HalfTensor LongTensor IntTensor ShortTensor CharTensor ByteTensor
BoolTensor
tensor as_tensor from_numpy zeros ones empty full zeros_like ones_like empty_like full_like
arange linspace logspace eye rand randn randint randperm rand_like randn_like randint_like
normal bernoulli multinomial poisson manual_seed seed initial_seed get_rng_state
set_rng_state
cat concat stack split chunk unbind reshape flatten unflatten squeeze unsqueeze transpose
permute movedim swapaxes t narrow select gather scatter scatter_add index_select
index_add index_fill masked_fill masked_select where nonzero argwhere take take_along_dim
flip roll rot90 tile repeat_interleave broadcast_to broadcast_tensors broadcast_shapes
meshgrid cartesian_prod tril triu diag diagonal diag_embed trace hstack vstack dstack
column_stack atleast_1d atleast_2d block_diag ravel
add sub mul div true_divide floor_divide remainder fmod pow exp exp2 expm1 log log2 log10
log1p sqrt rsqrt square abs neg sign sin cos tan asin acos atan atan2 sinh cosh tanh
sigmoid erf erfinv floor ceil round trunc frac clamp clip clamp_min clamp_max reciprocal
lerp addcmul addcdiv maximum minimum fmax fmin logaddexp hypot nan_to_num isnan isinf
isfinite isclose allclose equal eq ne lt le gt ge logical_and logical_or logical_not
logical_xor bitwise_and bitwise_or bitwise_not
sum prod mean std var std_mean var_mean max min amax amin argmax argmin logsumexp
cumsum cumprod logcumsumexp cummax cummin sort argsort topk kthvalue median mode unique
unique_consecutive count_nonzero any all norm dist cdist bincount histc bucketize
searchsorted
matmul mm bmm mv dot vdot inner outer ger einsum tensordot addmm addmv baddbmm addbmm kron
cross
softmax log_softmax relu gelu silu dropout numel is_tensor is_floating_point is_nonzero
no_grad enable_grad inference_mode set_grad_enabled is_grad_enabled
save load compile jit autograd nn optim utils cuda backends linalg fft special distributions
sparse multiprocessing amp autocast random testing onnx hub mps xpu accelerator
set_default_dtype get_default_dtype set_default_device get_default_device
set_printoptions set_num_threads get_num_threads set_float32_matmul_precision
use_deterministic_algorithms finfo iinfo typename is_storage
"""

_TENSOR = """
shape size dim ndim ndimension numel nelement dtype device is_cuda is_cpu is_mps is_xpu
requires_grad grad grad_fn is_leaf data item tolist numpy cpu cuda to type type_as
float double half bfloat16 int long short bool byte char
clone detach detach_ requires_grad_ backward retain_grad register_hook contiguous
is_contiguous view view_as reshape reshape_as flatten unflatten squeeze unsqueeze
squeeze_ unsqueeze_ transpose transpose_ permute t T mT expand expand_as repeat
repeat_interleave narrow select unbind chunk split unfold flip roll index_select gather
scatter scatter_ scatter_add scatter_add_ index_add index_add_ index_fill index_fill_
masked_fill masked_fill_ masked_select masked_scatter_ where nonzero argwhere take
new_zeros new_ones new_full new_empty new_tensor zero_ fill_ fill_diagonal_ copy_
uniform_ normal_ bernoulli_ exponential_ random_ multinomial bernoulli
add add_ sub sub_ mul mul_ div div_ pow pow_ exp exp_ log log_ sqrt sqrt_ abs abs_ neg
neg_ sign sin cos tanh tanh_ sigmoid sigmoid_ relu relu_ clamp clamp_ clip clip_
clamp_min clamp_max floor ceil round trunc reciprocal rsqrt square lerp lerp_ addcmul
addcmul_ addcdiv addcdiv_ addmm addmm_ erf erfinv maximum minimum remainder
eq ne lt le gt ge eq_ isnan isinf isfinite isclose allclose equal logical_not logical_and
logical_or
sum prod mean std var max min amax amin argmax argmin logsumexp softmax log_softmax
cumsum cumprod sort argsort topk kthvalue median any all norm count_nonzero
matmul mm bmm mv dot outer tril triu tril_ triu_ diag diagonal trace
pin_memory share_memory_ is_shared element_size nbytes itemsize get_device data_ptr
stride storage apply_ map_ sum_to_size
"""

_LINALG = """
norm vector_norm matrix_norm cross matmul vecdot diagonal inv solve det slogdet svd
svdvals qr eigh eigvalsh eig cholesky lstsq pinv matrix_rank matrix_power
"""

_DATA = """
Dataset IterableDataset TensorDataset ConcatDataset Subset DataLoader Sampler RandomSampler
SequentialSampler BatchSampler SubsetRandomSampler WeightedRandomSampler DistributedSampler
random_split default_collate get_worker_info
"""

COMMON = {"torch": _TORCH, "torch.nn": _NN, "torch.nn.functional": _F, "torch.optim": _OPTIM,
          "Tensor": _TENSOR, "torch.linalg": _LINALG, "torch.utils.data": _DATA}
COMMON = {ns: tuple(dict.fromkeys(text.split())) for ns, text in COMMON.items()}

HINTS = {
    "torch.sparse": "ember tensors are dense; keep the matrix dense (a dense @ works)",
    "torch.sparse_coo_tensor": "ember tensors are dense; build the dense matrix",
    "torch.spmm": "ember tensors are dense: use torch.mm",
    "Tensor.to_sparse": "ember tensors are dense: drop .to_sparse()",
    "torch.jit": "ember.compile captures and replays a function (a different API)",
    "torch.fft": "no FFT primitive yet",
    "torch.distributions": "no distributions package yet; sample with ember.randn/rand",
    "torch.complex64": "ember has no complex dtypes",
    "torch.cfloat": "ember has no complex dtypes",
    "Tensor.data_ptr": "ember does not expose device memory addresses",
    "Tensor.storage": "ember does not expose storages",
    "Tensor.stride": "ember's backends choose their own layouts; strides are not part of "
                     "its API",
}


def _qualified(namespace: str, name: str) -> str:
    return f"{namespace}.{name}" if namespace else name


def missing(namespace: str, name: str, torch_name: str | None = None) -> NotInEmberError:
    """The error for `name` looked up in ember's `namespace` ('' for ember itself, 'nn',
    'nn.functional', 'Tensor', ...) and not found."""
    torch_ns = "Tensor" if namespace == "Tensor" else ("torch." + namespace).rstrip(".")
    key = torch_name or _qualified(torch_ns, name)
    where = "ember." + namespace if namespace else "ember"
    known = name in COMMON.get(torch_ns, ())
    hint = HINTS.get(key)
    if known or hint:
        text = (f"ember has no {key} yet: {where} lacks {name!r}"
                + (f" ({hint})" if hint else "") + f"; {DOCTOR}")
    else:
        text = (f"{where} has no attribute {name!r}; if {key} is a PyTorch name, ember does "
                f"not have it yet ({DOCTOR})")
    return NotInEmberError(text)


def submodule_or_missing(package: str, namespace: str, name: str):
    """A module's __getattr__: its submodule `name` if there is one (ember.nn.parallel is
    imported on first use, as torch.nn.parallel is there), else the ember-gap error."""
    import importlib
    import importlib.util
    if not name.startswith("_"):
        try:
            found = importlib.util.find_spec(f"{package}.{name}") is not None
        except (ImportError, AttributeError, ValueError):
            found = False
        if found:
            return importlib.import_module(f"{package}.{name}")
    raise missing(namespace, name)


def gap(what: str, why: str) -> UnsupportedError:
    """The error for a PyTorch option ember's function does not take (yet)."""
    return UnsupportedError(f"ember has no {what} yet: {why}; {DOCTOR}")


def _resolve(namespace: str):
    import importlib

    import ember
    if namespace == "Tensor":
        return ember.Tensor
    if namespace == "torch":
        return ember
    return importlib.import_module("ember" + namespace[len("torch"):])


def coverage() -> dict:
    """{namespace: {"have": [...], "missing": [...]}} for every COMMON namespace."""
    out = {}
    for ns, names in COMMON.items():
        try:
            target = _resolve(ns)
        except ImportError:
            target = None
        have = [n for n in names if target is not None and _has(target, n)]
        out[ns] = {"have": have, "missing": [n for n in names if n not in have]}
    return out


def _has(target, name: str) -> bool:
    try:
        getattr(target, name)
    except Exception:  # noqa: BLE001  (a lookup that fails in any way: ember lacks it)
        return False
    return True


def tensor_getattr(self, name: str):
    """Tensor.__getattr__: called only when normal lookup failed (no cost on the hot
    path); private and dunder names fail plainly (copy, pickle and NumPy probe those)."""
    if name.startswith("_"):
        raise AttributeError(name)
    raise missing("Tensor", name)
