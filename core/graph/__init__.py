"""Graph capture at the dispatcher, and its consumers: ember.compile (replay without Python
dispatch); ember.export and ember.onnx build on the same IR (ir.py)."""
from __future__ import annotations

from .capture import GraphBreak, Trace, capture
from .compile import CompiledFunction, RecompileWarning, compile, explain
from .ir import Const, Graph, GraphError, Input, Node, Value

__all__ = ["Graph", "Node", "Value", "Input", "Const", "GraphError", "GraphBreak", "Trace",
           "capture", "compile", "explain", "CompiledFunction", "RecompileWarning"]
