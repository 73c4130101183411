"""The input position in checkpoints.

Legacy queues kept no position: after a restore, training read its data from the start
again. Every compat_input pipeline adds a SaveableObject for its iterator to the
`SAVEABLE_OBJECTS` collection, and a `tf.compat.v1.train.Saver()` built after the pipelines
saves everything in that collection, so the Supervisor's, MonitoredTrainingSession's and a
plain Saver's checkpoints all hold the position of every pipeline.

Two details make it safe with unmodified code: a pipeline that was not started yet saves
the start (an empty position: restored, the pipeline starts afresh), and stays unstarted (the
stock Supervisor checkpoints in one thread while it starts queue runners in another: a
save that started the pipeline itself was then rewound by that start, after a read, and a
batch came twice); and restoring a pipeline marks it started, so the
`start_queue_runners` that follows a restore does not rewind it. Pipelines that cannot be serialized (py_func, hand-built
queues) are left out with a warning naming them.

A position belongs to the input that saved it: its key names the pipeline and a
fingerprint of what it reads (its files, batch size, seeds: the dataset ops' attributes and
constants), `compat_input/<name>/position.<fingerprint>_POSITION`. A checkpoint restores into
any graph whose variables it holds, as legacy's did (restoring.py): an input whose
position it lacks, or holds for another input of that name (a training checkpoint restored
into an evaluation graph, or a compat_input version whose pipeline for it differs: a
bucketing input since its examples carry their bucket's key), starts from the beginning, and
a warning says so.
"""

import functools
import hashlib
import logging
import time

import tensorflow as tf

from compat_input._src.core import graph_ops
from compat_input._src.core import tf_internals
from compat_input._src.core import tracing
from compat_input._src.core.options import options
from compat_input._src.core.tf_internals import saveable_object
from compat_input._src.runtime import first_checkpoint
from compat_input._src.runtime import graph_states
from compat_input._src.runtime import position_costs

tf1 = tf.compat.v1
logger = logging.getLogger("compat_input")

_UNSERIALIZABLE_OPS = frozenset({"PyFunc", "PyFuncStateless", "EagerPyFunc"})


class _LateNamedSpec(saveable_object.SaveSpec):
    """A SaveSpec whose name (the checkpoint key) is made when first read."""

    def __init__(self, tensor, name_of, device, dtype):
        self._name_of = name_of
        super().__init__(tensor, "", None, dtype=dtype, device=device)

    @property
    def name(self) -> str:
        return self._name_of()

    @name.setter
    def name(self, value) -> None:
        if value is not None:  # Set by the base class (None here), or renamed by a Saver.
            self._name_of = lambda: value


# The key of a position, after its name: a string, empty for the start (the serialized
# iterator state was a variant under `_STATE` until 2026-12-07: such a position is missing
# here, and its input starts from the beginning, said once).
_POSITION_KEY = "_POSITION"


class _PipelineSaveable(saveable_object.SaveableObject):
    """A pipeline's iterator state; restoring it also marks the pipeline started."""

    def __init__(self, pipeline, name_of, make_start_ops):
        iterator = pipeline.resource
        # Counters and epoch variables the datasets touch are checkpointed (or not) as
        # variables; the iterator state is complete without.
        policy = tf.data.experimental.ExternalStatePolicy.IGNORE.value
        made = []

        def state():
            # Made when a Saver is built, not with every pipeline: graphs with many
            # pipelines and no Saver pay nothing for it.
            if not made and self._left():
                made.append(tf.constant(""))
            if not made:
                # The stock Supervisor checkpoints right away, while it starts queue runners.
                # Its Saver is built before the graph is finalized, and its thread writes
                # the graph out while the input starts: every op the start runs is made
                # now, not on first use during that write (which then failed on an op half
                # made, "KeyError: ''").
                graph = pipeline.started_handle.graph
                make_start_ops(graph)
                # The start (a pipeline not started, a Supervisor's first checkpoint) is "":
                # nothing serialized, where an iterator of its own, made to be serialized,
                # instantiated every function of the pipeline (youtube-8m's shape: 0.24 s
                # of CPU at a save, beside the first steps).
                position = tracing.branch(
                    first_checkpoint.moved(pipeline),
                    lambda: tf.io.serialize_tensor(
                        graph_ops.SerializeIterator(
                            resource_handle=iterator, external_state_policy=policy
                        )
                    ),
                    lambda: tf.constant(""),
                )
                with tf.control_dependencies([first_checkpoint.unmarking(graph)]):
                    made.append(tf.identity(position))
            return made[0]

        self._pipeline = pipeline
        # Left to a direct read by the input's start (a reader only batchers read, their
        # producer): it saves the start and restores nothing, as legacy's readers. Its save
        # and restore made some 30 ops: the youtube-8m-shaped trainer's Supervisor 250,
        # 115 with its four readers and their producer left.
        self._left = functools.cache(lambda: graph_states.left_to_direct_reads(pipeline))
        specs = [
            _LateNamedSpec(state, lambda: name_of() + _POSITION_KEY, iterator.device, tf.string)
        ]
        if pipeline.kept:
            kept_made = []

            def kept():
                # Examples of a block that counted reads did not take yet: with the
                # iterator's state, the position.
                if not kept_made:
                    empty = [tf.io.serialize_tensor(v.initial_value) for v in pipeline.kept]
                    kept_made.append(
                        tracing.branch(
                            first_checkpoint.moved(pipeline),
                            lambda: tf.stack(
                                [tf.io.serialize_tensor(v.read_value()) for v in pipeline.kept]
                            ),
                            lambda: tf.stack(empty),
                        )
                    )
                return kept_made[0]

            specs.append(
                _LateNamedSpec(kept, lambda: name_of() + "_KEPT", iterator.device, tf.string)
            )
        super().__init__(iterator, specs, None)

    def restore(self, restored_tensors, restored_shapes):
        del restored_shapes
        pipeline = self._pipeline
        if self._left():
            return tf.no_op()
        graph = pipeline.started_handle.graph
        # Deserializing needs an initialized iterator (it restores into its dataset), and
        # the state variables its datasets' functions touch as they are rebuilt (restored
        # before start_queue_runners, the usual TF1 order, nothing has initialized them).
        state = pipeline.state_initialized()
        position = restored_tensors[0]

        def own():
            serialized = tf.io.parse_tensor(position, tf.variant)
            with tf.control_dependencies([pipeline.iterator.initializer, state]):
                restore = graph_ops.DeserializeIterator(
                    resource_handle=self.op, serialized=serialized
                )
            # Marked restored: a Supervisor's first checkpoint keeps it (first_checkpoint.py).
            with tf.control_dependencies([restore]):
                return tracing.after(first_checkpoint.restored(graph))

        def start():
            with tf.control_dependencies([state]):
                return tracing.after(pipeline.rewind())

        # Switch and Merge (tracing.branch): a tf.cond of each took 2-4 ms of a Saver's build.
        restored = [tracing.branch(tf.strings.length(position) > 0, own, start)]
        with tf.control_dependencies([state]):
            for index, variable in enumerate(pipeline.kept or []):
                restored.append(
                    variable.assign(tf.io.parse_tensor(restored_tensors[1][index], variable.dtype))
                )
        # Marked started only once restored: a failed restore must leave it to be started.
        with tf.control_dependencies(restored):
            return graph_ops.AssignVariableOp(
                resource=pipeline.started_handle, value=tf.constant(True)
            )


def add_saveable(pipeline, dataset_ops: list, make_start_ops) -> None:
    """Puts `pipeline`'s position into checkpoints, unless it cannot be serialized or costs
    more than it gives (`too_big`). `make_start_ops(graph)` makes the ops that start the
    graph's input (pipeline.py)."""
    if not options.save_input_position:
        return
    big = position_costs.too_big(pipeline.source) if pipeline.source is not None else None
    if big:
        # Not a warning: legacy saved no queue, so a restore reads as it did there. Said
        # for its size even where it could not be saved anyway: with input_device="auto",
        # a GPU gets its batches because of the size.
        logger.info(
            "compat_input: pipeline '%s' is left out of checkpoints (%s); a restore starts it "
            "afresh, as legacy's queues were. compat_input.configure(input_position_max_mb="
            "None) saves it.",
            pipeline.name,
            big,
        )
        position_costs.left_out[pipeline.name] = big
        return
    blocking = sorted({op.type for op in dataset_ops if op.type in _UNSERIALIZABLE_OPS})
    if blocking or pipeline.unsaved_because:
        logger.warning(
            "compat_input: pipeline '%s' is left out of checkpoints (%s: tf.data cannot save "
            "that position); a restore does not take it back to the checkpoint's position.",
            pipeline.name,
            pipeline.unsaved_because or f"it runs {', '.join(blocking)}",
        )
        return
    name = f"compat_input/{pipeline.name}/position"
    # Its key is named on first use, by a Saver: the fingerprint walks every dataset op
    # behind the pipeline, about 1 ms a pipeline that graphs without a Saver never need.
    saveable = _PipelineSaveable(
        pipeline, functools.cache(lambda: f"{name}.{fingerprint(pipeline.variant)}"), make_start_ops
    )
    # `export_meta_graph` writes this collection as graph element names, looked up again by
    # `import_meta_graph`: the name of a saveable is no element, and the import failed. So
    # the saveable goes by the name of a marker variable's read; imported, the collection
    # holds that read, which a Saver built there saves as a plain variable. The marker is
    # pipeline state (no collection), initialized where the input starts, imported or not.
    # The checkpoint keys stay `<name>_POSITION`.
    with tf1.name_scope(f"{name}/"):
        marker = pipeline.marker_variable()
        read = graph_ops.ReadVariableOp(resource=marker.handle, dtype=tf.int64)
    saveable.name = read.name
    tf1.add_to_collection(tf1.GraphKeys.SAVEABLE_OBJECTS, saveable)


# The name of a map that only counts what passes (fill_levels.py): no part of what a
# pipeline reads, so left out of its fingerprint (a checkpoint of a version without it
# restores).
COUNTING_MAP = "compat_input_counting"


def fingerprint(variant: tf.Tensor) -> str:
    """What a pipeline reads, as 8 hex digits the same in every process that builds it: the
    types, attributes and constants of the ops behind its dataset (file names, batch size,
    seeds), not their names nor their functions' (numbered per process)."""
    digest = hashlib.sha256()
    seen: set = set()
    pending = [variant.op]
    while pending:
        op = pending.pop()
        if op.name in seen:
            continue
        seen.add(op.name)
        node = op.node_def
        if node.op == "MapDataset" and COUNTING_MAP in op.get_attr("f").name:
            pending.append(op.inputs[0].op)
            continue
        digest.update(node.op.encode())
        for key in sorted(node.attr):
            value = node.attr[key]
            if key.startswith("_") or value.HasField("func") or value.list.func:
                continue
            digest.update(key.encode() + value.SerializeToString(deterministic=True))
        pending.extend(t.op for t in op.inputs)
    return digest.hexdigest()[:8]


def is_position(saveable) -> bool:
    return isinstance(saveable, _PipelineSaveable)


def positions(saver) -> list:
    """The input positions `saver` saves."""
    var_list = tf_internals.saver_var_list(saver)
    items = var_list.values() if isinstance(var_list, dict) else (var_list or [])
    return [item for item in items if is_position(item)]


def noting_save(save):
    """`Saver.save` that notes the checkpoint it wrote and how long that took. Installed by
    `install()` (commands/install.py)."""

    def save_noting_positions(self, sess, save_path, *args, **kwargs):
        began = time.perf_counter()
        written = save(self, sess, save_path, *args, **kwargs)
        if written:
            held = bool(positions(self))
            position_costs.last_written[:] = [written, time.perf_counter() - began, held]
        return written

    save_noting_positions.__wrapped__ = save
    return save_noting_positions
