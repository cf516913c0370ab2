"""What torch's collect_env and cupy.show_config tell: OS, C library, CPU, GPUs on the PCI
bus, the OpenCL ICD loader and its vendor files, and the versions of relevant packages."""
from __future__ import annotations

import glob
import importlib.util
import os
import platform
import re
from importlib import metadata

PCI_DEVICES = "/sys/bus/pci/devices"
VENDOR_IDS = {"nvidia_pci": "0x10de", "amd_pci": "0x1002"}
# PCI class codes of GPUs: display controllers (0x03....) and processing accelerators
# (0x12....); AMD's vendor id also covers its CPUs' chipset functions.
GPU_CLASSES = ("0x03", "0x12")
ICD_VENDORS = "/etc/OpenCL/vendors"
# Distributions whose versions explain a report; plus every name with these prefixes.
PACKAGES = ("ember", "numpy", "pluggy", "rich", "ml-dtypes", "packaging", "safetensors",
            "pyopencl", "pocl-binary-distribution", "pytools", "torch", "fastrlock")
PREFIXES = ("ember-", "cupy", "cuda-", "nvidia-")


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        return ""


def os_name(os_release: str = "/etc/os-release") -> str:
    text = _read(os_release)
    match = re.search(r'^PRETTY_NAME="?([^"\n]+)"?', text, re.M)
    base = match.group(1) if match else platform.system()
    return f"{base} ({platform.system()} {platform.release()} {platform.machine()})"


def cpu_model(cpuinfo: str = "/proc/cpuinfo") -> str:
    match = re.search(r"^model name\s*:\s*(.+)$", _read(cpuinfo), re.M)
    return match.group(1).strip() if match else (platform.processor() or platform.machine())


def memory_bytes(meminfo: str = "/proc/meminfo") -> int | None:
    match = re.search(r"^MemTotal:\s*(\d+) kB", _read(meminfo), re.M)
    return int(match.group(1)) * 1024 if match else None


def pci_gpus(root: str = PCI_DEVICES) -> dict:
    """{'nvidia_pci': n, 'amd_pci': n}: GPUs on the PCI bus, whether or not a driver is
    loaded (sysfs shows them in containers too).  Tells a missing driver from no GPU."""
    counts = dict.fromkeys(VENDOR_IDS, 0)
    for device in glob.glob(os.path.join(root, "*")):
        vendor = _read(os.path.join(device, "vendor")).strip().lower()
        klass = _read(os.path.join(device, "class")).strip().lower()
        for key, vid in VENDOR_IDS.items():
            if vendor == vid and klass.startswith(GPU_CLASSES):
                counts[key] += 1
    return counts


def system() -> dict:
    libc, version = platform.libc_ver()
    return {"os": os_name(), "libc": f"{libc} {version}".strip() or "unknown",
            "cpu": cpu_model(), "cores": os.cpu_count(), "memory": memory_bytes(),
            **pci_gpus()}


def packages() -> dict:
    """{distribution name: version} of the distributions that matter for ember's backends."""
    found = {}
    for dist in metadata.distributions():
        name = (dist.metadata["Name"] or "").lower().replace("_", "-")
        if name in PACKAGES or name.startswith(PREFIXES):
            found[name] = dist.version or ""
    return dict(sorted(found.items()))


def opencl_icd(env=None) -> dict:
    """The ICD loader pyopencl uses (its wheel's bundled one, else the system's) and the
    vendor files that loader reads, each with the library it names and whether it exists."""
    env = os.environ if env is None else env
    info: dict = {"loader": "", "vendor_dirs": [], "vendors": []}
    spec = importlib.util.find_spec("pyopencl")
    libs = os.path.join(os.path.dirname(spec.origin), ".libs") if spec and spec.origin else ""
    bundled = sorted(glob.glob(os.path.join(libs, "libOpenCL*"))) if libs else []
    if bundled:
        info["loader"] = f"{bundled[0]} (bundled with pyopencl)"
    else:
        import ctypes.util
        info["loader"] = ctypes.util.find_library("OpenCL") or ""
    dirs = []
    if env.get("OCL_ICD_VENDORS"):
        dirs.append(env["OCL_ICD_VENDORS"])
    dirs.append(ICD_VENDORS)
    if bundled:
        dirs.append(libs)        # pyopencl's ocl-icd also reads $PYOPENCL_HOME/.libs
    info["vendor_dirs"] = dirs
    for folder in dirs:
        files = [folder] if folder.endswith(".icd") else sorted(
            glob.glob(os.path.join(folder, "*.icd")))
        for icd in files:
            library = _read(icd).strip()
            path = library if os.path.isabs(library) else os.path.join(os.path.dirname(icd),
                                                                       library)
            exists = os.path.exists(path) or (not os.path.isabs(library)
                                              and _loadable(library))
            info["vendors"].append({"file": icd, "library": library, "found": bool(exists)})
    return info


def _loadable(name: str) -> bool:
    import ctypes
    try:
        ctypes.CDLL(name)
    except OSError:
        return False
    return True


def cuda_toolkit(rows: list[dict]) -> dict:
    """What the CUDA backend's probe read through CuPy (cupy.show_config's facts), or {}."""
    for row in rows:
        details = row.get("details") or {}
        if row.get("type") == "cuda" and "toolkit" in details:
            return dict(details["toolkit"])
    return {}


def summary_lines(report: dict) -> list[str]:
    """The compact view of the above for the text report (all of it is in --json)."""
    sysinfo = report.get("system", {})
    memory = sysinfo.get("memory")
    mem = f", {memory / 2**30:.1f} GiB" if memory else ""
    lines = [f"{sysinfo.get('os', '?')}, {sysinfo.get('libc', '?')}, "
             f"{sysinfo.get('cpu', '?')} ({sysinfo.get('cores') or '?'} cores{mem})"]
    toolkit = report.get("cuda_toolkit") or {}
    if toolkit:
        libs = toolkit.get("libraries", {})
        missing = [n for n, v in libs.items() if not v.get("available")]
        have = [n for n, v in libs.items() if v.get("available")]
        lines.append(f"CUDA: runtime {toolkit.get('runtime', '?')} linked by CuPy, "
                     f"{toolkit.get('local_runtime') or 'none'} installed locally at "
                     f"{toolkit.get('cuda_root') or '?'}; "
                     + (f"found {', '.join(have)}" if have else "no CUDA library found")
                     + (f"; missing {', '.join(missing)}" if missing and have else ""))
    icd = report.get("opencl_icd") or {}
    if icd.get("loader") or icd.get("vendors"):
        vendors = ", ".join(f"{os.path.basename(v['file'])}"
                            + ("" if v["found"] else " (library missing)")
                            for v in icd.get("vendors", ())) or "none"
        loader = "pyopencl's" if "bundled" in icd.get("loader", "") else (
            icd.get("loader") or "none")
        lines.append(f"OpenCL: ICD loader {loader}; vendors {vendors}")
    return lines
