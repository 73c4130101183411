"""Producers against TensorFlow's own queues (contract §1, exp1, exp14)."""

import collections

import pytest
import tensorflow as tf

import compat_input
from helpers import assert_same
from helpers import assert_same_examples
from helpers import compat_api
from helpers import differential
from helpers import legacy_api
from helpers import run_scenario

tf1 = tf.compat.v1


def test_range_input_producer_unshuffled_two_epochs_ends_on_the_21st_run():
    run = assert_same(
        lambda api: api.range_input_producer(10, num_epochs=2, shuffle=False).dequeue()
    )
    assert len(run.values) == 20 and run.error is tf.errors.OutOfRangeError


def test_range_input_producer_without_num_epochs_cycles_forever():
    run = assert_same(lambda api: api.range_input_producer(10, shuffle=False).dequeue(), steps=25)
    assert run.error is None and run.values[20:] == [0, 1, 2, 3, 4]


def test_seeded_range_input_producer_gives_the_legacy_permutations():
    run = assert_same(lambda api: api.range_input_producer(10, num_epochs=2, seed=42).dequeue())
    assert run.values[:10] != run.values[10:]


def test_unseeded_shuffle_gives_complete_fresh_epochs():
    legacy, compat = differential(
        lambda api: api.string_input_producer(
            [b"a", b"b", b"c", b"d", b"e", b"f"], num_epochs=3
        ).dequeue()
    )
    for run in (legacy, compat):
        epochs = [run.values[i : i + 6] for i in range(0, 18, 6)]
        assert all(sorted(e) == [b"a", b"b", b"c", b"d", b"e", b"f"] for e in epochs)
        assert run.error is tf.errors.OutOfRangeError and len(run.values) == 18


def test_range_input_producer_accepts_a_tensor_limit():
    assert_same(
        lambda api: api.range_input_producer(
            tf.constant(4) + 1, num_epochs=1, shuffle=False
        ).dequeue()
    )


def test_slice_input_producer_keeps_rows_together_in_order():
    def build(api):
        return api.slice_input_producer(
            [tf.range(10, 15), tf.range(5)], num_epochs=2, shuffle=False
        )

    run = assert_same(build)
    assert run.values[0] == [10, 0] and len(run.values) == 10


@pytest.mark.parametrize("num_epochs", [1, 3])
def test_shuffled_slice_input_producer_keeps_rows_together_in_fresh_epochs(num_epochs):
    def build(api):
        images = tf.reshape(tf.range(40), [10, 2, 2])
        labels = tf.strings.as_string(tf.range(10) * 3)
        return api.slice_input_producer([images, labels], num_epochs=num_epochs)

    legacy, compat = assert_same_examples(build, epoch_size=10, batched=False)
    assert len(compat.values) == 10 * num_epochs


def test_shuffle_batch_of_a_shuffled_slice_producer_keeps_images_with_labels():
    def build(api):
        image, label = api.slice_input_producer(
            [tf.reshape(tf.range(90), [30, 3]), tf.range(30) * 10], num_epochs=2
        )
        return api.shuffle_batch([image, label], 7, 40, 10, allow_smaller_final_batch=True)

    assert_same_examples(build)


def test_slice_input_producer_over_a_variable_filled_by_feed_dict():
    def build(api):
        data = tf.compat.v1.placeholder(tf.int32, [4])
        var = tf1.Variable(data, trainable=False, collections=[])
        return var, data, api.slice_input_producer([var], num_epochs=1, shuffle=False)

    outs = []
    for api in (None, compat_api()):
        g = tf.Graph()
        with g.as_default():
            var, data, row = build(api or legacy_api())
            with tf1.Session() as sess:
                sess.run(var.initializer, {data: [7, 8, 9, 10]})
                sess.run(tf1.local_variables_initializer())
                coord = tf1.train.Coordinator()
                threads = tf1.train.start_queue_runners(sess, coord)
                got = []
                try:
                    while True:
                        got.append(sess.run(row)[0] if isinstance(row, list) else sess.run(row))
                except tf.errors.OutOfRangeError:
                    pass
                coord.request_stop()
                coord.join(threads)
        outs.append([int(x) for x in got])
    assert outs[0] == outs[1] == [7, 8, 9, 10]


def test_limit_epochs_raises_out_of_range_after_num_epochs_evaluations():
    assert_same(lambda api: api.limit_epochs(tf.constant(3), num_epochs=2))


def test_num_epochs_must_be_positive():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="num_epochs must be > 0 not 0"):
            compat_input.range_input_producer(3, num_epochs=0)


def test_string_input_producer_rejects_an_empty_list_at_build_time():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="requires a non-null input tensor"):
            compat_input.string_input_producer([])


@pytest.mark.parametrize("batched", [False, True])
def test_an_empty_string_tensor_at_run_time_ends_the_input_like_legacy(batched, capfd):
    def build(api):
        empty = tf.constant([], tf.string)
        x = api.string_input_producer(empty, num_epochs=2).dequeue()
        return api.batch([x], 2) if batched else x

    run = assert_same(build)
    assert run.values == [] and run.error is tf.errors.OutOfRangeError
    assert "requires a non-null input tensor" in capfd.readouterr().err


def test_epochs_local_variable_keeps_its_legacy_name():
    names = []
    for api in legacy_api(), compat_api():
        with tf.Graph().as_default():
            api.string_input_producer(["a"], num_epochs=2)
            api.slice_input_producer([tf.range(3)], num_epochs=2)
            names.append(sorted(v.op.name for v in tf1.local_variables()))
    assert names[0] == names[1]


def test_producers_write_legacy_s_fill_summaries():
    tags = []
    for api in legacy_api(), compat_api():
        with tf.Graph().as_default():
            api.string_input_producer(["a"])
            api.range_input_producer(3, capacity=8)
            api.input_producer(tf.constant([1, 2]), summary_name="myq")
            summaries = tf1.get_collection(tf1.GraphKeys.SUMMARIES)
            tags.append(sorted(tf.get_static_value(s.op.inputs[0]) for s in summaries))
    assert b"input_producer/fraction_of_32_full" in tags[0] and b"input_producer_2/myq" in tags[0]
    assert tags[1] == tags[0]  # Their values: tests/test_fill_levels.py.


def test_match_filenames_once_resource_variable_feeds_string_input_producer(tmp_path):
    for name in ("b.txt", "a.txt"):
        (tmp_path / name).write_text(name)
    pattern = str(tmp_path / "*.txt")
    # Resource variables (no disable_v2_behavior): legacy string_input_producer fails here.
    run = run_scenario(
        compat_api(),
        lambda api: api.string_input_producer(
            api.match_filenames_once(pattern), num_epochs=1, shuffle=False
        ).dequeue(),
    )
    assert run.values == [str(tmp_path / "a.txt").encode(), str(tmp_path / "b.txt").encode()]


def test_queue_surface_dequeue_many_and_up_to():
    def build(api):
        q = api.range_input_producer(7, num_epochs=1, shuffle=False)
        return q.dequeue_up_to(3)

    run = assert_same(build)
    assert run.values == [[0, 1, 2], [3, 4, 5], [6]]

    run = assert_same(
        lambda api: api.range_input_producer(7, num_epochs=1, shuffle=False).dequeue_many(3)
    )
    assert run.values == [[0, 1, 2], [3, 4, 5]]


def test_two_dequeues_of_one_producer_split_the_stream():
    def build(api):
        q = api.range_input_producer(6, num_epochs=1, shuffle=False)
        return [q.dequeue(), q.dequeue()]

    legacy, compat = differential(build)
    for run in (legacy, compat):
        seen = collections.Counter(x for step in run.values for x in step)
        assert seen == collections.Counter(range(6))


def test_a_producer_of_rows_is_read_in_the_sessions_thread_and_a_batcher_is_not():
    # A queue's dequeue ran in the session's thread; IteratorGetNext hands each read to a
    # tf.data thread and back (40-70 us a run). A producer of rows in order computes its
    # element in the reading thread anyway; a batcher runs functions, which must not hold
    # that thread.
    def read_op(tensor):
        op = tensor.op
        while op.type in ("IdentityN", "Identity", "Reshape"):
            op = op.inputs[0].op
        return op.type

    with tf.Graph().as_default():
        api = compat_api()
        index = api.range_input_producer(10, shuffle=False).dequeue()
        batch = api.batch([tf.strings.as_string(index)], 2)
        assert read_op(index) == "IteratorGetNextSync"
        assert read_op(batch) == "IteratorGetNext"
