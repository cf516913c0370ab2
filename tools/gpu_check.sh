#!/usr/bin/env bash
# The GPU checks of issue 6, in one run, into one report file.
#
# On a machine with an NVIDIA (or AMD) GPU and CuPy already installed: installs ember and
# the matching CuPy plugin into a throw-away venv over the system's packages, then runs
# ember doctor, the GPU tests, ember.compile on CUDA graphs, the conformance suite on
# cuda:0 (forward and gradients), extra gradient checks, `ember demo --device cuda
# --epochs 2`, benchmarks/overhead.py, benchmarks/cuda_graphs.py (train steps) and
# benchmarks/cuda_matmul.py (ember-cuda vs raw CuPy vs PyTorch CUDA).
#
#   tools/gpu_check.sh [REPORT]        default REPORT: ./gpu_check_report.md
#
# Every step runs under a time limit (STEP_TIMEOUT seconds, default 300); its output and
# exit status go to the report, and the script keeps going.  Exit status: the number of
# failed steps (0 = all passed).
set -u

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
REPORT=$(realpath -m "${1:-gpu_check_report.md}")
PYTHON=${PYTHON:-python3}
STEP_TIMEOUT=${STEP_TIMEOUT:-300}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/ember-gpu-check.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cd "$ROOT" || exit 1

SUMMARY=()
FAILED=0

# step NAME COMMAND...: run it with a time limit, its output and status into the report
step() {
    local name=$1 start rc
    shift
    start=$(date +%s)
    {
        echo
        echo "## $name"
        echo
        echo '```'
        echo "\$ $*"
    } >>"$REPORT"
    # stdin passes through: some steps are Python read from a here-document
    timeout --kill-after=10 "$STEP_TIMEOUT" "$@" >>"$REPORT" 2>&1
    rc=$?
    {
        echo '```'
        echo "exit status $rc$([ $rc -eq 124 ] && echo " (timed out after ${STEP_TIMEOUT}s)"), $(($(date +%s) - start)) s"
    } >>"$REPORT"
    if [ $rc -eq 0 ]; then
        SUMMARY+=("ok      $name")
    else
        SUMMARY+=("FAILED  $name (exit $rc)")
        FAILED=$((FAILED + 1))
    fi
    echo "${SUMMARY[-1]}"
    return 0
}

{
    echo "# ember GPU check"
    echo
    echo "- date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "- commit: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$ROOT" diff --quiet 2>/dev/null || echo ' (with local changes)')"
    echo "- host: $(uname -srm)"
} >"$REPORT"

# -- the machine ------------------------------------------------------------------------
step "machine: GPUs and driver" nvidia-smi
step "machine: Python and the GPU libraries" "$PYTHON" - <<'EOF'
import importlib.metadata as md, sys
print(sys.version)
for d in sorted(md.distributions(), key=lambda d: (d.metadata["Name"] or "").lower()):
    name = (d.metadata["Name"] or "").lower()
    if name.startswith(("cupy", "torch", "numpy", "nvidia-cu", "pluggy", "ember")):
        print(f"{name} {d.version}")
EOF

# -- install ember and the plugin that matches the installed CuPy -----------------------
VENV=$WORK/venv
VPY=$VENV/bin/python
# no pip of its own: the system's pip, setuptools and wheel (visible through the system
# site-packages) install into it, so nothing needs downloading
step "install: venv over the system packages" \
    "$PYTHON" -m venv --system-site-packages --without-pip "$VENV"
step "install: ember (editable)" "$VPY" -m pip install -q --no-build-isolation -e "$ROOT"
PLUGIN=$("$VPY" - <<'EOF' 2>/dev/null
import importlib.metadata as md
names = {(d.metadata["Name"] or "").lower() for d in md.distributions()}
print("ember-cuda13" if "cupy-cuda13x" in names else
      "ember-rocm" if any(n.startswith("cupy-rocm") for n in names) else "ember-cuda12")
EOF
)
PLUGIN=${PLUGIN:-ember-cuda12}
# build from a copy so no egg-info lands in the working tree; CuPy itself is not pulled in
# (--no-deps): the machine's own CuPy is what is under test
cp -r "$ROOT/plugins/$PLUGIN" "$WORK/$PLUGIN"
step "install: $PLUGIN (for the installed CuPy)" \
    "$VPY" -m pip install -q --no-deps --no-build-isolation "$WORK/$PLUGIN"

# -- what ember sees ----------------------------------------------------------------------
step "ember doctor (exit 1: warnings, 2: problems)" "$VPY" -m ember.tools.cli doctor
step "ember.cuda" "$VPY" - <<'EOF'
import ember
print("is_available:", ember.cuda.is_available())
print("device_count:", ember.cuda.device_count())
if not ember.cuda.is_available():
    raise SystemExit(ember.cuda.unavailable_reason())
dev = ember.device("cuda").concrete()
print(f"device 0: {ember.cuda.get_device_name(0)}; 'cuda' means {dev}")
print("probe details:", dev.backend.probe().details)
EOF

# -- correctness --------------------------------------------------------------------------
# one line per failure: a broken backend fails hundreds of cases the same way
PYTEST=("$VPY" -m pytest -q -p no:cacheprovider -rfEs --tb=line)
step "GPU tests (tests/plugins/test_cupy_gpu.py)" "${PYTEST[@]}" tests/plugins/test_cupy_gpu.py
step "ember.compile on CUDA graphs (tests/graph/test_cuda_graphs.py)" \
    "${PYTEST[@]}" tests/graph/test_cuda_graphs.py
step "conformance suite on cuda:0 (forward and gradients)" \
    env EMBER_TEST_DEVICES=cuda:0 "${PYTEST[@]}" --pyargs ember.testing
step "gradient checks on cuda:0" "$VPY" - <<'EOF'
# gradcheck in float64 on the GPU through composites and the CuPy-specific backward kernels
# (take -> index_add, gather -> scatter_add), then one small network's gradients on the GPU
# against the CPU's
import ember
import numpy as np
from ember.autograd import gradcheck

rng = np.random.default_rng(0)
def t(*shape, grad=True):
    return ember.tensor(rng.standard_normal(shape), dtype=ember.float64, device="cuda:0",
                        requires_grad=grad)

idx = ember.tensor([2, 0, 2, 1], device="cuda:0")
gidx = ember.tensor(rng.integers(0, 3, (4, 3)), device="cuda:0")
checks = {
    "softmax": (lambda x: ember.softmax(x, -1), (t(3, 5),)),
    "logsumexp": (lambda x: ember.logsumexp(x, 1), (t(4, 6),)),
    "gelu": (lambda x: ember.gelu(x), (t(7),)),
    "linear": (lambda x, w, b: ember.linear(x, w, b), (t(4, 3), t(2, 3), t(2))),
    "var_mean": (lambda x: ember.var(x, 0) + ember.mean(x, 0), (t(5, 3),)),
    "take (index_add backward)": (lambda x: x.index_select(0, idx) * 2, (t(3, 4),)),
    "gather (scatter_add backward)": (lambda x: x.gather(1, gidx).exp(), (t(4, 3),)),
    "matmul": (lambda a, b: a @ b, (t(3, 4), t(4, 2))),
}
failed = 0
for name, (fn, inputs) in checks.items():
    try:
        gradcheck(fn, inputs)
        print(f"ok      {name}")
    except Exception as exc:
        failed += 1
        print(f"FAILED  {name}: {type(exc).__name__}: {exc}")

def net_grads(device):
    g = np.random.default_rng(1)
    w1 = ember.tensor(g.standard_normal((8, 16)) * 0.3, device=device, requires_grad=True)
    w2 = ember.tensor(g.standard_normal((16, 3)) * 0.3, device=device, requires_grad=True)
    x = ember.tensor(g.standard_normal((32, 8)), device=device)
    y = ember.tensor(g.integers(0, 3, 32), device=device)
    logp = ember.log_softmax(ember.relu(x @ w1) @ w2, -1)
    (-logp.gather(1, y.reshape(-1, 1)).mean()).backward()
    return w1.grad.cpu().numpy(), w2.grad.cpu().numpy()

for name, a, b in zip(("w1", "w2"), net_grads("cpu"), net_grads("cuda:0")):
    err = float(np.abs(a - b).max())
    ok = np.allclose(a, b, rtol=1e-4, atol=1e-5)
    failed += not ok
    print(f"{'ok     ' if ok else 'FAILED '} MLP grad {name}: cpu vs cuda max diff {err:.2e}")
raise SystemExit(1 if failed else 0)
EOF

# -- training and speed -------------------------------------------------------------------
step "ember demo --device cuda --epochs 2" "$VPY" -m ember.tools.cli demo --device cuda --epochs 2
if [ -f benchmarks/overhead.py ]; then
    if "$VPY" benchmarks/overhead.py --help 2>/dev/null | grep -q -- "--device"; then
        step "benchmarks/overhead.py --device cuda" "$VPY" benchmarks/overhead.py --device cuda
    else
        step "benchmarks/overhead.py" "$VPY" benchmarks/overhead.py
    fi
else
    SUMMARY+=("missing benchmarks/overhead.py (not in this tree)")
fi
step "train steps: eager, compiled, CUDA graphs, PyTorch" \
    "$VPY" benchmarks/cuda_graphs.py --steps 50 --json "$WORK/cuda_graphs.json"
step "4096x4096 float32 matmul: ember-cuda vs CuPy vs PyTorch" \
    "$VPY" benchmarks/cuda_matmul.py --size 4096 --json "$WORK/cuda_matmul.json"

{
    echo
    echo "## Summary"
    echo
    echo '```'
    printf '%s\n' "${SUMMARY[@]}"
    echo "$FAILED step(s) failed"
    echo '```'
} >>"$REPORT"
echo "report: $REPORT ($FAILED step(s) failed)"
exit "$FAILED"
