"""Entry point of the ember-opencl plugin: the hooks of ember.backends.opencl."""
from ember.backends.opencl import PLUGIN_API, ember_backends, ember_compat, ember_doctor_checks

__all__ = ["PLUGIN_API", "ember_backends", "ember_compat", "ember_doctor_checks"]
