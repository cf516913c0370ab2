"""Utilities: data loading (ember.utils.data)."""
