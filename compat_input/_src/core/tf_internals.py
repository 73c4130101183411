"""Every private TensorFlow API compat_input uses, in one place.

Each is used only where TensorFlow has no public way to do the same; each entry says why.
Tested with TensorFlow 2.21 (CPU, Python 3.11); setup.cfg admits 2.16 and newer, and an
entry that has moved makes the feature that needs it degrade as its comment says (the
import here never fails). `tests/test_package.py` checks that no other module imports
`tensorflow.python`.
"""

import contextlib
import importlib

import tensorflow as tf

# Session classes: `install()` wraps `BaseSession.run` / `make_callable` so that errors from
# a pipeline name their record (bad_records/origins.py); `start_queue_runners` accepts any session.
from tensorflow.python.client import session as session_lib  # noqa: F401 - re-exported

# The kernels TensorFlow registered for an op type: a per-example op with none for the host
# CPU, where tf.data runs, stays on legacy's queues (capture/op_kinds.py).
from tensorflow.python.framework import kernels  # noqa: F401 - re-exported

# MonitoredSession's wrapper type, to find the raw session under it (runtime/runners.py).
from tensorflow.python.ops import lookup_ops  # noqa: F401 - re-exported: tf.contrib.lookup's home
from tensorflow.python.training import monitored_session  # noqa: F401 - re-exported

# The Saver's restore, wrapped by `install()` so that checkpoints written without input
# positions (by legacy code) still restore (runtime/checkpoint.py).
from tensorflow.python.training import saver as saver_lib  # noqa: F401 - re-exported

# The base class of the Saver's saveables; a pipeline's position is one (runtime/checkpoint.py).
from tensorflow.python.training.saving import saveable_object  # noqa: F401 - re-exported

try:  # TensorFlow's own lookup of the kernel a node would run with on a device (its
    # NodeDef's): the registry read whole per op type cost a CIFAR-10 build 16 ms.
    from tensorflow.python.util._pywrap_kernel_registry import TryFindKernelClass
except ImportError:  # pragma: no cover - op_kinds then reads the registry for every op.
    TryFindKernelClass = None


def find_kernel_class(node_def) -> bool:
    """Whether TensorFlow finds a kernel for `node_def` on its device (False: none, or no way)."""
    return bool(TryFindKernelClass and TryFindKernelClass(node_def.SerializeToString()))


def edited_function(concrete, function_def):
    """A graph function made from `concrete`'s FunctionDef as we edited it (tracing.py
    prunes it): no public API makes one without tracing the Python again."""
    from tensorflow.python.eager import context
    from tensorflow.python.eager.polymorphic_function import atomic_function

    forward = concrete._delayed_rewrite_functions.forward()
    context.context().add_function_def(function_def)
    args = (function_def.signature.name, context.context(), forward.function_type, forward.children)
    # The trace's graph, as its graph (see function_of_graph): its ops are a subset of it.
    return atomic_function.AtomicFunction(*args, cached_graph=concrete.graph)


def function_of_graph(
    graph: tf.Graph, inputs: list, outputs: list, name: str, attrs: dict, edit=None
):
    """A function of `graph`'s ops from `inputs` (placeholders) to `outputs`, calling the
    functions `graph` holds, its FunctionDef first given to `edit`; `(function, its
    FunctionDef)`. No public API makes one but a tf.function trace (tracing.py)."""
    from tensorflow.python.framework import graph_to_function_def

    ops = graph.get_operations()
    definition = graph_to_function_def.graph_to_function_def(graph, ops, inputs, outputs)
    definition.signature.name = name
    for key, value in attrs.items():
        definition.attr[key].b = value
    if edit is not None:
        edit(definition)
    # `graph`, as its graph: `as_graph_def(add_shapes=True)` (a Supervisor's, an export) reads
    # a function's inputs, outputs and ops, else rebuilt from its FunctionDef (2 ms each).
    graph.inputs, graph.outputs = list(inputs), list(outputs)
    return _GraphFunction(definition, graph, list(graph._functions.values())), definition


class _GraphFunction:
    """A function as graphs hold them (what `Graph._add_function` reads), never registered
    with the eager context as tf.function's are: a graph-mode program never runs one
    eagerly, and each registration cost 1-2 ms (the first made the context: 7 ms)."""

    def __init__(self, definition, graph: tf.Graph, children: list):
        from tensorflow.python.client import pywrap_tf_session
        from tensorflow.python.framework import c_api_util

        self.name = definition.signature.name
        self.definition = self.cached_definition = definition
        self.graph, self.children = graph, children
        made = pywrap_tf_session.TF_FunctionImportFunctionDef(definition.SerializeToString())
        self._c_func = c_api_util.ScopedTFFunction(made, self.name)


def function_graph(name: str) -> tf.Graph:
    """The graph tf.function traces into (it captures what its ops reach of the graphs
    around it), its ops placed by the outer device functions as tf.function's are, for
    our functions built without tf.function (tracing.py); `captures(graph)` after."""
    from tensorflow.python.framework import func_graph

    outer = tf.compat.v1.get_default_graph()
    graph = func_graph.FuncGraph(name)
    if device_function_in_scope(outer):
        graph._device_function_stack = outer._device_function_stack.copy()
    return graph


def captures(graph: tf.Graph) -> tuple:
    """`(outer tensors, their placeholders)` a `function_graph` captured."""
    return list(graph.external_captures), list(graph.internal_captures)


try:  # TensorFlow's switch for its deprecation warnings (a context manager).
    from tensorflow.python.util.deprecation import silence as _silence_deprecations
except ImportError:  # pragma: no cover - the warnings then show, nothing else changes.
    _silence_deprecations = contextlib.nullcontext


def our_deprecated_calls():
    """Where compat_input itself calls a deprecated TensorFlow API (a one-shot iterator, the
    Supervisor under ours): no warning may point at our files; the program's own still warn."""
    return _silence_deprecations()


def legacy_module(name: str):
    """TensorFlow's module `tensorflow.python.<name>`: where the queue API is defined or
    re-exported, and libraries (tf_slim) import it from; `install()` serves names there."""
    return importlib.import_module(f"tensorflow.python.{name}")


def seed_counter(graph: tf.Graph):
    """`graph`'s counter of op seeds (`get_seed`), or None before its first draw."""
    from tensorflow.python.framework import random_seed

    return random_seed._graph_to_seed_dict.get(graph)


def set_seed_counter(graph: tf.Graph, value) -> None:
    """Puts back a value `seed_counter` read."""
    from tensorflow.python.framework import random_seed

    if value is None:
        random_seed._graph_to_seed_dict.pop(graph, None)
    else:
        random_seed._graph_to_seed_dict[graph] = value


def release_closed_session(sess) -> None:
    """Deletes a closed session's TensorFlow state now (its iterators and their threads),
    as its garbage collection would. TensorFlow has no public call for it; at interpreter
    exit, deleting it later races the interpreter's finalization
    (runtime/session_release.py)."""
    if getattr(sess, "_closed", False) and getattr(sess, "_session", None) is not None:
        sess.__del__()


try:  # AutoGraph's switch: our own tf.data functions skip conversion (tracing.py).
    from tensorflow.python.autograph.core import ag_ctx
except ImportError:  # pragma: no cover - slower builds, same results.
    ag_ctx = None

try:  # pfor, behind `tf.vectorized_map`: its converter registry (capture/vectorize.py).
    from tensorflow.python.ops.parallel_for import pfor
except ImportError:  # pragma: no cover - per-example maps, same results.
    pfor = None


try:  # v1 control-flow contexts, for ops we import (imported_control_flow.py).
    from tensorflow.python.ops import control_flow_ops as _control_flow_ops
except ImportError:  # pragma: no cover - v1 while loops in captured graphs fail to run.
    _control_flow_ops = None
has_control_flow_contexts = _control_flow_ops is not None


def while_context(name: str):
    return _control_flow_ops.WhileContext(name=name)


if has_control_flow_contexts:

    class _ImportedCond(_control_flow_ops.ControlFlowContext):
        """A context that says "in a v1 cond" and nothing else (no while loop, no outer
        context): never exported, as `import_graph_def` made none to export."""

        def to_control_flow_context_def(self, context_def, export_scope=None):
            del context_def, export_scope


def cond_context():
    return _ImportedCond()


def set_control_flow_context(op: tf.Operation, context) -> None:
    op._set_control_flow_context(context)


def control_outputs(op: tf.Operation) -> list:
    """The ops with a control edge from `op` (no public accessor)."""
    return op._control_outputs


@contextlib.contextmanager
def at_root(graph: tf.Graph):
    """Ops made at the root of `graph`: no scope, device or control dependencies; made
    even after `Graph.finalize()` (a Saver built or a meta-graph exported after it)."""
    finalized = graph.finalized
    if finalized:
        unfinalize(graph)
    try:
        with graph.as_default(), graph.name_scope(None), graph.device(None):
            with tf.compat.v1.control_dependencies(None):
                yield
    finally:
        if finalized:
            graph.finalize()


def device_scope_strings(graph: tf.Graph) -> list:
    """The fixed devices of `graph`'s device scope (`tf.device(string)`), innermost first;
    device functions are left out."""
    stack = graph._device_function_stack.peek_objs()
    return [spec.raw_string for spec in stack if spec.raw_string is not None]


def device_function_in_scope(graph: tf.Graph) -> bool:
    """Whether a device function (`replica_device_setter`) places `graph`'s new ops, as
    `Graph._apply_device_functions` applies them (innermost first, up to a `device(None)`)."""
    for spec in graph._device_function_stack.peek_objs():
        if spec.function is None:
            return False
        if spec.raw_string is None:
            return True
    return False


def made_once(made: dict, what: str, graph: tf.Graph, make):
    """`made[what]`, made by `make()` on first use at the root of `graph`, which may be
    finalized by then (ops a pipeline or its state needs only on some paths)."""
    if what not in made:
        with at_root(graph):
            made[what] = make()
    return made[what]


def unfinalize(graph: tf.Graph) -> None:
    """Lets ops be added to a finalized graph (MonitoredTrainingSession finalizes it). Only
    on failure paths: the error probe (bad_records/origins.py) and the position-less restore
    (runtime/checkpoint.py) each add a few ops once, then finalize the graph again."""
    graph._unsafe_unfinalize()


def has_function(graph: tf.Graph, name: str) -> bool:
    """Whether a function is in the graph's library (no public lookup by name)."""
    return graph._is_function(name)


def add_function(graph: tf.Graph, function) -> None:
    """Adds a function object and those it calls, each unless there (the program's own,
    so pfor can see into cond/while branches; ours, edited)."""
    graph._add_function_recursive(function)


def functions_of(graph: tf.Graph) -> dict:
    """The graph's function library by name."""
    return graph._functions


def is_ref_dtype(dtype: tf.DType) -> bool:
    """A TF1 reference type (`int32_ref`); no public spelling in TensorFlow 2."""
    return dtype._is_ref_dtype


def in_control_flow(op: tf.Operation) -> bool:
    """Whether `op` sits in a v1 cond branch or while loop (it may run zero or many times
    each time the graph around it runs); TensorFlow keeps that only as a private context."""
    return op._get_control_flow_context() is not None


def iterator_resource(iterator) -> tf.Tensor:
    """The resource of a v1 iterator, to save and restore its position (no public handle)."""
    return iterator._iterator_resource


class _DeferredIterator(tf.compat.v1.data.Iterator):
    """A v1 iterator whose initializer and string handle are made on first use.

    TensorFlow's makes both with the iterator (`Iterator.__init__`), and a reader that only
    batchers read never uses either (runtime/pipeline.py). A batcher's initializer is made with it
    (`initializer`); its string handle is seldom used. Three ops of a tower.
    """

    def __init__(self, resource: tf.Tensor, spec, make_initializer, initializer=None):
        from tensorflow.python.data.ops import iterator_ops
        from tensorflow.python.data.util import structure

        self._iterator_resource = resource
        self._element_spec = spec
        self._flat_tensor_shapes = structure.get_flat_tensor_shapes(spec)
        self._flat_tensor_types = structure.get_flat_tensor_types(spec)
        self._get_next_call_count = 0
        self._make_initializer = make_initializer
        self._made: dict = {} if initializer is None else {"initializer": initializer}
        tf.compat.v1.add_to_collection(iterator_ops.GLOBAL_ITERATORS, resource)

    def _once(self, what: str, make):
        return made_once(self._made, what, self._iterator_resource.graph, make)

    @property
    def initializer(self) -> tf.Operation:
        return self._once("initializer", self._make_initializer)

    @property
    def _string_handle(self) -> tf.Tensor:
        resource = self._iterator_resource
        return self._once(
            "handle", lambda: tf.raw_ops.IteratorToStringHandle(resource_handle=resource)
        )


def deferred_iterator(resource: tf.Tensor, spec, make_initializer, initializer=None):
    """A `tf.compat.v1.data.Iterator` over `resource` whose `initializer` is
    `make_initializer()`, made at the graph's root on first use (or `initializer`, made
    already), and its string handle too. None where this TensorFlow lays its iterator out
    otherwise (the caller makes its initializer now)."""
    try:
        return _DeferredIterator(resource, spec, make_initializer, initializer)
    except (ImportError, AttributeError):  # pragma: no cover - two ops more per reader.
        return None


def saver_var_list(saver):
    """What a Saver saves (no public accessor)."""
    return saver._var_list


def handle_data(tensor: tf.Tensor):
    """A resource handle's variable type and shape (serialized), or None. Shape inference of
    ops like ResourceCountUpTo needs it on a function's handle arguments (tracing.py)."""
    if tensor.dtype != tf.resource:
        return None
    from tensorflow.python.ops import handle_data_util

    data = handle_data_util.get_handle_data(tensor)
    return data.SerializeToString() if data is not None and data.is_set else None


def set_handle_data(tensor: tf.Tensor, serialized: bytes) -> None:
    """Gives a function's handle argument the `handle_data` of the handle passed to it."""
    from tensorflow.core.framework import cpp_shape_inference_pb2
    from tensorflow.python.ops import handle_data_util

    data = cpp_shape_inference_pb2.CppShapeInferenceResult.HandleData.FromString(serialized)
    handle_data_util.set_handle_data(tensor, data)


def op_def(op_type: str):
    """The registered `OpDef` of an op type, or None (no public registry lookup)."""
    from tensorflow.python.framework import op_def_registry

    return op_def_registry.get(op_type)


def create_op(graph: tf.Graph, op_type: str, inputs: list, attrs: dict, name: str, definition):
    """The op made from its inputs and serialized attrs alone: what TensorFlow's generic
    op builder does last, after its per-op inference (graph_ops.py)."""
    return graph._create_op_internal(op_type, inputs, name=name, attrs=attrs, op_def=definition)


def optimize_graph(config, meta_graph):
    """The GraphDef of `meta_graph` rewritten by Grappler under `config`, as a session
    rewrites its graph (capture/captured_graphs.py); TensorFlow has no public entry."""
    from tensorflow.python.grappler import tf_optimizer

    return tf_optimizer.OptimizeGraph(config, meta_graph, verbose=False)


def unpatched_init(cls: type):
    """`cls.__init__`, resolving the name of `cls` in its module to `cls` itself.

    TensorFlow's queue classes call `super(FIFOQueue, self).__init__(...)` by their module's
    global name. Once `install()` serves that name from compat_input (tf_slim builds its
    queues as `data_flow_ops.FIFOQueue`), the name is our subclass, and TensorFlow's own
    `__init__` would call itself again. The same code, with a module dictionary in which the
    name is TensorFlow's class, builds the queue as it always did.
    """
    init = cls.__init__
    names = dict(init.__globals__)
    names[cls.__name__] = cls
    rebound = type(init)(init.__code__, names, init.__name__, init.__defaults__, init.__closure__)
    rebound.__kwdefaults__ = init.__kwdefaults__
    return rebound


def rewire_input(op: tf.Operation, index: int, tensor: tf.Tensor) -> None:
    """`op` reads `tensor` at input `index` from now on (`Operation._update_input`).

    A program's queue is served or not when its first dequeue is made, and a `size()` made
    before that (tf_slim's prefetch_queue makes its summary first) already reads
    TensorFlow's queue, which a served queue leaves empty: a loop waiting for it to fill
    would wait forever. A reader's options op is switched to its producer's stream the same
    way (inputs/shared_work.py). Public graphs have no way to change what a made op reads.
    """
    op._update_input(index, tensor)


def add_control_input(op: tf.Operation, before: tf.Operation) -> None:
    """`op` runs after `before` from now on, `before` left as it is (`tf.control_dependencies`
    marks it, which TensorFlow refuses once a session ran it)."""
    op._add_control_input(before)
