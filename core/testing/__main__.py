"""`python -m ember.testing --report`: see report.py."""
import sys

from .report import main

sys.exit(main())
