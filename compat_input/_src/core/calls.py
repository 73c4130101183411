"""Call ops of functions made once: our own (`shared_call`: starts, checks, state) and a
dataset function's, called from inside another one (`called_dataset`).

A call op costs a graph one op where a trace inlined into every caller costs each of them
the trace's time and its ops: what several pipelines or dataset functions run alike is made
once and called.
"""

from collections.abc import Callable

import tensorflow as tf
from tensorflow.core.framework import attr_value_pb2

from compat_input._src.core import function_defs
from compat_input._src.core import graph_ops
from compat_input._src.core import tf_internals
from compat_input._src.core import tracing


@tracing.without_autograph
def called_dataset(key: str, fn: Callable, element_spec, element, args=()):
    """`fn(element, *args)`, a Dataset, by a call of `fn` traced once per graph (the trace
    `tracing.shared_flat_map` makes with this key): a dataset function that makes the same
    records as a reader's own pipeline, inside another dataset function, traces nothing.

    The trace is made without "ints on device" (tracing.trace_once), which a call op
    refuses wherever the session's Grappler does not inline the call first: a session
    with `disable_meta_optimizer` failed in every `_join` batcher over readers.
    """
    traced = tracing.trace_once(key, fn, element_spec, list(args), dataset_out=True, called=True)
    if traced is None:
        return fn(element, *args)
    concrete, inputs, spec = traced
    (variant,) = graph_ops.StatefulPartitionedCall(
        args=tf.nest.flatten(element) + inputs,
        Tout=[tf.variant],
        f=tracing.attr(concrete),
        config_proto=_UNOPTIMIZED,
    )
    variant.set_shape([])
    return tf.data.experimental.from_variant(variant, spec)


# Our call ops' `config_proto`: ours have nothing for Grappler to rewrite as they are
# instantiated (with `_noinline`, a tiny trainer's start run took 51 ms, not 59).
def _unoptimized() -> bytes:
    from tensorflow.core.protobuf import config_pb2

    config = config_pb2.ConfigProto()
    config.graph_options.rewrite_options.disable_meta_optimizer = True
    return config.SerializeToString()


_UNOPTIMIZED = _unoptimized()

# Functions `shared_call` made, by key and argument types, for every graph of the process.
_called: dict = {}


def _defined(key: str, fn: Callable, args) -> tuple:
    """`(function, output spec)`: `fn` built over placeholders in a graph of its own (it can
    capture nothing) and made a function of that graph's ops. A tf.function trace cost 5-20
    ms apiece (a waiting loop's nested traces most), every program paying for five."""
    with tf.Graph().as_default() as graph:
        inputs = []
        for arg in args:
            placeholder = graph_ops.Placeholder(dtype=arg.dtype, shape=arg.shape)
            data = tf_internals.handle_data(arg)
            if data is not None:
                tf_internals.set_handle_data(placeholder, data)
            inputs.append(placeholder)
        result = fn(*inputs)
    flat = tf.nest.flatten(result)
    name = function_defs.unique_name(f"compat_input_{key}_{tracing.PROCESS}")
    made, _ = tf_internals.function_of_graph(graph, inputs, flat, name, tracing.OWN_CALLED_FUNCTION)
    name_attrs = attr_value_pb2.NameAttrList(name=name)
    return function_defs.Defined(made, name_attrs), tf.nest.map_structure(tracing.spec_of, result)


def shared_call(key: str, fn: Callable, args) -> list:
    """`fn(*args)` as one call op, `fn` made a function once per process for these
    argument types (`_defined`).

    A tf.function call in graph mode costs milliseconds of Python to match its signature;
    pipelines make several each (start checks, state initialization). `fn` must make the
    same function in any graph (no random op, nothing captured): it is built apart, in a
    graph of its own, and added to each graph that calls it (an evaluation graph built
    after the training one, each test's graph).
    """
    signature = (key, tuple(tracing.spec_of(a) for a in args))
    signature += (tuple(tf_internals.handle_data(a) for a in args),)
    if signature not in _called:
        _called[signature] = _defined(key, fn, args)
    concrete, spec = _called[signature]
    attrs = tracing.typed(spec)
    outputs = graph_ops.StatefulPartitionedCall(
        args=list(args),
        Tout=attrs["output_types"],
        f=tracing.attr(concrete),
        config_proto=_UNOPTIMIZED,
    )
    for output, shape in zip(outputs, attrs["output_shapes"]):
        output.set_shape(shape)
    return tf.nest.pack_sequence_as(spec, outputs)
