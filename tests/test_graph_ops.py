"""graph_ops makes the nodes `tf.raw_ops` makes, from attrs serialized once.

Whole towers of every kind are built with graph_ops on and off (off: every op through
`tf.raw_ops`) and their graphs compared node for node, functions included: an attr left
out, a default missed, an input out of order or a wrong output split shows here.
"""

import re

import numpy as np
import pytest
import tensorflow as tf

import compat_input
from compat_input._src.core import dataset_ops
from compat_input._src.core import graph_ops
from tests import helpers

tf1 = tf.compat.v1


def _towers(tmp_path):
    csv = helpers.write(str(tmp_path / "rows.csv"), "".join(f"{i},{i * i}\n" for i in range(20)))
    records = helpers.write_tfrecords(str(tmp_path / "r.tfrecord"), [b"x%d" % i for i in range(9)])
    fixed = helpers.write(str(tmp_path / "f.bin"), bytes(range(64)))

    def build():
        with tf1.name_scope("text"):
            queue = compat_input.string_input_producer([csv], num_epochs=2, shuffle=False)
            _, line = compat_input.TextLineReader(skip_header_lines=1).read(queue)
            a, b = tf1.decode_csv(line, [[0], [0]])
            compat_input.shuffle_batch([a, b], 4, 40, 8, num_threads=2, seed=3)
        with tf1.name_scope("records"):
            queue = compat_input.string_input_producer([records, records], seed=5)
            key, value = compat_input.TFRecordReader().read(queue)
            compat_input.batch_join([[key, value]] * 2, 3, allow_smaller_final_batch=True)
        with tf1.name_scope("fixed"):
            queue = compat_input.string_input_producer([fixed], shuffle=False)
            _, value = compat_input.FixedLengthRecordReader(8).read(queue)
            compat_input.batch([tf.reshape(tf.io.decode_raw(value, tf.uint8), [8])], 2)
        with tf1.name_scope("slices"):
            x, y = compat_input.slice_input_producer([np.arange(10), np.arange(10) * 2])
            compat_input.maybe_shuffle_batch([x, y], 2, 20, 4, x > 3)

    return build


def _normalized(graph_def) -> tuple:
    """The graph's nodes, and its functions in an order that does not depend on their
    names, which TensorFlow numbers from process-wide counters (they differ between builds)."""
    names = sorted((f.signature.name for f in graph_def.library.function), key=len)
    pattern = re.compile("(" + "|".join(re.escape(n) for n in reversed(names)) + r")(?!\d)")

    def numbered(text: str) -> str:
        return pattern.sub(lambda m: re.sub(r"_\d+$", "_N", m[1]), text)

    functions = sorted(numbered(str(f)) for f in graph_def.library.function)
    del graph_def.library.function[:]
    return numbered(str(graph_def)), functions


def _graph(build, fast: bool, monkeypatch) -> tuple:
    monkeypatch.setattr(graph_ops, "enabled", fast)
    graph = tf.Graph()
    with graph.as_default():
        tf1.set_random_seed(11)
        build()
    return _normalized(graph.as_graph_def())


def test_towers_built_through_graph_ops_are_the_graphs_raw_ops_build(tmp_path, monkeypatch):
    build = _towers(tmp_path)
    fast, raw = _graph(build, True, monkeypatch), _graph(build, False, monkeypatch)
    assert fast[0].count("node {") > 100 and len(fast[1]) > 10  # Whole towers.
    assert fast[0] == raw[0]
    assert fast[1] == raw[1]


def _made_both_ways(make, monkeypatch) -> tuple:
    made = []
    for fast in (True, False):
        monkeypatch.setattr(graph_ops, "enabled", fast)
        made.append(make())
    return tuple(made)


def _form(value):
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [_form(v) for v in value])
    return "Tensor" if isinstance(value, tf.Tensor) else type(value).__name__


def test_outputs_come_as_raw_ops_gives_them(monkeypatch):
    # A list (list outputs), the op (no outputs), a tensor, a tuple (several outputs).
    with tf.Graph().as_default():
        values = tf.constant([[1, 2], [3, 3]])
        makes = [
            lambda: graph_ops.Unpack(value=values, num=2),
            lambda: graph_ops.IdentityN(input=[values, values[0]]),
            lambda: graph_ops.NoOp(),
            lambda: graph_ops.Size(input=values),
            lambda: tuple(graph_ops.Unique(x=values[1])),
        ]
        pairs = [_made_both_ways(make, monkeypatch) for make in makes]
        for fast, raw in pairs:
            assert _form(fast) == _form(raw)
        assert _form(pairs[0][0]) == ("list", ["Tensor", "Tensor"])
        assert _form(pairs[2][0]) == "Operation"
        assert _form(pairs[4][0]) == ("tuple", ["Tensor", "Tensor"])
        tensors = [p for p in pairs if _form(p[0]) != "Operation"]
        with tf1.Session() as sess:
            fast, raw = sess.run([[p[0] for p in tensors], [p[1] for p in tensors]])
        for a, b in zip(tf.nest.flatten(fast), tf.nest.flatten(raw)):
            np.testing.assert_array_equal(a, b)


def test_what_graph_ops_does_not_handle_goes_to_raw_ops():
    # Python values for inputs (raw_ops converts them), an op unknown to TensorFlow.
    with tf.Graph().as_default():
        total = graph_ops.AddV2(x=1, y=tf.constant(2))  # Converted by raw_ops.
        with tf1.Session() as sess:
            assert sess.run(total) == 3
    with pytest.raises(AttributeError):
        graph_ops.NoSuchOpAnywhere  # noqa: B018


@pytest.mark.parametrize("graph_seed, seed", [(7, 3), (0, 0), (None, 5)])
def test_shuffle_orders_as_tf_data_shuffle_does(graph_seed, seed):
    # The seeds are tf.data's: (0, 0) would mean random, so tf.data changes the second.
    orders = []
    for shuffle in (dataset_ops.shuffle, lambda d, n, seed: d.shuffle(n, seed=seed)):
        with tf.Graph().as_default():
            if graph_seed is not None:
                tf1.set_random_seed(graph_seed)
            data = shuffle(tf.data.Dataset.range(64), 16, seed=seed).batch(64)
            with tf1.Session() as sess:
                orders.append(sess.run(tf1.data.make_one_shot_iterator(data).get_next()).tolist())
    assert sorted(orders[0]) == list(range(64))
    assert orders[0] == orders[1] != list(range(64))
