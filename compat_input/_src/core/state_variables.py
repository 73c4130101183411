"""Pipeline state (counters, logs, marks) as resource variables made from their ops alone.

A `tf.Variable` costs about 1.4 ms to build in graph mode (its read snapshot, saveable and
collection bookkeeping); a pipeline's state needs none of that, and a graph with 50
per-tower inputs made 650 of them. The handle op is named and shared as a tf.Variable's
would be, so that imported meta-graphs, savers that skip it and sessions see the same.

A state variable is one op: its handle. Initial values are constants made once per graph
and shared (`initial`), the variables are initialized by one shared function per pipeline
(start_ops.initialize_missing), and the initializer, check and read are made on first use.
Each op costs a graph build some 0.1 ms and a session some kilobytes of memory, once for
every pipeline of a graph with many.
"""

import weakref
from typing import Optional

import numpy as np
import tensorflow as tf

from compat_input._src.core import devices
from compat_input._src.core import graph_ops
from compat_input._src.core import tf_internals

tf1 = tf.compat.v1

_initial_values: "weakref.WeakKeyDictionary[tf.Graph, dict]" = weakref.WeakKeyDictionary()


def initial(value, dtype: tf.DType, shape=()) -> tf.Tensor:
    """`value` filled to `shape`, as a tensor made once per graph at its root."""
    graph = tf1.get_default_graph()
    shape = tuple(shape)
    key = (dtype.name, shape, value)
    values = _initial_values.setdefault(graph, {})
    if key not in values:
        with tf_internals.at_root(graph):
            if int(np.prod(shape)) <= 16:  # One op; larger ones as a Fill, not in the graph.
                values[key] = tf.constant(value, dtype, shape, name="compat_input_initial")
            else:
                values[key] = tf.fill(shape, tf.constant(value, dtype), name="compat_input_initial")
    return values[key]


class StateVariable:
    """What our code uses of a resource variable: its handle, initial value, initializer,
    reads, assignments and the check that it is initialized."""

    def __init__(self, value, name: str, shape: Optional[tf.TensorShape] = None):
        # Given as `initial(...)`, or any tensor (one op of this variable's own).
        value = tf.convert_to_tensor(value, name=f"{name}_initial_value")
        self.initial_value = value
        self.dtype = value.dtype.base_dtype
        self.shape = value.shape if shape is None else tf.TensorShape(shape)
        # The name a scope `name` would take (marked used as that scope's would be); a name
        # ending in "/" is taken whole. Without opening the scope: a tower makes nine.
        graph = tf1.get_default_graph()
        scope = graph.unique_name(name)
        with devices.input_state(graph):
            self.handle = graph_ops.VarHandleOp(
                dtype=self.dtype, shape=self.shape, shared_name=scope, name=f"{scope}/"
            )
        self.name = self.handle.name
        self.op = self.handle.op
        self.graph = self.handle.graph
        self._made: dict = {}

    def _once(self, what: str, make):
        return tf_internals.made_once(self._made, what, self.graph, make)

    @property
    def initializer(self) -> tf.Operation:
        return self._once(
            "initializer",
            lambda: graph_ops.AssignVariableOp(resource=self.handle, value=self.initial_value),
        )

    def value(self) -> tf.Tensor:
        """One read, made once: what `sess.run(variable)` fetches, as for a tf.Variable."""
        return self._once("value", self.read_value)

    _as_graph_element = value

    def is_initialized(self) -> tf.Tensor:
        return graph_ops.VarIsInitializedOp(resource=self.handle)

    def read_value(self) -> tf.Tensor:
        return graph_ops.ReadVariableOp(resource=self.handle, dtype=self.dtype)

    def assign(self, value) -> tf.Operation:
        value = tf.convert_to_tensor(value, dtype=self.dtype)
        return graph_ops.AssignVariableOp(resource=self.handle, value=value)
