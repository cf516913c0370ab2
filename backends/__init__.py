"""Backends shipped with ember, one subpackage each; the contract lives in ember.backend."""
from ember.backend import Backend, Capabilities, DeviceInfo, Probe

__all__ = ["Backend", "Capabilities", "DeviceInfo", "Probe"]
