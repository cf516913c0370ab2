"""ember's version, in one place below everything that reports it (the facade, the plugin host)."""
__version__ = "0.1.0"
