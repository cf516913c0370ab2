"""Entry point of the ember-opencl plugin: the hooks of ember.backends.opencl."""
from ember.backends.opencl import ember_backends, ember_compat

__all__ = ["ember_backends", "ember_compat"]
