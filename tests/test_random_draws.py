"""Seeded random ops draw legacy's numbers, a block of examples at a time (random_draws.py).

Legacy with one enqueue thread gave the k-th example the k-th call's draws of each seeded
random op; that is the oracle, bit for bit, op kind by op kind. compat_input gives the same
with one thread and with several (legacy's several threads had no order of their own), and
maps them over blocks of examples.
"""

import numpy as np
import pytest
import tensorflow as tf

from compat_input._src.capture import vectorize
from helpers import assert_in_one_thread_order
from helpers import compat_api
from helpers import flatten_examples
from helpers import legacy_api
from helpers import run_scenario
from helpers import write_tfrecords

tf1 = tf.compat.v1

# Each op kind, and the tf.image ops built on them, on an example `x` (float32, [4, 4, 3]).
_DRAWS = {
    "RandomUniform": lambda x: x + tf1.random_uniform([4, 4, 3], -1.0, 1.0),
    "RandomUniform float64": lambda x: (
        x + tf.cast(tf1.random_uniform([3], dtype=tf.float64), x.dtype)
    ),
    "RandomUniformInt": lambda x: x + tf.cast(tf1.random_uniform([3], 0, 1000, tf.int32), x.dtype),
    "RandomUniformInt int64": lambda x: (
        x + tf.cast(tf1.random_uniform([4, 3], -(2**40), 2**40, tf.int64) % 1000, x.dtype)
    ),
    "RandomStandardNormal": lambda x: x + tf1.random_normal([4, 4, 3], 0.5, 2.0),
    "TruncatedNormal": lambda x: x + tf1.truncated_normal([4, 1, 3]),
    "RandomShuffle": lambda x: tf1.random_shuffle(x),
    "RandomShuffle of 9": lambda x: x + tf.cast(tf1.random_shuffle(tf.range(9))[:3], x.dtype),
    "random_crop": lambda x: tf1.random_crop(x, [2, 3, 3]),
    "random_flip_left_right": lambda x: tf1.image.random_flip_left_right(x),
    "random_flip_up_down": lambda x: tf1.image.random_flip_up_down(x),
    "random_brightness": lambda x: tf1.image.random_brightness(x, 63),
    "random_contrast": lambda x: tf1.image.random_contrast(x, 0.2, 1.8),
    "random_saturation": lambda x: tf1.image.random_saturation(x, 0.5, 1.5),
    "random_hue": lambda x: tf1.image.random_hue(x, 0.2),
    "dropout": lambda x: tf1.nn.dropout(x, rate=0.3),
}


def _example(api):
    """`(x, i)`: example i of 12 (two epochs of 6), an image whose pixels depend on i."""
    i = api.range_input_producer(6, num_epochs=2, shuffle=False).dequeue()
    x = tf.reshape(tf.cast(tf.range(48), tf.float32) * 5.0 + tf.cast(i, tf.float32), [4, 4, 3])
    return x, i


def _build(draw, seed_graph=True):
    def build(api, threads):
        if seed_graph:
            tf1.set_random_seed(17)
        x, i = _example(api)
        return api.batch([draw(x), i], 5, num_threads=threads, allow_smaller_final_batch=True)

    return build


def _mapped(build, threads) -> str:
    del vectorize.mappings[:]
    with tf.Graph().as_default():
        build(compat_api(), threads)
    ((_, how),) = vectorize.mappings
    return how


@pytest.mark.parametrize("kind", sorted(_DRAWS))
def test_each_op_kind_draws_legacys_numbers_over_blocks(kind):
    build = _build(_DRAWS[kind])
    assert _mapped(build, 3).startswith("vectorized")
    for threads in (1, 3):
        # Every image with its label, in one legacy thread's order, bit for bit.
        _, compat = assert_in_one_thread_order(build, threads=threads)
        assert flatten_examples(compat.values, 1) == [k % 6 for k in range(12)]


def test_an_op_seed_alone_draws_legacys_numbers():
    build = _build(lambda x: x + tf1.random_uniform([3], seed=5), seed_graph=False)
    assert _mapped(build, 2).startswith("vectorized")
    assert_in_one_thread_order(build, threads=2)


def test_the_draws_go_on_across_epochs_as_the_kernels_did():
    # The kernel's counter runs on from epoch to epoch; a position that restarted with each
    # epoch would repeat the first epoch's draws.
    build = _build(lambda x: tf1.random_uniform([]) + 0.0 * x[0, 0, 0])
    _, compat = assert_in_one_thread_order(build, threads=2)
    draws = flatten_examples(compat.values, 0)
    assert len(set(draws)) == 12


def test_several_ops_and_a_whole_cifar_style_example():
    def augment(x):
        x = tf1.random_crop(x, [3, 3, 3])
        x = tf1.image.random_flip_left_right(x)
        x = tf1.image.random_brightness(x, max_delta=63)
        x = tf1.image.random_contrast(x, lower=0.2, upper=1.8)
        return tf1.image.per_image_standardization(x)

    assert_in_one_thread_order(_build(augment), threads=4)


def test_a_draw_in_a_cond_branch_keeps_one_example_at_a_time():
    # It runs only for the examples that take its branch: its k-th call is not the k-th
    # example's, so no position gives its draws.
    def draw(x):
        return tf.cond(x[0, 0, 0] > 2.0, lambda: x + tf1.random_uniform([]), lambda: x)

    build = _build(draw)
    how = _mapped(build, 1)
    # The op: the draw itself (TF1 behaviour's cond) or the cond that holds it (TF2's If).
    assert how.startswith(("per example (seeded RandomUniform", "per example (If")), how
    assert f"at {__file__}:" in how and "draw it before the cond" in how, how
    legacy, compat = assert_in_one_thread_order(build, threads=1)
    assert np.asarray(flatten_examples(compat.values, 0)).std() > 0


# The same numbers as the legacy session's graph: a session rewrites its graph (Grappler:
# `x / c` becomes `x * (1 / c)`, sums are regrouped), a tf.data function is rewritten
# otherwise, and a block of examples otherwise again. Each of these gave one ulp more or
# less on up to half the values before the captured graph was rewritten as a session does.
_ARITHMETIC = {
    "division by a constant": lambda x: tf.cast(x, tf.float32) / 255.0,
    "a mean": lambda x: x - tf.reduce_mean(x),
    "a standardization": lambda x: tf1.image.per_image_standardization(x / 7.0),
    "a sum with a broadcast term": lambda x: x + (tf1.random_normal([4, 4, 3]) * 2.0 + 0.5),
    "brightness then noise": lambda x: (
        tf1.image.random_brightness(x / 3.0, 63) + tf1.random_normal([4, 4, 3])
    ),
    "brightness then contrast": lambda x: tf1.image.random_contrast(
        tf1.image.random_brightness(x / 3.0, 63), 0.2, 1.8
    ),
}


@pytest.mark.parametrize("kind", sorted(_ARITHMETIC))
def test_float_arithmetic_gives_the_legacy_sessions_bits(kind):
    build = _build(_ARITHMETIC[kind])
    for threads in (1, 3):  # One example at a time, and a block at a time.
        assert_in_one_thread_order(build, threads=threads)


@pytest.mark.parametrize("shared_reader", [False, True])
def test_joined_lists_with_seeded_draws_read_every_record_and_draw_reproducibly(
    tmp_path, shared_reader
):
    # Legacy's join threads drew in an order set by their timing: there is nothing to
    # compare draws with. Every record comes through once, each with a draw of its own,
    # and two runs of the program draw the same.
    files = [
        write_tfrecords(str(tmp_path / f"{k}.tfr"), [b"%d" % (k * 100 + i) for i in range(6)])
        for k in range(2)
    ]

    def build(api, threads=None):
        tf1.set_random_seed(3)
        queue = api.string_input_producer(files, num_epochs=1, shuffle=False)
        shared = api.TFRecordReader().read(queue)[1] if shared_reader else None
        lists = []
        for k in range(2):
            value = shared if shared_reader else api.TFRecordReader().read(queue)[1]
            number = tf.strings.to_number(value, tf.float32)
            lists.append([number, number + tf1.random_uniform([], seed=k + 1)])
        return api.batch_join(lists, 4, allow_smaller_final_batch=True)

    # Each list's own seeds over one stream (or one file each): a block at a time, split
    # between the lists.
    assert _mapped(build, None).startswith("vectorized"), _mapped(build, None)
    runs = [run_scenario(api(), build) for api in (legacy_api, compat_api, compat_api)]
    numbers = [sorted(flatten_examples(run.values, 0)) for run in runs]
    assert numbers[1] == numbers[0] == sorted(k * 100 + i for k in range(2) for i in range(6))
    draws = [
        np.subtract(flatten_examples(r.values, 1), flatten_examples(r.values, 0)) for r in runs
    ]
    assert len(set(draws[1].tolist())) == 12 and ((draws[1] >= 0) & (draws[1] < 1)).all()
    assert runs[1].values == runs[2].values  # Reproducible.
