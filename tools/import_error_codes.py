"""Import the error enums users meet from their primary sources (vendor headers, and the
vendors' own error-string functions where the library runs here) into
compat_matrix/codes/<source>.json: number, symbolic name, the vendor's description, and
the source's URL and version.  Only derived data is kept, never the headers.

It also writes each source's bare code list (name, number), read with a second, simpler
reading of the same header, to tests/cli/data/code_lists/<source>.txt: the test
tests/cli/test_error_codes.py checks the tables against those lists.

Usage (the paths are where you unpacked the sources; the script records what you pass):

    pip download --no-deps nvidia-cuda-runtime-cu12 -d /tmp/w   # unzip include/ and lib/
    python -m ember.tools.import_error_codes \\
        cuda_runtime=/tmp/w/nvidia/cuda_runtime   # include/driver_types.h, include/cuda.h,
                                                  # lib/libcudart.so.12 (cudaGetErrorString)
        nvrtc=<site-packages>/nvidia/cuda_nvrtc    # include/nvrtc.h, lib/libnvrtc.so.12
        hip=<ROCm/HIP checkout>  opencl=<KhronosGroup/OpenCL-Headers checkout>
        nccl=<NVIDIA/nccl checkout>  rocblas=<ROCm/rocBLAS checkout>
        miopen=<ROCm/MIOpen checkout>  hsa=<ROCm/ROCR-Runtime checkout>
        nvmath=<NVIDIA/nvmath-python checkout>    # cuBLAS/cuSOLVER/cuFFT/cuRAND enums
        mpich=<prefix with include/mpi.h>         # MPI_Error_string through mpi4py too
    each KEY=PATH may carry @VERSION (a wheel version or a commit) and is recorded.

Not a runtime module: `ember compat explain` reads the JSON it writes.
"""
from __future__ import annotations

import ctypes
import json
import pathlib
import re
import sys

HERE = pathlib.Path(__file__).resolve().parent.parent
OUT = HERE / "compat_matrix" / "codes"
LISTS = HERE / "tests" / "cli" / "data" / "code_lists"

_COMMENT_BLOCK = re.compile(r"/\*\*?<?(.*?)\*/", re.S)


def _clean(comment: str) -> str:
    lines = [re.sub(r"^\s*(\*|///?<?|//!<?|!<)\s?", "", ln).strip()
             for ln in comment.strip().splitlines()]
    text = " ".join(ln for ln in lines if ln)
    text = re.sub(r"\\(deprecated|note|brief)\b", lambda m: m.group(1).capitalize() + ":",
                  text)
    text = re.sub(r"\s+", " ", text.replace("::", "")).strip()
    return text[:600]


def _number(expr: str, known: dict) -> int | None:
    expr = expr.strip().rstrip(",").strip()
    expr = re.sub(r"\(\s*(-?\w+)\s*\)", r"\1", expr)
    try:
        return int(expr, 0)
    except ValueError:
        pass
    m = re.fullmatch(r"-\s*(\w+)", expr)
    if m and m.group(1) in known:
        return -known[m.group(1)]
    return known.get(expr)


def c_enum(text: str, opener: str, closer: str | None = None) -> list[dict]:
    """Enumerators of the C enum whose body starts after `opener` (a regex), with the
    doc comment before each or the one trailing it on its line."""
    start = re.search(opener, text)
    if not start:
        raise ValueError(f"enum {opener!r} not found")
    body_start = text.index("{", start.start()) + 1
    body_end = text.index("}", body_start)
    body = text[body_start:body_end]
    codes, known, pending = [], {}, ""
    pos = 0
    token = re.compile(r"/\*.*?\*/|//[^\n]*|(?P<name>[A-Za-z_]\w*)\s*=\s*(?P<value>[^,\n/]+)"
                       r"\s*,?[ \t]*(?P<trail>/\*.*?\*/|//[^\n]*)?", re.S)
    for m in token.finditer(body, pos):
        if not m.group("name"):
            pending = m.group(0)
            continue
        value = _number(m.group("value"), known)
        if value is None:
            pending = ""
            continue
        name = m.group("name")
        known[name] = value
        trail = m.group("trail") or ""
        comment = trail if trail and ("<" in trail[:4] or not pending) else pending
        desc = _clean(re.sub(r"^/\*+<?|\*/$", "", comment) if comment.startswith("/*")
                      else comment.lstrip("/").lstrip("!<"))
        codes.append({"name": name, "value": value, "description": desc})
        pending = ""
    return codes


def simple_list(text: str, names: re.Pattern) -> list[tuple[str, int]]:
    """The second reading for the fixture: `NAME = number` / `#define NAME number` with a
    name the family's pattern accepts, nothing else."""
    out = {}
    for m in re.finditer(r"(?:#define\s+|^\s*|[{,]\s*)(" + names.pattern +
                         r")\s*=?\s*\(?(-?(?:0x[0-9a-fA-F]+|\d+))\)?\s*(?:,|$|/|\}|\s)",
                         text, re.M):
        out.setdefault(m.group(1), int(m.group(2), 0))
    return sorted(out.items(), key=lambda kv: (kv[1], kv[0]))


def pxd_enum(text: str, enum: str) -> list[dict]:
    """nvmath-python's Cython declarations of a NVIDIA library enum (no descriptions)."""
    m = re.search(rf"ctypedef enum {enum} \"{enum}\":\n((?:    .*\n)+)", text)
    if not m:
        raise ValueError(f"{enum} not found")
    codes = []
    for line in m.group(1).splitlines():
        e = re.match(r"\s+(\w+) \"\w+\" = (-?\w+)", line)
        if e and not e.group(1).startswith("_"):     # nvmath's own loader sentinel
            codes.append({"name": e.group(1), "value": int(e.group(2), 0), "description": ""})
    return codes


def _git(path: pathlib.Path, rel: str) -> str:
    """A file of a checkout, or of a bare mirror (read with git show)."""
    if (path / rel).exists():
        return (path / rel).read_text(encoding="utf-8", errors="replace")
    import subprocess
    return subprocess.run(["git", "-C", str(path), "show", f"HEAD:{rel}"], check=True,
                          capture_output=True, text=True).stdout


def _cstrings(lib: pathlib.Path, func: str, codes: list[dict]) -> None:
    """The library's own error strings (cudaGetErrorString, nvrtcGetErrorString): these are
    what messages print, and they need no GPU."""
    try:
        handle = ctypes.CDLL(str(lib))
    except OSError as exc:
        print(f"  {lib.name}: {exc}; no error strings", file=sys.stderr)
        return
    fn = getattr(handle, func)
    fn.restype, fn.argtypes = ctypes.c_char_p, [ctypes.c_int]
    for c in codes:
        s = fn(c["value"])
        if s:
            c["message"] = s.decode()


def write(key: str, family: str, enum: str, url: str, version: str, codes: list[dict],
          listing: list[tuple[str, int]], **extra) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    LISTS.mkdir(parents=True, exist_ok=True)
    doc = {"family": family, "enum": enum, "source": url, "version": version, **extra,
           "codes": codes}
    (OUT / f"{key}.json").write_text(json.dumps(doc, indent=0, ensure_ascii=False) + "\n",
                                     encoding="utf-8")
    (LISTS / f"{key}.txt").write_text(
        f"# {enum} from {url} ({version}); name value\n"
        + "".join(f"{n} {v}\n" for n, v in listing), encoding="utf-8")
    print(f"{key}: {len(codes)} codes ({version})")


def cuda(path: pathlib.Path, version: str) -> None:
    inc = path / "include"
    text = (inc / "driver_types.h").read_text()
    codes = c_enum(text, r"enum __device_builtin__ cudaError\s*\n")
    _cstrings(path / "lib" / "libcudart.so.12", "cudaGetErrorString", codes)
    body = text[text.index("enum __device_builtin__ cudaError"):]
    body = body[:body.index("}")]
    write("cuda_runtime", "cuda", "cudaError_t",
          "https://pypi.org/project/nvidia-cuda-runtime-cu12/ include/driver_types.h, "
          "lib/libcudart.so.12 cudaGetErrorString", version, codes,
          simple_list(body, re.compile(r"cuda(?:Success|Error\w+)")))
    text = (inc / "cuda.h").read_text()
    codes = c_enum(text, r"typedef enum cudaError_enum")
    body = text[text.index("typedef enum cudaError_enum"):]
    body = body[:body.index("}")]
    write("cuda_driver", "cuda", "CUresult",
          "https://pypi.org/project/nvidia-cuda-runtime-cu12/ include/cuda.h", version, codes,
          simple_list(body, re.compile(r"CUDA_(?:SUCCESS|ERROR_\w+)")))


def nvrtc(path: pathlib.Path, version: str) -> None:
    text = (path / "include" / "nvrtc.h").read_text()
    codes = c_enum(text, r"typedef enum\s*\{\s*NVRTC_SUCCESS")
    _cstrings(path / "lib" / "libnvrtc.so.12", "nvrtcGetErrorString", codes)
    body = text[text.index("NVRTC_SUCCESS"):]
    write("nvrtc", "nvrtc", "nvrtcResult",
          "https://pypi.org/project/nvidia-cuda-nvrtc-cu12/ include/nvrtc.h, "
          "lib/libnvrtc.so.12 nvrtcGetErrorString", version, codes,
          simple_list(body[:body.index("}")], re.compile(r"NVRTC_\w+")))


def nvmath(path: pathlib.Path, version: str) -> None:
    url = "https://github.com/NVIDIA/nvmath-python nvmath/bindings/{} (declares the CUDA " \
          "toolkit header's {})"
    for key, family, pxd, enum, prefix in (
            ("cublas", "cublas", "cycublas.pxd", "cublasStatus_t", r"CUBLAS_STATUS_\w+"),
            ("cusolver", "cusolver", "cycusolver.pxd", "cusolverStatus_t",
             r"CUSOLVER_STATUS_\w+"),
            ("cufft", "cufft", "cycufft.pxd", "cufftResult", r"CUFFT_\w+"),
            ("curand", "curand", "cycurand.pxd", "curandStatus", r"CURAND_STATUS_\w+")):
        text = _git(path, f"nvmath/bindings/{pxd}")
        codes = pxd_enum(text, enum)
        m = re.search(rf"ctypedef enum {enum} \"{enum}\":\n((?:    .*\n)+)", text)
        listing = sorted({(n, int(v, 0)) for n, v in re.findall(
            rf"\b({prefix}) \"\w+\" = (-?\w+)", m.group(1))}, key=lambda kv: (kv[1], kv[0]))
        write(key, family, enum, url.format(pxd, enum), version, codes, listing)


def hip(path: pathlib.Path, version: str) -> None:
    text = _git(path, "include/hip/hip_runtime_api.h")
    codes = c_enum(text, r"typedef enum __HIP_NODISCARD hipError_t|typedef enum hipError_t")
    start = re.search(r"typedef enum __HIP_NODISCARD hipError_t|typedef enum hipError_t",
                      text).start()
    body = text[start:text.index("}", start)]
    write("hip", "hip", "hipError_t",
          "https://github.com/ROCm/HIP include/hip/hip_runtime_api.h", version, codes,
          simple_list(body, re.compile(r"hip(?:Success|Error\w+)")))


def opencl(path: pathlib.Path, version: str) -> None:
    codes, listing = [], []
    for rel in ("CL/cl.h", "CL/cl_ext.h", "CL/cl_icd.h", "CL/cl_gl.h", "CL/cl_dx9_media_sharing.h",
                "CL/cl_d3d10.h", "CL/cl_d3d11.h", "CL/cl_egl.h"):
        try:
            text = _git(path, rel)
        except Exception:                      # noqa: BLE001 - optional headers
            continue
        for m in re.finditer(r"#define\s+(CL_\w+)\s+(-\d+)\b[ \t]*(/\*.*?\*/|//[^\n]*)?",
                             text):
            name, value = m.group(1), int(m.group(2))
            if any(c["name"] == name for c in codes):
                continue
            codes.append({"name": name, "value": value,
                          "description": _clean((m.group(3) or "").strip("/*")),
                          "header": rel})
        listing += re.findall(r"#define\s+(CL_\w+)\s+(-\d+)", text)
    text = _git(path, "CL/cl.h")
    codes.insert(0, {"name": "CL_SUCCESS", "value": 0, "description": "", "header": "CL/cl.h"})
    listing = sorted({(n, int(v)) for n, v in listing} | {("CL_SUCCESS", 0)},
                     key=lambda kv: (-kv[1], kv[0]))
    # error codes only: the headers' negative defines (CL_NONE etc. are not negative)
    write("opencl", "opencl", "cl_int error codes",
          "https://github.com/KhronosGroup/OpenCL-Headers CL/*.h", version, codes, listing)


def nccl(path: pathlib.Path, version: str) -> None:
    text = _git(path, "src/nccl.h.in")
    codes = c_enum(text, r"typedef enum\s*\{\s*ncclSuccess")
    init = _git(path, "src/init.cc")
    fn = init[init.index("const char* ncclGetErrorString"):]
    for c in codes:
        m = re.search(rf"case {c['name']}\s*:\s*return \"([^\"]*)\"", fn)
        if m:
            c["message"] = m.group(1)
    body = text[text.index("typedef enum { ncclSuccess"):]
    write("nccl", "nccl", "ncclResult_t",
          "https://github.com/NVIDIA/nccl src/nccl.h.in, src/init.cc ncclGetErrorString",
          version, codes, simple_list(body[:body.index("}")], re.compile(r"nccl\w+")))


def rocblas(path: pathlib.Path, version: str) -> None:
    text = _git(path, "library/include/internal/rocblas-types.h")
    codes = c_enum(text, r"typedef enum rocblas_status_")
    body = text[text.index("typedef enum rocblas_status_"):]
    write("rocblas", "rocblas", "rocblas_status",
          "https://github.com/ROCm/rocBLAS library/include/internal/rocblas-types.h", version,
          codes, simple_list(body[:body.index("}")], re.compile(r"rocblas_status_\w+")))


def miopen(path: pathlib.Path, version: str) -> None:
    text = _git(path, "include/miopen/miopen.h")
    codes = c_enum(text, r"typedef enum\s*\{\s*miopenStatusSuccess")
    body = text[text.index("miopenStatusSuccess"):]
    write("miopen", "miopen", "miopenStatus_t",
          "https://github.com/ROCm/MIOpen include/miopen/miopen.h", version, codes,
          simple_list(body[:body.index("}")], re.compile(r"miopenStatus\w+")))


def hsa(path: pathlib.Path, version: str) -> None:
    codes, listing = [], []
    for rel, opener in (("runtime/hsa-runtime/inc/hsa.h", r"typedef enum\s*\{\s*/\*\*\s*\n\s*"
                         r"\* The function has been executed successfully"),
                        ("runtime/hsa-runtime/inc/hsa_ext_amd.h",
                         r"enum\s*\{\s*/\*\*[^}]*?HSA_STATUS_ERROR_INVALID_MEMORY_POOL")):
        text = _git(path, rel)
        try:
            part = c_enum(text, opener)
        except ValueError:
            continue
        codes += [dict(c, header=rel) for c in part if c["name"].startswith("HSA_STATUS")]
        start = re.search(opener, text).start()
        listing += simple_list(text[start:text.index("}", start)],
                               re.compile(r"HSA_STATUS_\w+"))
    write("hsa", "hsa", "hsa_status_t",
          "https://github.com/ROCm/ROCR-Runtime runtime/hsa-runtime/inc/hsa.h, hsa_ext_amd.h",
          version, codes, sorted(set(listing), key=lambda kv: (kv[1], kv[0])))


def mpich(path: pathlib.Path, version: str) -> None:
    text = (path / "include" / "mpi.h").read_text()
    codes = []
    for m in re.finditer(r"#define\s+(MPIX?_(?:ERR_\w+|SUCCESS))\s+(\d+)\s*(/\*.*?\*/)?", text):
        if m.group(1) in ("MPI_ERR_LASTCODE",):
            continue
        codes.append({"name": m.group(1), "value": int(m.group(2)),
                      "description": _clean((m.group(3) or "").strip("/*"))})
    try:
        from mpi4py import MPI
        for c in codes:
            c["message"] = MPI.Get_error_string(c["value"])
    except Exception as exc:                      # noqa: BLE001 - strings are optional
        print(f"  mpi4py: {exc}; no MPI_Error_string texts", file=sys.stderr)
    listing = sorted({(c["name"], c["value"]) for c in codes}, key=lambda kv: (kv[1], kv[0]))
    write("mpi", "mpi", "MPI error classes",
          "https://github.com/pmodels/mpich (include/mpi.h of the mpich wheel; "
          "MPI_Error_string through mpi4py)", version, codes, listing)


IMPORTERS = {"cuda_runtime": cuda, "nvrtc": nvrtc, "nvmath": nvmath, "hip": hip,
             "opencl": opencl, "nccl": nccl, "rocblas": rocblas, "miopen": miopen,
             "hsa": hsa, "mpich": mpich}


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    for arg in argv:
        key, _, rest = arg.partition("=")
        path, _, version = rest.partition("@")
        if key not in IMPORTERS:
            print(f"unknown source {key!r}; known: {', '.join(IMPORTERS)}", file=sys.stderr)
            return 2
        IMPORTERS[key](pathlib.Path(path), version or "unknown")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
