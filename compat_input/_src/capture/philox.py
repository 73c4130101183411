"""TensorFlow's Philox4x32-10 generator and uniform distributions, over a block of counters.

A seeded random op of a block of examples draws from one counter per example
(random_draws.py). TensorFlow's stateless kernels take one counter a call: run once per
example of a block (a loop) they cost more than the rest of a CIFAR-10 example's graph. The
generator is a pure function of key and counter, so here it is written in integer ops over
every counter of the block at once, with the kernels' own conversions to uniform floats and
integers (random_distributions.h): the same bits, proven against the kernels in
tests/test_random_draws.py.
"""

import numpy as np
import tensorflow as tf

from compat_input._src.core import calls
from compat_input._src.core import graph_ops

_M = (0xD2511F53, 0xCD9E8D57)  # The round multipliers.
_W = (0x9E3779B9, 0xBB67AE85)  # The key's increments between rounds (Weyl sequence).
_ROUNDS = 10
_LOW = 0xFFFFFFFF


def _round_keys(seed: int) -> list:
    """The key of each round: the op's seed, raised between rounds."""
    key = [seed & _LOW, (seed >> 32) & _LOW]
    keys = []
    for _ in range(_ROUNDS):
        keys.append(tuple(key))
        key = [(key[0] + _W[0]) & _LOW, (key[1] + _W[1]) & _LOW]
    return keys


def _u32(value) -> tf.Tensor:
    return tf.constant(np.uint32(value), tf.uint32)


def bits(seed: int, low: tf.Tensor, high: tf.Tensor) -> tf.Tensor:
    """The 4 uint32 that Philox gives for key `seed` at each 128-bit counter
    `(high << 64) + low` (1-D uint64 tensors of one shape): shape `[counters, 4]`.

    One function call: its hundred ops are traced once per graph, whatever the op and its
    seed (the round keys are an argument), where written out for each draw they cost a
    seeded CIFAR-10 program 0.3 s more to build and 0.2 s more to start.
    """
    keys = tf.constant(np.array(_round_keys(seed), np.uint32))
    (words,) = calls.shared_call("philox_bits", _bits, [keys, low, high])
    return words


def _bits(keys: tf.Tensor, low: tf.Tensor, high: tf.Tensor) -> list:
    """`bits` of 1-D counters, with the round keys `keys` (`[rounds, 2]` uint32).

    A round multiplies words 0 and 2 by the two multipliers, and xors the high halves
    with words 1 and 3 and the round's key. Each pair is one tensor (its last axis), so
    that a round is a few ops over the whole block, not a dozen. Raw ops, the round keys
    unstacked once: written with TensorFlow's operators (and `keys[r]`), the function took
    49 ms to make, every seeded program paying it; 15 now.
    """
    u32, u64 = tf.uint32, tf.uint64
    shift = tf.constant(32, u64)
    last = tf.constant([-1], tf.int32)
    halves = graph_ops.Pack(values=[low, high], axis=-1)  # [..., 2]: words (0, 1), (2, 3).
    even = graph_ops.Cast(x=halves, DstT=u32)  # Words 0 and 2.
    odd = graph_ops.Cast(x=graph_ops.RightShift(x=halves, y=shift), DstT=u32)  # Words 1, 3.
    multipliers = tf.constant(np.array(_M, np.uint64))
    round_keys = graph_ops.Unpack(value=keys, num=_ROUNDS, axis=0)
    for r in range(_ROUNDS):
        product = graph_ops.Mul(x=graph_ops.Cast(x=even, DstT=u64), y=multipliers)
        high_halves = graph_ops.Cast(x=graph_ops.RightShift(x=product, y=shift), DstT=u32)
        low_halves = graph_ops.Cast(x=product, DstT=u32)  # The cast keeps the low 32 bits.
        # New words: (hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0).
        mixed = graph_ops.BitwiseXor(x=graph_ops.ReverseV2(tensor=high_halves, axis=last), y=odd)
        even = graph_ops.BitwiseXor(x=mixed, y=round_keys[r])
        odd = graph_ops.ReverseV2(tensor=low_halves, axis=last)
    # Words in order (0, 1, 2, 3): (even0, odd0, even1, odd1).
    words = graph_ops.Pack(values=[even, odd], axis=-1)
    return [graph_ops.Reshape(tensor=words, shape=tf.constant([-1, 4]))]


def _samples(seed: int, counters: tf.Tensor, count: int, per_value: int) -> tf.Tensor:
    """`[examples, count * per_value]` uint32: the samples of `count` values drawing
    `per_value` samples each, from each example's counter (`counters`: `[examples, 2]`
    uint64, the kernel's starting counter, low word first). Raw ops: each random op of a
    seeded program makes these (TensorFlow's operators and slicing cost 3x the time)."""
    groups = -(-count * per_value // 4)
    steps = tf.constant(np.arange(groups, dtype=np.uint64)[None, :])
    one = tf.constant(1, tf.int32)
    words = graph_ops.Unpack(value=counters, num=2, axis=1)  # Each counter's low, high word.
    first, second = (graph_ops.ExpandDims(input=w, axis=one) for w in words)
    low = graph_ops.AddV2(x=first, y=steps)  # No carry into the high word: positions < 2**64.
    high = graph_ops.BroadcastTo(input=second, shape=graph_ops.Shape(input=low))
    flat = [graph_ops.Reshape(tensor=c, shape=tf.constant([-1])) for c in (low, high)]
    drawn = graph_ops.Reshape(tensor=bits(seed, *flat), shape=tf.constant([-1, groups * 4]))
    if count * per_value == groups * 4:
        return drawn
    return graph_ops.Slice(
        input=drawn, begin=tf.constant([0, 0]), size=tf.constant([-1, count * per_value])
    )


def uniform(seed: int, counters: tf.Tensor, shape: list) -> tf.Tensor:
    """float32 in [0, 1) of per-example `shape`, as RandomUniform draws them: 23 random
    bits as the mantissa of a float in [1, 2), minus 1."""
    count = int(np.prod(shape))
    mantissas = graph_ops.BitwiseAnd(x=_samples(seed, counters, count, 1), y=_u32(0x7FFFFF))
    ones = graph_ops.BitwiseOr(x=mantissas, y=_u32(127 << 23))
    values = graph_ops.Sub(x=graph_ops.Bitcast(input=ones, type=tf.float32), y=tf.constant(1.0))
    return graph_ops.Reshape(tensor=values, shape=tf.constant([-1, *shape], tf.int32))


def uniform_int(seed, counters, shape: list, minval, maxval, dtype: tf.DType) -> tf.Tensor:
    """int32 / int64 in [minval, maxval) of per-example `shape`, as RandomUniformInt draws
    them: `minval + bits % (maxval - minval)`, the range and remainder unsigned, 32 bits a
    value for int32 and two samples (low word first) for int64. `minval` and `maxval`:
    scalars, or one per example."""
    count = int(np.prod(shape))
    unsigned = tf.uint32 if dtype == tf.int32 else tf.uint64
    samples = _samples(seed, counters, count, 1 if dtype == tf.int32 else 2)
    if dtype == tf.int32:
        drawn = samples
    else:
        pairs = tf.cast(tf.reshape(samples, [-1, count, 2]), tf.uint64)
        drawn = tf.bitwise.bitwise_or(
            pairs[..., 0], tf.bitwise.left_shift(pairs[..., 1], tf.constant(32, tf.uint64))
        )

    def per_example(bound):
        return tf.reshape(bound, [-1, 1])  # One bound for the block, or one per example.

    low = per_example(minval)
    size = tf.cast(per_example(maxval), unsigned) - tf.cast(low, unsigned)
    values = low + tf.cast(tf.math.floormod(drawn, size), dtype)
    return tf.reshape(values, tf.concat([tf.shape(counters)[:1], shape], 0))
