"""Real array-API consumers on ember tensors, against the same calls on NumPy arrays.

Run by test_consumers.py in a child process: SciPy reads SCIPY_ARRAY_API when it is first
imported (and scikit-learn's array_api_dispatch needs it), so it is set before any import.
`python consumers.py DEVICE` exits non-zero with the failing check's message.
"""
from __future__ import annotations

import os
import sys
import zlib

os.environ["SCIPY_ARRAY_API"] = "1"

import ember  # noqa: E402
import numpy as np  # noqa: E402
import scipy.cluster.vq as vq  # noqa: E402
import scipy.special as special  # noqa: E402
import scipy.stats as stats  # noqa: E402
import sklearn  # noqa: E402
from sklearn.decomposition import PCA  # noqa: E402
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis  # noqa: E402


def data(name: str, dtype):
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    x = rng.standard_normal((80, 6)) * [1.0, 2.0, 0.5, 1.0, 3.0, 1.0]
    y = (x[:, 0] + 0.5 * x[:, 1] > 0).astype(np.int64) + (x[:, 2] > 0.5)
    return x.astype(dtype), y


def close(got, want, what: str, device: str, rtol: float) -> None:
    assert isinstance(got, ember.Tensor), f"{what}: got {type(got).__name__}, expected a Tensor"
    assert got.device == ember.device(device), f"{what}: result on {got.device}, not {device}"
    np.testing.assert_allclose(got.numpy(), want, rtol=rtol, atol=rtol, err_msg=what)


def sklearn_checks(device: str) -> None:
    # float32 on the CPU only: on a device each dtype is a new set of kernels to build
    kinds = ((np.float64, 1e-9), (np.float32, 1e-3))
    for dtype, rtol in kinds if device == "cpu" else kinds[:1]:
        x, y = data(f"sklearn/{dtype.__name__}", dtype)
        xe = ember.tensor(x, device=device)
        ye = ember.tensor(y, device=device)
        with sklearn.config_context(array_api_dispatch=True):
            lda = LinearDiscriminantAnalysis().fit(xe, ye)
            lda_out = lda.predict(xe), lda.predict_proba(xe), lda.transform(xe)
            pca = PCA(n_components=3, svd_solver="full").fit(xe)
            pca_out = pca.transform(xe), pca.inverse_transform(pca.transform(xe))
        ref = LinearDiscriminantAnalysis().fit(x, y)
        ref_pca = PCA(n_components=3, svd_solver="full").fit(x)
        what = f"LDA {dtype.__name__} on {device}"
        assert (lda_out[0].numpy() == ref.predict(x)).all(), f"{what}: predictions differ"
        close(lda_out[1], ref.predict_proba(x), f"{what} predict_proba", device, rtol)
        close(lda_out[2], ref.transform(x), f"{what} transform", device, rtol)
        close(lda.coef_, ref.coef_, f"{what} coef_", device, rtol)
        what = f"PCA {dtype.__name__} on {device}"
        close(pca_out[0], ref_pca.transform(x), f"{what} transform", device, rtol)
        close(pca_out[1], ref_pca.inverse_transform(ref_pca.transform(x)),
              f"{what} inverse_transform", device, rtol)
        close(pca.explained_variance_, ref_pca.explained_variance_, f"{what} variance",
              device, rtol)


# SciPy functions written against the array API (they call the namespace; the special
# functions without an array-API implementation, like erf, go through NumPy instead)
SCIPY = {
    "special.logsumexp": lambda x: special.logsumexp(x, axis=1),
    "special.softmax": lambda x: special.softmax(x, axis=0),
    "special.log_softmax": lambda x: special.log_softmax(x, axis=1),
    "stats.zscore": lambda x: stats.zscore(x, axis=0),
    "stats.skew": lambda x: stats.skew(x, axis=0),
    "stats.kurtosis": lambda x: stats.kurtosis(x, axis=0),
    "stats.moment": lambda x: stats.moment(x, order=3, axis=0),
    "stats.variation": lambda x: stats.variation(x, axis=0),
    "stats.sem": lambda x: stats.sem(x, axis=0),
    "stats.gmean": lambda x: stats.gmean(x * x + 1, axis=0),
    "stats.pearsonr": lambda x: stats.pearsonr(x[:, 0], x[:, 1]).statistic,
    "stats.ttest_ind": lambda x: stats.ttest_ind(x[:, 0], x[:, 1]).statistic,
    "cluster.vq.whiten": lambda x: vq.whiten(x),
}


# their p-values come from scipy.special functions that only NumPy implements: SciPy calls
# np.asarray on the tensor, which works for CPU tensors only (device ones raise, by design)
NEEDS_NUMPY = {"stats.pearsonr", "stats.ttest_ind"}


def scipy_checks(device: str) -> int:
    x, _ = data("scipy", np.float64)
    xe = ember.tensor(x, device=device)
    ran = 0
    for name, f in SCIPY.items():
        if device != "cpu" and name in NEEDS_NUMPY:
            try:
                f(xe)
            except ember.EmberError as exc:      # a clear refusal, naming the fix
                assert ".cpu()" in str(exc), f"scipy.{name} on {device}: {exc}"
                continue
            raise AssertionError(f"scipy.{name} on {device}: expected an ember error")
        close(f(xe), np.asarray(f(x)), f"scipy.{name} on {device}", device, 1e-10)
        ran += 1
    return ran


if __name__ == "__main__":
    sklearn_checks(sys.argv[1])
    ran = scipy_checks(sys.argv[1])
    print(f"ok: scikit-learn LDA/PCA and {ran} SciPy functions on {sys.argv[1]}")
