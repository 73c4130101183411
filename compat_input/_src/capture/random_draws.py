"""Seeded random ops drawn by the example's position in the stream, not by call order.

A legacy enqueue thread ran the per-example graph once per example, so a seeded random op
(`tf.set_random_seed`, or a seed of its own) gave the k-th example the k-th call's draws.
Run as a stateful op inside tf.data, the same draws need the examples one at a time, in
order: the fast paths (parallel calls, a block of examples at once) would hand them out by
scheduling. But the k-th call's draws are a function of k alone: the stateful kernels read
a Philox stream whose counter moves on by a fixed amount each call (op_kinds.counter_step),
and TensorFlow's stateless kernels take that key and counter as inputs. So each such op is
rewritten, in the captured GraphDef, into its stateless twin reading the counter of the
example's position: the same values, bit for bit, in any order and over whole blocks.

Positions count the examples that entered the per-example graph since the pipeline
started, as the kernel counted calls since its session made it. Where legacy ran several
threads there was no order to keep, and the positions give a reproducible one.
"""

import tensorflow as tf
from tensorflow.core.framework import graph_pb2

from compat_input._src.capture import op_kinds
from compat_input._src.capture import philox
from compat_input._src.core import tf_internals

tf1 = tf.compat.v1

# The placeholder a rewritten graph reads the example's position from (int64 scalar).
ORDINAL = "compat_input_example_ordinal"
_PHILOX = 1  # tf.random.Algorithm.PHILOX: the stateful kernels' generator.
# Stateful op -> its stateless twin, and the twin's names for the stateful op's type attrs.
_STATELESS = {
    "RandomUniform": ("StatelessRandomUniformV2", {"dtype": "dtype", "T": "Tshape"}),
    "RandomUniformInt": ("StatelessRandomUniformIntV2", {"Tout": "dtype", "T": "Tshape"}),
    "RandomStandardNormal": ("StatelessRandomNormalV2", {"dtype": "dtype", "T": "Tshape"}),
    "TruncatedNormal": ("StatelessTruncatedNormalV2", {"dtype": "dtype", "T": "Tshape"}),
    "RandomShuffle": ("StatelessShuffle", {"T": "T"}),
}
STATELESS_TYPES = frozenset(twin for twin, _ in _STATELESS.values())


def positional(ops) -> list:
    """The ops among `ops` whose draws are a function of the example's position."""
    return [op for op in ops if op_kinds.counter_step(op) is not None]


def rewrite(graph_def: graph_pb2.GraphDef, ops: list) -> None:
    """Rewrites each of `ops` (positional) in `graph_def` into its stateless twin, reading
    the counter of the position fed to the `ORDINAL` placeholder."""
    if not ops:
        return
    scratch = tf.Graph()
    with scratch.as_default():
        ordinal = tf1.placeholder(tf.int64, [], name=ORDINAL)
        parts = {}
        for k, op in enumerate(ops):
            with tf.name_scope(f"compat_input_draw_{k}"):
                # The kernel's k-th call starts at counter (k * step, seed2), key seed.
                start = ordinal * op_kinds.counter_step(op)
                seed2 = tf.constant(op.get_attr("seed2"), tf.int64)
                # Casts, not bitcasts: the same bits (two's complement), and pfor has a
                # converter for Cast over a block.
                counter = tf.cast(tf.stack([start, seed2]), tf.uint64)
                key = tf.cast(tf.constant([op.get_attr("seed")], tf.int64), tf.uint64)
                parts[op.name] = (key.op.name, counter.op.name)
        alg = tf.constant(_PHILOX, name="compat_input_philox")
    graph_def.node.extend(scratch.as_graph_def().node)
    for node in graph_def.node:
        if node.name not in parts:
            continue
        twin, attrs = _STATELESS[node.op]
        key, counter = parts[node.name]
        data = [i for i in node.input if not i.startswith("^")]
        controls = [i for i in node.input if i.startswith("^")]
        del node.input[:]
        # The twins take (shape or value, key, counter, alg, then any bounds).
        node.input.extend([data[0], key, counter, alg.op.name, *data[1:], *controls])
        kept = {attrs[name]: node.attr[name] for name in attrs}
        node.ClearField("attr")
        for name, value in kept.items():
            node.attr[name].CopyFrom(value)
        node.op = twin


def vectorize_twin(pfor_input):
    """pfor converter of a rewritten op over a block: each example's draws from its own
    counter. Uniform floats (float32) and integers, what input graphs draw (crops, flips,
    brightness, contrast), are computed for the whole block at once (philox.py); the
    other kinds take one counter a call, so the kernel runs once per example of the block
    (pfor's own loop), the rest of the graph vectorized."""
    op = pfor_input.op
    stacked = [pfor_input.input(i)[1] for i in range(len(pfor_input.inputs))]
    if not any(stacked):
        inputs = [pfor_input.input(i)[0] for i in range(len(pfor_input.inputs))]
        outputs = tf_internals.pfor._create_op(
            op.type, inputs, [t.dtype for t in op.outputs], attrs=op.node_def.attr
        ).outputs
        return [tf_internals.pfor.wrap(t, False) for t in outputs]
    whole = _whole_block(pfor_input, stacked)
    if whole is not None:
        return tf_internals.pfor.wrap(whole, True)
    return tf_internals.pfor._fallback_converter(pfor_input, warn=False)


def _whole_block(pfor_input, stacked: list):
    """The block's draws of a uniform twin in one computation, or None for other kinds."""
    op = pfor_input.op
    dtype = op.get_attr("dtype") if op.type in _UNIFORM else None
    if dtype not in _UNIFORM.get(op.type, ()) or any(stacked[i] for i in (0, 1, 3)):
        return None
    shape, key, alg = (tf.get_static_value(pfor_input.unstacked_input(i)) for i in (0, 1, 3))
    if shape is None or key is None or alg != _PHILOX or not stacked[2]:
        return None
    seed, counters = int(key[0]), pfor_input.stacked_input(2)
    if op.type == "StatelessRandomUniformV2":
        return philox.uniform(seed, counters, list(shape))
    bounds = [pfor_input.input(i)[0] for i in (4, 5)]
    return philox.uniform_int(seed, counters, list(shape), *bounds, dtype)


# The twins and types whose draws philox.py computes for a whole block.
_UNIFORM = {
    "StatelessRandomUniformV2": (tf.float32,),
    "StatelessRandomUniformIntV2": (tf.int32, tf.int64),
}
