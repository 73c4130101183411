"""Where input ops are made: on the host CPU of the device the program's scope asks for.

An input built inside the model's `tf.device('/gpu:0')` (tf_slim's clones dequeue their
prefetch queue there, towers build their batchers there) ran on legacy, whose queue ops
have GPU kernels that keep their data in host memory. tf.data's datasets and iterators
have CPU kernels only, so compat_input makes them on that device's host, job and task kept.

The state a pipeline keeps (its epochs, counters, marks, logs) is made apart from the
program's device functions (`input_state`): `replica_device_setter` sends every variable op
to a parameter server, and tf.data functions cannot reach a resource on another task
(legacy's queues, no variables, ran on the worker; so does this state).
"""

import contextlib
import functools

import tensorflow as tf

from compat_input._src.core import tf_internals

_ACCELERATORS = ("GPU", "TPU")


def _asked_for(graph: tf.Graph) -> tf.DeviceSpec:
    """The device the strings of `graph`'s device scope ask for, merged."""
    merged = tf.DeviceSpec()
    for string in tf_internals.device_scope_strings(graph):  # Innermost first: it wins.
        merged = tf.DeviceSpec.from_string(string).make_merged_spec(merged)
    return merged


def on_host(graph: tf.Graph):
    """A context in which ops are made on the CPU of the device `graph`'s scope asks for,
    where that is a GPU or TPU; else no change. Device functions (`replica_device_setter`)
    still see each op as before."""
    if _asked_for(graph).device_type not in _ACCELERATORS:
        return contextlib.nullcontext()
    return graph.device("/device:CPU:0")


def made_on_host(function):
    """`function` (one that builds input: a producer, a reader's read) run `on_host`."""

    @functools.wraps(function)
    def on_host_of_scope(*args, **kwargs):
        if tf.executing_eagerly():
            return function(*args, **kwargs)
        with on_host(tf.compat.v1.get_default_graph()):
            return function(*args, **kwargs)

    return on_host_of_scope


@contextlib.contextmanager
def input_state(graph: tf.Graph):
    """A context for the variables of a pipeline's state: where a device function is in
    `graph`'s scope, it is left out, the scope's device strings kept (innermost wins, a
    GPU's host CPU as `on_host`). Without a device string the session places them with
    the input's other unconstrained ops, on its own task: a replicated trainer's worker."""
    if not tf_internals.device_function_in_scope(graph):
        yield  # The common case: the scope's strings place these ops as they place all.
        return
    asked = _asked_for(graph)
    if asked.device_type in _ACCELERATORS:
        asked = asked.replace(device_type="CPU", device_index=0)
    with graph.device(None), graph.device(asked.to_string() or None):
        yield
