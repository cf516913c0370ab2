"""`ember compat explain` on messages that name no known code nor wording: a failure line
that names a family's stack (a call, library or tool next to an error word) gets that
family's catch-all with its ordered checks; healthy logs that name the same stacks (INFO
lines, warnings, tool output) get nothing.  And the parsed matrix is read back from its
JSON cache."""
from __future__ import annotations

import json

import pytest
from ember import compat_matrix
from ember.tools import compat_eval

MATRIX, _ = compat_eval.load_matrix()


def ids(text: str) -> list[str]:
    return [e.id for e in compat_eval.explain(text, MATRIX)]


# real failure lines (from public threads) whose code or wording no specific entry knows
FAMILY_FAILURES = [
    ("terminate called after throwing an instance of 'cl::Error'\n  what():  clCreateBuffer",
     "opencl-error"),
    ("*** pocl error: encountered unimplemented part of the OpenCL specs in "
     "clGetKernelWorkGroupInfo.c:100", "opencl-error"),
    ("cd /opt/rocm/hsa/sample\n ./vector_copy\n\nInitializing the hsa runtime failed.",
     "rocm-error"),
    ("amdgpu: failed to load firmware", "rocm-error"),
    ("NCCL WARN Error : ring 0 does not loop back to start (1 != 0)", "nccl-error"),
    ("RuntimeError: ncclCommInitRank failed", "nccl-error"),
    ("[mpiexec@node1] HYD_pmcd_pmiserv_send_signal: unable to write data to proxy\n"
     "[mpiexec@node1] Error: HYDT_bscu_wait_for_completion failed", "mpi-error"),
    ("ERROR: Invalid requirement: 'torch==2.0.0+cu118,'", "pip-error"),
    ("  File \"train.py\", line 88, in resume\n    model.load_state_dict(ckpt['model'])\n"
     "KeyError: 'model'", "checkpoint-error"),
    ("RuntimeError: cuLaunchKernel failed (in function launch)", "cuda-error"),
    ("...cubin.cu(6): error: identifier \"None\" is undefined", "nvrtc-compile-error"),
    ("  File \"cupy/fft/_callback.pyx\", line 35, in init cupy.fft._callback\n"
     "AttributeError: 'NoneType' object has no attribute 'split'", "cupy-install-broken"),
    ("ModuleNotFoundError: No module named 'cupy'", "python-module-missing"),
]


@pytest.mark.parametrize("text, family", FAMILY_FAILURES)
def test_a_failure_of_a_known_stack_gets_its_family_catch_all(text, family):
    found = compat_eval.explain(text, MATRIX)
    assert [e.id for e in found][:1] == [family]
    assert found[0].generic and found[0].causes and found[0].checks


# healthy output that names the same stacks, with words that look like failures
HEALTHY = [
    "node1:1234:1250 [0] NCCL WARN Could not find real path of "
    "/sys/class/pci_bus/0000:00/../../0000:00:04.0\n"
    "node1:1234:1250 [0] NCCL INFO NET/Plugin : dlerror=libnccl-net.so: cannot open shared "
    "object file: No such file or directory No plugin found (libnccl-net.so), using internal "
    "implementation",
    "  Platform Name                                   Portable Computing Language\n"
    "  Error Correction support                        No\n"
    "  clCreateContextFromType(NULL, CL_DEVICE_TYPE_DEFAULT)  No devices found in platform",
    "MIOpen(HIP): Warning [SQLiteBase] Unable to read system database file:gfx906_60.kdb "
    "Performance may degrade",
    "2024-01-01 10:00:00.000000: E external/local_xla/xla/stream_executor/cuda/cuda_dnn.cc:9261]"
    " Unable to register cuDNN factory: Attempting to register factory for plugin cuDNN when "
    "one has already been registered\n2024-01-01 10:00:00.000000: W tensorflow/compiler/"
    "tf2tensorrt/utils/py_utils.cc:38] TF-TRT Warning: Could not find TensorRT",
    "[W socket.cpp:663] [c10d] The client socket has failed to connect to [localhost]:29500 "
    "(errno: 99 - Cannot assign requested address).",
    "PMIx was unable to find a usable compression library\non the system. We will therefore "
    "be unable to compress",
    "/opt/amdgpu/share/libdrm/amdgpu.ids: No such file or directory\nROCk module is loaded",
    "host:2340:2384 [4] NCCL WARN Failed to open libibverbs.so[.1]",
    "Requirement already satisfied: torch in ./.venv/lib/python3.11/site-packages (2.3.0)\n"
    "WARNING: Running pip as the 'root' user can result in broken permissions and conflicting "
    "behaviour with the system package manager.",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_healthy_output_naming_the_stacks_is_not_diagnosed(text):
    assert ids(text) == []


def test_a_code_or_pattern_ranks_a_catch_all_before_the_names_of_a_stack():
    # pyopencl names OpenCL (opencl-error's sign) before the code opencl-invalid-call covers
    assert ids("pyopencl._cl.LogicError: clSetKernelArg failed: INVALID_ARG_SIZE") == [
        "opencl-invalid-call"]


def test_a_driver_api_call_with_its_number_is_read_as_that_code():
    # CUresult 201 is CUDA_ERROR_INVALID_CONTEXT; "currently failed 2 times" is no CUDA call
    assert ids("cuCtxCreate failed: 201") == ["cuda-init-failed"]
    assert ids("Currently failed 2 times") == []


def test_wordings_of_a_missing_nccl_or_opencl_platform():
    assert ids("RuntimeError: Distributed package doesn't have NCCL built in") == [
        "nccl-not-built"]
    assert ids("RuntimeError: Could not find any OpenCL platforms") == ["opencl-no-platform"]
    assert ids("ERROR: No OpenCL GPU devices found") == ["opencl-device-not-found"]


WRAPPED = [   # messages as terminals and issue forms wrap them (real texts, wrapped at 60)
    ("ERROR: Cannot install torch==2.0.0, torchvision==0.15.2 because these package\n"
     "    versions have conflicting\n    dependencies.", "pip-dependency-conflict"),
    ("ImportError: ./smtl_cuda.so: undefined symbol:\n  THPVariableClass", "undefined-symbol"),
    ("ncclCommInitRank failed with error: NCCL error:\n  internal error", "nccl-internal-error"),
    (">>> import cv2\nRuntimeError: module compiled against API version 9 but this version"
     " of numpy is\n 7\nImportError: numpy.core.multiarray failed to import",
     "numpy-too-old-abi"),
]


@pytest.mark.parametrize("text, expect", WRAPPED)
def test_a_message_wrapped_over_lines_is_read_as_on_one(text, expect):
    assert ids(text)[:1] == [expect]


def test_typography_and_terminal_colours_of_a_pasted_message():
    # a curly apostrophe from a forum, a colour code from a terminal, a non-breaking space
    assert ids("error: can\u2019t find Rust compiler") == ["pip-build-failed"]
    assert ids("RuntimeError: CUDA error: \x1b[1mout of memory\x1b[0m") == [
        "cuda-out-of-memory"]
    assert ids("OSError: [Errno 28] No\u00a0space left on device") == ["disk-full"]


def test_wrapped_info_lines_stay_info_lines():
    text = ("node2:14159:14159 [0] NCCL INFO NET/Plugin : Plugin load (libnccl-net.so)\n"
            "  returned 2 : libnccl-net.so: cannot open shared object\n"
            "  file: No such file or directory")
    assert ids(text) == []


def test_an_nccl_call_that_failed_with_its_result_string():
    assert ids("ncclCommInitRank failed: unhandled system error") == ["nccl-system-error"]


def test_a_library_refused_for_its_executable_stack():
    # glibc 2.41 no longer makes the stack executable for a dlopen'ed library
    text = ("ImportError: libtorch_cpu.so: cannot enable executable stack as shared object "
            "requires: Invalid argument")
    assert ids(text) == ["library-executable-stack"]
    assert ids("zsh: illegal hardware instruction  python") == ["cpu-instruction-unsupported"]


def test_signs_belong_to_catch_alls_only():
    raw = {"id": "x", "signs": ["foo"], "example": "foo failed", "meaning": "m", "fix": "f",
           "source": "s"}
    with pytest.raises(compat_eval.MatrixError, match="signs"):
        compat_eval.KnownError.parse(raw)
    entry = compat_eval.KnownError.parse({**raw, "generic": True})
    assert entry.matches("foo failed") and not entry.matches("foo is fine")
    with pytest.raises(compat_eval.MatrixError):
        compat_eval.KnownError.parse({**raw, "generic": True, "signs": ["(unclosed"]})


def test_the_matrix_is_read_back_from_its_json_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("EMBER_CACHE_DIR", raising=False)        # ember's own folder rule
    monkeypatch.delenv("EMBER_NO_CACHE", raising=False)
    parsed = compat_matrix._read_files()
    cached = list((tmp_path / "ember").glob("compat-matrix-*.json"))
    assert len(cached) == 1 and parsed == compat_matrix._read_files()
    # what is read back is the cache's, not a second parse
    doctored = json.loads(cached[0].read_text())
    doctored[0][1]["marker"] = 1
    cached[0].write_text(json.dumps(doctored))
    assert compat_matrix._read_files()[0][1]["marker"] == 1
    # a damaged cache is parsed again and rewritten
    cached[0].write_text("{not json")
    assert compat_matrix._read_files() == parsed
    assert json.loads(cached[0].read_text())[0][1] == parsed[0][1]
    monkeypatch.setenv("EMBER_NO_CACHE", "1")
    assert compat_matrix._read_files() == parsed
    monkeypatch.delenv("EMBER_NO_CACHE")
    monkeypatch.setenv("EMBER_CACHE_DIR", str(tmp_path / "mine"))   # as the OpenCL caches
    compat_matrix._read_files()
    assert len(list((tmp_path / "mine").glob("compat-matrix-*.json"))) == 1
    monkeypatch.setenv("EMBER_CACHE_DIR", "off")
    assert compat_matrix._cache_path([]) is None
