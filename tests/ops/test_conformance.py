"""The conformance suite (ember.testing) as part of this repository's tests."""
from ember.testing.test_conformance import test_forward, test_gradients  # noqa: F401
