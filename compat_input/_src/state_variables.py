"""Pipeline state (counters, logs, marks) as resource variables made from their ops alone.

A `tf.Variable` costs about 1.4 ms to build in graph mode (its read snapshot, saveable and
collection bookkeeping); a pipeline's state needs none of that, and a graph with 50
per-tower inputs made 650 of them. The handle op is named and shared as a tf.Variable's
would be, so that imported meta-graphs, savers that skip it and sessions see the same.
"""

from typing import Optional

import tensorflow as tf

from compat_input._src import tf_internals

tf1 = tf.compat.v1


class StateVariable:
    """What our code uses of a resource variable: its handle, initial value, initializer,
    reads, assignments and the check that it is initialized."""

    def __init__(self, value, name: str, shape: Optional[tf.TensorShape] = None):
        with tf1.name_scope(None, name, []) as scope:
            self.initial_value = tf.convert_to_tensor(value, name="initial_value")
            self.dtype = self.initial_value.dtype.base_dtype
            self.shape = self.initial_value.shape if shape is None else tf.TensorShape(shape)
            # A name ending in "/" is taken whole: the handle op is the scope's own name.
            self.handle = tf.raw_ops.VarHandleOp(
                dtype=self.dtype, shape=self.shape, shared_name=scope[:-1], name=scope
            )
            self.initializer = tf.raw_ops.AssignVariableOp(
                resource=self.handle, value=self.initial_value, name="Assign"
            )
        self.name = self.handle.name
        self.op = self.handle.op
        self.graph = self.handle.graph
        self._value = None

    def _as_graph_element(self) -> tf.Tensor:
        # What `sess.run(variable)` fetches, as for a tf.Variable: its value. Made on first
        # use (an error being explained), at the root of a graph that may be finalized.
        if self._value is None:
            with tf_internals.at_root(self.graph):
                self._value = self.read_value()
        return self._value

    def is_initialized(self) -> tf.Tensor:
        return tf.raw_ops.VarIsInitializedOp(resource=self.handle)

    def read_value(self) -> tf.Tensor:
        return tf.raw_ops.ReadVariableOp(resource=self.handle, dtype=self.dtype)

    def assign(self, value) -> tf.Operation:
        value = tf.convert_to_tensor(value, dtype=self.dtype)
        return tf.raw_ops.AssignVariableOp(resource=self.handle, value=value)
