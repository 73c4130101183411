"""Fingerprints of the batches a program reads, for `compat-input compare --batches N`.

`install(record_batches=PATH)` puts a recording `Session.run` in place (a row of install's
table, applied only with that option): each run whose fetches depend on an input batch
also fetches the batch, and one line per batch goes to PATH: a SHA-1 of every component's
dtype, shape and bytes, then the shapes. The fetches and results are the program's own:
a batch the run reads anyway is only fetched as well, never read once more.

An input batch is what a batcher hands the program: on legacy queues the output of a
`dequeue_many` / `dequeue_up_to` op, on compat_input a batcher pipeline's output, in a
program `migrate --to-tfdata` wrote the `get_next()` of an iterator over a batched
Dataset (`.batch(...)`, perhaps then prefetched or given options). All
hand over the components in the same order (a dict's sorted keys, a list's order), so
the two sides' lines compare directly. Several batches in one run are recorded in the
order of their op names.
"""

import hashlib
import threading

import numpy as np
import tensorflow as tf

from compat_input._src.runtime import iteration
from compat_input._src.runtime import pipeline as pipeline_lib

_DEQUEUE_MANY = frozenset(
    {"QueueDequeueManyV2", "QueueDequeueUpToV2", "QueueDequeueMany", "QueueDequeueUpTo"}
)


# Datasets that hand on their input's elements unchanged, and those that batch them.
_PASSING = frozenset(
    {
        "OptionsDataset",
        "ModelDataset",
        "MaxIntraOpParallelismDataset",
        "PrivateThreadPoolDataset",
        "PrefetchDataset",
    }
)
_BATCHING = frozenset(
    {"BatchDataset", "BatchDatasetV2", "PaddedBatchDatasetV2", "ParallelBatchDataset"}
)


def _batched(kinds) -> bool:
    """Whether the dataset whose op types are `kinds` (itself first, then the dataset it
    reads, and so on) hands out batches."""
    for kind in kinds:
        if kind not in _PASSING:
            return kind in _BATCHING
    return False


def _graph_kinds(op: tf.Operation):
    while True:
        yield op.type
        op = op.inputs[0].op


def _function_kinds(nodes: dict, name: str):
    while True:
        yield nodes[name].op
        name = nodes[name].input[0].split(":")[0]


def _tfdata_batch(op: tf.Operation) -> bool:
    """Whether `op` is the get_next() of an iterator over a batched Dataset."""
    if op.type != "IteratorGetNext":
        return False
    iterator = op.inputs[0].op
    if iterator.type == "OneShotIterator":
        # The dataset is built in a function of the graph's library, which returns it.
        definition = op.graph._get_function(iterator.get_attr("dataset_factory").name)
        definition = definition.cached_definition
        nodes = {node.name: node for node in definition.node_def}
        (returned,) = definition.ret.values()
        return _batched(_function_kinds(nodes, returned.split(":")[0]))
    made = [c for c in iterator.outputs[0].consumers() if c.type == "MakeIterator"]
    return len(made) == 1 and _batched(_graph_kinds(made[0].inputs[0].op))


def _batch_op(op: tf.Operation) -> bool:
    if op.type in _DEQUEUE_MANY or _tfdata_batch(op):
        return True
    if not op.outputs:
        return False
    found = pipeline_lib.lookup_source(op.outputs[0])
    return found is not None and found[0].batches


def batches_behind(fetches) -> list[tf.Operation]:
    """The input-batch ops the run of `fetches` executes, by name."""
    return sorted(iteration.ops_behind(fetches, _batch_op), key=lambda op: op.name)


def _digest(values: list):
    digest = hashlib.sha1()
    for value in values:
        array = np.asarray(value)
        digest.update(f"{array.dtype.str}{array.shape}".encode())
        if array.dtype == object:  # Strings: their bytes, each with its length.
            for item in array.ravel():
                digest.update(len(item).to_bytes(8, "little") + bytes(item))
        else:
            digest.update(np.ascontiguousarray(array).tobytes())
    return digest.hexdigest()


def fingerprint(values: list) -> str:
    shapes = " ".join(str(list(np.shape(v))) for v in values)
    return f"{_digest(values)} {shapes}"


def example_fingerprints(values: list) -> str:
    """One fingerprint per example of a batch (row i of every component together), for
    comparing shuffled input as multisets of whole examples."""
    rows = min((len(np.asarray(v)) for v in values if np.ndim(v)), default=0)
    return " ".join(_digest([np.asarray(v)[i] for v in values])[:16] for i in range(rows))


class _Recorder:
    def __init__(self, path: str):
        self.path = path
        self.lock = threading.Lock()
        # The batch ops behind each distinct fetch list, by the names fetched: programs
        # build a new list for every run of the same fetches.
        self.behind: dict[tuple, list] = {}
        open(path, "w").close()
        open(examples_path(path), "w").close()

    def ops(self, fetches) -> list:
        flat = iteration.fetched(fetches)
        key = tuple(
            (id(getattr(item, "graph", None)), getattr(item, "name", repr(item))) for item in flat
        )
        if key not in self.behind:
            self.behind[key] = batches_behind(flat)
        return self.behind[key]

    def write(self, batches: list) -> None:
        with self.lock, open(self.path, "a") as out, open(examples_path(self.path), "a") as rows:
            for values in batches:
                out.write(fingerprint(values) + "\n")
                rows.write(example_fingerprints(values) + "\n")


def examples_path(path: str) -> str:
    """Where the examples of the batches recorded at `path` are: a line per batch."""
    return path + ".examples"


def recording_run(path: str):
    """A `BaseSession.run` replacement factory that records the batches each run reads."""
    recorder = _Recorder(path)

    def replace(original):
        def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
            ops = recorder.ops(fetches)
            if not ops:
                return original(self, fetches, feed_dict, options, run_metadata)
            outputs = [list(op.outputs) for op in ops]
            result, batches = original(self, (fetches, outputs), feed_dict, options, run_metadata)
            recorder.write(batches)
            return result

        run.__doc__ = original.__doc__
        run.__wrapped__ = original
        return run

    return replace
