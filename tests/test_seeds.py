"""Seeded programs draw the same random numbers as on legacy (contract: random numbers).

TensorFlow gives each random op built without a seed of its own the next value of a
per-graph counter (`get_seed`). Legacy input functions draw from it only where they make a
random op (a shuffling producer, a RandomShuffleQueue); compat_input must draw exactly
there, or every initializer the program builds after its input gets another seed.
"""

import os

import pytest
import tensorflow as tf

from helpers import compat_api
from helpers import legacy_api
from helpers import plain
from helpers import write
from helpers import write_tfrecords

tf1 = tf.compat.v1


def _inputs(tmp: str) -> dict:
    """Each producer, reader and batcher kind: `build(api)` -> a tensor to fetch, and
    whether legacy's values are deterministic there (one thread, seeded)."""
    text, records, fixed = (os.path.join(tmp, name) for name in ("a.txt", "a.tfr", "a.bin"))

    def numbers(api, shuffle=False):
        return api.range_input_producer(12, shuffle=shuffle).dequeue()

    def files(api, path):
        return api.string_input_producer([path], shuffle=False)

    return {
        "range_input_producer": (lambda api: numbers(api), True),
        "range_input_producer shuffled": (lambda api: numbers(api, True), True),
        "string_input_producer shuffled": (
            lambda api: api.string_input_producer([text, records, fixed]).dequeue(),
            True,
        ),
        "slice_input_producer": (lambda api: api.slice_input_producer([tf.range(6)]), True),
        "input_producer": (lambda api: api.input_producer(tf.range(4)).dequeue(), True),
        "limit_epochs": (lambda api: api.limit_epochs(tf.constant(3), 2), True),
        "TextLineReader": (lambda api: api.TextLineReader().read(files(api, text)), True),
        "TFRecordReader": (lambda api: api.TFRecordReader().read(files(api, records)), True),
        "FixedLengthRecordReader": (
            lambda api: api.FixedLengthRecordReader(3).read(files(api, fixed)),
            True,
        ),
        "WholeFileReader": (lambda api: api.WholeFileReader().read(files(api, text)), True),
        "batch": (lambda api: api.batch([numbers(api)], 3), True),
        "batch with threads": (lambda api: api.batch([numbers(api)], 3, num_threads=2), False),
        "batch dynamic_pad": (
            lambda api: api.batch([tf.range(numbers(api) % 3)], 2, dynamic_pad=True),
            True,
        ),
        "batch_join": (lambda api: api.batch_join([[numbers(api)], [numbers(api)]], 3), False),
        "maybe_batch": (lambda api: api.maybe_batch([numbers(api)], numbers(api) > 4, 3), True),
        "shuffle_batch": (lambda api: api.shuffle_batch([numbers(api)], 3, 20, 4), False),
        "shuffle_batch_join": (
            lambda api: api.shuffle_batch_join([[numbers(api)], [numbers(api)]], 3, 20, 4),
            False,
        ),
        "maybe_shuffle_batch": (
            lambda api: api.maybe_shuffle_batch([numbers(api)], 3, 20, 4, numbers(api) > 2),
            False,
        ),
        "decode_csv into batch": (
            lambda api: api.batch(
                tf.io.decode_csv(api.TextLineReader().read(files(api, text))[1], [[0], [0]]), 4
            ),
            True,
        ),
    }


def _model_after(api, build) -> tuple:
    """A seeded graph: the input, then a model's weights and a dropout mask built after it."""
    with tf.Graph().as_default():
        tf1.set_random_seed(1234)
        # A random op first: the input's own draws must then take the counter's next value.
        before = tf1.random_uniform([2])
        got = build(api)
        weights = tf1.get_variable("w", [5], initializer=tf1.glorot_uniform_initializer())
        bias = tf1.Variable(tf1.truncated_normal([3]))
        mask = tf1.nn.dropout(tf.ones([6]), rate=0.5)
        with tf1.Session() as sess:
            sess.run([tf1.global_variables_initializer(), tf1.local_variables_initializer()])
            coord = tf1.train.Coordinator()
            threads = api.start_queue_runners(sess, coord=coord)
            first = plain(sess.run(got))
            model = plain(sess.run([before, weights, bias, mask]))
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=10)
    return first, model


@pytest.mark.parametrize("kind", sorted(_inputs("/unused")))
def test_a_model_built_after_the_input_gets_the_same_random_numbers(tmp_path, kind):
    write(str(tmp_path / "a.txt"), "".join(f"{i},{i * 2}\n" for i in range(12)))
    write_tfrecords(str(tmp_path / "a.tfr"), [b"r%d" % i for i in range(12)])
    write(str(tmp_path / "a.bin"), "abcdefghijkl")
    build, deterministic = _inputs(str(tmp_path))[kind]
    legacy_first, legacy_model = _model_after(legacy_api(), build)
    compat_first, compat_model = _model_after(compat_api(), build)
    assert compat_model == legacy_model
    if deterministic:
        assert compat_first == legacy_first
