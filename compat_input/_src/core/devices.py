"""Where input ops are made: on the host CPU of the device the program's scope asks for.

An input built inside the model's `tf.device('/gpu:0')` (tf_slim's clones dequeue their
prefetch queue there, towers build their batchers there) ran on legacy, whose queue ops
have GPU kernels that keep their data in host memory. tf.data's datasets and iterators
have CPU kernels only, so compat_input makes them on that device's host, job and task kept.
"""

import contextlib
import functools

import tensorflow as tf

from compat_input._src.core import tf_internals


def on_host(graph: tf.Graph):
    """A context in which ops are made on the CPU of the device `graph`'s scope asks for,
    where that is a GPU or TPU; else no change. Device functions (`replica_device_setter`)
    still see each op as before."""
    merged = tf.DeviceSpec()
    for string in tf_internals.device_scope_strings(graph):  # Innermost first: it wins.
        merged = tf.DeviceSpec.from_string(string).make_merged_spec(merged)
    if merged.device_type not in ("GPU", "TPU"):
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
