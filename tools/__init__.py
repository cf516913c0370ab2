"""The `ember` command-line tools: doctor, compat, devices, ops, demo, bench."""
