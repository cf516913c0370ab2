"""The error spaces as data: the code tables imported from the vendors' headers
(compat_matrix/codes, tools/import_error_codes.py) against each header's bare code list
(data/code_lists), every code recognized by name and number in any wording, the
categories' codes, fixes that fit the reader and name only packages on the index, no
paths of this machine in explain's output, and explain staying clear of the tensor
library."""
from __future__ import annotations

import pathlib
import re
import subprocess
import sys

import pytest
from ember import compat_matrix
from ember.tools import compat_eval, error_codes
from ember.tools.cli import main

HERE = pathlib.Path(__file__).parent
ROOT = HERE.parents[1]
LISTS = HERE / "data" / "code_lists"
MATRIX, _ = compat_eval.load_matrix()
CORPUS = compat_matrix._tomllib().loads(
    (HERE / "data" / "error_corpus.toml").read_text(encoding="utf-8"))


def ids(text: str) -> list[str]:
    return [e.id for e in compat_eval.explain(text, MATRIX)]


def header_list(key: str) -> set:
    lines = (LISTS / f"{key}.txt").read_text().splitlines()
    return {(ln.split()[0], int(ln.split()[1])) for ln in lines if ln and not ln.startswith("#")}


@pytest.mark.parametrize("key", error_codes.TABLES)
def test_table_is_the_headers_code_list_with_source_and_version(key):
    table = error_codes.table(key)
    assert table["source"].startswith("https://") and table["version"] not in ("", "unknown")
    assert {(c["name"], c["value"]) for c in table["codes"]} == header_list(key)


def test_every_family_is_there_in_full():
    sizes = {k: len(error_codes.table(k)["codes"]) for k in error_codes.TABLES}
    # today's headers: CUDA 12.9 runtime 134 and driver 100 codes, HIP 79, OpenCL 106
    # (-1..-72 and the ICD/extension -1000s), NCCL 10, cuBLAS 10, cuSOLVER 25, cuFFT 21
    assert sizes["cuda_runtime"] >= 130 and sizes["cuda_driver"] >= 95
    assert sizes["hip"] >= 75 and sizes["opencl"] >= 100 and sizes["nccl"] >= 9
    assert sizes["cublas"] >= 10 and sizes["cusolver"] >= 25 and sizes["cufft"] >= 20
    names = {c.name: c.value for c in error_codes.codes()}
    assert names["cudaErrorSystemNotReady"] == 802 and names["CUDA_ERROR_LAUNCH_TIMEOUT"] == 702
    assert names["CL_PLATFORM_NOT_FOUND_KHR"] == -1001
    assert names["CL_INVALID_WORK_GROUP_SIZE"] == -54
    assert names["ncclRemoteError"] == 6 and names["hipErrorNoBinaryForGpu"] == 209


ERRORS = [c for c in error_codes.codes() if error_codes._is_error(c)]


def test_every_code_is_known_by_name_in_any_wording():
    """Every error code of every table, by its name inside a traceback, and in lower case
    (the long names: case cannot make two of them one); each has a category."""
    missing = []
    for c in ERRORS:
        for name in (c.name, c.name.lower()) if len(c.name) >= 12 else (c.name,):
            text = f"Traceback ...\nSomeError: call failed with {name} at line 12"
            if c.key not in {h.code.key for h in error_codes.recognize(text)} or not ids(text):
                missing.append(name)
    assert missing == []


@pytest.mark.parametrize("text, code", [
    # NCCL's WARN with the CUDA number and string; the runtime's "#35"; Torch7's THCudaCheck
    ("transport/shm.cc:590 NCCL WARN Cuda failure 217 'peer access is not supported between "
     "these two devices'", "cuda:cudaErrorPeerAccessUnsupported"),
    ("cudaRuntimeGetVersion() failed with error #35", "cuda:cudaErrorInsufficientDriver"),
    # before CUDA 10.1, 4 was the launch failure: the vendor's words on the line decide
    ("THCudaCheck FAIL file=THCStorage.c line=147 error=4 : unspecified launch failure",
     "cuda:cudaErrorLaunchFailure"),
    ("CUDA Exception: an illegal memory access was encountered", "cuda:cudaErrorIllegalAddress"),
    ("ERROR: CUDA error: out of memory (code 2, ERROR_OUT_OF_MEMORY)",
     "cuda:CUDA_ERROR_OUT_OF_MEMORY"),
    ("ERROR: clEnqueueNDRangeKernel(k,1,*,{1167360,0,0},...) failed(-54) for half_scale",
     "opencl:CL_INVALID_WORK_GROUP_SIZE"),
    ("clFinish...\nerr=-5  time=13652ms  FAIL/HANG", "opencl:CL_OUT_OF_RESOURCES"),
    ("[opencl_init] could not get platforms: -1001", "opencl:CL_PLATFORM_NOT_FOUND_KHR"),
    ("host:1:2 [1] NCCL INFO misc/socket.cc:535 -> 6", "nccl:ncclRemoteError"),
    ("proxy.cc:1119 NCCL WARN [Proxy Service 9] Failed to execute operation Connect from "
     "rank 9, retcode 2", "nccl:ncclSystemError"),
    ("HSA error 0x1008", "hsa:HSA_STATUS_ERROR_OUT_OF_RESOURCES"),
    # 30 was cudaErrorUnknown before CUDA 10.1: the words after the old number decide
    ("RuntimeError: cuda runtime error (30) : unknown error at THCGeneral.cpp:87",
     "cuda:cudaErrorUnknown"),
    ("CUDA error = 999at main.cu:196 'cudaDeviceSynchronize()'", "cuda:cudaErrorUnknown"),
    ("Check failed: err == CUBLAS_STATUS_SUCCESS (1 vs. 0) : Create cublas handle failed",
     "cublas:CUBLAS_STATUS_NOT_INITIALIZED"),
    ("GPUassert: out of memory kernel.cu 42", "cuda:cudaErrorMemoryAllocation"),
    ("OpenCV(4.5.5) error: (-217:Gpu API call) no kernel image is available for execution on "
     "the device in function 'call'", "cuda:cudaErrorNoKernelImageForDevice"),
    ("[700] Call to cuMemcpyDtoH results in UNKNOWN_CUDA_ERROR", "cuda:cudaErrorIllegalAddress"),
    ("cudaMemcpy returned error code 700", "cuda:cudaErrorIllegalAddress"),
    ("NVRTC error 5 while compiling", "nvrtc:NVRTC_ERROR_INVALID_OPTION"),
    # glog's check as users retype it; DyNet's status on the line after the failed call
    ("Check failed: status ==CUBLAS_STATUS_SUCCESS(1 VS.0)",
     "cublas:CUBLAS_STATUS_NOT_INITIALIZED"),
    ("CURAND failure in curandGenerateUniform(curandeng, val.v, val.d.size())\n201",
     "curand:CURAND_STATUS_LAUNCH_FAILURE"),
    ("CUBLAS failure in cublasSgemm(h, a, b)\n13", "cublas:CUBLAS_STATUS_EXECUTION_FAILED"),
    # the C++ bindings' cl::Program::build with its result
    ("[Error] program.build(options.c_str()): -43", "opencl:CL_INVALID_BUILD_OPTIONS"),
])

def test_codes_are_known_in_other_bindings_wordings(text, code):
    assert [h.code.key for h in error_codes.recognize(text)][:1] == [code]


def test_an_opencl_build_status_is_no_error_code():
    # clGetProgramBuildInfo's CL_BUILD_ERROR (-2) is a status, not CL_DEVICE_NOT_AVAILABLE
    assert error_codes.recognize("OpenCL program: Build Status: -2") == []


# One message per error space that had no category, in the wording its tool prints (the
# sourced ones are in the corpus): each is read as the category of its cause.
SPACES = [
    ("torch.distributed.DistNetworkError: The client socket has timed out after 1800s while "
     "trying to connect to (10.0.0.1, 29500).", "dist-rendezvous-failed"),
    ("There are not enough slots available in the system to satisfy the 4 slots that were "
     "requested by the application:", "mpi-not-enough-slots"),
    ("mpirun has detected an attempt to run as root.", "mpi-run-as-root"),
    ("[proxy:0:0@n1] HYDU_create_process (utils/launch/launch.c:75): execvp error on file "
     "hello (No such file or directory)", "mpi-executable-not-found"),
    ("pml_ucx.c:285  Error: UCP worker does not support MPI_THREAD_MULTIPLE",
     "mpi-thread-level-unsupported"),
    ("OSError: [WinError 126] The specified module could not be found. Error loading "
     "\"C:\\venv\\lib\\site-packages\\torch\\lib\\c10.dll\" or one of its dependencies.",
     "windows-dll-load-failed"),
    ("Illegal instruction (core dumped)", "cpu-instruction-unsupported"),
    ("OMP: Error #15: Initializing libiomp5md.dll, but found libiomp5md.dll already "
     "initialized.", "openmp-duplicate-runtime"),
    ("(mach-o file, but is an incompatible architecture (have 'x86_64', need 'arm64'))",
     "binary-arch-mismatch"),
    ("RuntimeError: version_ <= kMaxSupportedFileFormatVersion INTERNAL ASSERT FAILED. "
     "Attempted to read a PyTorch file with version 3, but the maximum supported version for "
     "reading is 2.", "checkpoint-newer-format"),
    ("_pickle.UnpicklingError: A load persistent id instruction was encountered, but no "
     "persistent_load function was specified.", "checkpoint-wrong-loader"),
    ("RuntimeError: [enforce fail at inline_container.cc:595] . unexpected pos 1472 vs 1368",
     "checkpoint-write-failed"),
    ("RuntimeError: [enforce fail at alloc_cpu.cpp:114] data. DefaultCPUAllocator: not enough "
     "memory: you tried to allocate 3276800000 bytes.", "host-out-of-memory"),
    ("RuntimeError: operator torchvision::nms does not exist", "torch-companion-mismatch"),
    ("docker: Error response from daemon: could not select device driver \"\" with "
     "capabilities: [[gpu]].", "container-gpu-runtime"),
    ("RuntimeError: CUDA error: operation not permitted when stream is capturing",
     "cuda-graph-capture"),
    ("ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient "
     "shared memory (shm).", "shared-memory-too-small"),
    ("ERROR: Could not install packages due to an OSError: [Errno 28] No space left on device",
     "disk-full"),
    ("ERROR: Could not install packages due to an OSError: [Errno 13] Permission denied: "
     "'/usr/lib/python3/dist-packages/x'", "pip-permission-denied"),
    ("ImportError: cannot import name 'builder' from 'google.protobuf.internal'",
     "python-version-skew"),
    ("CUDA backend failed to initialize: Found cuSOLVER version 11405, but JAX was built "
     "against version 11502, which is newer.", "cudnn-version-mismatch"),
    ("Error: clCreateCommandQueue (-6)", "opencl-out-of-memory"),
    ("HW Exception by GPU node-1 (Agent handle: 0x5633f1e0) reason :GPU Hang",
     "cuda-hardware-error"),
    ("RuntimeError: cuDNN error: CUDNN_STATUS_ARCH_MISMATCH", "cuda-not-supported"),
    ("RuntimeError: CUDA error: CUDA driver is a stub library", "cuda-libcuda-missing"),
    ("CUDA error: MPS client failed to connect to the MPS control daemon or the MPS server",
     "cuda-device-busy"),
    ("WARNING: Open MPI failed to TCP connect to a peer MPI process.  This should not happen.",
     "mpi-network-interface"),
    ("ERROR: Cannot uninstall 'PyYAML'. It is a distutils installed project and thus we cannot "
     "accurately determine which files belong to it", "pip-distutils-uninstall"),
    ("AttributeError: 'collections.OrderedDict' object has no attribute 'eval'",
     "checkpoint-is-state-dict"),
    ("valueerror: due to a serious vulnerability issue in `torch.load`, even with "
     "`weights_only=true`, we now require users to upgrade torch to at least v2.6",
     "checkpoint-torch-too-old-to-load"),
    ("OSError: [WinError 1455] The paging file is too small for this operation to complete.",
     "host-out-of-memory"),
    ("torch.distributed.elastic.multiprocessing.errors.ChildFailedError:\n  exitcode  : -9 "
     "(pid: 4242)\n  traceback : Signal 9 (SIGKILL) received by PID 4242", "host-out-of-memory"),
]


# Within a family, the member whose causes fit: a status name beats the family's catch-all,
# a handle that was never created is not a failure inside a call, a library's statuses that
# say "missing" or "version" name those causes (wordings as the libraries print them).
MEMBERS = [
    ("Could not create cudnn handle: CUDNN_STATUS_NOT_INITIALIZED", "cublas-not-initialized"),
    ("E tensorflow/stream_executor/cuda/cuda_dnn.cc:328] Could not create cudnn handle: "
     "CUDNN_STATUS_INTERNAL_ERROR", "cublas-not-initialized"),
    ("could not create miopen handle: miopenStatusUnknownError", "cublas-not-initialized"),
    ("tensorflow.python.framework.errors_impl.InternalError: Blas GEMM launch failed : "
     "a.shape=(32, 784), b.shape=(784, 512), m=32, n=512, k=784", "cublas-not-initialized"),
    ("UnknownError: Failed to get convolution algorithm. This is probably because cuDNN failed "
     "to initialize, so try looking to see if a warning log message was printed above.",
     "cublas-not-initialized"),
    ("RuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED", "cuda-library-failed"),
    ("RuntimeError: CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED", "cuda-library-missing"),
    ("CUDNN_STATUS_RUNTIME_PREREQUISITE_MISSING", "cuda-library-missing"),
    ("UnimplementedError: DNN library is not found.", "cuda-library-missing"),
    ("CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH", "cudnn-version-mismatch"),
    ("RuntimeError: [enforce fail at common_cudnn.h:108] version_match. cuDNN compiled (7102) "
     "and runtime (7005) versions mismatch", "cudnn-version-mismatch"),
    ("RuntimeError: cuDNN Frontend error: [cudnn_frontend] Error: No execution plans support "
     "the graph.", "cudnn-not-supported"),
    ("[TRT] [E] 1: Unsupported SM: 0x601", "cuda-no-kernel-image"),
    ("transport/nvls.cc:165 NCCL WARN Cuda failure 'invalid argument'",
     "nccl-unhandled-cuda-error"),
    ("RuntimeError: ProcessGroupNCCL is only supported with GPUs, no GPUs found!",
     "cuda-no-device"),
    ("rocBLAS error: Cannot read C:\\Program Files\\AMD\\ROCm\\6.1\\bin\\/rocblas/library/"
     "TensileLibrary.dat: No such file or directory for GPU arch : gfx1103",
     "rocm-gpu-arch-not-built"),
    ("clang: error: invalid target ID 'gfx1103'; format is a processor name followed by an "
     "optional colon-delimited list of features", "rocm-gpu-arch-not-built"),
    ("FAILED: vendor/llama.cpp/CMakeFiles/ggml-rocm.dir/ggml-cuda.cu.o\n"
     "      c++: error: unrecognized command-line option '--offload-arch=gfx900'",
     "pip-build-failed"),
    ("[Error] [OpenCL] program.build(options.c_str()): -43\n[Error] [OpenCL] failed to build "
     "program: -43\n[Error] [OpenCL] Build Status: -2", "opencl-build-failure"),
    ('open("/dev/nvidia-uvm", O_RDWR) = -1 EIO (Input/output error)\n'
     "clGetPlatformIDs(): CL_PLATFORM_NOT_FOUND_KHR", "opencl-device-unavailable"),
    ("RuntimeError: DataLoader worker (pid 3855) is killed by signal: Bus error. It is possible "
     "that dataloader's workers are out of shared memory.", "shared-memory-too-small"),
    ("RuntimeError: unable to mmap 1024 bytes from file </torch_123_456>: Cannot allocate "
     "memory (12)", "shared-memory-too-small"),
    ("[1]    12345 killed     python train.py", "host-out-of-memory"),
    # architecture names with a feature suffix (sm_90a, compute_100a)
    ("ptxas fatal   : Value 'sm_90a' is not defined for option 'gpu-name'",
     "nvrtc-gpu-architecture"),
    ("nvcc fatal   : Unsupported gpu architecture 'compute_90a'", "nvrtc-gpu-architecture"),
    # Caffe's glog check of a cuDNN status without its name (cudnn.h numbers 1-9)
    ("F0101 cudnn_conv_layer.cpp:53] Check failed: status == CUDNN_STATUS_SUCCESS (4 vs. 0)",
     "cuda-library-failed"),
    ("Check failed: status == CUDNN_STATUS_SUCCESS (1 vs. 0)", "cublas-not-initialized"),
    ("      -- The HIP compiler identification is unknown\n      CMake Error at CMakeLists.txt:3 "
     "(project):\n        No CMAKE_HIP_COMPILER could be found.", "pip-build-failed"),
    ("hipcc: error: unsupported option '--amdgpu-target=gfx1030'", "pip-build-failed"),
    # a HIP build that keeps CUDA's names (llama.cpp's ggml-cuda on ROCm)
    ("ggml_cuda_init: found 1 ROCm devices:\n  Device 0: AMD Radeon RX 6700 XT\n"
     "CUDA error: invalid device function\n  current device: 0, in function ggml_cuda_op_flatten"
     " at ggml-cuda.cu:10010\n  hipGetLastError()", "rocm-gpu-arch-not-built"),
    ("ROCm error: out of memory\n  current device: 0, in function alloc at ggml-cuda.cu:375",
     "cuda-out-of-memory"),
    ("A system call failed during shared memory initialization that should not have.\n"
     "  System call: open(2)\n  Error:       No such file or directory (errno 2)",
     "shared-memory-too-small"),
    ("_pickle.UnpicklingError: invalid load key, '\\xe2'.", "checkpoint-truncated"),
    ("_pickle.UnpicklingError: invalid load key, '<'.", "checkpoint-not-pickle"),
    ("tee: /etc/OpenCL/vendors/amdocl64.icd: No such file or directory\n"
     "terminate called after throwing an instance of 'cl::Error'\n  what():  clGetPlatformIDs",
     "opencl-no-platform"),
    ("nvrtc: error: failed to open libnvrtc-builtins.so.11.6", "cuda-library-missing"),
    ("ImportError: /env/lib/libstdc++.so.6: version GLIBCXX_3.4.32' not found (required by "
     "x.so)", "libstdcxx-too-old"),
]


@pytest.mark.parametrize("text, category", MEMBERS)
def test_the_member_whose_causes_fit_ranks_first(text, category):
    assert ids(text)[:1] == [category]


@pytest.mark.parametrize("text, category", SPACES)
def test_each_error_space_has_its_category(text, category):
    assert ids(text)[:1] == [category]


def test_a_bare_number_is_opencls_only_where_the_text_is_about_opencl():
    assert error_codes.recognize("worker exited: err=-5 after 3 retries") == []


def test_the_first_cause_in_the_text_ranks_first():
    # a chained traceback: the first exception is the cause, the last its consequence
    text = ("RuntimeError: module compiled against API version 0xe but this version of numpy "
            "is 0xd\n\nDuring handling of the above exception, another exception occurred:\n"
            "ImportError: numpy.core.multiarray failed to import")
    assert ids(text)[:1] == ["numpy-too-old-abi"]
    # a log's first WARN is the cause, the summary at the end its consequence
    assert ids("host:1:2 [1] misc/socket.cc:518 NCCL WARN Net : Call to recv from 10.0.0.2<5> "
               "failed : Broken pipe\nhost:1:2 [1] NCCL INFO misc/socket.cc:535 -> 6\n"
               "RuntimeError: NCCL Error 2: unhandled system error")[:1] == ["nccl-remote-error"]
    # the CUDA code inside NCCL's WARN names the cause; NCCL's catch-all yields to it
    assert ids("NCCL WARN Cuda failure 217 'peer access is not supported between these two "
               "devices'") == ["cuda-not-supported"]
    # a certificate problem comes before pip's "no matching distribution"
    assert ids("WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, "
               "status=None)) after connection broken by 'SSLError(SSLCertVerificationError(1,"
               " '[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed'))': /simple/torch/"
               "\nERROR: No matching distribution found for torch") == ["pip-index-unreachable"]


@pytest.mark.parametrize("family, wording", [
    ("cuda", "RuntimeError: CUDA error {n} in kernel launch"),
    ("cuda", "UserWarning: CUDA initialization: Unexpected error from cudaGetDeviceCount(). "
             "Error {n}: whatever the text"),
    ("hip", "HIP error {n} at line 40"),
    ("opencl", "clEnqueueNDRangeKernel failed: {n}"),
    ("nccl", "NCCL error {n} in all_reduce"),
])
def test_every_code_is_known_by_number(family, wording):
    first = error_codes._by_number()
    numbers = {v for (f, v) in first if f == family}
    missing = []
    for n in sorted(numbers):
        hits = error_codes.recognize(wording.format(n=n))
        if [h.code.value for h in hits][:1] != [n] or not ids(wording.format(n=n)):
            missing.append(n)
    assert missing == []


def test_vendor_strings_are_known_without_a_name_or_number():
    assert ids("RuntimeError: CUDA error: out of memory") == ["cuda-out-of-memory"]
    assert ids("RuntimeError: HIP error: out of memory") == ["cuda-out-of-memory"]
    assert ids("RuntimeError: CUDA error: the launch timed out and was terminated") == \
        ["cuda-launch-timeout"]
    assert ids("DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1691, unhandled system "
               "error (run with NCCL_DEBUG=INFO for details), NCCL version 2.18.1") == \
        ["nccl-system-error"]
    assert ids("Fatal error in PMPI_Send: Invalid rank, error stack:") == ["mpi-bad-argument"]


def test_category_codes_exist_and_patterns_are_valid():
    keys = {c.key for c in error_codes.codes()}
    for e in MATRIX.errors:
        for pattern in e.codes:
            exact, prefixes = compat_eval._code_matcher([pattern])
            assert exact & keys or any(k.startswith(prefixes) for k in keys), (e.id, pattern)
        for p in (*e.patterns, *e.unless):
            if p._phrase is None:
                re.compile(p.source, re.IGNORECASE)
        assert e.matches(e.example, error_codes.recognize(e.example)), e.id


def test_each_entry_reads_its_own_example_first():
    wrong = {e.id: ids(e.example)[:2] for e in MATRIX.errors if ids(e.example)[:1] != [e.id]}
    assert wrong == {}


def test_a_regex_is_skipped_only_when_it_cannot_match():
    texts = [m["text"] for kind in ("message", "harmless") for m in CORPUS[kind]]
    texts += [e.example for e in MATRIX.errors]
    wrong = []
    for e in MATRIX.errors:
        for p in (*e.patterns, *e.unless):
            if p._phrase is None and p.needs:
                rx = re.compile(p.source, re.IGNORECASE)
                wrong += [(e.id, p.source) for t in texts if rx.search(t)
                          and not any(w in t.lower() for w in p.needs)]
    assert wrong == []


def test_a_compiler_log_is_read_as_that_compilers():
    nvrtc = ('cupy.cuda.compiler.CompileException: /usr/local/cuda/include/cuda_fp16.hpp'
             '(4094): error: identifier "NV_IF_ELSE_TARGET" is undefined')
    assert ids(nvrtc) == ["nvrtc-headers-mismatch"]
    opencl = ('clBuildProgram failed: BUILD_PROGRAM_FAILURE\n<kernel>:3:5: error: '
              'use of undeclared identifier \'foo\'')
    assert ids(opencl) == ["opencl-build-source-error"]


def fix_for(text: str) -> str:
    (known,) = compat_eval.explain(text, MATRIX)
    return known.fix_here(text)


def test_the_fix_speaks_the_readers_library():
    torch_cuda = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"
    assert "PYTORCH_CUDA_ALLOC_CONF" in fix_for(torch_cuda)
    torch_rocm = ("torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB. "
                  "GPU 0 has a total capacity of 15.98 GiB (ROCm)")
    assert "PYTORCH_HIP_ALLOC_CONF" in fix_for(torch_rocm)
    assert "PYTORCH_CUDA_ALLOC_CONF" not in fix_for(torch_rocm)
    cupy = "cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 1,073,741,824 bytes"
    assert "free_all_blocks" in fix_for(cupy) and "PYTORCH" not in fix_for(cupy)
    tf = "ResourceExhaustedError: OOM when allocating tensor with shape[64,372,32,32]"
    assert "set_memory_growth" in fix_for(tf)


def test_explain_names_the_causes_and_the_checks_in_order(capsys):
    assert main(["compat", "explain", "CUDA error 802"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "cuda-system-not-ready" in out and "cudaErrorSystemNotReady (802)" in out
    assert "does not tell which" in out and "check, in this order: 1." in out


def test_explain_prints_no_path_of_this_machine(capsys):
    import io

    from ember.tools import render
    assert main(["compat", "explain", "clGetPlatformIDs failed: -1001"]) == 0
    outs = [capsys.readouterr().out]
    for e in MATRIX.errors:
        buffer = io.StringIO()
        render.explain(compat_eval.explain(e.example, MATRIX), MATRIX, file=buffer,
                       text=e.example)
        outs.append(buffer.getvalue())
    here = {str(ROOT), sys.prefix, str(pathlib.Path.home())}
    assert not [p for p in here for out in outs if p in out]


# Checked against the package index (pip index versions / pip download --no-deps) on
# 2026-12-02; ember's own plugins are not on it and are named as plugins, not installed.
ON_THE_INDEX = {"cupy-cuda12x", "cupy-cuda13x", "pocl-binary-distribution", "pyopencl",
                "numpy", "torch", "mpi4py", "nvidia-cublas-cu12", "safetensors",
                "torchvision", "torchaudio", "mpich", "jax", "pip"}   # pip index versions
def pip_installs(text: str) -> set:
    """The distributions named by each `pip install ...` in prose: its words up to the first
    that is not an option or a requirement (a word, a quoted requirement, a name with an
    extra, a version or a dash), an option's value skipped."""
    named = set()
    for m in re.finditer(r"pip install ([^\n]*)", text):
        words = m.group(1).split(" ")
        k, first = 0, True
        while k < len(words):
            word = words[k]
            bare = word.rstrip("),.;:`")
            if word.startswith(("(", "<", "`")) or not bare:
                break
            if bare in ("--index-url", "--extra-index-url", "-r", "-c"):
                k += 2
                continue
            if bare.startswith("-"):
                k += 1
                continue
            req = bare.strip("'\"")
            if not re.fullmatch(r"[A-Za-z0-9][\w.-]*(\[[\w,]+\])?([<>=!~].*)?", req) or \
                    (not first and not re.search(r"[-\[<>=!~'\d]", bare)):
                break
            named.add(re.split(r"[\[<>=!~]", req)[0].lower())
            first = False
            if bare != word:                  # punctuation ends the command
                break
            k += 1
    return named


def test_fixes_name_only_packages_on_the_index():
    assert pip_installs("pip install -U 'numpy>=2.0' and more") == {"numpy"}
    assert pip_installs("run pip install torch --index-url https://x/cu126), or") == {"torch"}
    named = set()
    for e in MATRIX.errors:
        for text in (e.fix, *dict(e.fix_for).values(), *e.commands):
            named |= pip_installs(text)
    assert named and named <= ON_THE_INDEX, named - ON_THE_INDEX


def test_the_console_script_explains_without_the_tensor_library():
    code = ("import sys, ember_cli\n"
            "rc = ember_cli.main(['compat', 'explain', 'CUDA error: out of memory'])\n"
            "print(rc, sorted(m for m in ('numpy', 'ember.tensor', 'ember.ops', 'rich')"
            " if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, check=True).stdout
    assert "cuda-out-of-memory" in out and out.strip().endswith("0 []")


def test_here_adds_this_machines_deciding_facts(capsys):
    assert main(["compat", "explain", "--here", "Fatal error in PMPI_Send: Invalid rank, "
                 "error stack:\nInvalid rank has value 1 but must be nonnegative and less "
                 "than 1"]) == 0
    out = capsys.readouterr().out
    facts = out.split("on this machine:\n")[1]
    assert "mpi4py" in facts and "memory available" in facts
    assert main(["compat", "explain", "--here", "RuntimeError: HIP error: out of memory"]) == 0
    facts = capsys.readouterr().out.split("on this machine:\n")[1]
    assert "AMD GPU driver" in facts and "/dev/kfd" in facts and "NVIDIA driver" not in facts
    assert all(len(line) <= 80 for line in facts.splitlines())


def test_here_shows_the_cpu_disk_and_shared_memory_facts_that_decide(capsys):
    assert main(["compat", "explain", "--here", "Illegal instruction (core dumped)"]) == 0
    facts = capsys.readouterr().out.split("on this machine:\n")[1]
    assert "CPU: " in facts and "avx" in facts
    assert main(["compat", "explain", "--here", "ERROR: Could not install packages due to an "
                 "OSError: [Errno 28] No space left on device"]) == 0
    facts = capsys.readouterr().out.split("on this machine:\n")[1]
    assert "disk space: " in facts and "free of" in facts and "/" not in facts.split("\n")[0]
    assert main(["compat", "explain", "--here", "ERROR: Unexpected bus error encountered in "
                 "worker. This might be caused by insufficient shared memory (shm)."]) == 0
    facts = capsys.readouterr().out.split("on this machine:\n")[1]
    assert "/dev/shm: " in facts and "LD_LIBRARY_PATH" not in facts


def test_explain_lists_every_category_in_one_line_each(capsys):
    assert main(["compat", "explain", "--list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(MATRIX.errors) >= 100
    assert any(ln.startswith("mpi-run-as-root: ") for ln in lines)
    assert any(ln.startswith("cuda-error (generic): ") for ln in lines)
    assert main(["compat", "explain"]) == 2


# Healthy output of each family, written in the tools' own formats (the sourced ones are
# the corpus's [[harmless]] entries): INFO lines that name transports, sockets, devices and
# error-free summaries must not read as errors.
HEALTHY = [
    "node1:123:456 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\n"
    "node1:123:456 [0] NCCL INFO Using network Socket\n"
    "node1:123:456 [0] NCCL INFO comm 0x55 rank 0 nranks 2 cudaDev 0 busId 1000 - Init COMPLETE",
    "Successfully installed numpy-2.1.0 torch-2.5.1 nvidia-cublas-cu12-12.4.5.8",
    "MIOpen(HIP): Info [get_device_name] Raw device name: gfx90a:sramecc+:xnack-\n"
    "MIOpen(HIP): Info [Handle] stream: 0, device_id: 0",
    "I external/xla/xla/service/service.cc:168] XLA service 0x55d0 initialized for platform "
    "CUDA (this does not guarantee that XLA will be used). Devices:\n"
    "  StreamExecutor device (0): Tesla T4, Compute Capability 7.5",
    "  Platform Name Portable Computing Language\n  Platform Version OpenCL 3.0 PoCL 6.0  "
    "Linux, Release, RELOC, SPIR-V, LLVM 18.1.8, SLEEF, DISTRO, POCL_DEBUG",
    "Requirement already satisfied: mpi4py in ./.venv/lib/python3.11/site-packages (4.1.2)",
    "| NVIDIA-SMI 550.54.15    Driver Version: 550.54.15      CUDA Version: 12.4     |",
    "rank 0: allreduce ok, error: 0.0 (max abs difference)",
    "WARNING: Retrying (Retry(total=4, connect=None, read=None, redirect=None, status=None)) "
    "after connection broken by 'ReadTimeoutError(\"HTTPSConnectionPool(host='pypi.org', "
    "port=443): Read timed out. (read timeout=15)\")': /simple/torch/\n"
    "Successfully installed torch-2.5.1",
    "$ mpirun --allow-run-as-root --oversubscribe -n 4 python train.py\nrank 0 of 4 ready",
    "export KMP_DUPLICATE_LIB_OK=TRUE OMP_NUM_THREADS=4",
    "INFO: torch.distributed: MASTER_ADDR=10.0.0.1 MASTER_PORT=29500 world_size=8",
    "clinfo: Number of platforms 1\n  Platform Name NVIDIA CUDA\n  Number of devices 1",
    # rdma-core probing for providers this machine has no hardware for
    "libibverbs: Warning: couldn't load driver 'libmlx4-rdmav34.so': libmlx4-rdmav34.so: "
    "cannot open shared object file: No such file or directory",
    # TensorFlow's optional TensorRT, and its CPU-feature notes
    "W dso_loader.cc:64] Could not load dynamic library 'libnvinfer.so.7'; dlerror: "
    "libnvinfer.so.7: cannot open shared object file: No such file or directory\n"
    "W py_utils.cc:38] TF-TRT Warning: Cannot dlopen some TensorRT libraries.",
    "The TensorFlow library wasn't compiled to use SSE4.1 instructions, but these are "
    "available on your machine and could speed up CPU computations.",
    "[W socket.cpp:601] [c10d] The client socket has failed to connect to [localhost]:29500 "
    "(errno: 99 - Cannot assign requested address).",
    "_IncompatibleKeys(missing_keys=[], unexpected_keys=[])",
    "Hello world from process 0 of 4\nHello world from process 1 of 4",
]


@pytest.mark.parametrize("text", HEALTHY)
def test_healthy_output_is_not_an_error(text):
    assert ids(text) == []
