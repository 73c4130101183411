"""Batch sizes and dequeue counts computed at run time (a fed placeholder, facenet's
`batch_size_placeholder`): each run takes that many examples, as legacy's dequeue took them.

Every scenario runs on TensorFlow's own queues and on compat_input with the same feeds; the
sizes asked for change from run to run.
"""

import pytest
import tensorflow as tf

import compat_input
from compat_input._src.batchers import legacy_fallback
from compat_input._src.runtime import pipeline as pipeline_lib
from helpers import assert_in_one_thread_order
from helpers import assert_same
from helpers import assert_same_examples
from helpers import batch_sizes
from helpers import compat_api
from helpers import legacy_api
from helpers import run_scenario

tf1 = tf.compat.v1


def _sizes(*sizes):
    """The feed of each step: the sizes in turn, again and again."""
    return lambda step: {"size:0": sizes[step % len(sizes)]}


def _counted(api, n=10):
    return api.range_input_producer(n, num_epochs=1, shuffle=False).dequeue()


def _size(default=None):
    if default is None:
        return tf1.placeholder(tf.int32, [], name="size")
    return tf1.placeholder_with_default(default, [], name="size")


@pytest.mark.parametrize("allow_smaller", [True, False])
def test_each_run_takes_the_fed_number_of_examples_in_legacy_order(allow_smaller):
    def build(api):
        x = _counted(api)
        return api.batch(
            [x, tf.strings.as_string(x)], _size(), allow_smaller_final_batch=allow_smaller
        )

    before = len(legacy_fallback.kept)
    # 3 + 4 + 5 asks for two more than the ten there are: a short batch, or the end.
    compat = assert_same(build, feed=_sizes(3, 4, 5))
    assert batch_sizes(compat) == ([3, 4, 3] if allow_smaller else [3, 4])
    assert legacy_fallback.kept[before:] == []


def test_a_size_that_divides_the_input_ends_where_legacy_ends():
    def build(api):
        return api.batch([_counted(api)], _size(), allow_smaller_final_batch=False)

    compat = assert_same(build, feed=_sizes(2, 3))
    assert batch_sizes(compat) == [2, 3, 2, 3]


def test_a_placeholder_with_default_is_fed_on_some_runs_only():
    def build(api):
        return api.batch([_counted(api, 20)], _size(default=3), allow_smaller_final_batch=True)

    compat = assert_same(build, feed=lambda step: {"size:0": 5} if step % 2 else {})
    assert batch_sizes(compat) == [3, 5, 3, 5, 3, 1]


@pytest.mark.parametrize("threads", [1, 2])
def test_dynamic_padding_with_a_fed_size_pads_each_run_to_its_longest_as_legacy(threads):
    def build(api, threads):
        x = _counted(api, 11)
        # Rows of 1..4 values: a block's longest is often not the longest a run takes.
        row = tf.range(x % 4 + 1) + x
        return api.batch(
            [row, tf.strings.as_string(row), x],
            _size(),
            num_threads=threads,
            dynamic_pad=True,
            allow_smaller_final_batch=True,
        )

    before = len(legacy_fallback.kept)
    # Legacy's two threads order examples by thread timing (CI saw it differ); compat_input
    # keeps one thread's order, which legacy's one thread shows exactly.
    _, compat = assert_in_one_thread_order(build, threads=threads, feed=_sizes(2, 3, 1))
    assert batch_sizes(compat) == [2, 3, 1, 2, 3]
    assert [len(step[0][0]) for step in compat.values] == [2, 4, 2, 4, 3]
    assert legacy_fallback.kept[before:] == []


def test_a_missing_feed_fails_naming_the_placeholder_as_legacy_failed():
    def build(api):
        return api.batch([_counted(api)], _size())

    compat = assert_same(build)
    assert compat.error is tf.errors.InvalidArgumentError
    assert "size" in compat.error_message


def test_maybe_batch_keeps_what_keep_input_keeps_per_fed_size():
    def build(api):
        x = _counted(api, 20)
        return api.maybe_batch([x], tf.equal(x % 3, 0), _size(), allow_smaller_final_batch=True)

    compat = assert_same(build, feed=_sizes(2, 1))
    assert compat.values[0] == [0, 3]


def test_shuffle_batch_with_a_fed_size_delivers_every_example_once():
    def build(api):
        x = _counted(api, 30)
        return api.shuffle_batch(
            [x, x * 10],
            _size(),
            capacity=20,
            min_after_dequeue=5,
            seed=4,
            allow_smaller_final_batch=True,
        )

    legacy, compat = assert_same_examples(build, epoch_size=30, feed=_sizes(4, 7))
    assert sorted(e for e in batch_sizes(compat)) == sorted(batch_sizes(legacy))


def test_batch_join_of_enqueue_many_lists_with_a_fed_size_as_facenet_reads_it():
    # facenet: several preprocessing lists, each a batch of examples, joined with
    # enqueue_many=True and read with batch_size_placeholder, the last batch short.
    def build(api):
        lists = []
        for k in range(2):
            x = api.range_input_producer(12, num_epochs=1, shuffle=False).dequeue()
            lists.append([tf.stack([x, x + 100]) + 1000 * k, tf.stack([x, x]) * 0 + k])
        return api.batch_join(
            lists, _size(), shapes=[[], []], enqueue_many=True, allow_smaller_final_batch=True
        )

    assert_same_examples(build, exact_sizes=False, feed=_sizes(5, 9))


def _fed_from_python(api) -> list:
    """facenet's input: a queue the program fills from Python, a few examples at a time,
    batched with a fed size; each run's batch, legacy's dequeue returning what it held."""
    with tf.Graph().as_default():
        paths = tf1.placeholder(tf.int32, [None])
        queue = api.FIFOQueue(100, [tf.int32], shapes=[[]])
        enqueue = queue.enqueue_many([paths])
        batch = api.batch([queue.dequeue() * 10], _size())
        got = []
        with tf1.Session(config=tf1.ConfigProto(operation_timeout_in_ms=20000)) as sess:
            coord = tf1.train.Coordinator()
            threads = tf1.train.start_queue_runners(sess, coord)
            for epoch in range(2):
                sess.run(enqueue, {paths: list(range(4 * epoch, 4 * epoch + 4))})
                got += [sess.run(batch, {"size:0": 2}).tolist() for _ in range(2)]
            coord.request_stop()
            sess.run(queue.close(cancel_pending_enqueues=True))
            coord.join(threads)
        return got


def test_a_fed_size_over_a_queue_filled_from_python_takes_what_it_holds():
    # Blocks of examples made ahead would wait for examples the program has not given yet.
    legacy = _fed_from_python(legacy_api())
    assert _fed_from_python(compat_api()) == legacy == [[0, 10], [20, 30], [40, 50], [60, 70]]


def test_a_hand_built_queue_read_with_fed_counts_is_served():
    def build(api):
        queue = api.FIFOQueue(16, [tf.int32, tf.string], shapes=[[], []])
        x = _counted(api, 11)
        api.add_queue_runner(api.QueueRunner(queue, [queue.enqueue([x, tf.strings.as_string(x)])]))
        return queue.dequeue_up_to(_size())

    before, kept = len(pipeline_lib.built_pipelines), len(legacy_fallback.kept)
    compat = assert_same(build, feed=_sizes(4, 2))
    assert batch_sizes(compat) == [4, 2, 4, 1]
    assert len(pipeline_lib.built_pipelines) > before, "the queue was not served"
    assert legacy_fallback.kept[kept:] == []


def test_a_hand_built_queue_read_by_dequeue_many_with_a_fed_count_ends_as_legacy():
    def build(api):
        queue = api.FIFOQueue(16, [tf.int32], shapes=[[]])
        api.add_queue_runner(api.QueueRunner(queue, [queue.enqueue([_counted(api, 9)])]))
        return queue.dequeue_many(_size())

    compat = assert_same(build, feed=_sizes(2, 3))
    assert batch_sizes(compat) == [2, 3, 2]


def _padded_rows(ids: list) -> list:
    """Rows `range(x % 4 + 1) + x` of `ids`, zero-padded to the longest, as legacy pads."""
    longest = max(x % 4 + 1 for x in ids)
    return [[x + i if i <= x % 4 else 0 for i in range(longest)] for x in ids]


@pytest.mark.parametrize("padded", [False, True])
def test_the_position_of_a_fed_size_input_is_checkpointed(tmp_path, padded):
    def build():
        x = compat_input.range_input_producer(10, num_epochs=1, shuffle=False).dequeue()
        if padded:  # What a read leaves of a padded block is saved with its rows' shapes.
            return compat_input.batch(
                [tf.range(x % 4 + 1) + x], _size(), dynamic_pad=True, allow_smaller_final_batch=True
            )
        return compat_input.batch([x], _size(), allow_smaller_final_batch=True)

    path = str(tmp_path / "ckpt")
    with tf.Graph().as_default():
        batch = build()
        saver = tf1.train.Saver()
        with tf1.Session() as sess:
            sess.run([tf1.global_variables_initializer(), tf1.local_variables_initializer()])
            compat_input.start_queue_runners(sess)
            first = [sess.run(batch, {"size:0": 3}).tolist() for _ in range(2)]
            saver.save(sess, path)
    with tf.Graph().as_default():
        batch = build()
        saver = tf1.train.Saver()
        with tf1.Session() as sess:
            sess.run([tf1.global_variables_initializer(), tf1.local_variables_initializer()])
            saver.restore(sess, path)
            compat_input.start_queue_runners(sess)
            rest = [sess.run(batch, {"size:0": 3}).tolist() for _ in range(2)]
    expected = [[0, 1, 2], [3, 4, 5], [6, 7, 8], [9]]
    if padded:
        expected = [_padded_rows(ids) for ids in expected]
    assert first + rest == expected


def test_a_constant_tensor_size_still_batches_in_the_pipeline():
    # Only sizes known when the graph is built make whole batches ahead; the fed path is
    # for the rest (a planted PerRun for every size turns the static shape unknown).
    run = run_scenario(compat_api(), lambda api: api.batch([_counted(api)], tf.constant(5)))
    assert run.structure == [("tensor", "int32", [5])] or run.structure == (
        "tensor",
        "int32",
        [5],
    )
