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
    "Tensor.storage": "ember does not expose storages",
}


def _qualified(namespace: str, name: str) -> str:
    return f"{namespace}.{name}" if namespace else name


def missing(namespace: str, name: str, torch_name: str | None = None) -> NotInEmberError:
    """The error for `name` looked up in ember's `namespace` ('' for ember itself, 'nn',
    'nn.functional', 'Tensor', ...) and not found."""
    torch_ns = "Tensor" if namespace == "Tensor" else ("torch." + namespace).rstrip(".")
    key = torch_name or _qualified(torch_ns, name)
    where = "ember." + namespace if namespace else "ember"
    known = name in COMMON.get(torch_ns, ()) or (torch_ns == "Tensor" and
                                                 name in TORCH_TENSOR_NAMES)
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


def only_default(where: str, param: str, value, named=()):
    """Refuse a setting ember has no other value of: None (torch's default), or an object
    torch names as its default (`named`: 'preserve_format', 'strided', ...), is fine;
    anything else raises NotInEmberError naming the function and the parameter."""
    if value is None or str(value).rsplit(".", 1)[-1] in named:
        return
    raise NotInEmberError(
        f"{where}({param}={value!r}): ember has only the default {param} (its backends "
        f"choose their own layouts; ember has no memory formats or sparse layouts); drop "
        f"{param}=")


def gap(what: str, why: str) -> UnsupportedError:
    """The error for a PyTorch option ember's function does not take (yet)."""
    return UnsupportedError(f"ember has no {what} yet: {why}; {DOCTOR}")


# Every public attribute of torch.Tensor in PyTorch 2.13.0 (generated with
# `sorted(n for n in dir(torch.Tensor) if not n.startswith("_"))`): reading one that ember
# lacks raises the ember-gap error (install_tensor_gaps) instead of a bare AttributeError
# with a misleading suggestion
_TORCH_TENSOR = """
H T abs abs_ absolute absolute_ acos acos_ acosh acosh_ add add_ addbmm addbmm_ addcdiv
addcdiv_ addcmul addcmul_ addmm addmm_ addmv addmv_ addr addr_ adjoint all allclose amax
amin aminmax angle any apply_ arccos arccos_ arccosh arccosh_ arcsin arcsin_ arcsinh
arcsinh_ arctan arctan2 arctan2_ arctan_ arctanh arctanh_ argmax argmin argsort argwhere
as_strided as_strided_ as_strided_scatter as_subclass asin asin_ asinh asinh_ atan atan2
atan2_ atan_ atanh atanh_ backward baddbmm baddbmm_ bernoulli bernoulli_ bfloat16 bincount
bitwise_and bitwise_and_ bitwise_left_shift bitwise_left_shift_ bitwise_not bitwise_not_
bitwise_or bitwise_or_ bitwise_right_shift bitwise_right_shift_ bitwise_xor bitwise_xor_ bmm
bool broadcast_to byte cauchy_ ccol_indices cdouble ceil ceil_ cfloat chalf char cholesky
cholesky_inverse cholesky_solve chunk clamp clamp_ clamp_max clamp_max_ clamp_min clamp_min_
clip clip_ clone coalesce col_indices conj conj_physical conj_physical_ const_data_ptr
contiguous copy_ copysign copysign_ corrcoef cos cos_ cosh cosh_ count_nonzero cov cpu cross
crow_indices cuda cummax cummin cumprod cumprod_ cumsum cumsum_ data data_ptr deg2rad
deg2rad_ dense_dim dequantize det detach detach_ device diag diag_embed diagflat diagonal
diagonal_scatter diff digamma digamma_ dim dim_order dist div div_ divide divide_ dot double
dsplit dtype eig element_size eq eq_ equal erf erf_ erfc erfc_ erfinv erfinv_ exp exp2 exp2_
exp_ expand expand_as expm1 expm1_ exponential_ fill_ fill_diagonal_ fix fix_ flatten flip
fliplr flipud float float_power float_power_ floor floor_ floor_divide floor_divide_ fmax
fmin fmod fmod_ frac frac_ frexp gather gcd gcd_ ge ge_ geometric_ geqrf ger get_device grad
grad_dtype grad_fn greater greater_ greater_equal greater_equal_ gt gt_ half hardshrink
hash_tensor heaviside heaviside_ histc histogram hsplit hypot hypot_ i0 i0_ igamma igamma_
igammac igammac_ imag index index_add index_add_ index_copy index_copy_ index_fill
index_fill_ index_put index_put_ index_reduce index_reduce_ index_select indices inner int
int_repr inverse ipu is_coalesced is_complex is_conj is_contiguous is_cpu is_cuda
is_distributed is_floating_point is_inference is_ipu is_leaf is_maia is_meta is_mkldnn
is_mps is_mtia is_neg is_nested is_nonzero is_pinned is_quantized is_same_size is_set_to
is_shared is_signed is_sparse is_sparse_csr is_vulkan is_xla is_xpu isclose isfinite isinf
isnan isneginf isposinf isreal istft item itemsize kron kthvalue layout lcm lcm_ ldexp
ldexp_ le le_ lerp lerp_ less less_ less_equal less_equal_ lgamma lgamma_ log log10 log10_
log1p log1p_ log2 log2_ log_ log_normal_ log_softmax logaddexp logaddexp2 logcumsumexp
logdet logical_and logical_and_ logical_not logical_not_ logical_or logical_or_ logical_xor
logical_xor_ logit logit_ logsumexp long lstsq lt lt_ lu lu_solve mH mT map2_ map_
masked_fill masked_fill_ masked_scatter masked_scatter_ masked_select matmul matrix_exp
matrix_power max maximum mean median min minimum mm mode module_load moveaxis movedim msort
mtia mul mul_ multinomial multiply multiply_ mv mvlgamma mvlgamma_ name nan_to_num
nan_to_num_ nanmean nanmedian nanquantile nansum narrow narrow_copy nbytes ndim ndimension
ne ne_ neg neg_ negative negative_ nelement new new_empty new_empty_strided new_full
new_ones new_tensor new_zeros nextafter nextafter_ nonzero nonzero_static norm normal_
not_equal not_equal_ numel numpy orgqr ormqr outer output_nr permute pin_memory pinverse
polygamma polygamma_ positive pow pow_ prelu prod put put_ q_per_channel_axis
q_per_channel_scales q_per_channel_zero_points q_scale q_zero_point qr qscheme quantile
rad2deg rad2deg_ random_ ravel real reciprocal reciprocal_ record_stream register_hook
register_post_accumulate_grad_hook reinforce relu relu_ remainder remainder_ renorm renorm_
repeat repeat_interleave requires_grad requires_grad_ reshape reshape_as resize resize_
resize_as resize_as_ resize_as_sparse_ resolve_conj resolve_neg retain_grad retains_grad
roll rot90 round round_ row_indices rsqrt rsqrt_ scatter scatter_ scatter_add scatter_add_
scatter_reduce scatter_reduce_ select select_scatter set_ sgn sgn_ shape share_memory_ short
sigmoid sigmoid_ sign sign_ signbit sin sin_ sinc sinc_ sinh sinh_ size slice_inverse
slice_scatter slogdet smm softmax solve sort sparse_dim sparse_mask sparse_resize_
sparse_resize_and_clear_ split split_with_sizes sqrt sqrt_ square square_ squeeze squeeze_
sspaddmm std stft storage storage_offset storage_type stride sub sub_ subtract subtract_ sum
sum_to_size svd swapaxes swapaxes_ swapdims swapdims_ symeig t t_ take take_along_dim tan
tan_ tanh tanh_ tensor_split tile to to_dense to_mkldnn to_padded_tensor to_sparse
to_sparse_bsc to_sparse_bsr to_sparse_coo to_sparse_csc to_sparse_csr tolist topk trace
transpose transpose_ triangular_solve tril tril_ triu triu_ true_divide true_divide_ trunc
trunc_ type type_as unbind unflatten unfold uniform_ unique unique_consecutive unsafe_chunk
unsafe_split unsafe_split_with_sizes unsqueeze unsqueeze_ untyped_storage values var vdot
view view_as volatile vsplit where xlogy xlogy_ xpu zero_
"""
TORCH_TENSOR_NAMES = tuple(_TORCH_TENSOR.split())


class _Gap:
    """A PyTorch Tensor attribute ember lacks: reading it raises the ember-gap error (an
    AttributeError, so hasattr() says no).  One such descriptor per known name, rather than
    a Tensor.__getattr__: a class with __getattr__ pays for the hook on every attribute
    read, about 0.25 us an op (measured)."""

    def __init__(self, name: str):
        self.name = name

    def __get__(self, obj, owner=None):
        raise missing("Tensor", self.name)


def install_tensor_gaps(cls) -> None:
    """Give cls (Tensor) a _Gap for every commonly used Tensor name it does not have."""
    for name in (*TORCH_TENSOR_NAMES, *COMMON.get("Tensor", ()),
                 *(k.split(".", 1)[1] for k in HINTS if k.startswith("Tensor."))):
        if name.isidentifier() and not name.startswith("_") and not hasattr(cls, name):
            setattr(cls, name, _Gap(name))
