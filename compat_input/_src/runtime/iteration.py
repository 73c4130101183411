"""Rewinding and holding: what queues could never do.

A legacy queue could not be rewound: a validation set was read again by opening a new
session and restoring a checkpoint. A compat_input pipeline is an iterator, so
`reset(sess, tensors)` re-runs the initializers of the pipelines behind `tensors`, and
`iterate(sess, fetches)` rewinds them and runs `fetches` until they end, in the same
session, on the same variables, leaving every other pipeline where it was. `hold(tensors)`
keeps one batch in variables so it can be evaluated many times (line searches); its
`advance` op pulls the next one in.
"""

from collections.abc import Callable
from collections.abc import Iterator
from typing import Any

import tensorflow as tf

from compat_input._src.core import graph_ops
from compat_input._src.runtime import pipeline as pipeline_lib

tf1 = tf.compat.v1


def fetched(fetches: Any) -> list:
    """What `Session.run(fetches)` fetches, flat: any nesting of lists, tuples and dicts.

    `tf.nest` sorts a dict's keys, and a MonitoredSession keys its hooks' fetches by the
    hook objects next to the string "caller": they cannot be sorted.
    """
    if isinstance(fetches, dict):
        return [leaf for value in fetches.values() for leaf in fetched(value)]
    if isinstance(fetches, (list, tuple)):
        return [leaf for value in fetches for leaf in fetched(value)]
    return tf.nest.flatten(fetches, expand_composites=True)


def ops_behind(fetches: Any, stop: Callable[[tf.Operation], bool]) -> list:
    """The ops that `stop` accepts among those a run of `fetches` executes, found walking
    back through data and control inputs (never past an accepted op), without making ops."""
    stack = []
    for item in fetched(fetches):
        if isinstance(item, tf.Operation):
            stack.append(item)
        elif isinstance(item, (tf.Tensor, tf.Variable)):
            stack.append(item.op)
    found, seen = [], set()
    while stack:
        op = stack.pop()
        if op.name in seen:
            continue
        seen.add(op.name)
        if stop(op):
            found.append(op)
            continue
        stack.extend(t.op for t in op.inputs)
        stack.extend(op.control_inputs)
    return found


def _source_op(op: tf.Operation) -> bool:
    # Sources register every output of the op that reads them (pipeline.Source.register).
    return bool(op.outputs) and pipeline_lib.lookup_source(op.outputs[0]) is not None


def pipelines_behind(fetches: Any) -> list:
    """The pipelines whose outputs `fetches` read, nearest first, without making ops."""
    found = []
    for op in ops_behind(fetches, _source_op):
        pipe = pipeline_lib.lookup_source(op.outputs[0])[0].pipeline
        if pipe is not None and pipe not in found:
            found.append(pipe)
    return found


def reset(sess, tensors: Any) -> list:
    """Rewinds the pipelines behind `tensors` to their start; returns their names.

    Pipelines not yet started in `sess` are started. Other pipelines are untouched.
    """
    pipelines = pipelines_behind(tensors)
    if not pipelines:
        raise ValueError(
            f"reset: no compat_input pipeline is behind {tensors!r}; pass the batch tensors "
            "(or something computed from them)."
        )
    shared = [p for p in pipelines if p.source is not None and p.source.service_job]
    if shared:
        raise ValueError(
            f"reset: input '{shared[0].name}' is shared with other trainers through the tf.data "
            f"service job {shared[0].source.service_job!r}, and one trainer cannot rewind a "
            "shared epoch. Build the input to rewind (a validation set) without shared_name: "
            "private inputs rewind, on the service or not."
        )
    pipeline_lib.start_pipelines(sess)
    sess.run([p.reset_op for p in pipelines])
    return [p.name for p in pipelines]


def iterate(sess, fetches: Any, feed_dict=None) -> Iterator:
    """Rewinds the finite pipelines behind `fetches` and yields `sess.run(fetches)` to their end.

    Raises ValueError, naming it, when a pipeline behind `fetches` never ends (a producer
    without `num_epochs`).
    """
    pipelines = pipelines_behind(fetches)
    endless = [p.name for p in pipelines if p.source is not None and not p.source.finite]
    if endless:
        raise ValueError(
            f"iterate: pipeline(s) {', '.join(endless)} never end (no num_epochs), so a pass "
            "over them would not finish; build the evaluation input with num_epochs=1."
        )
    reset(sess, fetches)
    while True:
        try:
            result = sess.run(fetches, feed_dict=feed_dict)
        except tf.errors.OutOfRangeError:
            return
        yield result


class Held:
    """One batch kept in variables: `tensors` read it, `advance` pulls the next one in."""

    def __init__(self, tensors: Any, name: str):
        flat = tf.nest.flatten(tensors, expand_composites=True)
        with tf1.name_scope(name):
            self._vars = [
                tf1.Variable(
                    tf.zeros([], t.dtype) if t.dtype != tf.string else tf.constant(""),
                    shape=tf.TensorShape(None),
                    validate_shape=False,
                    trainable=False,
                    collections=[],
                    use_resource=True,
                    name="held",
                )
                for t in flat
            ]
            self.advance = tf.group(
                *[v.assign(t) for v, t in zip(self._vars, flat)], name="advance"
            )
            ready = graph_ops.VarIsInitializedOp(resource=self._vars[0].handle)
            check = tf.debugging.Assert(
                ready,
                [f"hold '{name}': no batch held yet; run sess.run(held.advance) first."],
            )
            with tf.control_dependencies([check]):
                reads = [v.read_value() for v in self._vars]
            for read, t in zip(reads, flat):
                read.set_shape(t.shape)
        self.tensors = tf.nest.pack_sequence_as(tensors, reads, expand_composites=True)


def hold(tensors: Any, name: str = "hold") -> Held:
    """Keeps one batch of `tensors` for repeated evaluation; see `Held`."""
    return Held(tensors, name)
