"""No parameter accepted and ignored: every public function's parameters are read by its body.

Read from the code objects (the bytecode's loads of each parameter, and the names nested
functions read), over every public module of ember (each module's __all__: its functions,
and the public methods, __init__ and __call__ of its classes), Tensor's methods and
properties, the nn layers' constructors and forwards, the optimizers' constructors and
steps, ember.amp and ember.compile.  A function whose whole body is one `raise` (after
imports) refuses every call, and one whose body is only its docstring (a Protocol's member)
declares a signature: neither is asked about its parameters.  What remains unread is in
ALLOWED, each with the reason torch's behaviour is still what ember does.
"""
from __future__ import annotations

import ast
import dis
import importlib
import inspect
import pkgutil
import textwrap
import types

import ember
import ember.amp
import ember.linalg
import ember.nn
import ember.nn.functional
import ember.optim
import ember.special

# (qualified name, parameter) -> why leaving it unread is what torch does
ALLOWED = {
    ("ember.nn.LazyConv1d.initialize_parameters", "args"): "the forward's other arguments "
        "(ConvTranspose's output_size), passed on by the lazy hook: the weight's shape does "
        "not depend on them (torch's take and ignore them too)",
    ("ember.nn.LazyConv1d.initialize_parameters", "kwargs"): "as args",
    ("ember.random.fork_rng", "devices"): "ember's devices all draw from the one host "
        "stream (ARCHITECTURE.md section 5): forking it forks every device named",
    ("ember.random.fork_rng", "device_type"): "as devices: one stream for every device type",
    ("ember.random.fork_rng", "_caller"): "torch's text for its warning about forking many "
        "devices; with one stream ember has nothing to warn about",
    ("ember.random.fork_rng", "_devices_kw"): "as _caller",
    ("ember.Tensor.__init__", "args"): "Tensor.__new__ is the legacy constructor and reads "
                                       "them; __init__ only lets object.__init__ accept them",
    ("ember.Tensor.__init__", "kwargs"): "as args",
    ("ember.argsort", "stable"): "every backend's argsort is stable (the declaration says "
                                 "so), which stable=True asks for and stable=False allows",
    ("ember.sort", "stable"): "as argsort",
    ("ember.topk", "sorted"): "sorted=False lets torch return the k values in any order; "
                              "ember's sorted order is one of them",
    ("ember.unique", "sorted"): "as topk: sorted=False leaves the order to the "
                                "implementation, and ember's is ascending",
    ("ember.sparse_coo_tensor", "is_coalesced"): "a promise that the indices hold no "
                                                 "repeats; ember builds the dense tensor, "
                                                 "which sums repeats either way",
    ("ember.use_deterministic_algorithms", "warn_only"): "chooses a warning over an error "
                                                         "for nondeterministic kernels, and "
                                                         "ember has none",
    ("ember.is_storage", "obj"): "ember exposes no storages: nothing is one (torch answers "
                                 "isinstance(obj, Storage))",
    ("nn.functional.gumbel_softmax", "eps"): "deprecated and unused in torch too",
    ("ember.linalg.svd", "driver"): "picks one of cuSOLVER's SVD algorithms in torch (CUDA "
                                    "only); the decomposition is the same (core/linalg's "
                                    "owners may refuse it off CUDA, as torch does)",
    ("ember.linalg.svdvals", "driver"): "as linalg.svd",
    ("ember.expand_copy", "implicit"): "torch's tracing flag (whether the expand was "
                                       "implicit); it never changes the result",
    ("ember.isin", "assume_unique"): "a promise that lets torch take a faster sort-based "
                                     "path; the answer is the same either way",
    ("ember.linalg.solve_ex", "check_errors"): "ember's solve refuses a singular A in both "
                                               "modes (a loud error, never a silent answer), "
                                               "where torch's check_errors=False returns an "
                                               "unspecified result with info > 0",
    ("Tensor.type", "non_blocking"): "allows an asynchronous copy; ember's copy is complete "
                                     "when type() returns, which that allows",
    ("Tensor.copy_", "non_blocking"): "as Tensor.type's: ember's copy is complete when copy_ "
                                      "returns, which non_blocking=True allows",
    ("Tensor.to_dense", "masked_grad"): "concerns sparse inputs only; every ember tensor is "
                                        "strided, where torch ignores it too",
    ("Tensor.pin_memory", "device"): "deprecated and ignored in torch too",
    ("Tensor.is_pinned", "device"): "deprecated and ignored in torch too",
    ("nn.Identity.__init__", "args"): "torch's Identity takes any arguments and ignores "
                                      "them (documented: 'any argument (unused)')",
    ("nn.Identity.__init__", "kwargs"): "as args",
    # the whole public API (every module's __all__), scanned since 2026-12-03
    ("ember.array_api.__array_namespace_info__.default_dtypes", "device"):
        "the array API's default dtypes for a device; ember's are the same on every device, "
        "which the answer states for any device",
    ("ember.array_api.argsort", "stable"): "as ember.argsort",
    ("ember.autograd.Function.__init__", "args"): "torch's Function.__init__ takes any "
                                                  "arguments; calling such a legacy instance "
                                                  "is refused, as torch refuses it",
    ("ember.autograd.Function.__init__", "kwargs"): "as args",
    ("ember.distributed.barrier", "device_ids"): "names the GPU NCCL's barrier runs its "
                                                 "all-reduce on in torch; ember's barrier is "
                                                 "its communicator's own and waits for every "
                                                 "rank either way",
    ("ember.distributed.checkpoint.FileSystemWriter.__init__", "per_thread_copy_ahead"):
        "bytes each of torch's writer threads stages ahead of writing; ember writes from one "
        "thread (the only thread_count it takes) and the files hold the same bytes",
    ("ember.distributed.checkpoint.load", "process_group"): "ember's load reads each rank's "
                                                            "range from the files without a "
                                                            "collective: no group takes part",
    ("ember.distributed.checkpoint.load", "no_dist"): "as process_group: load runs no "
                                                      "collective in either mode",
    ("ember.distributed.fsdp.ModuleWrapPolicy.__call__", "nonwrapped_numel"):
        "the auto-wrap protocol's argument; torch's ModuleWrapPolicy ignores it too "
        "(size_based_auto_wrap_policy reads it)",
    ("ember.distributed.fsdp.transformer_auto_wrap_policy", "nonwrapped_numel"):
        "as ModuleWrapPolicy's: torch's transformer policy ignores it too",
    ("ember.distributions.AffineTransform.log_abs_det_jacobian", "y"):
        "the transform protocol's output argument; torch's computes the Jacobian from x "
        "alone too",
    ("ember.distributions.ExpTransform.log_abs_det_jacobian", "y"): "as AffineTransform's",
    ("ember.distributions.SigmoidTransform.log_abs_det_jacobian", "y"): "as AffineTransform's",
    ("ember.distributions.TanhTransform.log_abs_det_jacobian", "y"): "as AffineTransform's",
    ("ember.nn.parallel.DistributedDataParallel.__init__", "dim"):
        "the dimension torch's DDP scattered a batch along over several devices of one "
        "process; with one device per process (the only form torch 2.x keeps) inputs move "
        "whole to device_ids[0] and dim picks nothing",
    ("ember.nn.parallel.DistributedDataParallel.__init__", "gradient_as_bucket_view"):
        "lets torch's .grad tensors be views into the communication buckets to save memory; "
        "the gradients' values are the same",
    ("ember.nn.parallel.DistributedDataParallel.__init__", "static_graph"):
        "a promise that every iteration uses the same parameters, which lets torch skip its "
        "search for unused ones; ember counts each forward's uses either way, with the "
        "same gradients",
    ("ember.nn.parallel.data_parallel", "dim"): "one device (the only count ember takes) "
                                                "receives the whole batch: scattering along "
                                                "dim has nothing to choose",
    ("ember.nn.utils.clip_grad_value_", "foreach"): "picks torch's multi-tensor kernels; the "
                                                    "values are the same either way",
    ("ember.nn.utils.clip_grads_with_norm_", "foreach"): "as clip_grad_value_'s",
    ("ember.nn.utils.get_total_norm", "foreach"): "as clip_grad_value_'s",
    ("ember.onnx.export", "artifacts_dir"): "where torch's dynamo exporter writes report and "
                                            "profile files, which ember refuses (report=, "
                                            "profile=, dump_exported_program=): nothing is "
                                            "written there",
    ("ember.profiler.EventList.key_averages", "group_by_overload_name"):
        "ember's ops have one overload each (no aten overload names): grouping by overload "
        "name gives the groups grouping by name does",
    ("ember.profiler.profile.key_averages", "group_by_overload_name"):
        "as EventList.key_averages'",
}

# modules whose every unread parameter has one reason
ALLOWED_MODULES = {
    "ember.jit.": "TorchScript as torch runs it with PYTORCH_JIT=0 (ember runs Python): "
                  "script/trace return the code itself, so the compiler's inputs (type "
                  "hints, example inputs, trace checks, its private arguments) have nothing "
                  "to act on, as in torch with the JIT off",
}

_LOADS = {"LOAD_FAST", "LOAD_FAST_CHECK", "LOAD_FAST_AND_CLEAR", "LOAD_FAST_LOAD_FAST",
          "LOAD_DEREF", "LOAD_CLOSURE", "LOAD_FAST_BORROW",
          "LOAD_FAST_BORROW_LOAD_FAST_BORROW"}


def _public_functions():
    """(qualified name, function) for every public callable the module docstring names."""
    seen = set()

    def add(name, obj):
        obj = inspect.unwrap(obj) if callable(obj) else obj
        if isinstance(obj, types.FunctionType) and id(obj) not in seen:
            seen.add(id(obj))
            yield name, obj

    namespaces = {"ember": ember, "nn.functional": ember.nn.functional,
                  "ember.linalg": ember.linalg, "ember.special": ember.special,
                  "ember.amp": ember.amp}
    for prefix, module in namespaces.items():
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name)
            if isinstance(obj, type):
                yield from add(f"{prefix}.{name}.__init__", obj.__dict__.get("__init__"))
            else:
                yield from add(f"{prefix}.{name}", obj)
    yield from add("ember.compile", ember.compile)
    yield from add("ember.export", ember.export.export)
    for name, obj in vars(ember.Tensor).items():
        yield from add(f"Tensor.{name}", obj.fget if isinstance(obj, property) else obj)
    for name in ember.nn.__all__:
        cls = getattr(ember.nn, name)
        if isinstance(cls, type):
            for member in ("__init__", "forward"):
                yield from add(f"nn.{name}.{member}", cls.__dict__.get(member))
    for name in ember.optim.__all__:
        cls = getattr(ember.optim, name)
        if isinstance(cls, type):
            for member in ("__init__", "step"):
                yield from add(f"optim.{name}.{member}", cls.__dict__.get(member))
    for prefix, module in _public_modules():
        for name in getattr(module, "__all__", ()):
            obj = getattr(module, name, None)
            if not isinstance(obj, type):
                yield from add(f"{prefix}.{name}", obj)
                continue
            # its own members and those it inherits from ember's classes (a private base
            # such as distributions' _LocationScale holds Normal's __init__)
            members = [(m, v) for klass in reversed(obj.__mro__)
                       if klass.__module__.startswith("ember")
                       for m, v in vars(klass).items()]
            for member, value in members:
                if member.startswith("_") and member not in ("__init__", "__call__"):
                    continue
                if isinstance(value, (staticmethod, classmethod)):
                    value = value.__func__
                elif isinstance(value, property):
                    value = value.fget
                yield from add(f"{prefix}.{name}.{member}", value)


# ember's own tooling (the CLI, the test harness, the demo, backends' internals) and the
# torch-alias launcher take no torch parameters; every other public module is scanned
NOT_API = ("testing", "tools", "cli", "backends", "torch_alias", "demo", "__main__")


def _public_modules():
    for info in pkgutil.walk_packages(ember.__path__, "ember."):
        parts = info.name.split(".")[1:]
        if parts[0] in NOT_API or any(p.startswith("_") for p in parts):
            continue
        yield info.name, importlib.import_module(info.name)


def _parameters(code) -> list:
    n = code.co_argcount + code.co_kwonlyargcount
    names = list(code.co_varnames[:n])
    if code.co_flags & inspect.CO_VARARGS:
        names.append(code.co_varnames[n])
        n += 1
    if code.co_flags & inspect.CO_VARKEYWORDS:
        names.append(code.co_varnames[n])
    return [p for p in names if p not in ("self", "cls")]


def _read(code) -> set:
    used = set(code.co_cellvars)           # read by a nested function or lambda
    for ins in dis.get_instructions(code):
        if ins.opname in _LOADS:
            used.update(ins.argval if isinstance(ins.argval, tuple) else (ins.argval,))
    return used


def _only_raises(fn) -> bool:
    """Whether the body (after a docstring) is a single raise, after imports only: a
    refusal of every call; or nothing but the docstring (or `...`): a Protocol member's
    declaration, whose parameters are the signature a backend implements."""
    try:
        source = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):
        return False
    try:
        node = ast.parse(source).body[0]
    except SyntaxError:                    # a lambda inside a larger expression
        return False
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    body = node.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    while body and isinstance(body[0], (ast.Import, ast.ImportFrom)):
        body = body[1:]
    if not body and node.body:                                   # a docstring only
        return True
    if len(body) == 1 and isinstance(body[0], ast.Expr) and \
            isinstance(body[0].value, ast.Constant) and body[0].value.value is Ellipsis:
        return True
    return len(body) == 1 and isinstance(body[0], ast.Raise)


def _unread() -> dict:
    found = {}
    for name, fn in _public_functions():
        code = fn.__code__
        unread = [p for p in _parameters(code) if p not in _read(code)]
        if unread and not _only_raises(fn):
            for p in unread:
                found[(name, p)] = f"{code.co_filename}:{code.co_firstlineno}"
    return found


def test_every_public_parameter_is_read_or_allowed_with_a_reason():
    found = _unread()
    unexplained = {k: v for k, v in found.items() if k not in ALLOWED and
                   not k[0].startswith(tuple(ALLOWED_MODULES))}
    assert unexplained == {}, "parameters the body never reads (use them, refuse "\
        "non-default values with NotInEmberError, or add a reason to ALLOWED):\n" + \
        "\n".join(f"  {name}({param}) at {where}" for (name, param), where in
                  sorted(unexplained.items()))
    stale = sorted(k for k in ALLOWED if k not in found)
    assert stale == [], f"ALLOWED entries no longer needed: {stale}"


def test_the_scan_sees_what_it_should():
    names = dict(_public_functions())
    # a sample from each namespace is scanned (the scan would pass vacuously otherwise)
    for name in ("ember.cdist", "nn.functional.conv2d", "ember.linalg.svd", "Tensor.to",
                 "nn.Linear.__init__", "optim.Adam.__init__", "ember.compile",
                 "ember.amp.autocast.__init__", "Tensor.to_sparse", "ember.clone",
                 "nn.Module.forward", "ember.utils.checkpoint.checkpoint",
                 "ember.utils.data.DataLoader.__init__", "ember.fft.rfft",
                 "ember.distributed.all_reduce", "ember.func.functional_call",
                 "ember.profiler.profile.__init__", "ember.distributions.Categorical.__init__",
                 "ember.distributions.Cauchy.__init__"):   # Cauchy: inherited from _LocationScale
        assert name in names, name
    assert len(names) > 2300

    def ignores(x, y, z=None):
        return x + y
    code = ignores.__code__
    assert [p for p in _parameters(code) if p not in _read(code)] == ["z"]
    assert _only_raises(names["nn.Module.forward"])


# --- what the scan found, each now read: the behaviour against torch ------------------------

def test_settings_ember_has_only_the_default_of_are_refused_by_name():
    import pytest
    x = ember.ones(2, 3)
    for call in (lambda: ember.tril_indices(3, 3, layout="sparse_coo"),
                 lambda: ember.triu_indices(3, 3, layout="sparse_coo"),
                 lambda: x.type(ember.float64, memory_format="channels_last")):
        with pytest.raises(ember.errors.NotInEmberError, match="has only the default"):
            call()
    # memory formats are real (ops/layout.py): a name that is not one is refused as torch
    # refuses it, naming what was expected
    for call in (lambda: ember.rand_like(x, memory_format="channels_last"),
                 lambda: ember.randn_like(x, memory_format="channels_last"),
                 lambda: ember.randint_like(x, 5, memory_format="channels_last"),
                 lambda: ember.clone(x, memory_format="channels_last")):
        with pytest.raises(ember.errors.EmberTypeError, match="must be an ember.memory_format"):
            call()
    # torch's defaults, given or left out, are fine
    assert ember.clone(x, memory_format=ember.preserve_format).shape == (2, 3)
    assert ember.tril_indices(3, 3, layout="torch.strided").shape == (2, 6)
    assert ember.randint_like(x, 5, requires_grad=True).requires_grad
    with pytest.raises(ember.EmberError, match="unexpected keyword argument 'bogus'"):
        x.type(ember.float64, bogus=1)
    assert x.type(ember.float64, **{"async": True}).dtype is ember.float64
    with pytest.raises(ember.EmberError, match="must be Tensor, not int"):
        ember.is_complex(3)
    assert ember.Generator("cpu").device == ember.device("cpu")


def test_what_torch_checks_with_a_parameter_ember_checks_too():
    import numpy as np
    import pytest
    torch = pytest.importorskip("torch")
    counts = [1, 3]
    with pytest.raises(RuntimeError, match="Invalid output_size, expected 4 but got 3"):
        torch.repeat_interleave(torch.tensor(counts), 2, output_size=3)
    with pytest.raises(ember.EmberError, match="Invalid output_size, expected 4 but got 3"):
        ember.repeat_interleave(ember.tensor(counts), 2, output_size=3)
    assert ember.repeat_interleave(ember.tensor(counts), output_size=4).tolist() == \
        torch.repeat_interleave(torch.tensor(counts), output_size=4).tolist()
    for bad, match in (([[0, 5]], "size is 3 but found index 5"),
                       ([[0, -1]], "found negative index -1 for dim 0")):
        with pytest.raises(RuntimeError, match=match):
            torch.sparse_coo_tensor(bad, [1.0, 2.0], (3,), check_invariants=True)
        with pytest.raises(ember.EmberError, match=match):
            ember.sparse_coo_tensor(bad, [1.0, 2.0], (3,), check_invariants=True)
    # cdist's compute_mode: torch's rule (the product form past 25 rows or when asked, the
    # differences otherwise), so ember's distances are torch's, and an unknown mode fails
    r = np.random.default_rng(4)
    for rows in (5, 30):
        a = r.standard_normal((rows, 4)).astype(np.float32)
        b = r.standard_normal((7, 4)).astype(np.float32)
        for mode in ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
                     "donot_use_mm_for_euclid_dist"):
            want = torch.cdist(torch.tensor(a), torch.tensor(b), compute_mode=mode).numpy()
            got = ember.cdist(ember.tensor(a), ember.tensor(b), compute_mode=mode).numpy()
            np.testing.assert_allclose(got, want, rtol=0, atol=2e-6, err_msg=mode)
            if "donot" in mode or rows <= 25 and "if_necessary" in mode:
                np.testing.assert_array_equal(got, want)       # the same arithmetic
    with pytest.raises(ember.EmberError, match="bogus is not a valid value for compute_mode"):
        ember.cdist(ember.ones(2, 3), ember.ones(2, 3), compute_mode="bogus")


# --- optimizers: a flag stored in the parameter group must be read by the step ---------------
# The scan above sees a constructor "read" every flag, because it passes them all into the
# group dict (defaults); that is how Adadelta/Adamax/NAdam/RAdam held foreach= and
# differentiable= without acting on them.  Here each key an optimizer stores must appear in
# the code its step runs (step and the methods and module functions it reaches).

# (optimizer, group key) -> why the step does not need to read it
GROUP_ALLOWED = {

}


def _step_constants(cls) -> set:
    """String constants in the code reachable from cls.step: the class's methods other
    than __init__ (its bases' too) and the module functions they name, transitively."""
    seen, found, todo = set(), set(), []
    for klass in cls.__mro__:
        for name, member in vars(klass).items():
            if name != "__init__" and isinstance(member, types.FunctionType):
                todo.append(member)
    while todo:
        fn = todo.pop()
        if id(fn) in seen:
            continue
        seen.add(id(fn))
        codes = [fn.__code__]
        while codes:
            code = codes.pop()
            for const in code.co_consts:
                if isinstance(const, str):
                    found.add(const)
                elif isinstance(const, types.CodeType):
                    codes.append(const)
            for name in code.co_names:
                target = fn.__globals__.get(name)
                if isinstance(target, types.FunctionType) and \
                        target.__module__.startswith("ember.optim"):
                    todo.append(target)
                elif isinstance(target, types.ModuleType) and \
                        target.__name__.startswith("ember.optim"):
                    todo.extend(v for v in vars(target).values()
                                if isinstance(v, types.FunctionType))
    return found


def test_every_optimizer_group_flag_is_read_by_the_step():
    unread = []
    for name in ember.optim.__all__:
        cls = getattr(ember.optim, name)
        if not isinstance(cls, type) or cls is ember.optim.Optimizer:
            continue
        opt = cls([ember.nn.Parameter(ember.zeros(2))])
        read = _step_constants(cls)
        unread += [(name, key) for key in opt.defaults
                   if key not in read and (name, key) not in GROUP_ALLOWED]
    assert unread == [], f"group flags no step reads (act on them or refuse them): {unread}"


def test_optimizer_flags_ember_cannot_honour_are_refused():
    import pytest
    for name in ("Adadelta", "Adamax", "NAdam", "RAdam"):
        cls = getattr(ember.optim, name)
        p = ember.nn.Parameter(ember.ones(3))
        for flags in ({"foreach": True}, {"differentiable": True}):
            with pytest.raises(ember.errors.NotInEmberError, match=name):
                cls([p], **flags)
        # a group carrying the flag (a loaded state dict, add_param_group) is refused at step
        opt = cls([p], foreach=False)
        opt.param_groups[0]["foreach"] = True
        p.grad = ember.ones(3)
        with pytest.raises(ember.errors.NotInEmberError, match="foreach"):
            opt.step()
    # capturable keeps Adadelta's step count as a tensor (torch's), not a number
    p = ember.nn.Parameter(ember.ones(3))
    opt = ember.optim.Adadelta([p], capturable=True)
    p.grad = ember.ones(3)
    opt.step()
    assert isinstance(opt.state[p]["step"], ember.Tensor)


def test_export_strict_true_is_refused_and_false_is_the_default():
    import inspect as _inspect

    import pytest
    assert _inspect.signature(ember.export.export).parameters["strict"].default is False
    model = ember.nn.Linear(3, 2).eval()
    with pytest.raises(ember.errors.NotInEmberError, match="strict"):
        ember.export(model, (ember.randn(1, 3),), strict=True)
    program = ember.export(model, (ember.randn(1, 3),), strict=False)
    x = ember.randn(1, 3)
    assert ember.allclose(program(x), model(x))
