"""ember.profiler: torch.profiler's API (profile, schedule, record_function, ...) on
ember's dispatch tail, and diagnose(): the tuning checklist checked with the numbers of a
profiled run (`ember doctor perf script.py`)."""
from __future__ import annotations

from .checklist import PerfReport, diagnose
from .events import EventList, FunctionEvent, FunctionEventAvg
from .profiler import (
    ProfilerAction,
    ProfilerActivity,
    profile,
    record_function,
    schedule,
    supported_activities,
    tensorboard_trace_handler,
)

__all__ = ["profile", "record_function", "schedule", "ProfilerActivity", "ProfilerAction",
           "tensorboard_trace_handler", "supported_activities", "EventList",
           "FunctionEvent", "FunctionEventAvg", "diagnose", "PerfReport"]
