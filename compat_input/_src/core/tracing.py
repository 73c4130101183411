"""Tracing our own tf.data functions."""

import contextlib
import functools
import gc
import re
import uuid
import weakref
from collections.abc import Callable

import tensorflow as tf
from tensorflow.core.framework import dataset_metadata_pb2

from compat_input._src.core import function_defs
from compat_input._src.core import graph_ops
from compat_input._src.core import tf_internals
from compat_input._src.core.options import chosen_service
from compat_input._src.core.state_variables import initial

_ag_ctx = tf_internals.ag_ctx


def without_autograph(build: Callable) -> Callable:
    """Decorator: the tf.data functions that `build` traces are not converted by AutoGraph,
    and Python's cyclic garbage collector waits until `build` returns.

    Ours are plain graph code, with no Python control flow on tensors; AutoGraph parses and
    rewrites each one anyway, a quarter of an image pipeline's build time. The program's
    own code is never traced here: its graph is captured, not called.

    Tracing makes some hundred thousand short-lived objects (function graphs, their ops'
    Python objects and protos), and each 700 set off a collection; every tenth of those
    scans older objects, every hundredth the whole graph built so far: 0.14 s of a
    youtube-8m-shaped trainer's 0.44 s build, measured with the collector on and off. Paused,
    what `build` left is collected once, after it.
    """

    @functools.wraps(build)
    def wrapper(*args, **kwargs):
        paused = gc.isenabled()  # Nested or in another thread: the outermost resumes it.
        if paused:
            gc.disable()
        try:
            with variable_scope_kept():
                if _ag_ctx is None:
                    return build(*args, **kwargs)
                with _ag_ctx.ControlStatusCtx(status=_ag_ctx.Status.DISABLED):
                    return build(*args, **kwargs)
        finally:
            if paused:
                gc.enable()

    return wrapper


@contextlib.contextmanager
def variable_scope_kept():
    """The graph's current variable scope left as it was, whatever a trace inside raised.

    TensorFlow's function tracing makes the scope it finds make resource variables, and
    sets it back only when the trace returns. A trace that raises, which we catch (pfor
    with no converter for an op, a sparse result, a batcher left to legacy's queues), left
    every variable the program made after it a resource variable where legacy made a
    reference one: tf_slim's image classifier trained other ops (ResourceApplyRMSProp) in
    a graph 44 ops larger, behind a DatasetDataProvider's `case` that pfor cannot convert.
    """
    scope = tf.compat.v1.get_variable_scope()
    kept = scope.use_resource
    try:
        yield
    finally:
        scope.set_use_resource(kept)


def stand_in(shape: tf.TensorShape, dtype: tf.DType) -> tf.Tensor:
    """Zeros of `shape` (unknown sizes 0, unknown rank a scalar): a value of the right
    type and rank for a branch of our functions that never hands it on."""
    if shape.rank is None:
        return tf.zeros([], dtype)
    return tf.zeros([d if d is not None else 0 for d in shape.as_list()], dtype)


def after(op) -> tf.Tensor:
    """A constant True that runs `op` first: what a tf.cond branch returns for an op."""
    with tf.control_dependencies([op]):
        return tf.constant(True)


def branch(pred: tf.Tensor, if_true: Callable, if_false: Callable) -> tf.Tensor:
    """`tf.cond(pred, if_true, if_false)` for our own functions, as v1 `Switch` and `Merge`
    ops: in a function (and anywhere in TF2 behaviour) tf.cond traces each branch as a
    function of its own, 4-5 ms of build apiece, and each is instantiated again per session.

    Each branch's ops wait on a pivot that is dead unless its side is taken, so they do not
    run on the other; `Merge` passes the live result on. Both results are of one dtype. The
    function holding it is made from a plain graph (`shared_call`), with no automatic control
    dependencies, which would make its outputs wait on the dead side's stateful ops.
    """
    on_false, on_true = graph_ops.Switch(data=pred, pred=pred)
    results = []
    for side, make in ((on_true, if_true), (on_false, if_false)):
        with tf.control_dependencies([tf.identity(side).op]):
            results.append(tf.identity(make()))
    return graph_ops.Merge(inputs=results)[0]


# -- functions traced once per graph ----------------------------------------------------------
#
# `Dataset.map` traces its function anew for every pipeline: about 3 ms each, and one more
# function in the graph's library, which every session executor copies. A graph with 50
# per-tower inputs had 600 of them. Where our own function's inputs are all explicit (the
# element, then `args`: the handles and tensors it would otherwise capture), it is traced
# once per graph and each pipeline's dataset op passes its own `args`.

_traced: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()

# What TensorFlow is told about our functions. Marked as tf.data's, a function is left alone
# by a session's Grappler, which otherwise rewrote every function of the graph's library
# again for each new set of fetches: 0.36 s of a seeded CIFAR-10 trainer's 0.6 s start.
# "Ints on device" has tf.data instantiate a function on its one device, without the
# multi-device path's own Grappler pass: 0.25 s more at the same trainer's first batch,
# for its block function. Neither pass may change a number: ours are rewritten once, as
# the legacy session rewrote the same ops (captured_graphs.as_the_session_computes).
_DATASET_FUNCTION = {"_tf_data_function": True, "experimental_ints_on_device": True}
# A function run by a call op (calls.py): the call instantiates it on several
# devices, which refuses "ints on device". So does a tf.data service's worker, rewriting a
# job's dataset ("Expected only one fetch node"): with a service, our functions keep the
# instantiation pass.
_CALLED_FUNCTION = {"_tf_data_function": True}
# Our own called functions (calls.shared_call), never inlined into a session's graph.
OWN_CALLED_FUNCTION = {**_CALLED_FUNCTION, "_noinline": True}

# In the name of every function of ours: a graph exported by another process holds its own,
# numbered as that process numbered them, and an import of it (an evaluator's
# `import_meta_graph`) refuses a function whose name one of this graph's already has.
PROCESS = uuid.uuid4().hex[:8]


def _dataset_function() -> dict:
    return _CALLED_FUNCTION if chosen_service() else _DATASET_FUNCTION


class _NotDense(Exception):
    pass


def outermost(graph: tf.Graph) -> tf.Graph:
    """The program's graph that `graph` (a function's, maybe nested) is built in."""
    while getattr(graph, "outer_graph", None) is not None:
        graph = graph.outer_graph
    return graph


def spec_of(value) -> tf.TensorSpec:
    return tf.TensorSpec(value.shape, value.dtype)


def dense(specs) -> bool:
    """Whether every spec of the flat `specs` is a plain TensorSpec."""
    return all(type(s) is tf.TensorSpec for s in specs)


def trace_once(
    key: str,
    fn: Callable,
    element_spec,
    args: list,
    dataset_out: bool = False,
    prune=False,
    called=False,
    program=False,
):
    """`(concrete function, its extra inputs, output spec)`, or None where not dense.

    `program`: `fn` runs the program's captured graph, traced (automatic control edges order
    its stateful ops as the program's graph did); ours are built apart (`_built_apart`).

    `fn(element, *args)` is traced with `args` as arguments. A function that still captures
    something (a tensor reached through an object, not `args`) is used for this pipeline
    only, its captures passed along: sharing it would read another pipeline's state. So is
    one whose `key` is None (its caller knows it differs between pipelines).
    """
    flat = tf.nest.flatten(element_spec)
    arg_specs = [spec_of(a) for a in args]
    if not dense(flat):
        return None
    graph = tf.compat.v1.get_default_graph()
    # Random ops take their seeds from the graph's seed when traced.
    handles = [tf_internals.handle_data(a) for a in args]
    # A function called by a call op (`called`: calls.called_dataset) is traced without
    # "ints on device", which a call refuses wherever a session with Grappler off
    # (`disable_meta_optimizer`, function optimization off) runs the call as it is.
    attributes = _CALLED_FUNCTION if called else _dataset_function()
    cache_key = (key, tuple(flat), tuple(arg_specs), tuple(handles), outermost(graph).seed)
    cache_key += (tuple(attributes),)
    cache = _traced.setdefault(outermost(graph), {})
    hit = cache.get(cache_key) if key is not None else None
    if hit is None:
        out: dict = {}

        def body(*inputs):
            _give_handle_data(inputs[len(flat) :], handles)
            element = tf.nest.pack_sequence_as(element_spec, inputs[: len(flat)])
            result = fn(element, *inputs[len(flat) :])
            if dataset_out:
                if not dense(tf.nest.flatten(result.element_spec)):
                    raise _NotDense()
                out["spec"] = result.element_spec
                return result._variant_tensor
            if not all(isinstance(t, tf.Tensor) for t in tf.nest.flatten(result)):
                raise _NotDense()  # A SparseTensor, a RaggedTensor: tf.data's own map.
            out["spec"] = tf.nest.map_structure(spec_of, result)
            return tf.nest.flatten(result)

        body.__name__ = "compat_input_" + re.sub(r"\W+", "_", key or "own")[:48] + "_" + PROCESS
        concrete = None
        # Our own code alone is built apart; pruning reads a trace's automatic control edges.
        if not (program or prune):
            try:
                concrete = _built_apart(body, flat + arg_specs, attributes)
            except _NotDense:
                return None
            except ImportError:  # pragma: no cover - TensorFlow moved it: traced instead.
                out.clear()
        if concrete is None:
            traced = tf.function(
                body,
                input_signature=flat + arg_specs,
                autograph=False,
                experimental_attributes=attributes,
            )
            try:
                with variable_scope_kept():
                    concrete = traced.get_concrete_function()
            except _NotDense:
                return None
            concrete = function_defs.smaller(concrete, prune)
        if concrete.captured_inputs or key is None:
            return concrete, list(args) + list(concrete.captured_inputs), out["spec"]
        hit = (concrete, out["spec"])
        cache[cache_key] = hit
    return hit[0], list(args), hit[1]


def _built_apart(body, specs: list, attributes: dict):
    """`body` over placeholders of `specs` as a function of the ops it made (what it reaches
    around it captured), not traced: a trace costs 1.5 ms and more beyond its ops. Its
    stateful ops all run, ordered by the control edges ours spell out (none automatic)."""
    graph = tf_internals.function_graph(body.__name__)
    with graph.as_default(), variable_scope_kept():
        inputs = [graph_ops.Placeholder(dtype=s.dtype, shape=s.shape) for s in specs]
        outputs = tf.nest.flatten(body(*inputs))
    outer, placeholders = tf_internals.captures(graph)
    name = function_defs.unique_name(body.__name__)
    edit = function_defs.without_repeated_constants
    made, definition = tf_internals.function_of_graph(
        graph, inputs + placeholders, outputs, name, attributes, edit
    )
    named = tf.compat.v1.NameAttrList(name=name)
    return function_defs.Defined(made, named, outer, definition)


def _give_handle_data(placeholders, handles: list) -> None:
    """Gives a traced function's handle arguments the `handle_data` of what is passed."""
    for placeholder, data in zip(placeholders, handles):
        if data is not None:
            tf_internals.set_handle_data(placeholder, data)


_attrs: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def attr(concrete):
    """The function attr of an op calling `concrete`, which is added to the graph once.

    Given the function itself, each op adds it (and what it calls) to the graph again,
    about 0.5 ms of Python per op; by name, nothing.
    """
    graph = tf.compat.v1.get_default_graph()
    made = _attrs.setdefault(graph, {})
    if concrete not in made:
        concrete.add_to_graph(graph)
        made[concrete] = concrete._as_name_attr_list
    return made[concrete]


def _packed(dataset, parts: tuple):
    """The element as `fn` takes it, from the arguments tf.data's own map passes."""
    return parts if isinstance(dataset.element_spec, tuple) else parts[0]


def typed(spec) -> dict:
    """The `output_types` and `output_shapes` of a raw dataset op making `spec`'s elements."""
    flat = tf.nest.flatten(spec)
    return {"output_types": [s.dtype for s in flat], "output_shapes": [s.shape for s in flat]}


# Ops TensorFlow's single-threaded executor refuses: TF1 control flow (a program's tf.cond,
# captured as it was built), cross-device transfers and asynchronous kernels (another
# iterator's reads, iterators.pulled_from); and what can become them: a tf.data service
# worker lowers If and While to TF1's, and calls instantiate functions of their own.
_NOT_INLINE = frozenset(
    "Switch RefSwitch _SwitchN Merge RefMerge Enter RefEnter Exit RefExit NextIteration "
    "RefNextIteration LoopCond _Send _Recv _HostSend _HostRecv If StatelessIf While "
    "StatelessWhile Case StatelessCase PartitionedCall StatefulPartitionedCall "
    "IteratorGetNext IteratorGetNextAsOptional".split()
)
# So are kernels that wait for another op (a hand-built queue's dequeue, a barrier, an
# accumulator, a staging area): one after another in one thread, a dequeue from an empty
# queue waited forever for the step's error (a counter run out) that cancels it.
_WAITING = ("Queue", "Barrier", "TakeGradient", "Stage")


# The scope of every op of a batcher's per-example graph (the program's, captured): an
# error raised under it came from an example, not from the reading (bad_records/origins.py).
EXAMPLE_SCOPE = "compat_input_example"
# The name of a map that runs it, which tf.data puts in that map's errors ("Error in
# user-defined function passed to compat_input_example transformation"): the inline
# executor's errors do not name the failing node, and so not the scope.
_EXAMPLE_MAP = dataset_metadata_pb2.Metadata(name=EXAMPLE_SCOPE.encode()).SerializeToString()


def _ops(concrete) -> list:
    if isinstance(concrete, function_defs.Defined) and concrete.definition is not None:
        return [(node.op, node.name) for node in concrete.definition.node_def]
    return [(op.type, op.name) for op in concrete.graph.get_operations()]


def _runs_inline(ops: list) -> bool:
    """Whether a map's function (its `ops`, as `_ops` lists them) may run them in the
    thread that calls it, one after another (`use_inter_op_parallelism=False`, the
    single-threaded executor). With inter-op parallelism each call hands its ops to the
    session's threads and waits for them, a wake-up or two per element: swivel's
    WholeFileReader pipeline took 130-178 us a record that way, 55-90 us with its record
    map inline. Calls of a parallel map still run side by side. Not a function with TF1
    control flow, functional control flow or calls: the inline executor refuses Switch (a
    program's `tf.cond`, or an `If` a tf.data service worker lowers)."""
    return not any(kind in _NOT_INLINE or any(w in kind for w in _WAITING) for kind, _ in ops)


@without_autograph
def shared_map(
    dataset,
    key,
    fn: Callable,
    args=(),
    parallel=None,
    preserve_cardinality=True,
    prune=False,
    program=False,
):
    """`dataset.map(lambda e: fn(e, *args), **parallel)`, `fn` traced once per graph.

    `parallel`: `{}` or tf.data's `num_parallel_calls` and `deterministic` arguments;
    `prune`: the traced function's dead ops are left out (`_without_dead_ops`);
    `program`: `fn` runs the program's captured graph (`trace_once`).
    """
    parallel = parallel or {}
    traced = trace_once(key, fn, dataset.element_spec, list(args), prune=prune, program=program)
    if traced is None:  # tf.compat.v1's map ends the input at its function's OutOfRangeError.
        mapped = tf.data.Dataset.map if preserve_cardinality else tf.compat.v1.data.Dataset.map
        return mapped(dataset, lambda *e: fn(_packed(dataset, e), *args), **parallel)
    concrete, inputs, spec = traced
    ops = _ops(concrete)  # (type, name) of each: what the map's executor must run.
    common = {
        "input_dataset": dataset._variant_tensor,
        "other_arguments": inputs,
        "f": attr(concrete),
        "preserve_cardinality": preserve_cardinality,
        "use_inter_op_parallelism": not _runs_inline(ops),
        "metadata": _EXAMPLE_MAP if any(n.startswith(EXAMPLE_SCOPE) for _, n in ops) else b"",
        **typed(spec),
    }
    if parallel.get("num_parallel_calls"):
        deterministic = parallel.get("deterministic")
        variant = graph_ops.ParallelMapDatasetV2(
            num_parallel_calls=initial(parallel["num_parallel_calls"], tf.int64),
            deterministic="default" if deterministic is None else str(deterministic).lower(),
            **common,
        )
    else:
        variant = graph_ops.MapDataset(**common)
    return tf.data.experimental.from_variant(variant, spec)


@without_autograph
def shared_flat_map(dataset, key: str, fn: Callable, args=(), cycle_length=None):
    """`dataset.flat_map(lambda e: fn(e, *args))`, with `fn` traced once per graph; with
    `cycle_length`, `dataset.interleave(..., cycle_length, block_length=1)` (one element of
    each in turn, in order)."""
    traced = trace_once(key, fn, dataset.element_spec, list(args), dataset_out=True)
    if traced is None:
        function = lambda *e: fn(_packed(dataset, e), *args)  # noqa: E731
        if cycle_length is None:
            return dataset.flat_map(function)
        return dataset.interleave(function, cycle_length=cycle_length, block_length=1)
    concrete, inputs, spec = traced
    common = {"input_dataset": dataset._variant_tensor, "other_arguments": inputs}
    common.update(f=attr(concrete), **typed(spec))
    if cycle_length is None:
        variant = graph_ops.FlatMapDataset(**common)
    else:
        sizes = [initial(n, tf.int64) for n in (cycle_length, 1)]
        variant = graph_ops.InterleaveDataset(
            cycle_length=sizes[0], block_length=sizes[1], **common
        )
    return tf.data.experimental.from_variant(variant, spec)
