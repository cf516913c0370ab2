"""Smoke test: a tiny computation on one device, compared with NumPy, in a subprocess."""
from __future__ import annotations

import json
import subprocess
import sys
import time

from .collect import scrub

# Runs in a fresh interpreter so that a hanging or crashing driver cannot take the doctor
# down with it; prints one JSON line.
SCRIPT = """
import json, sys
import numpy as np
import ember
device = sys.argv[1]
a = (np.arange(12, dtype=np.float32).reshape(3, 4) - 5) / 7
b = np.linspace(-1, 1, 8, dtype=np.float32).reshape(4, 2)
x = ember.tensor(a, device=device)
y = ember.tensor(b, device=device)
got = ((x * 2.0 + 1.0) @ y).exp().sum().to("cpu").numpy()
want = np.exp((a * 2 + 1) @ b).sum()
print(json.dumps({"error": float(np.max(np.abs(got - want))),
                  "ok": bool(np.allclose(got, want, rtol=1e-4, atol=1e-5))}))
"""
TIMEOUT = 120.0


def _tail(text: str, lines: int = 15) -> str:
    return scrub("\n".join(text.strip().splitlines()[-lines:]))


def smoke(device: str, timeout: float = TIMEOUT, env: dict | None = None) -> dict:
    """{'device', 'status' (ok | mismatch | error | timeout), 'seconds', 'detail'}.
    `env` is the environment to run in (default: this process's)."""
    start = time.perf_counter()
    try:
        done = subprocess.run([sys.executable, "-c", SCRIPT, device], check=False, env=env,
                              capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"device": device, "status": "timeout", "seconds": timeout,
                "detail": f"no answer within {timeout:g} s: the driver or the device hangs"}
    seconds = round(time.perf_counter() - start, 2)
    result = {"device": device, "status": "error", "seconds": seconds, "detail": ""}
    if done.returncode != 0:
        result["detail"] = _tail(done.stderr) or f"exit status {done.returncode}"
        return result
    try:
        answer = json.loads(done.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        result["detail"] = "the smoke test printed no result: " + _tail(done.stdout + done.stderr)
        return result
    result["status"] = "ok" if answer["ok"] else "mismatch"
    result["detail"] = f"exp(x*2+1 @ y).sum() differs from NumPy by {answer['error']:.2g}"
    return result
