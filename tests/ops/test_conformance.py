"""The conformance suite (ember.testing) as part of this repository's tests."""
from ember.testing.test_conformance import test_conformance, test_device_type  # noqa: F401
