"""Optimizers and learning-rate schedulers (ember.optim)."""
