"""Capture: the per-example graph between sources and a batcher, as a tf.data map function.

Legacy batchers receive tensors, not functions: the reader output went through ordinary
ops (decode, parse, augment) and the batcher enqueued the result. To serve that from
tf.data, we walk back from the batcher's tensors to the source tensors (producer and
reader outputs, earlier batches), keep exactly the ops in between, and re-import them with
`import_graph_def` inside `Dataset.map`, the source tensors replaced by the map's arguments.

What prototyping taught (design.md), each handled below or in captured_graphs.py:
- prune at the sources, or the import pulls the source's own iterator in and runs it again;
- bring the functions along (cond_v2 `If`, while_v2, defuns live there): the program's own
  function objects are added to the map's graph before the import, not copied through the
  GraphDef library, which would import them again as bare definitions that
  `tf.vectorized_map` cannot see into;
- strip `device` and `_class`: map functions run on the CPU and colocation fails the import;
- resources (variables, tables, queues) stay outside and are passed in by reference;
  importing them would make fresh, uninitialized copies. A ref variable is read through
  its `/read` snapshot; a resource variable is read live;
- stateful ops (random, py_func) are imported: they run once per element, as legacy's did;
- a dequeue from a hand-built queue is made again inside the function: the pipeline ends
  with that queue (hand_built_queues.py).
"""

import dataclasses
from collections.abc import Callable
from typing import Any
from typing import Optional

import tensorflow as tf

from compat_input._src.capture import captured_graphs
from compat_input._src.capture import hand_built_queues
from compat_input._src.capture import op_kinds
from compat_input._src.capture import random_draws
from compat_input._src.core import errors
from compat_input._src.core import imported_control_flow
from compat_input._src.core import tf_internals
from compat_input._src.core import tracing
from compat_input._src.runtime import pipeline as pipeline_lib

tf1 = tf.compat.v1

# A PlaceholderWithDefault is not among them: legacy's runner threads never fed it, so
# its default is what every example saw, and the op copied into the map gives the same.
_PLACEHOLDERS = frozenset({"Placeholder", "PlaceholderV2"})
_FOREIGN_ITERATORS = frozenset(
    {"IteratorGetNext", "IteratorGetNextSync", "IteratorGetNextAsOptional"}
)
_REAL_READS = frozenset({"ReaderReadV2", "ReaderReadUpToV2", "ReaderRead", "ReaderReadUpTo"})
_ARG_PREFIX = "compat_input_arg_"


@dataclasses.dataclass
class Captured:
    """A function from the flat elements of `sources` (zipped) to the target tensors."""

    sources: list  # list[pipeline_lib.Source], in first-seen order
    fn: Callable[..., list]
    # An op whose results depend on the order of calls (a seeded random op, py_func):
    # such a graph must be mapped one element at a time to stay reproducible.
    stateful: bool = False
    ops: tuple = ()
    # The targets are exactly the one source's element, in order: no map is needed.
    passthrough: bool = False
    # Dequeues from the program's own queues, made inside the function (hand_built_queues).
    dequeues: tuple = ()
    # Seeded random ops drawn by the example's position (random_draws.py): `fn` then needs
    # the position of each element, `ordinal`.
    positional: bool = False
    # The tensors the graph takes from its sources and dequeues: what differs per example.
    per_example: tuple = ()
    # Equal for captures that compute the same from the same flat arguments (one tower's
    # decode graph and the next one's): their map functions are traced once (core/tracing.py).
    # None where the graph reads state of its own (a variable, a counter).
    key: Optional[str] = None

    @property
    def source_dataset(self) -> tf.data.Dataset:
        """The zipped sources, or an endless stream of nothing when there are none."""
        if not self.sources:
            # Batching ops that read no source (tf.random_normal, a constant): legacy ran
            # the enqueue op forever, once per example.
            return tf.data.Dataset.from_tensors(tf.constant(0)).repeat()
        datasets = [s.dataset for s in self.sources]
        return datasets[0] if len(datasets) == 1 else tf.data.Dataset.zip(tuple(datasets))

    def flat_args(self, element: Any) -> list:
        if not self.sources:
            return []
        parts = [element] if len(self.sources) == 1 else list(element)
        flat = []
        for part in parts:
            # A batcher's SparseTensor output is three tensors, as its source registered it.
            flat.extend(tf.nest.flatten(part, expand_composites=True))
        return flat

    def __call__(self, element: Any, ordinal: Optional[tf.Tensor] = None) -> list:
        if not self.positional:
            return self.fn(*self.flat_args(element))
        if ordinal is None:
            raise ValueError("a graph with positional draws needs each element's ordinal")
        return self.fn(*self.flat_args(element), ordinal=ordinal)

    def _origin_slot(self) -> tuple:
        """`(flat index, key kind)` of the first scalar string a source yields, or Nones."""
        offset = 0
        for source in self.sources:
            specs = tf.nest.flatten(source.dataset.element_spec)
            for index, spec in enumerate(specs):
                if isinstance(spec, tf.TensorSpec) and spec.dtype == tf.string:
                    if spec.shape.rank == 0:
                        return offset + index, source.key_kind
            offset += len(specs)
        return None, None

    def origin_kind(self) -> Optional[str]:
        """What the number in `origin`'s result means (see origins.describe), for messages."""
        return self._origin_slot()[1]

    def origin(self, element: Any) -> tf.Tensor:
        """Where `element` came from, for error messages.

        A reader's key, a work item (a file name), or "" when the sources yield no string.
        """
        index = self._origin_slot()[0]
        return tf.constant("") if index is None else self.flat_args(element)[index]


def _is_ref(tensor: tf.Tensor) -> bool:
    return tf_internals.is_ref_dtype(tensor.dtype)


def _mirror(counter: tf.Operation) -> tf.Variable:
    """A resource variable that counts for `count_up_to` on a reference variable.

    Reference variables (TF1's default under disable_v2_behavior, as `compat-input run`
    runs) cannot enter a tf.data function. The count goes on in this mirror, which starts
    from the variable's value when the pipeline starts and ends the input at the same
    limit, as the legacy counter did; the variable itself keeps that starting value.
    """
    graph = counter.graph
    mirrors = pipeline_lib.graph_state(graph).mirrors
    if counter.name not in mirrors:  # One count, however many lists read it.
        with graph.as_default(), graph.control_dependencies(None), graph.name_scope(None):
            start = tf.identity(counter.inputs[0])
            mirrors[counter.name] = pipeline_lib.state_variable(start, f"{counter.name}_mirror")
    return mirrors[counter.name]


class _Walk:
    """Collects the ops strictly between the source tensors and the targets."""

    def __init__(self, graph: tf.Graph, what: str):
        self.graph = graph
        self.what = what
        self.state = pipeline_lib.graph_state(graph)
        self.ops: dict[str, tf.Operation] = {}
        # tensor name -> ("source", (Source, index)) | ("outer", tensor)
        #   | ("counter", (CountUpTo op, mirror variable))
        self.boundary: dict[str, tuple[str, Any]] = {}

    def tensor(self, tensor: tf.Tensor) -> None:
        stack = [tensor]
        while stack:
            t = stack.pop()
            if t.name in self.boundary:
                continue
            hit = self.state.source_tensors.get(t.name)
            if hit is not None:
                self.boundary[t.name] = ("source", hit)
                continue
            op = t.op
            if t.dtype == tf.resource:
                self.boundary[t.name] = ("outer", t)
                continue
            if op.type in ("Identity", "RefIdentity") and op.inputs and _is_ref(op.inputs[0]):
                # A ref variable's `/read`: its value when the pipeline starts.
                self.boundary[t.name] = ("outer", t)
                continue
            if op.type == "CountUpTo" and _is_ref(op.inputs[0]):
                self.boundary[t.name] = ("counter", (op, _mirror(op)))
                continue
            if op.type in hand_built_queues.DEQUEUES:
                self.boundary[t.name] = ("dequeue", (op, list(op.outputs).index(t)))
                continue
            self._op(op, stack)

    def _op(self, op: tf.Operation, stack: list) -> None:
        if op.name in self.ops:
            return
        self._check(op)
        self.ops[op.name] = op
        stack.extend(op.inputs)
        for control in op.control_inputs:
            # A control edge to a source (a read) orders nothing inside one element.
            if not any(out.name in self.state.source_tensors for out in control.outputs):
                self._op(control, stack)

    def _check(self, op: tf.Operation) -> None:
        # Where the op was made, only for an error: a walk of its traceback, 0.1-0.2 ms an
        # op, was a fifth of the youtube-8m-shaped join's capture.
        def where() -> str:
            return errors.created_at(op)

        if op.type in _PLACEHOLDERS:
            raise errors.LegacyFailsToo(
                f"{self.what}: the per-example input graph reads placeholder '{op.name}' "
                f"(created at {where()}), which cannot be fed into a tf.data pipeline step by "
                "step. Feed the value once through a variable before the pipeline starts, "
                "build the input with compat_input.from_dataset, or keep this input on "
                "tf.compat.v1 queues."
            )
        if op.type in _FOREIGN_ITERATORS:
            raise errors.CaptureError(
                f"{self.what}: the per-example input graph reads tf.data iterator op "
                f"'{op.name}' (created at {where()}). Wrap the dataset with "
                "compat_input.from_dataset(dataset) instead of making your own iterator."
            )
        if op.type in _REAL_READS:
            raise errors.CaptureError(
                f"{self.what}: reader op '{op.name}' (created at {where()}) reads a hand-built "
                "queue, which compat_input cannot end cleanly inside tf.data. Produce the "
                "file names with compat_input.string_input_producer instead."
            )
        if not op_kinds.has_cpu_kernel(op):
            raise errors.CaptureError(
                f"{self.what}: op '{op.name}' ({op.type}, created at {where()}) has no CPU "
                "kernel for its types, and tf.data runs input on the host CPU; compute it "
                "after the batch, on the model's device, or cast it to a type the CPU takes."
            )
        if any(_is_ref(t) for t in op.inputs):
            raise errors.CaptureError(
                f"{self.what}: op '{op.name}' ({op.type}, created at {where()}) updates a "
                "reference variable in the per-example graph; use a resource variable "
                "(tf.compat.v1.enable_resource_variables()) so it can run inside tf.data."
            )


def _failing(targets: list, error: errors.CaptureError) -> Captured:
    """A capture that builds, with the targets' types and static shapes, and fails when run.

    Legacy built a batcher over any graph and failed only when its queue runner ran an op
    that could not run (a placeholder nobody feeds); so does this, with the error that names
    the op, raised by the first `sess.run` that reads the pipeline.
    """
    message = str(error)

    def fn(*flat_args):
        del flat_args
        check = tf.debugging.Assert(tf.constant(False), [message])
        with tf.control_dependencies([check]):
            # With the targets' static shapes, unknown ones included: a SparseTensor of
            # unknown rank needs a dense_shape of unknown length, not a scalar stand-in.
            return [
                tf1.placeholder_with_default(tracing.stand_in(t.shape, t.dtype), t.shape)
                for t in targets
            ]

    return Captured(sources=[], fn=fn, stateful=True)


def capture(targets: list, what: str, defer_errors: bool = False) -> Captured:
    """Captures the graph that computes `targets` from the registered sources.

    `defer_errors`: a graph that legacy could not run either (errors.LegacyFailsToo) is
    built anyway and raises its error as InvalidArgumentError when run, as legacy failed
    only at run time; any other CaptureError is raised, for the caller's fallback to run
    the input on TensorFlow's queues.
    """
    targets = list(targets)
    if not targets:
        return Captured(sources=[], fn=lambda *args: [])
    graph = targets[0].graph
    walk = _Walk(graph, what)
    try:
        for t in targets:
            walk.tensor(t)
    except errors.LegacyFailsToo as error:
        if not defer_errors:
            raise
        return _failing(targets, error)

    sources: list = []
    source_offsets: dict[int, int] = {}
    for kind, payload in walk.boundary.values():
        if kind == "source" and id(payload[0]) not in source_offsets:
            source_offsets[id(payload[0])] = -1
            sources.append(payload[0])
    offset = 0
    for source in sources:
        source_offsets[id(source)] = offset
        offset += len(tf.nest.flatten(source.dataset.element_spec, expand_composites=True))

    boundary_names = list(walk.boundary)
    arg_name = {name: f"{_ARG_PREFIX}{k}" for k, name in enumerate(boundary_names)}
    # In the order the program made them: copies made by one function (a join's threads)
    # then have their nodes in one order, whatever order the walk reached them in.
    made = sorted(walk.ops.values(), key=lambda op: op._id)
    graph_def = captured_graphs.pruned(graph, list(walk.boundary), made, arg_name)
    functions = captured_graphs.functions_called(graph, [op.node_def for op in walk.ops.values()])
    draws = random_draws.positional(walk.ops.values())
    # Rewritten as the session rewrote the legacy graph: its own ops, stateful ones too,
    # which the rewrites keep as they are (the draws are found by name after them).
    kept = {f"{arg_name[n]}:0": graph.get_tensor_by_name(n).dtype.base_dtype for n in walk.boundary}
    kept.update({t.name: t.dtype for t in targets if t.name not in arg_name})
    graph_def, renamed = captured_graphs.as_the_session_computes(graph_def, kept, functions)
    random_draws.rewrite(graph_def, draws)

    def fn(*flat_args, ordinal=None):
        input_map = {}
        dequeued: dict = {}  # One dequeue per program op per example.
        for name in boundary_names:
            kind, payload = walk.boundary[name]
            if kind == "dequeue":
                op, index = payload
                if op.name not in dequeued:
                    dequeued[op.name] = hand_built_queues.dequeue(op)
                value = dequeued[op.name][index]
            elif kind == "source":
                source, index = payload
                value = flat_args[source_offsets[id(source)] + index]
            elif kind == "counter":
                counter, mirror = payload
                value = tf.raw_ops.ResourceCountUpTo(
                    resource=tf.identity(mirror.handle),
                    limit=counter.get_attr("limit"),
                    T=counter.get_attr("T"),
                )
            else:
                value = tf.identity(payload)  # Captures the outer tensor into the function.
            if value.graph is not tf1.get_default_graph():
                value = tf.identity(value)  # A branch function must capture it first.
            input_map[name] = value
        direct = [input_map.get(t.name) for t in targets]
        if all(d is not None for d in direct):
            return direct
        here = tf1.get_default_graph()
        for function in functions:
            if not tf_internals.has_function(here, function.name):
                tf_internals.add_function(here, function)
        before = len(here.get_operations())
        mapped = {f"{arg_name[n]}:0": v for n, v in input_map.items()}
        if draws:
            # In a branch function (the lists of a join take turns), captured first.
            mapped[f"{random_draws.ORDINAL}:0"] = tf.identity(ordinal)
        imported = tf.graph_util.import_graph_def(
            graph_def,
            input_map=mapped,
            return_elements=[renamed[t.name] for t in targets if t.name not in input_map],
            name="captured",
        )
        imported_control_flow.mark_in_loops(here.get_operations()[before:])
        imported_control_flow.mark_in_conds(here.get_operations()[before:])
        imported = iter(imported)
        return [input_map[t.name] if t.name in input_map else next(imported) for t in targets]

    flat_index = {
        name: source_offsets[id(payload[0])] + payload[1]
        for name, (kind, payload) in walk.boundary.items()
        if kind == "source"
    }
    counters = tuple(payload[0] for kind, payload in walk.boundary.values() if kind == "counter")
    ops = tuple(walk.ops.values()) + counters
    dequeues = tuple(
        {
            payload[0].name: payload[0]
            for kind, payload in walk.boundary.values()
            if kind == "dequeue"
        }.values()
    )
    # A dequeue takes what is next in the program's queue: one example at a time.
    stateful = bool(dequeues) or any(op_kinds.order_sensitive(op) for op in ops)
    passthrough = len(sources) == 1 and [walk.boundary.get(t.name) for t in targets] == [
        ("source", (sources[0], i))
        for i in range(len(tf.nest.flatten(sources[0].dataset.element_spec)))
    ]
    per_example = tuple(
        graph.get_tensor_by_name(name)
        for name, (kind, _) in walk.boundary.items()
        if kind in ("source", "dequeue")
    )
    return Captured(
        sources=sources,
        fn=fn,
        stateful=stateful,
        ops=ops,
        per_example=per_example,
        passthrough=passthrough,
        dequeues=dequeues,
        positional=bool(draws),
        key=captured_graphs.key(
            graph_def,
            [t.name if t.name in arg_name else renamed[t.name] for t in targets],
            arg_name,
            flat_index,
            functions,
        ),
    )
