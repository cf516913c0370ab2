"""Neural-network layers, losses and initialisers (ember.nn)."""
