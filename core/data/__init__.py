"""Data shipped with ember: the UCI 8x8 digits (CC BY 4.0, see README.md here)."""
