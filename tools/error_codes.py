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
            out.setdefault(c.family, []).append((text.lower(), c))
    for items in out.values():
        items.sort(key=lambda kv: -len(kv[0]))
    return out


TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]{3,}")
# pyopencl writes CL names without their CL_ prefix: "clBuildProgram failed: BUILD_PROGRAM_FAILURE"
PYOPENCL = re.compile(r"\bcl[A-Z]\w*(?: failed)?: ([A-Z][A-Z0-9_]{3,})")
# numbers, each with the words that say whose number it is
NUMBERS = (
    ("cuda", re.compile(r"\bCUDA(?: runtime| driver)? error(?: code)?[ :=(]*(\d{1,5})\b"
                        r"|\bcuda runtime error \((\d{1,4})\)"
                        r"|\bcudaError(?:_t)?[ :=(]+(\d{1,4})\b"
                        r"|\bCUresult[ :=(]+(\d{1,4})\b"
                        r"|\bcu[A-Z]\w*\(\)? (?:returned|failed with)(?: error)?:? (\d{1,4})\b"
                        r"|\bcuda[A-Z]\w*\(\)? (?:returned|failed with)(?: error)?:? (\d{1,4})\b"
                        r"|\bCUDA initialization: [^\n]*?\bError (\d{1,5}):", re.I)),
    ("hip", re.compile(r"\bHIP error(?: code)?[ :=(]*(\d{1,4})\b"
                       r"|\bhip[A-Z]\w*\(\)? (?:returned|failed with)(?: error)?:? (\d{1,4})\b",
                       re.I)),
    ("opencl", re.compile(r"(?:\bOpenCL|\bCL)[ _](?:error|err|status)[^\n\d-]{0,24}(-\d{1,4})\b"
                          r"|\bcl[A-Z]\w*(?:\(\))?(?: failed| returned| error|:)"
                          r"[^\n\d-]{0,24}(-\d{1,4})\b"
                          r"|\bpyopencl\b[^\n]{0,80}?\((-\d{1,4})\)"
                          r"|\berror code:? (-\d{1,4})\b(?=[^\n]*\b(?:OpenCL|cl[A-Z]))", re.I)),
    ("nccl", re.compile(r"\bNCCL error(?: code)?[ :=(]*(\d)\b|\bncclResult(?:_t)?[ :=(]+(\d)\b",
                        re.I)),
    ("curand", re.compile(r"\bCURAND (?:failure|error|status)[ :=(]*(\d{1,3})\b", re.I)),
    ("cublas", re.compile(r"\bCUBLAS (?:failure|error|status)[ :=(]*(\d{1,2})\b", re.I)),
    ("cusolver", re.compile(r"\bCUSOLVER (?:failure|error|status)[ :=(]*(\d{1,2})\b", re.I)),
    ("cufft", re.compile(r"\bCUFFT (?:failure|error|status)[ :=(]*(\d{1,2})\b", re.I)),
    ("hip", re.compile(r"\bhipError_t\((\d{1,4})\)|'hipError\w*'\((\d{1,4})\)")),
    ("hsa", re.compile(r"\bhsa api call failure[^\n]*?Call returned (\d{4,5})\b"
                       r"|\bHSA (?:error|status)[ :=(]*(?:0x)?(\d{4,5})\b", re.I | re.S)),
)
# vendor strings: the words that introduce them
MESSAGE_AFTER = (
    ("cuda", re.compile(r"(?:\bCUDA(?: runtime| driver)? error|\bcuda runtime error "
                        r"\(\d+\)|\bCUDA call failed|cudaGetDeviceCount\(\)[^\n]*?Error \d+|"
                        r"Cuda failure|\bCUDA failure \d+|CUDA error \d+)\s*:?\s*'?"
                        r"([^\n']{3,120})", re.I)),
    ("hip", re.compile(r"(?:\bHIP(?: runtime)? error|hip failure)\s*:?\s*'?([^\n']{3,120})",
                       re.I)),
    # glog CHECK_EQ of a CUDA call (Caffe): "cudaSuccess (74 vs. 0) misaligned address"
    ("cuda", re.compile(r"\bcuda\w*\s*\(\d+ vs\. \d+\)\s*([^\n]{3,120})")),
    ("nccl", re.compile(r"\bNCCL (?:error|Error|failure)[^\n]*?[:,]\s*([^\n]{3,120})"
                        r"|\bncclInternalError\b|\b(remote process exited or there was a "
                        r"network error)", re.I)),
    ("mpi", re.compile(r"(?:Fatal error in P?MPI_\w+|MPI_\w+\(\d*\)[^\n]*?|"
                       r"error class:?|MPI error)[:,]\s*([^\n,]{3,120})", re.I)),
)


@dataclass(frozen=True)
class Hit:
    code: Code
    how: str         # "name", "number" or "message"
    text: str        # what in the message said it


def recognize(text: str) -> list[Hit]:
    """Every code the text names, each once, in the order found (names first: they are the
    surest reading)."""
    found: dict[str, Hit] = {}
    names = _by_name()
    for m in TOKEN.finditer(text):
        code = names.get(m.group(0))
        if code is not None and code.key not in found:
            found[code.key] = Hit(code, "name", m.group(0))
    for m in PYOPENCL.finditer(text):
        code = names.get("CL_" + m.group(1))
        if code is not None and code.key not in found:
            found[code.key] = Hit(code, "name", m.group(0))
    numbers = _by_number()
    for family, pattern in NUMBERS:
        for m in pattern.finditer(text):
            number = next((g for g in m.groups() if g), None)
            if number is None:
                continue
            fams = ("cuda",) if family == "cuda" else (family,)
            for fam in fams:
                code = numbers.get((fam, int(number)))
                if code is not None and code.key not in found:
                    found[code.key] = Hit(code, "number", m.group(0).strip())
    messages = _by_message()
    for family, pattern in MESSAGE_AFTER:
        for m in pattern.finditer(text):
            said = (next((g for g in m.groups() if g), "") or m.group(0)).strip().lower()
            for words, code in messages.get("cuda" if family == "hip" else family, ()):
                if said.startswith(words) or (family == "nccl" and words in said):
                    if family == "hip":       # HIP's strings follow CUDA's; name the HIP code
                        code = names.get(code.name.replace("cudaError", "hipError"), None)
                        if code is None:
                            break
                    if code.key not in found:
                        found[code.key] = Hit(code, "message", m.group(0).strip())
                    break
    return list(found.values())
