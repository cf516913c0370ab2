"""ember.utils.tensorboard (torch.utils.tensorboard): SummaryWriter writing TensorBoard event
files through the tensorboard package, as PyTorch's does.

As in PyTorch, importing it needs the tensorboard package (pip install tensorboard):
without it the import fails with ModuleNotFoundError naming 'tensorboard', so
`try: from torch.utils.tensorboard import SummaryWriter except ImportError:` takes its
fallback as under PyTorch.  With it, SummaryWriter writes the same protocol buffers
PyTorch's writes (scalars old and new style, scalars per tag in their own runs,
histograms with PyTorch's bins, text) into event files TensorBoard reads, through the
package's own EventFileWriter.  The writers PyTorch has beyond those (images, figures,
video, audio, graphs, embeddings, PR curves, meshes, hparams, custom scalars) raise
NotInEmberError naming themselves.
"""
from __future__ import annotations

import os
import time

import numpy as np

from ..errors import EmberValueError, ModuleGapError, NotInEmberError
from ..tensor import Tensor

try:
    import tensorboard  # noqa: F401  (PyTorch's first line: fails without the package)
except ModuleNotFoundError as exc:
    if exc.name != "tensorboard":
        raise
    raise ModuleGapError("No module named 'tensorboard': torch.utils.tensorboard needs the "
                         "tensorboard package, in PyTorch as in ember (pip install "
                         "tensorboard)", name="tensorboard") from None
try:
    from tensorboard.compat.proto.event_pb2 import Event, SessionLog
    from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata
    from tensorboard.compat.proto.tensor_pb2 import TensorProto
    from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
    from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData
    from tensorboard.summary.writer.event_file_writer import EventFileWriter
except ImportError as exc:
    raise ModuleGapError(f"torch.utils.tensorboard: the installed tensorboard package lacks "
                         f"{exc.name or exc} (ember needs tensorboard >= 2.0: pip install -U "
                         "tensorboard)", name="tensorboard") from None

__all__ = ["FileWriter", "SummaryWriter"]

# PyTorch's writer methods ember does not have
_MISSING = ("add_image", "add_images", "add_image_with_boxes", "add_figure", "add_video",
            "add_audio", "add_graph", "add_onnx_graph", "add_embedding", "add_pr_curve",
            "add_pr_curve_raw", "add_custom_scalars", "add_custom_scalars_multilinechart",
            "add_custom_scalars_marginchart", "add_mesh", "add_hparams", "add_tensor",
            "add_histogram_raw")


def _numpy(value, what: str) -> np.ndarray:
    if isinstance(value, Tensor):
        return value.detach().numpy()
    if isinstance(value, (list, tuple, int, float, np.ndarray, np.generic)):
        return np.asarray(value)
    raise EmberValueError(f"SummaryWriter.{what}: expected a tensor, a NumPy array or a "
                          f"number, got {type(value).__name__}")


class FileWriter:
    """One event file in log_dir (torch.utils.tensorboard.writer.FileWriter)."""

    def __init__(self, log_dir, max_queue: int = 10, flush_secs: float = 120,
                 filename_suffix: str = ""):
        self.event_writer = EventFileWriter(str(log_dir), max_queue, flush_secs,
                                            filename_suffix)

    def get_logdir(self) -> str:
        return self.event_writer.get_logdir()

    def add_event(self, event, step=None, walltime=None) -> None:
        event.wall_time = time.time() if walltime is None else walltime
        if step is not None:
            event.step = int(step)
        self.event_writer.add_event(event)

    def add_summary(self, summary, global_step=None, walltime=None) -> None:
        self.add_event(Event(summary=summary), global_step, walltime)

    def flush(self) -> None:
        self.event_writer.flush()

    def close(self) -> None:
        self.event_writer.close()


class SummaryWriter:
    """Writes scalars, histograms and text to TensorBoard event files in log_dir, as
    torch.utils.tensorboard.SummaryWriter (same arguments, same files)."""

    def __init__(self, log_dir=None, comment: str = "", purge_step=None, max_queue: int = 10,
                 flush_secs: float = 120, filename_suffix: str = ""):
        if not log_dir:
            import socket
            from datetime import datetime
            log_dir = os.path.join("runs", datetime.now().strftime("%b%d_%H-%M-%S") + "_"
                                   + socket.gethostname() + comment)
        self.log_dir = log_dir
        self.purge_step = purge_step
        self.max_queue, self.flush_secs = max_queue, flush_secs
        self.filename_suffix = filename_suffix
        self.file_writer = self.all_writers = None
        self._get_file_writer()
        # PyTorch's (and TensorFlow's) default histogram bins: +-1e-12 * 1.1**k up to 1e20
        v, buckets = 1e-12, []
        while v < 1e20:
            buckets.append(v)
            v *= 1.1
        self.default_bins = [-b for b in reversed(buckets)] + [0] + buckets

    def _get_file_writer(self) -> FileWriter:
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(self.log_dir, self.max_queue, self.flush_secs,
                                          self.filename_suffix)
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                # TensorBoard drops the events of later steps written before this restart
                self.file_writer.add_event(Event(step=self.purge_step,
                                                 file_version="brain.Event:2"))
                self.file_writer.add_event(Event(step=self.purge_step,
                                                 session_log=SessionLog(status=SessionLog.START)))
                self.purge_step = None
        return self.file_writer

    def get_logdir(self):
        return self.log_dir

    def add_scalar(self, tag: str, scalar_value, global_step=None, walltime=None,
                   new_style: bool = False, double_precision: bool = False) -> None:
        self._get_file_writer().add_summary(
            _scalar(tag, scalar_value, new_style, double_precision), global_step, walltime)

    def add_scalars(self, main_tag: str, tag_scalar_dict: dict, global_step=None,
                    walltime=None) -> None:
        """Each tag's scalar in its own run, log_dir/<main_tag>_<tag>, as PyTorch writes."""
        walltime = time.time() if walltime is None else walltime
        logdir = self._get_file_writer().get_logdir()
        for tag, value in tag_scalar_dict.items():
            path = logdir + "/" + main_tag.replace("/", "_") + "_" + tag
            writer = self.all_writers.get(path)
            if writer is None:
                writer = self.all_writers[path] = FileWriter(
                    path, self.max_queue, self.flush_secs, self.filename_suffix)
            writer.add_summary(_scalar(main_tag, value), global_step, walltime)

    def add_histogram(self, tag: str, values, global_step=None, bins="tensorflow",
                      walltime=None, max_bins=None) -> None:
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        histogram = _histogram(_numpy(values, "add_histogram").astype(float), bins, max_bins)
        self._get_file_writer().add_summary(
            Summary(value=[Summary.Value(tag=tag, histo=histogram)]), global_step, walltime)

    def add_text(self, tag: str, text_string: str, global_step=None, walltime=None) -> None:
        plugin = SummaryMetadata.PluginData(
            plugin_name="text", content=TextPluginData(version=0).SerializeToString())
        tensor = TensorProto(dtype="DT_STRING", string_val=[text_string.encode("utf_8")],
                             tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]))
        summary = Summary(value=[Summary.Value(tag=tag + "/text_summary", tensor=tensor,
                                               metadata=SummaryMetadata(plugin_data=plugin))])
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def flush(self) -> None:
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()

    def close(self) -> None:
        if self.all_writers is None:
            return                       # a second close does nothing, as in PyTorch
        for writer in self.all_writers.values():
            writer.flush()
            writer.close()
        self.file_writer = self.all_writers = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __getattr__(self, name: str):
        if name in _MISSING:
            raise NotInEmberError(
                f"SummaryWriter.{name}: ember's SummaryWriter writes scalars (add_scalar, "
                "add_scalars), histograms (add_histogram) and text (add_text); it has no "
                f"{name} yet: log that with torch's writer or tensorboardX")
        raise AttributeError(f"'SummaryWriter' object has no attribute {name!r}")


def _scalar(tag: str, value, new_style: bool = False, double_precision: bool = False):
    array = _numpy(value, "add_scalar").squeeze()
    if array.ndim != 0:
        raise EmberValueError(f"SummaryWriter.add_scalar: {tag!r} needs one value, got "
                              f"{array.size} (shape {list(array.shape)}); pass x.item() or "
                              "a one-element tensor")
    number = float(array)
    if not new_style:
        return Summary(value=[Summary.Value(tag=tag, simple_value=number)])
    tensor = (TensorProto(double_val=[number], dtype="DT_DOUBLE") if double_precision else
              TensorProto(float_val=[number], dtype="DT_FLOAT"))
    metadata = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="scalars"))
    return Summary(value=[Summary.Value(tag=tag, tensor=tensor, metadata=metadata)])


def _histogram(values: np.ndarray, bins, max_bins=None) -> HistogramProto:
    """PyTorch's make_histogram (TensorFlow's histogram.cc): only the bins from the first to
    the last non-empty one, with an empty bin on the left for the leftmost limit."""
    if values.size == 0:
        raise EmberValueError("SummaryWriter.add_histogram: the values have no element")
    values = values.reshape(-1)
    counts, limits = np.histogram(values, bins=bins)
    if max_bins is not None and len(counts) > max_bins:
        sub = len(counts) // max_bins
        if len(counts) % sub:
            counts = np.pad(counts, [[0, sub - len(counts) % sub]])
        counts = counts.reshape(-1, sub).sum(axis=-1)
        new_limits = np.empty((counts.size + 1,), limits.dtype)
        new_limits[:-1] = limits[:-1:sub]
        new_limits[-1] = limits[-1]
        limits = new_limits
    cumulative = np.cumsum(np.greater(counts, 0))
    start, end = np.searchsorted(cumulative, [0, cumulative[-1] - 1], side="right")
    start, end = int(start), int(end) + 1
    counts = counts[start - 1:end] if start > 0 else np.concatenate([[0], counts[:end]])
    limits = limits[start:end + 1]
    return HistogramProto(min=values.min(), max=values.max(), num=len(values),
                          sum=values.sum(), sum_squares=values.dot(values),
                          bucket_limit=limits.tolist(), bucket=counts.tolist())
