"""compat_input: the TF1 queue-input API (`tf.train.batch`, readers, producers, ...) on tf.data.

Legacy graph-mode input code runs unchanged: producers, readers and batchers build one
tf.data pipeline, started wherever legacy code started its queue runners.
"""

import importlib

# Each public name and the module of compat_input/_src that defines it. Imported on first
# use (PEP 562): `import compat_input` does not load TensorFlow, so the `compat-input`
# command answers `--help` and argument errors at once.
_EXPORTS = {
    "CaptureError": "errors",
    "CompatInputError": "errors",
    "Coordinator": "runners",
    "FixedLengthRecordReader": "fixed_length_records",
    "Held": "iteration",
    "IdentityReader": "readers",
    "InputQueue": "producers",
    "LooperThread": "runners",
    "QueueRunner": "runners",
    "ReaderBase": "readers",
    "Supervisor": "supervisor",
    "TFRecordReader": "readers",
    "TextLineReader": "readers",
    "WholeFileReader": "readers",
    "add_queue_runner": "runners",
    "as_dataset": "bridges",
    "batch": "batching",
    "batch_join": "batching",
    "configure": "options",
    "first_skipped_record": "iteration",
    "from_dataset": "bridges",
    "hold": "iteration",
    "input_producer": "producers",
    "install": "install",
    "installed": "install",
    "iterate": "iteration",
    "limit_epochs": "producers",
    "match_filenames_once": "input_files",
    "maybe_batch": "batching",
    "maybe_batch_join": "batching",
    "maybe_shuffle_batch": "batching",
    "maybe_shuffle_batch_join": "batching",
    "range_input_producer": "producers",
    "reset": "iteration",
    "shuffle_batch": "batching",
    "shuffle_batch_join": "batching",
    "skipped_files": "iteration",
    "skipped_records": "iteration",
    "slice_input_producer": "producers",
    "start_pipelines": "runners",
    "start_queue_runners": "runners",
    "string_input_producer": "producers",
    "uninstall": "install",
}

__all__ = [
    "CaptureError",
    "CompatInputError",
    "Coordinator",
    "FixedLengthRecordReader",
    "Held",
    "IdentityReader",
    "InputQueue",
    "LooperThread",
    "QueueRunner",
    "ReaderBase",
    "Supervisor",
    "TFRecordReader",
    "TextLineReader",
    "WholeFileReader",
    "add_queue_runner",
    "as_dataset",
    "batch",
    "batch_join",
    "configure",
    "first_skipped_record",
    "from_dataset",
    "hold",
    "input_producer",
    "install",
    "installed",
    "iterate",
    "limit_epochs",
    "match_filenames_once",
    "maybe_batch",
    "maybe_batch_join",
    "maybe_shuffle_batch",
    "maybe_shuffle_batch_join",
    "range_input_producer",
    "reset",
    "shuffle_batch",
    "shuffle_batch_join",
    "skipped_files",
    "skipped_records",
    "slice_input_producer",
    "start_pipelines",
    "start_queue_runners",
    "string_input_producer",
    "uninstall",
]


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'compat_input' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"compat_input._src.{module}"), name)
    globals()[name] = value  # Found directly from now on.
    return value


def __dir__() -> list:
    return sorted(set(globals()) | set(__all__))
