"""Queues a program builds itself and fills with its own QueueRunner, served by tf.data.

Each scenario is a hand-built queue as research code builds one (resnet's cifar_input,
inception's batch_inputs, im2txt's prefetch_input_data, tf_slim's prefetch_queue), run on
TensorFlow's queues and on compat_input: exactly the same where legacy is deterministic
(one runner thread, a FIFO queue), the same whole examples per epoch where it shuffles.
"""

import collections
import os
import subprocess
import sys
import time

import numpy as np
import pytest
import tensorflow as tf

import compat_input
from compat_input._src.batchers import legacy_fallback
from helpers import assert_same
from helpers import assert_same_examples
from helpers import compat_api
from helpers import differential
from helpers import drain
from helpers import example
from helpers import examples
from helpers import legacy_api
from helpers import one_world
from helpers import run_scenario
from helpers import started
from helpers import stop
from helpers import write_tfrecords

tf1 = tf.compat.v1

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _example(api, limit=12, epochs=2):
    """One example per step of a producer: an image-like float row and its label."""
    index = api.range_input_producer(limit, num_epochs=epochs, shuffle=False).dequeue()
    image = tf.cast(tf.fill([3], index), tf.float32) / 7.0 + 0.5
    return image, index


def _served(queue) -> bool:
    return getattr(queue, "_served", None) is not None


def test_fifo_queue_one_thread_dequeue_is_legacy_exactly():
    seen = []

    def build(api):
        image, label = _example(api)
        q = api.FIFOQueue(8, [tf.float32, tf.int32], shapes=[[3], []])
        api.add_queue_runner(api.QueueRunner(q, [q.enqueue([image, label])]))
        out = q.dequeue()
        seen.append(q)
        return out

    compat = assert_same(build)
    assert len(compat.values) == 24
    assert _served(seen[-1]) and not _served(seen[0])


@pytest.mark.parametrize("up_to", [False, True])
def test_fifo_queue_dequeue_many_and_up_to_end_as_legacy(up_to):
    def build(api):
        image, label = _example(api, limit=11, epochs=1)
        q = api.FIFOQueue(8, [tf.float32, tf.int32], shapes=[[3], []], names=["x", "y"])
        api.add_queue_runner(api.QueueRunner(q, [q.enqueue({"x": image, "y": label})]))
        return q.dequeue_up_to(4) if up_to else q.dequeue_many(4)

    compat = assert_same(build)
    # 11 examples: two full batches, then legacy's last 3 (up_to) or nothing (many).
    assert [len(v["y"]) for v in compat.values] == ([4, 4, 3] if up_to else [4, 4])
    assert compat.error is tf.errors.OutOfRangeError


def test_enqueue_many_is_unbatched_as_legacy():
    def build(api):
        label = api.range_input_producer(5, num_epochs=1, shuffle=False).dequeue()
        rows = tf.stack([label * 10, label * 10 + 1])
        q = api.FIFOQueue(16, [tf.int32], shapes=[[]])
        api.add_queue_runner(api.QueueRunner(q, [q.enqueue_many([rows])]))
        return q.dequeue_many(3)

    compat = assert_same(build)
    assert sum(len(v) for v in compat.values) == 9  # 10 made, the last batch short.


def test_padding_fifo_queue_pads_each_batch_as_legacy():
    def build(api):
        n = api.range_input_producer(7, num_epochs=1, shuffle=False).dequeue()
        q = api.PaddingFIFOQueue(8, [tf.int32, tf.int32], shapes=[[None], []])
        api.add_queue_runner(api.QueueRunner(q, [q.enqueue([tf.range(n) + 1, n])]))
        return q.dequeue_up_to(3)

    compat = assert_same(build)
    assert [len(v[0][0]) for v in compat.values] == [2, 5, 6]  # Padded to each batch's longest.


def test_random_shuffle_queue_many_threads_same_examples_per_epoch():
    def build(api):
        image, label = _example(api, limit=20, epochs=3)
        q = api.RandomShuffleQueue(16, 4, [tf.float32, tf.int32], shapes=[[3], []])
        api.add_queue_runner(api.QueueRunner(q, [q.enqueue([image, label])] * 4))
        return q.dequeue_many(5)

    # The queue keeps up to 16 examples across epochs' edges: compare over the whole run.
    legacy, compat = assert_same_examples(build)
    assert len(examples(compat)) == 60


def test_one_enqueue_op_per_thread_joined_like_batch_join():
    # Inception's batch_inputs: one reader and one enqueue op per thread, one queue.
    def build(api):
        producer = api.range_input_producer(10, num_epochs=1, shuffle=False)
        ops = []
        q = api.FIFOQueue(32, [tf.int32, tf.string], shapes=[[], []])
        for tag in ("a", "b"):
            ops.append(q.enqueue([producer.dequeue() * 2, tf.constant(tag)]))
        api.add_queue_runner(api.QueueRunner(q, ops))
        return q.dequeue()

    legacy, compat = differential(build)
    assert compat.error is legacy.error is tf.errors.OutOfRangeError
    # Which thread's op took which item was legacy's timing: the items, each once, and
    # both ops took their turns.
    assert sorted(v[0] for v in compat.values) == sorted(v[0] for v in legacy.values)
    assert sorted(v[0] for v in compat.values) == list(range(0, 20, 2))
    assert {v[1] for v in compat.values} == {b"a", b"b"}


def test_seeded_random_shuffle_queue_draws_the_seed_legacy_draws_and_repeats():
    orders = []

    def build(api):
        tf1.set_random_seed(3)
        image, label = _example(api, limit=30, epochs=1)
        q = api.RandomShuffleQueue(20, 10, [tf.float32, tf.int32], shapes=[[3], []])
        api.add_queue_runner(api.QueueRunner(q, [q.enqueue([image, label])] * 3))
        batch = q.dequeue_many(6)
        # The next op seed after the queue's: a second draw by the served queue would shift it.
        return batch, tf1.random_uniform([], seed=None)

    for _ in range(2):
        orders.append(run_scenario(compat_api(), build).values)
    legacy = run_scenario(legacy_api(), build).values
    # Seeded, the order is the same in every run (legacy's depended on its threads)...
    assert orders[0] == orders[1]
    # ...and the program's own random op after the queue gets legacy's seed.
    assert [v[1] for v in orders[0]] == [v[1] for v in legacy]
    got = collections.Counter(x for v in orders[0] for x in v[0][1])
    assert got == collections.Counter(x for v in legacy for x in v[0][1])


def test_two_dequeues_in_one_run_take_two_elements_as_legacy():
    def build(api):
        image, label = _example(api, limit=8, epochs=1)
        q = api.FIFOQueue(8, [tf.float32, tf.int32], shapes=[[3], []])
        api.add_queue_runner(api.QueueRunner(q, [q.enqueue([image, label])]))
        return [q.dequeue_many(2)[1], q.dequeue_many(2)[1]]

    legacy, compat = differential(build)
    # Legacy's two dequeues race for the queue; each run takes 4 examples, all told the same.
    assert sorted(np.ravel(compat.values).tolist()) == sorted(np.ravel(legacy.values).tolist())
    assert len(compat.values) == len(legacy.values) == 2


def test_queue_fed_from_python_is_left_to_tensorflow_and_said():
    for api in (legacy_api(), compat_api()):
        before = len(legacy_fallback.kept)
        with tf.Graph().as_default():
            value = tf1.placeholder(tf.int32, [])
            q = api.FIFOQueue(4, [tf.int32], shapes=[[]], name="fed")
            enqueue = q.enqueue([value])
            out = q.dequeue()
            with tf1.Session() as sess:
                for v in (3, 4):
                    sess.run(enqueue, {value: v})
                assert [sess.run(out), sess.run(out)] == [3, 4]
        if api.name == "compat":
            assert not _served(q)
            assert "FIFOQueue 'fed': no QueueRunner of ours fed it" in legacy_fallback.kept[before]


@pytest.mark.parametrize("read", ["dequeue", "dequeue_many", "dequeue_up_to"])
def test_a_runner_made_after_the_dequeue_serves_the_queue_as_legacy_fills_it(read):
    # TensorFlow's threading guide and CS 20SI build the queue, the dequeue and the model,
    # then the QueueRunner. The model's op after the dequeue draws legacy's seed.
    seen = []

    def build(api):
        tf1.set_random_seed(5)
        image, label = _example(api, limit=32, epochs=1)
        q = api.RandomShuffleQueue(20, 6, [tf.float32, tf.int32], shapes=[[3], []], name="q")
        enqueue = q.enqueue([image, label])
        batch = q.dequeue() if read == "dequeue" else getattr(q, read)(4)
        model = tf1.random_uniform([])  # The model's initializer, say.
        api.add_queue_runner(api.QueueRunner(q, [enqueue] * 3))
        seen.append(q)
        return {"batch": batch, "model": model, "after": tf1.random_uniform([])}

    before = len(legacy_fallback.kept)
    legacy, compat = differential(build)
    assert _served(seen[-1])
    assert not [line for line in legacy_fallback.kept[before:] if "'q'" in line]

    def whole(run):  # Each example whole: its image with its label.
        pairs = []
        for step in run.values:
            images, labels = step["batch"]
            if read == "dequeue":
                images, labels = [images], [labels]
            pairs += [(tuple(i), int(v)) for i, v in zip(np.asarray(images).tolist(), labels)]
        return pairs

    assert collections.Counter(whole(compat)) == collections.Counter(whole(legacy))
    assert len(whole(compat)) == 32
    assert (compat.error, compat.after_end) == (legacy.error, legacy.after_end)
    draws = [[step["model"], step["after"]] for step in legacy.values]
    assert [[step["model"], step["after"]] for step in compat.values] == draws


def test_a_read_made_before_its_runner_keeps_its_name_fetch_and_feed():
    before = len(legacy_fallback.kept)
    with tf.Graph().as_default() as graph:
        x = compat_input.range_input_producer(100, shuffle=False).dequeue()
        q = compat_input.FIFOQueue(10, [tf.int32], shapes=[[]])
        enqueue = q.enqueue([x])
        batch = q.dequeue_many(3)
        doubled = batch * 2
        other = q.dequeue()  # A second read before the runner: said once, taken back once.
        assert len(legacy_fallback.kept) == before + 1
        runner = compat_input.QueueRunner(q, [enqueue])
        assert len(legacy_fallback.kept) == before
        assert _served(q) and batch.name == "fifo_queue_DequeueMany:0"
        assert other.name == "fifo_queue_Dequeue:0"
        with tf1.Session() as sess:
            assert runner.create_threads(sess, start=True) == []
            assert sess.run(batch).tolist() == [0, 1, 2]
            assert sess.run(doubled).tolist() == [6, 8, 10]
            assert sess.run(graph.get_tensor_by_name(batch.name)).tolist() == [6, 7, 8]
            assert sess.run(doubled, {batch: [1, 1, 1]}).tolist() == [2, 2, 2]


def test_a_queue_whose_late_runner_cannot_be_served_is_fed_by_its_threads_as_legacy():
    # Its runner runs an op that is no enqueue into it: TensorFlow's queue and threads.
    before = len(legacy_fallback.kept)
    with tf.Graph().as_default():
        q = compat_input.FIFOQueue(10, [tf.int32], shapes=[[]], name="mixed")
        counter = tf1.Variable(0, use_resource=True)
        out = q.dequeue()
        runner = compat_input.QueueRunner(q, [q.enqueue([counter.assign_add(1)]), tf.no_op()])
        assert not _served(q)
        said = legacy_fallback.kept[before:]
        assert len(said) == 1 and "its runner runs NoOp op 'NoOp'" in said[0]
        with tf1.Session() as sess:
            sess.run(counter.initializer)
            coord = tf1.train.Coordinator()
            threads = runner.create_threads(sess, coord=coord, start=True)
            assert sorted(sess.run(out) for _ in range(3)) == [1, 2, 3]
            coord.request_stop()
            sess.run(q.close(cancel_pending_enqueues=True))
            coord.join(threads, stop_grace_period_secs=5)


@pytest.mark.parametrize("v2", [False, True])
def test_a_queue_read_in_a_cond_before_its_runner_stays_tensorflows_and_reads_as_legacy(v2):
    # A served read would run on both paths of the cond (v1), or live in another graph
    # than the branch's (v2): the queue stays TensorFlow's, fed by the runner's threads.
    seen = []
    was_v2 = tf1.control_flow_v2_enabled()

    def build(api):
        image, label = _example(api, limit=12, epochs=1)
        q = api.FIFOQueue(12, [tf.float32, tf.int32], shapes=[[3], []], name="in_cond")
        enqueue = q.enqueue([image, label])
        read = tf.cond(tf.constant(True), lambda: q.dequeue()[1], lambda: tf.constant(-1))
        api.add_queue_runner(api.QueueRunner(q, [enqueue]))
        seen.append(q)
        return read

    before = len(legacy_fallback.kept)
    (tf1.enable_control_flow_v2 if v2 else tf1.disable_control_flow_v2)()
    try:
        compat = assert_same(build)
    finally:
        (tf1.enable_control_flow_v2 if was_v2 else tf1.disable_control_flow_v2)()
    assert not _served(seen[-1]) and len(compat.values) == 12
    said = [line for line in legacy_fallback.kept[before:] if "'in_cond'" in line]
    assert len(said) == 1 and "read inside a tf.cond or while_loop before its" in said[0]


def _read_in_turn(api, first: str, feed_size: bool) -> list:
    """A FIFO queue of 0..10 (one runner thread: legacy's order is exact) read three ways
    in turn, the count read first made first; each run's result or "end"."""
    with tf.Graph().as_default():
        index = api.range_input_producer(11, num_epochs=1, shuffle=False).dequeue()
        q = api.FIFOQueue(6, [tf.int32, tf.string], shapes=[[], []])
        api.add_queue_runner(api.QueueRunner(q, [q.enqueue([index, tf.strings.as_string(index)])]))
        size = tf1.placeholder(tf.int32, [], name="size") if feed_size else 3
        many = q.dequeue_many(size) if first == "many" else None
        one = q.dequeue()
        up_to = q.dequeue_up_to(2)
        many = q.dequeue_many(size) if many is None else many
        feed = {"size:0": 3} if feed_size else None
        results = []
        with tf1.Session() as sess:
            sess.run(tf1.local_variables_initializer())
            coord, threads = started(sess)
            for read in [many, one, up_to, one, many] * 3:
                try:
                    got = sess.run(read, feed)
                    results.append([np.asarray(c).tolist() for c in got])
                except tf.errors.OutOfRangeError:
                    results.append("end")
            stop(coord, threads)
        return results


@pytest.mark.parametrize("feed_size", [False, True], ids=["constant", "fed"])
@pytest.mark.parametrize("first", ["many", "one"])
def test_a_served_queue_read_three_ways_gives_legacy_order(first, feed_size):
    legacy = _read_in_turn(legacy_api(), first, feed_size)
    compat = _read_in_turn(compat_api(), first, feed_size)
    assert compat == legacy
    # The end is reached with examples left for smaller reads, as legacy left them.
    assert "end" in legacy and legacy[-1] == "end"


def _padding_queue_read_both_ways(api, first: str) -> list:
    """A PaddingFIFOQueue of rows of 1..4 values and their strings (one runner thread)
    read by `first` (made first, so its kind of read serves it), then by the others,
    dequeue() between padded dequeue_many / dequeue_up_to; each run's result."""
    with tf.Graph().as_default():
        index = api.range_input_producer(11, num_epochs=1, shuffle=False).dequeue()
        q = api.PaddingFIFOQueue(6, [tf.int32, tf.string], shapes=[[None], [None]])
        row = tf.range(index % 4 + 1) + index
        api.add_queue_runner(api.QueueRunner(q, [q.enqueue([row, tf.strings.as_string(row)])]))
        make = {
            "one": q.dequeue,
            "many": lambda: q.dequeue_many(3),
            "up_to": lambda: q.dequeue_up_to(2),
        }
        reads = {first: make.pop(first)()}
        reads.update({kind: read() for kind, read in make.items()})
        results = []
        with tf1.Session() as sess:
            sess.run(tf1.local_variables_initializer())
            coord, threads = started(sess)
            for kind in ["one", "many", "up_to", "many", "one", "up_to", "up_to"]:
                try:
                    results.append([np.asarray(c).tolist() for c in sess.run(reads[kind])])
                except tf.errors.OutOfRangeError:
                    results.append("end")
            stop(coord, threads)
        return results


@pytest.mark.parametrize("first", ["one", "many", "up_to"])
def test_a_padding_queue_read_one_at_a_time_and_by_counts_pads_as_legacy(first):
    legacy = _padding_queue_read_both_ways(legacy_api(), first)
    assert _padding_queue_read_both_ways(compat_api(), first) == legacy
    # Rows of several lengths padded with zeros and empty strings, one example of its own
    # length between them (its row unpadded: 2 values), then the end.
    assert [1, 2, 0, 0] in legacy[1][0] and b"" in legacy[1][1][0] and legacy[-1] == "end"
    assert legacy[4][0] == [9, 10]


def test_served_queue_builds_no_dequeue_op_and_no_runner_thread():
    with tf.Graph().as_default() as graph:
        q = compat_input.RandomShuffleQueue(8, 2, [tf.int32], shapes=[[]])
        runner = compat_input.QueueRunner(q, [q.enqueue([tf.constant(1)])] * 2)
        compat_input.add_queue_runner(runner)
        early = q.size()  # Made before the queue is served, as tf_slim's summary is.
        out = q.dequeue_many(3)
        assert not [op for op in graph.get_operations() if op.type.startswith("QueueDequeue")]
        with tf1.Session() as sess:
            assert runner.create_threads(sess, start=True) == []
            assert sess.run(out).tolist() == [1, 1, 1]
            # tf.data fills what it holds ahead, as its runners filled the queue: a "wait
            # until full" loop ends (its size is measured: tests/test_fill_levels.py).
            deadline = time.monotonic() + 10
            while sess.run(q.size()) < 8 and time.monotonic() < deadline:
                time.sleep(0.01)
            assert sess.run(q.size()) == sess.run(early) == 8


def _resnet_style(limit=40, epochs=2):
    """A RandomShuffleQueue fed by 4 runner threads of one enqueue op, read in batches."""
    x = compat_input.range_input_producer(limit, num_epochs=epochs, seed=5).dequeue()
    q = compat_input.RandomShuffleQueue(24, 8, [tf.int32], shapes=[[]], seed=7)
    compat_input.add_queue_runner(compat_input.QueueRunner(q, [q.enqueue([x * 3])] * 4))
    return q.dequeue_up_to(4)


def test_a_served_queue_resumes_where_the_checkpoint_was_taken(tmp_path):
    with tf.Graph().as_default():
        batch = _resnet_style()
        with tf1.Session() as sess:
            compat_input.start_queue_runners(sess)
            full = drain(sess, batch)
    path = str(tmp_path / "model.ckpt")
    with tf.Graph().as_default():
        batch = _resnet_style()
        tf1.train.get_or_create_global_step()
        saver = tf1.train.Saver()
        with tf1.Session() as sess:
            sess.run(tf1.global_variables_initializer())
            compat_input.start_queue_runners(sess)
            before = [sess.run(batch).tolist() for _ in range(5)]
            saver.save(sess, path)
    with tf.Graph().as_default():
        batch = _resnet_style()
        tf1.train.get_or_create_global_step()
        saver = tf1.train.Saver()
        with tf1.Session() as sess:
            saver.restore(sess, path)
            compat_input.start_queue_runners(sess)  # Must not rewind the restored input.
            after = drain(sess, batch)
    assert before + after == full
    assert collections.Counter(x for b in full for x in b) == {3 * i: 2 for i in range(40)}


def test_a_finite_validation_queue_built_by_hand_iterates_whole_each_time():
    with tf.Graph().as_default():
        v = compat_input.range_input_producer(10, num_epochs=1, shuffle=False).dequeue()
        q = compat_input.FIFOQueue(8, [tf.int32], shapes=[[]])
        compat_input.add_queue_runner(compat_input.QueueRunner(q, [q.enqueue([v])]))
        val = q.dequeue_up_to(4)
        with tf1.Session() as sess:
            sess.run(tf1.local_variables_initializer())
            compat_input.start_queue_runners(sess)
            for _ in range(3):
                passes = [b.tolist() for b in compat_input.iterate(sess, val)]
                assert passes == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]


def test_a_served_queue_never_started_fails_with_the_fix_where_legacy_hung():
    with tf.Graph().as_default():
        batch = _resnet_style()
        config = tf1.ConfigProto(operation_timeout_in_ms=20000)
        with tf1.Session(config=config) as sess:
            with pytest.raises(tf.errors.OpError, match="start_queue_runners"):
                sess.run(batch)


def test_a_bad_record_behind_a_served_queue_is_named_as_legacy_fails(tmp_path):
    path = tmp_path / "numbers.csv"
    path.write_text("1\n2\nthree\n4\n")

    def build(api):
        files = api.string_input_producer([str(path)], num_epochs=1, shuffle=False)
        _, line = api.TextLineReader().read(files)
        (number,) = tf1.decode_csv(line, [[0]])
        q = api.FIFOQueue(4, [tf.int32], shapes=[[]])
        api.add_queue_runner(api.QueueRunner(q, [q.enqueue([number])]))
        return q.dequeue()

    legacy, compat = differential(build, install=True)
    # Legacy delivered the records before the bad one, then its runner closed the queue.
    assert compat.values == legacy.values == [1, 2]
    assert compat.error is not None
    assert "numbers.csv:3" in compat.error_message


def test_inception_and_im2txt_style_reader_queue_then_preprocessing_threads(tmp_path):
    # Readers enqueue serialized records into one shuffling queue (one enqueue op each); its
    # dequeue() is parsed and preprocessed by several threads of batch_join, dynamic_pad on.
    paths = [
        write_tfrecords(
            str(tmp_path / f"shard{s}.tfrecord"),
            [example(label=10 * s + i, ids=list(range(1 + (i + s) % 4))) for i in range(6)],
        )
        for s in range(3)
    ]

    def build(api):
        files = api.string_input_producer(paths, num_epochs=2, shuffle=False)
        queue = api.RandomShuffleQueue(12, 4, [tf.string], shapes=[[]])
        enqueues = [queue.enqueue([api.TFRecordReader().read(files)[1]]) for _ in range(2)]
        api.add_queue_runner(api.QueueRunner(queue, enqueues))
        serialized = queue.dequeue()
        lists = []
        for _ in range(3):
            features = tf1.parse_single_example(
                serialized,
                {
                    "label": tf1.FixedLenFeature([], tf.int64),
                    "ids": tf1.VarLenFeature(tf.int64),
                },
            )
            ids = tf.sparse.to_dense(features["ids"]) * 2
            lists.append([features["label"], ids])
        return api.batch_join(lists, 5, dynamic_pad=True, allow_smaller_final_batch=True)

    def unpadded(run):
        # An example is its label and its ids (their count follows from the label); the
        # padding after them, zeros, depends on the batch it fell in.
        out = collections.Counter()
        for labels, ids in run.values:
            for label, row in zip(labels, ids):
                n = 1 + (label % 10 + label // 10) % 4
                assert not any(row[n:])
                out[(label, tuple(row[:n]))] += 1
        return out

    legacy, compat = differential(build)
    assert compat.error is legacy.error is tf.errors.OutOfRangeError
    assert sum(unpadded(compat).values()) == 36
    assert unpadded(compat) == unpadded(legacy)


def test_a_served_queue_exported_and_imported_reads_on(tmp_path):
    path = str(tmp_path / "model.meta")
    with tf.Graph().as_default():
        batch = _resnet_style(limit=12, epochs=1)
        tf1.add_to_collection("batch", batch)
        tf1.train.export_meta_graph(path)
    # Imported into a fresh graph, with TensorFlow's own start_queue_runners.
    with tf.Graph().as_default():
        tf1.train.import_meta_graph(path)
        (batch,) = tf1.get_collection("batch")
        with tf1.Session() as sess:
            coord = tf1.train.Coordinator()
            threads = tf1.train.start_queue_runners(sess, coord)
            # Time for the runner threads before the first read: a thread that ran the
            # queue's enqueue op would take the producer's examples within it. (Some of
            # the threads run until the coordinator stops them: a bound, not a join.)
            deadline = time.monotonic() + 3
            for thread in threads:
                thread.join(timeout=max(0.0, deadline - time.monotonic()))
            got = drain(sess, batch)
    assert sorted(x for b in got for x in b) == [3 * i for i in range(12)]


@pytest.mark.parametrize("cancel", [False, True])
def test_closing_a_served_queue_ends_its_input_after_what_it_holds_as_legacy(cancel):
    outcomes = {}
    for api in (legacy_api(), compat_api()):
        with tf.Graph().as_default():
            x = api.range_input_producer(1000, num_epochs=1, shuffle=False).dequeue()
            q = api.FIFOQueue(4, [tf.int32], shapes=[[]])
            api.add_queue_runner(api.QueueRunner(q, [q.enqueue([x])]))
            batch = q.dequeue_up_to(3)
            close, closed = q.close(cancel_pending_enqueues=cancel), q.is_closed()
            config = tf1.ConfigProto(operation_timeout_in_ms=10000)
            with tf1.Session(config=config) as sess:
                sess.run(tf1.local_variables_initializer())
                coord = tf1.train.Coordinator()
                threads = api.start_queue_runners(sess, coord)
                first = sess.run(batch).tolist()
                was = sess.run(closed)
                try:
                    sess.run(close)
                except (tf.errors.DeadlineExceededError, tf.errors.CancelledError):
                    # Legacy's close, its runner's enqueue waiting on the full queue, now
                    # and then never returns (without cancel_pending_enqueues: 2 runs of 5
                    # here) or fails with the enqueue's CancelledError. Ours always closes.
                    assert api.name == "legacy"
                    outcomes[api.name] = None
                    coord.request_stop()
                    continue
                rest = drain(sess, batch)
                coord.request_stop()
                try:
                    coord.join(threads)
                except (tf.errors.CancelledError, tf.errors.DeadlineExceededError):
                    # Legacy's runner found its queue closed under it (or, without
                    # cancel_pending_enqueues, waited on it past the timeout): said here.
                    assert api.name == "legacy"
                outcomes[api.name] = (first, was, sess.run(closed), rest)
    compat = outcomes["compat"]
    assert compat[:3] == ([0, 1, 2], False, True)
    # What was made ahead when it closed still comes out, in order, then the input ends:
    # legacy's queue held up to its capacity, ours what tf.data had made ahead.
    for outcome in (outcomes["legacy"], compat):
        if outcome is not None:
            assert outcome[:3] == compat[:3]
            flat = [x for b in outcome[3] for x in b]
            assert flat == list(range(3, 3 + len(flat))) and len(outcome[3]) < 100


def test_magenta_style_padded_sequences_from_four_enqueue_threads(tmp_path):
    # magenta's get_padded_batch: sequence examples of their own lengths, a PaddingFIFOQueue
    # of (None, depth) inputs and labels with the length, four threads, dequeue_many.
    def sequence(n, start):
        steps = [
            tf.train.Feature(float_list=tf.train.FloatList(value=[start + t, -start - t]))
            for t in range(n)
        ]
        lists = tf.train.FeatureLists(feature_list={"inputs": tf.train.FeatureList(feature=steps)})
        return tf.train.SequenceExample(feature_lists=lists).SerializeToString()

    path = write_tfrecords(
        str(tmp_path / "seq.tfrecord"), [sequence(1 + i % 5, i) for i in range(20)]
    )

    def build(api):
        files = api.string_input_producer([path], num_epochs=1, shuffle=False)
        _, serialized = api.TFRecordReader().read(files)
        _, steps = tf1.parse_single_sequence_example(
            serialized, sequence_features={"inputs": tf1.FixedLenSequenceFeature([2], tf.float32)}
        )
        inputs = steps["inputs"]
        q = api.PaddingFIFOQueue(100, [tf.float32, tf.int32], shapes=[(None, 2), ()])
        enqueue = q.enqueue([inputs, tf.shape(inputs)[0]])
        api.add_queue_runner(api.QueueRunner(q, [enqueue] * 4))
        return q.dequeue_many(4)

    def unpadded(run):
        return collections.Counter(
            (n, tuple(map(tuple, rows[:n])))
            for inputs, lengths in run.values
            for rows, n in zip(inputs, lengths)
        )

    legacy, compat = differential(build)
    assert compat.error is legacy.error is tf.errors.OutOfRangeError
    assert len(compat.values) == len(legacy.values) == 5
    assert unpadded(compat) == unpadded(legacy)
    # Each batch is padded to its longest sequence, with zeros.
    for inputs, lengths in compat.values:
        assert len(inputs[0]) == max(lengths)
        assert all(not any(map(any, rows[n:])) for rows, n in zip(inputs, lengths))


_FED_FROM_PYTHON = """
import numpy as np
import tensorflow as tf
queue = tf.FIFOQueue(100, [tf.int32], shapes=[(1,)])
fed = tf.placeholder(tf.int32, [None, 1])
enqueue = queue.enqueue_many([fed])
x = queue.dequeue()
image = tf.cast(tf.fill([4, 4, 3], x[0]), tf.float32)
image = tf.cond(tf.equal(x[0] % 2, 1), lambda: image * 2.0, lambda: tf.identity(image))
batch = tf.train.batch_join([[tf.expand_dims(tf.reduce_sum(image), 0)]], 2, shapes=[()],
                            enqueue_many=True)
with tf.Session() as sess:
    tf.train.start_queue_runners(sess)
    sess.run(enqueue, {fed: np.arange(6)[:, None]})
    print(sess.run(batch), sess.run(batch))
"""


@one_world
def test_a_session_closes_cleanly_while_its_pipeline_waits_on_a_queue_fed_from_python(tmp_path):
    # Fed 6, read 4: the pipeline reads ahead and waits in the dequeue as the session
    # closes. TensorFlow crashed there (exit status 139) where legacy ended with 0.
    script = tmp_path / "fed.py"
    script.write_text(_FED_FROM_PYTHON)
    runs = {}
    for side in ("--legacy", None):
        command = [sys.executable, "-m", "compat_input._src.commands.cli", "run"]
        done = subprocess.run(
            command + ([side] if side else []) + [str(script)],
            capture_output=True,
            text=True,
            timeout=300,
            env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"),
        )
        runs[side] = (done.returncode, done.stdout)
    # The same program migrated (compat_input's names, no install(): nothing wraps
    # Session.close for every session), run with plain python.
    from compat_input_tools import codemod

    migrated = tmp_path / "migrated.py"
    migrated.write_text(codemod.migrate_source(_FED_FROM_PYTHON).code)
    done = subprocess.run(
        [sys.executable, str(migrated)],
        capture_output=True,
        text=True,
        timeout=300,
        env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", PYTHONPATH=ROOT),
    )
    runs["migrated"] = (done.returncode, done.stdout)
    assert runs[None] == runs["--legacy"] == runs["migrated"]
    assert runs[None][0] == 0 and runs[None][1].strip()


@pytest.mark.parametrize("count", ["constant", "fed"])
def test_a_queue_read_by_dequeue_first_is_served_to_counted_reads_after(count):
    # tf_slim's prefetch_queue style: one place takes examples, another takes batches.
    def build(api):
        queue = api.FIFOQueue(32, [tf.int32, tf.string], shapes=[[], []])
        x = api.range_input_producer(11, num_epochs=1, shuffle=False).dequeue()
        api.add_queue_runner(api.QueueRunner(queue, [queue.enqueue([x, tf.strings.as_string(x)])]))
        queue.dequeue()  # Built first, never run.
        if count == "constant":
            return queue.dequeue_many(3)
        return queue.dequeue_up_to(tf.compat.v1.placeholder(tf.int32, [], name="size"))

    before = len(legacy_fallback.kept)
    feed = None if count == "constant" else (lambda step: {"size:0": 4})
    compat = assert_same(build, feed=feed)
    assert len(compat.values) == 3
    assert legacy_fallback.kept[before:] == []
