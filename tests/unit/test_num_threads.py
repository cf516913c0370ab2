"""ember.set_num_threads reaches the backends: NumPy's BLAS (threadpoolctl) and PoCL's
worker threads; the interop count is recorded as torch's eager mode does.

The thread counts are process-wide (and PoCL reads its count once per process), so the
checks that set them run in one fresh interpreter."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import ember
import pytest

SCRIPT = textwrap.dedent("""
    import sys, warnings
    warnings.simplefilter("error")
    import ember
    assert "threadpoolctl" not in sys.modules, "import ember must not import threadpoolctl"
    from ember import plugins
    ember.set_num_threads(1)
    from threadpoolctl import threadpool_info
    blas = [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]
    assert blas and set(blas) == {1}, blas
    assert ember.get_num_threads() == 1
    has_opencl = plugins.device_count("opencl") > 0
    if has_opencl:
        x = ember.ones(64, device="opencl") * 2          # OpenCL (PoCL) loads now
        assert x.sum().item() == 128.0
        import pyopencl as cl
        pocl = [d.max_compute_units for p in cl.get_platforms()
                if "Portable Computing Language" in p.name for d in p.get_devices()]
        assert pocl and set(pocl) == {1}, pocl
        # PoCL has loaded: a new count reaches BLAS, and the live PoCL device says no
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ember.set_num_threads(2)
        assert any("keeps its 1 threads" in str(w.message) for w in caught), caught
    else:
        ember.set_num_threads(2)
    blas = [lib["num_threads"] for lib in threadpool_info() if lib["user_api"] == "blas"]
    assert set(blas) == {2} and ember.get_num_threads() == 2, blas
    ember.set_num_interop_threads(3)
    assert ember.get_num_interop_threads() == 3
    print("ok", has_opencl)
""")


def test_set_num_threads_limits_blas_and_pocl():
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.startswith("ok")


@pytest.mark.parametrize("fn", [ember.set_num_threads, ember.set_num_interop_threads])
def test_thread_counts_are_checked(fn):
    with pytest.raises(ember.EmberError, match="positive number of threads, got 0"):
        fn(0)
    with pytest.raises(ember.EmberError, match="expected an int, got str"):
        fn("4")
