"""Error codes in a message: the code tables of compat_matrix/codes/ (imported from the
vendors' headers by tools/import_error_codes.py) and the recognizers that find a code in
any wording around it, by its symbolic name (cudaErrorLaunchTimeout, CL_OUT_OF_RESOURCES,
ncclSystemError, MPI_ERR_RANK...), by its number where the message says whose number it
is ("CUDA error 802", "clEnqueueNDRangeKernel failed: -5"), or by the vendor's own error
string where a library prints that ("CUDA error: out of memory", "NCCL error: unhandled
system error").  Pure data and regular expressions: no GPU library is imported."""
from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from importlib import resources

# table key -> the family a code's category names it by ("cuda:cudaErrorNoDevice")
TABLES = ("cuda_runtime", "cuda_driver", "nvrtc", "cublas", "cusolver", "cufft", "curand",
          "hip", "rocblas", "miopen", "hsa", "opencl", "nccl", "mpi")


@dataclass(frozen=True)
class Code:
    family: str          # cuda, nvrtc, cublas, ..., hip, hsa, opencl, nccl, mpi
    name: str            # the vendor's symbolic name
    value: int
    description: str     # the vendor's description (header comment)
    message: str         # the vendor's error string (cudaGetErrorString...), if known
    table: str           # compat_matrix/codes/<table>.json

    @property
    def key(self) -> str:
        return f"{self.family}:{self.name}"

    def describe(self) -> str:
        words = self.message if self.message and self.message != self.name else ""
        text = f"{self.name} ({self.value})"
        if words:
            text += f": {words}"
        if self.description and self.description.lower() != words.lower():
            text += f" [{self.description}]"
        return text


@functools.cache
def table(key: str) -> dict:
    path = resources.files("ember.compat_matrix").joinpath("codes", f"{key}.json")
    return json.loads(path.read_text(encoding="utf-8"))


@functools.cache
def codes() -> tuple[Code, ...]:
    out = []
    for key in TABLES:
        doc = table(key)
        for c in doc["codes"]:
            out.append(Code(doc["family"], c["name"], c["value"], c.get("description", ""),
                            c.get("message", ""), key))
    return tuple(out)


def _is_error(c: Code) -> bool:
    """Success and informational codes name no error."""
    return not (c.name.upper().endswith(("SUCCESS", "_INFO_BREAK")) or
                c.name in ("ncclNumResults", "ncclInProgress"))


@functools.cache
def _by_name() -> dict[str, Code]:
    return {c.name: c for c in codes() if _is_error(c)}


@functools.cache
def _by_number() -> dict[tuple[str, int], Code]:
    """(family, number) -> code; the first name of a number wins (its aliases follow)."""
    out: dict = {}
    for c in codes():
        if _is_error(c):
            out.setdefault((c.family, c.value), c)
    return out


@functools.cache
def _by_message() -> dict[str, list[tuple[str, Code]]]:
    """family -> (lower-cased vendor string, code), longest first."""
    out: dict = {}
    for c in codes():
        if _is_error(c) and c.message and c.message != c.name:
            text = re.sub(r"\s*\(run with NCCL_DEBUG=\w+ for details\)", "", c.message)
            # NCCL's strings begin with their words ("internal error - please report this
            # issue to the NCCL developers"); ncclGetErrorString of some releases stops there
            text = re.sub(r"\s+-\s+please report this issue.*", "", text)
            out.setdefault(c.family, []).append((text.lower().strip(), c))
    for items in out.values():
        items.sort(key=lambda kv: -len(kv[0]))
    return out


# pyopencl writes CL names without their CL_ prefix: "clBuildProgram failed: BUILD_PROGRAM_FAILURE"
PYOPENCL = re.compile(r"\bcl[A-Z]\w*(?: failed)?: ([A-Z][A-Z0-9_]{3,})")
# numbers, each with the words that say whose number it is
NUMBERS = (
    ("cuda", re.compile(r"\bCUDA(?: runtime| driver)? error(?: code)?[ :=(]*(\d{1,5})(?!\d)"
                        r"|\bcuda runtime error \((\d{1,4})\)"
                        r"|\bcudaError(?:_t)?[ :=(]+(\d{1,4})\b"
                        r"|\bCUresult[ :=(]+(\d{1,4})\b"
                        r"|\bcu[A-Z]\w*\(\)? (?:returned|failed with)(?: error)?:? (\d{1,4})\b"
                        r"|\bcuda[A-Z]\w*\(\)? (?:returned|failed with)(?: error)?:? (\d{1,4})\b"
                        r"|\bCUDA initialization: [^\n]*?\bError (\d{1,5}):"
                        # NCCL's "Cuda failure 217 'peer access...'", "failed with error #35",
                        # Torch7's "THCudaCheck FAIL ... error=4 : ..."
                        r"|\bCuda failure (\d{1,4})\b"
                        r"|\bcuda[A-Z]\w*\(\)? (?:returned|failed with)(?: error)? ?#(\d{1,4})\b"
                        r"|\bTHCudaCheck FAIL [^\n]*?\berror=(\d{1,4})\b"
                        # Numba's "[700] Call to cuMemcpyDtoH results in UNKNOWN_CUDA_ERROR",
                        # "cudaMalloc failed: 2", "cudaMemcpy returned error code 700"
                        r"|\[(\d{1,4})\] Call to cu\w+ results in"
                        r"|\b(?-i:cu(?:da)?[A-Z])\w*(?:\(\))? (?:failed|returned)(?: with)?"
                        r"(?: error)?(?: code)?\s*[:=#]?\s*(\d{1,4})\b", re.I)),
    ("hip", re.compile(r"\bHIP error(?: code)?[ :=(]*(\d{1,4})\b"
                       r"|\bhip[A-Z]\w*\(\)? (?:returned|failed with)(?: error)?:? (\d{1,4})\b",
                       re.I)),
    ("opencl", re.compile(r"(?:\bOpenCL|\bCL)[ _](?:error|err|status)[^\n\d-]{0,24}(-\d{1,4})\b"
                          r"|\bcl[A-Z]\w*(?:\(\))?(?: failed| returned| error|:)"
                          r"[^\n\d-]{0,24}(-\d{1,4})\b"
                          r"|\bpyopencl\b[^\n]{0,80}?\((-\d{1,4})\)"
                          r"|\berror code:? (-\d{1,4})\b(?=[^\n]*\b(?:OpenCL|cl[A-Z]))"
                          # a call printed with its arguments: "clEnqueueNDRangeKernel(k,1,...)
                          # failed(-54)"
                          r"|\bcl[A-Z]\w*\([^\n]{0,200}?\)\s*(?:failed|returned|error)\s*"
                          r"[(:=]?\s*(-\d{1,4})\b"
                          # "Error: clCreateCommandQueue (-6)"
                          r"|\bcl[A-Z][a-z]\w*\s*\((-\d{1,4})\)"
                          # the C++ bindings' cl::Program::build with its result:
                          # "program.build(options.c_str()): -43"
                          r"|\b\w*program\.build\([^\n]{0,120}?\)\s*[:=]?\s*(-\d{1,4})\b", re.I)),
    ("nccl", re.compile(r"\bNCCL error(?: code)?[ :=(]*(\d)\b|\bncclResult(?:_t)?[ :=(]+(\d)\b"
                        # NCCL passes its result up through "NCCL INFO file.cc:535 -> 6"
                        # lines and "retcode 6" in WARNs: the first one is the deepest
                        r"|\bNCCL INFO [^\n]*?\.cc:\d+ -> ([1-8])\b"
                        r"|\bNCCL WARN [^\n]*?\bretcode ([1-8])\b", re.I)),
    # DyNet and others print the failed call, then the status on the next line:
    # "CURAND failure in curandGenerateUniform(g, v, n)\n201"
    ("curand", re.compile(r"\bCURAND (?:failure|error|status)(?: in \w+\([^\n]{0,200}\))?"
                          r"[ :=(\n]*(\d{1,3})\b", re.I)),
    ("cublas", re.compile(r"\bCUBLAS (?:failure|error|status)(?: in \w+\([^\n]{0,200}\))?"
                          r"[ :=(\n]*(\d{1,2})\b"
                          r"|\bcuBLAS API failed with status (\d{1,2})\b", re.I)),
    ("cusolver", re.compile(r"\bCUSOLVER (?:failure|error|status)(?: in \w+\([^\n]{0,200}\))?"
                            r"[ :=(\n]*(\d{1,2})\b", re.I)),
    ("cufft", re.compile(r"\bCUFFT (?:failure|error|status)(?: in \w+\([^\n]{0,200}\))?"
                         r"[ :=(\n]*(\d{1,2})\b", re.I)),
    ("hip", re.compile(r"\bhipError_t\((\d{1,4})\)|'hipError\w*'\((\d{1,4})\)")),
    # glog CHECKs of a status against its success value: "CUBLAS_STATUS_SUCCESS (1 vs. 0)",
    # as users retype them too ("CUBLAS_STATUS_SUCCESS(1 VS.0)")
    ("cublas", re.compile(r"\bCUBLAS_STATUS_SUCCESS\s*\((\d{1,2})\s*vs\.?\s*0\)", re.I)),
    ("cusolver", re.compile(r"\bCUSOLVER_STATUS_SUCCESS\s*\((\d{1,2})\s*vs\.?\s*0\)", re.I)),
    ("curand", re.compile(r"\bCURAND_STATUS_SUCCESS\s*\((\d{1,3})\s*vs\.?\s*0\)", re.I)),
    ("cufft", re.compile(r"\bCUFFT_SUCCESS\s*\((\d{1,2})\s*vs\.?\s*0\)", re.I)),
    ("nccl", re.compile(r"\bncclSuccess\s*\((\d)\s*vs\.?\s*0\)", re.I)),
    ("cuda", re.compile(r"\b(?:cudaSuccess|CUDA_SUCCESS)\s*\((\d{1,4})\s*vs\.?\s*0\)", re.I)),
    ("hsa", re.compile(r"\bhsa api call failure[^\n]*?Call returned (\d{2,5})\b"
                       r"|\bHSA (?:error|status)[ :=(]*(0x[0-9a-f]{2,4}|\d{2,5})\b", re.I | re.S)),
    ("nvrtc", re.compile(r"\bNVRTC (?:error|status|failure)[ :=(]*(\d{1,2})\b", re.I)),
)
# vendor strings: the words that introduce them
MESSAGE_AFTER = (
    ("cuda", re.compile(r"(?:\bCUDA(?: runtime| driver)? error(?:\s*(?:\(\d+\)|[=#]?\s*\d+))?|"
                        r"\bCUDA call failed|cudaGetDeviceCount\(\)[^\n]*?Error \d+|"
                        # the CUDA guide's gpuErrchk ("GPUassert: out of memory file.cu 42"),
                        # OpenCV's "(-217:Gpu API call) no kernel image is available ..."
                        r"\bGPUassert|\(-217:Gpu API call\)|"
                        r"Cuda failure(?: \d+)?)\s*:?\s*'?"
                        r"([^\n']{3,120})", re.I)),
    # llama.cpp's HIP build says "ROCm error: <the HIP string>"
    ("hip", re.compile(r"(?:\bHIP(?: runtime)? error|hip failure|\bROCm error)\s*:?\s*'?"
                       r"([^\n']{3,120})", re.I)),
    # glog CHECK_EQ of a CUDA call (Caffe): "cudaSuccess (74 vs. 0) misaligned address"
    ("cuda", re.compile(r"\bcuda\w*\s*\(\d+ vs\. \d+\)\s*([^\n]{3,120})")),
    ("nccl", re.compile(r"\bNCCL (?:error|Error|failure)[^\n]*?[:,]\s*([^\n]{3,300})"
                        # "ncclCommInitRank failed: unhandled system error"
                        r"|\b(?-i:nccl[A-Z]\w*)(?:\(\))? failed(?: with error)?:\s*([^\n]{3,300})"
                        r"|\bncclInternalError\b|\b(remote process exited or there was a "
                        r"network error)", re.I)),
    ("mpi", re.compile(r"(?:Fatal error in P?MPI_\w+|MPI_\w+\(\d*\)[^\n]*?|"
                       r"error class:?|MPI error)[:,]\s*([^\n,]{3,120})", re.I)),
)


# a bare number ("err=-5", "number of platforms : error -1001") is OpenCL's where the text
# is about OpenCL: a cl* call, a platform or ICD, clinfo, PoCL
# ("Build Status: -2" is clGetProgramBuildInfo's CL_BUILD_ERROR, a build status, no error code)
OPENCL_BARE = re.compile(r"(?:\berr(?:or)?(?: code)?|(?<!\bbuild )(?<!\bBuild )\bstatus"
                         r"|\bret(?:urned)?|\bplatforms?|\bfailed"
                         r"|\bcreate (?:an? )?(?:OpenCL )?"
                         r"(?:context|command queue|buffer|kernel)s?)"
                         r"\s*[=:#(]?\s*(-\d{1,2}|-1\d{3})\b", re.I)
OPENCL_TEXT = re.compile(r"\bcl[A-Z][a-z]\w+|\bOpenCL|\bclinfo\b|\bpocl\b|\bICD\b|"
                         r"\bnumber of platforms\b", re.I)
# CUDA's own error strings that no other text says: recognized anywhere (Torch7's
# "error=4 : unspecified launch failure", Accelerate's "CUDA Exception: an illegal memory
# access was encountered"), not only after "CUDA error:"; short, common phrases ("out of
# memory", "invalid argument", "operation not supported") need the words that introduce them
ANYWHERE_SHORT = {"unspecified launch failure", "device-side assert triggered",
                  "invalid device function", "invalid device ordinal",
                  "invalid configuration argument", "invalid resource handle",
                  "invalid device context", "invalid device pointer", "misaligned address"}
NOT_ANYWHERE = {"the operation cannot be performed in the present state",
                "os call failed or operation not supported on this os",
                "one or more resources passed in are not valid resource types for the operation",
                "one or more resources are insufficient or non-applicable for the operation"}
HIP_TEXT = re.compile(r"\bhip\w*|\brocm\b|\bamdgpu\b|\bHSA_", re.I)
# a program built for HIP that keeps CUDA's names in its messages (llama.cpp's ggml-cuda on
# ROCm: "found 1 ROCm devices", then "CUDA error: invalid device function" from hipGetLastError)
HIP_BUILD = re.compile(r"\bfound \d+ ROCm devices?\b|(?-i:\bhip[A-Z]\w*\()|\bROCm error\b", re.I)


@functools.cache
def _anywhere() -> tuple[tuple[str, Code], ...]:
    out = []
    for words, code in _by_message().get("cuda", ()):
        if code.table != "cuda_runtime" or words in NOT_ANYWHERE:
            continue
        if words in ANYWHERE_SHORT or (len(words.split()) >= 4 and len(words) >= 22):
            out.append((words.rstrip("."), code))
    return tuple(out)


@functools.cache
def _candidates() -> re.Pattern:
    """The words that may be a code's name: those that begin as one (the tables' names
    share a few dozen beginnings; CUDA.jl's ERROR_*): scanning only these keeps a long
    log fast."""
    starts = sorted({c.name[:4].lower() for c in codes()} | {"erro"})
    return re.compile(r"\b(?:" + "|".join(map(re.escape, starts)) + r")[A-Za-z0-9_]*", re.I)


@functools.cache
def _by_lower_name() -> dict[str, Code]:
    """Names in any case ("cudaerrormemoryallocation", "cublas_status_alloc_failed"): the
    long ones only, where case cannot make two codes one."""
    out: dict = {}
    for name, code in _by_name().items():
        if len(name) >= 12:
            out.setdefault(name.lower(), code)
    return out


@dataclass(frozen=True)
class Hit:
    code: Code
    how: str         # "name", "number" or "message"
    text: str        # what in the message said it
    pos: int = 0     # where in the message


def _hip_twin(code: Code) -> Code | None:
    return _by_name().get(code.name.replace("cudaError", "hipError"))


def recognize(text: str) -> list[Hit]:
    """Every code the text names, each once, names first (they are the surest reading),
    then vendor strings, then numbers; a number that a vendor string next to it
    contradicts (an old release's numbering: CUDA renumbered its errors in 10.1) is
    dropped."""
    return list(_recognize(text))


@functools.lru_cache(maxsize=8)
def _recognize(text: str) -> tuple[Hit, ...]:
    """recognize(), once per text: explain and its rendering ask for each category."""
    found: dict[str, Hit] = {}

    def add(code, how, said, pos):
        if code is not None and code.key not in found:
            found[code.key] = Hit(code, how, said, pos)

    names, lower = _by_name(), _by_lower_name()
    for m in _candidates().finditer(text):
        word = m.group(0)
        code = names.get(word)
        if code is None and len(word) >= 12:
            if word.startswith("ERROR_"):      # CUDA.jl: "(code 2, ERROR_OUT_OF_MEMORY)"
                code = names.get("CUDA_" + word)
            if code is None:
                code = lower.get(word.lower())
        add(code, "name", word, m.start())
    for m in PYOPENCL.finditer(text):
        add(names.get("CL_" + m.group(1)), "name", m.group(0), m.start())
    said_lines: dict = {}          # family -> lines where a vendor string was recognized
    messages = _by_message()
    for family, pattern in MESSAGE_AFTER:
        for m in pattern.finditer(text):
            said = (next((g for g in m.groups() if g), "") or m.group(0)).strip().lower()
            for words, code in messages.get("cuda" if family == "hip" else family, ()):
                if said.startswith(words) or (family == "nccl" and words in said):
                    if family == "hip":       # HIP's strings follow CUDA's; name the HIP code
                        code = _hip_twin(code)
                        if code is None:
                            break
                    elif family == "cuda" and code.family == "cuda" and HIP_BUILD.search(text):
                        code = _hip_twin(code) or code
                    add(code, "message", m.group(0).strip(), m.start())
                    said_lines.setdefault(code.family, set()).add(text.count("\n", 0, m.start()))
                    break
    low = text.lower()
    hip = None
    for words, code in _anywhere():
        at = low.find(words)
        if at < 0:
            continue
        if hip is None:
            hip = bool(HIP_BUILD.search(text)) or (
                bool(HIP_TEXT.search(text)) and not re.search(r"\bCUDA error\b", text))
        twin = _hip_twin(code) if hip else None
        code = twin or code
        add(code, "message", text[at:at + len(words)], at)
        said_lines.setdefault(code.family, set()).add(text.count("\n", 0, at))
    numbers = _by_number()
    for family, pattern in NUMBERS:
        for m in pattern.finditer(text):
            number = next((g for g in m.groups() if g), None)
            if number is None:
                continue
            if text.count("\n", 0, m.start()) in said_lines.get(family, ()):
                continue          # the vendor's words on this line say which error it is
            value = int(number, 16) if number[:2].lower() == "0x" else int(number)
            add(numbers.get((family, value)), "number", m.group(0).strip(), m.start())
    if OPENCL_TEXT.search(text):
        for m in OPENCL_BARE.finditer(text):
            add(numbers.get(("opencl", int(m.group(1)))), "number", m.group(0).strip(),
                m.start())
    return tuple(found.values())
