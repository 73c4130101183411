"""tf.contrib.training's queue batchers, served by tf.data under `tf.contrib.training`.

TensorFlow 1.x's own tests of them (contrib/training/python/training/bucket_ops_test.py,
sampling_ops_test.py, sampling_ops_threading_test.py) are the contract: each scenario is
written again here and run on what `install()` serves as `tf.contrib.training`, with the
same inputs and assertions. Beyond them: one-thread order against a bucketing written here
from contrib's description, the checkpoint position, the end of the input, and seeded
sampling against the legacy queue batchers contrib composed (same numbers).
"""

import collections
import random

import numpy as np
import pytest
import tensorflow as tf

import compat_input
from compat_input._src.batchers import sampling
from helpers import started
from helpers import stop

tf1 = tf.compat.v1


# -- bucket (bucket_ops_test.py's BucketTest) ------------------------------------------------


class _FedInput:
    """bucket_ops_test's input: a padding queue fed from Python (capacity 5000, so every
    example goes in before the runners start), and a constant SparseTensor."""

    def __init__(self):
        self.scalar_feed = tf1.placeholder(tf.int32, ())
        self.vector_feed = tf1.placeholder(tf.int64, (None,))
        self.strings_feed = tf1.placeholder(tf.string, (3,))
        self.sparse = tf.SparseTensor(indices=[[0]], values=[1.0], dense_shape=[1])
        queue = tf1.PaddingFIFOQueue(
            5000, dtypes=[tf.int32, tf.int64, tf.string], shapes=[(), (None,), (3,)]
        )
        self.enqueue = queue.enqueue((self.scalar_feed, self.vector_feed, self.strings_feed))
        self.scalar, self.vector, self.strings = queue.dequeue()
        self.close = queue.close()

    def feed(self, sess, values):
        for v in values:
            sess.run(
                self.enqueue,
                {self.scalar_feed: v, self.vector_feed: v * [v], self.strings_feed: 3 * [str(v)]},
            )


def _expected(values, width):
    """The batch of `values` as bucket_ops_test spells it: v, v repeated v times (padded
    with 0 to `width`), str(v) three times."""
    vector = np.zeros((len(values), width), np.int64)
    for row, v in enumerate(values):
        vector[row, :v] = v
    strings = np.vstack(3 * [np.array(values).astype(bytes)]).T
    return np.array(values), vector, strings


def _assert_batch(batch, values, width):
    order = np.argsort(batch[0])  # Several enqueue threads: any order within the batch.
    for got, want in zip(batch[:3], _expected(values, width)):
        np.testing.assert_array_equal(got[order], want)


def _shapes(outputs):
    return [o.get_shape().as_list() for o in outputs]


def test_single_bucket(training):
    with tf.Graph().as_default():
        data = _FedInput()
        bucketed = training.bucket(
            tensors=[data.scalar, data.vector, data.strings, data.sparse],
            which_bucket=tf.constant(0),
            num_buckets=2,
            batch_size=32,
            num_threads=10,
            dynamic_pad=True,
        )
        assert _shapes(bucketed[1]) == [[32], [32, None], [32, 3], [None, None]]
        with tf1.Session() as sess:
            data.feed(sess, range(32))
            coord, threads = started(sess)
            which, outputs = sess.run(bucketed)
            assert which == 0 and len(outputs) == 4
            _assert_batch(outputs, list(range(32)), 31)
            sess.run(data.close)
            stop(coord, threads)


def test_batch_size_per_bucket(training):
    with tf.Graph().as_default():
        data = _FedInput()
        which = tf1.cond(data.scalar < 5, lambda: tf.constant(0), lambda: tf.constant(1))
        bucketed = training.bucket(
            tensors=[data.scalar, data.vector, data.strings, data.sparse],
            which_bucket=which,
            num_buckets=2,
            batch_size=[5, 10],
            num_threads=1,
            dynamic_pad=True,
        )
        assert _shapes(bucketed[1]) == [[None], [None, None], [None, 3], [None, None]]
        with tf1.Session() as sess:
            data.feed(sess, range(15))
            coord, threads = started(sess)
            runs = sorted([sess.run(bucketed) for _ in range(2)], key=lambda r: r[0])
            assert [r[0] for r in runs] == [0, 1]
            assert [len(r[1][0]) for r in runs] == [5, 10]
            _assert_batch(runs[0][1], list(range(5)), 4)
            _assert_batch(runs[1][1], list(range(5, 15)), 14)
            sess.run(data.close)
            stop(coord, threads)


def test_even_odd_buckets(training):
    with tf.Graph().as_default():
        data = _FedInput()
        bucketed = training.bucket(
            tensors=[data.scalar, data.vector, data.strings, data.sparse],
            which_bucket=data.scalar % 2,
            num_buckets=2,
            batch_size=32,
            num_threads=10,
            dynamic_pad=True,
        )
        assert _shapes(bucketed[1]) == [[32], [32, None], [32, 3], [None, None]]
        with tf1.Session() as sess:
            data.feed(sess, range(64))
            coord, threads = started(sess)
            runs = sorted([sess.run(bucketed) for _ in range(2)], key=lambda r: r[0])
            assert [r[0] for r in runs] == [0, 1] and all(len(r[1]) == 4 for r in runs)
            _assert_batch(runs[0][1], list(range(0, 64, 2)), 62)
            _assert_batch(runs[1][1], list(range(1, 64, 2)), 63)
            # The SparseTensor rides along: one value per example, batched.
            assert runs[0][1][3].dense_shape.tolist() == [32, 1]
            sess.run(data.close)
            stop(coord, threads)


def test_even_odd_buckets_keep_input_filters_out_all_odd(training):
    with tf.Graph().as_default():
        data = _FedInput()
        which = data.scalar % 2
        bucketed = training.bucket(
            tensors=[data.scalar, data.vector, data.strings],
            which_bucket=which,
            num_buckets=2,
            batch_size=32,
            num_threads=10,
            keep_input=tf.equal(which, 0),
            dynamic_pad=True,
        )
        assert _shapes(bucketed[1]) == [[32], [32, None], [32, 3]]
        with tf1.Session() as sess:
            data.feed(sess, range(128))
            coord, threads = started(sess)
            runs = [sess.run(bucketed) for _ in range(2)]
            assert [r[0] for r in runs] == [0, 0]
            kept = np.concatenate([r[1][0] for r in runs])
            assert sorted(kept.tolist()) == list(range(0, 128, 2))
            sess.run(data.close)
            stop(coord, threads)


def test_wrong_bucket_capacities_fail_at_build(training):
    with tf.Graph().as_default():
        data = _FedInput()
        with pytest.raises(ValueError, match="must have exactly num_buckets"):
            training.bucket(
                tensors=[data.scalar, data.vector, data.strings],
                which_bucket=tf.constant(0),
                num_buckets=2,
                batch_size=32,
                bucket_capacities=[3, 4, 5],
            )
        with pytest.raises(ValueError, match="batch_size is a list.*num_buckets"):
            training.bucket([data.scalar], tf.constant(0), batch_size=[2, 3, 4], num_buckets=2)


# -- bucket_by_sequence_length (bucket_ops_test.py's BucketBySequenceLengthTest) -----------


def _which_bucket(boundaries, v):
    """bucket_ops_test's own reckoning of a length's bucket (edges from 0)."""
    full = np.array([0] + boundaries)
    found = np.where(np.logical_and(v >= full[:-1], v < full[1:]))[0]
    return len(full) if not found.size else found[0]


def _by_sequence_length(training, allow_small_batch, bucket_capacities=None):
    data_len, labels_len, batch_size, boundaries = 4, 3, 8, [3, 4, 5, 10]
    pairs = [
        (n, ([np.int64(n)] * data_len, [str(n).encode("ascii")] * labels_len))
        for n in (1, 3, 4, 5, 6, 10)
    ]
    with tf.Graph().as_default():
        lengths = tf1.placeholder(tf.int32, ())
        data = tf1.placeholder(tf.int64, (data_len,))
        labels = tf1.placeholder(tf.string, (labels_len,))
        queue = tf1.FIFOQueue(
            5000, (tf.int32, tf.int64, tf.string), ((), (data_len,), (labels_len,))
        )
        enqueue = queue.enqueue((lengths, data, labels))
        lengths_t, data_t, labels_t = queue.dequeue()
        out_lengths_t, data_and_labels_t = training.bucket_by_sequence_length(
            input_length=lengths_t,
            tensors=[data_t, labels_t],
            batch_size=batch_size,
            bucket_boundaries=boundaries,
            bucket_capacities=bucket_capacities,
            allow_smaller_final_batch=allow_small_batch,
            num_threads=10,
        )
        expected = None if allow_small_batch else batch_size
        assert out_lengths_t.shape.as_list() == [expected]
        assert data_and_labels_t[0].shape.as_list() == [expected, data_len]
        assert data_and_labels_t[1].shape.as_list() == [expected, labels_len]
        with tf1.Session() as sess:
            for _ in range(50 * batch_size + 100):
                n, (d, t) = random.choice(pairs)
                sess.run(enqueue, {lengths: n, data: d, labels: t})
            sess.run(queue.close())
            coord, threads = started(sess)
            for _ in range(50):
                out_lengths, (d, t) = sess.run((out_lengths_t, data_and_labels_t))
                if allow_small_batch:
                    assert d.shape[1:] == (data_len,) and t.shape[1:] == (labels_len,)
                    assert 0 < len(out_lengths) <= batch_size
                else:
                    assert d.shape == (batch_size, data_len) and t.shape == (batch_size, labels_len)
                    assert out_lengths.shape == (batch_size,)
                for length, row, text in zip(out_lengths, d, t):
                    assert row[0] == length and row[0] == int(text[0].decode("ascii"))
                    assert _which_bucket(boundaries, row[0]) == _which_bucket(boundaries, row[1])
            stop(coord, threads)


@pytest.mark.parametrize("allow_small_batch", [False, True])
def test_bucket_by_sequence_length(training, allow_small_batch):
    _by_sequence_length(training, allow_small_batch)


def test_bucket_by_sequence_length_bucket_capacities(training):
    with pytest.raises(ValueError, match="must have exactly num_buckets"):
        _by_sequence_length(training, False, bucket_capacities=[32, 32, 32, 32])
    _by_sequence_length(training, True, bucket_capacities=[48, 40, 32, 24, 16])


@pytest.mark.parametrize(
    "boundaries, error",
    [((3, 2), ValueError), ([], ValueError), ([1.5, 2], TypeError), (3, TypeError)],
)
def test_bucket_by_sequence_length_checks_its_boundaries(training, boundaries, error):
    with tf.Graph().as_default(), pytest.raises(error):
        training.bucket_by_sequence_length(tf.constant(1), [tf.constant(1)], 2, boundaries)


# -- beyond contrib's tests: order, end of input, checkpoints ------------------------------


def _buckets_in_one_thread(values, which, size, allow_smaller):
    """contrib's bucketing with one thread, from its description: one FIFO per bucket, a
    batch leaves when its bucket holds `size`; partial batches at the end, if allowed."""
    held, out = collections.defaultdict(list), []
    for v in values:
        bucket = which(v)
        held[bucket].append(v)
        if len(held[bucket]) == size:
            out.append((bucket, held.pop(bucket)))
    if allow_smaller:
        out.extend((b, held[b]) for b in sorted(held) if held[b])
    return out


def _bucket_a_range(training, n, allow_smaller):
    value = tf1.train.range_input_producer(n, num_epochs=1, shuffle=False).dequeue()
    return training.bucket(
        [value, tf.fill([value % 4], value)],
        which_bucket=value % 3,
        batch_size=4,
        num_buckets=3,
        dynamic_pad=True,
        allow_smaller_final_batch=allow_smaller,
    )


@pytest.mark.parametrize("allow_smaller", [False, True])
def test_one_thread_order_then_the_end_of_the_input(training, allow_smaller):
    """Batches leave as their buckets fill; the input's end is an OutOfRangeError, every
    time after (never a hang); partial batches come first where allowed."""
    want = _buckets_in_one_thread(range(23), lambda v: v % 3, 4, allow_smaller)
    with tf.Graph().as_default():
        which, (values, padded) = _bucket_a_range(training, 23, allow_smaller)
        with tf1.Session() as sess:
            sess.run(tf1.local_variables_initializer())
            coord, threads = started(sess)
            got = []
            for _ in range(len(want)):
                b, v, p = sess.run([which, values, padded])
                got.append((b, v.tolist()))
                assert p.shape == (len(v), max(x % 4 for x in v))
                assert all(
                    (row[: x % 4] == x).all() and (row[x % 4 :] == 0).all() for x, row in zip(v, p)
                )
            assert got == want
            for _ in range(2):
                with pytest.raises(tf.errors.OutOfRangeError):
                    sess.run(values)
            stop(coord, threads)


def test_a_batch_size_held_in_a_variable_batches_every_bucket(training):
    """contrib's `batch_size` is a tensor argument: a variable's value, as the input starts."""
    want = _buckets_in_one_thread(range(12), lambda v: v % 2, 3, False)
    with tf.Graph().as_default():
        size = tf1.Variable(3, trainable=False, name="size")
        value = tf1.train.range_input_producer(12, num_epochs=1, shuffle=False).dequeue()
        which, [values] = training.bucket([value], value % 2, batch_size=size, num_buckets=2)
        with tf1.Session() as sess:
            sess.run([tf1.global_variables_initializer(), tf1.local_variables_initializer()])
            coord, threads = started(sess)
            assert [(b, v.tolist()) for b, v in (sess.run([which, values]) for _ in want)] == want
            with pytest.raises(tf.errors.OutOfRangeError):
                sess.run(values)
            stop(coord, threads)


def test_an_example_of_no_bucket_is_dropped_as_legacy_dropped_it(training):
    """Legacy enqueued an example under the one condition `which_bucket == i` it met:
    outside [0, num_buckets) it met none."""
    in_a_bucket = [v for v in range(14) if 0 <= v % 7 - 2 < 4]
    want = _buckets_in_one_thread(in_a_bucket, lambda v: v % 7 - 2, 2, False)
    assert len(want) == 4  # Bucket "4" (6, 13) and "-1", "-2" would fill too.
    with tf.Graph().as_default():
        value = tf1.train.range_input_producer(14, num_epochs=1, shuffle=False).dequeue()
        which, [values] = training.bucket([value], value % 7 - 2, batch_size=2, num_buckets=4)
        with tf1.Session() as sess:
            sess.run(tf1.local_variables_initializer())
            coord, threads = started(sess)
            assert [(b, v.tolist()) for b, v in (sess.run([which, values]) for _ in want)] == want
            with pytest.raises(tf.errors.OutOfRangeError):
                sess.run(values)
            stop(coord, threads)


def test_bucketed_input_resumes_where_the_checkpoint_was_taken(training, tmp_path):
    path = str(tmp_path / "model")
    with tf.Graph().as_default():
        which, (values, _) = _bucket_a_range(training, 200, False)
        tf1.train.get_or_create_global_step()
        saver = tf1.train.Saver()
        with tf1.Session() as sess:
            sess.run([tf1.global_variables_initializer(), tf1.local_variables_initializer()])
            coord, threads = started(sess)
            for _ in range(3):
                sess.run(values)
            saver.save(sess, path)
            after = [sess.run([which, values]) for _ in range(4)]
            stop(coord, threads)
        with tf1.Session() as sess:
            saver.restore(sess, path)
            sess.run(tf1.local_variables_initializer())
            coord, threads = started(sess)
            again = [sess.run([which, values]) for _ in range(4)]
            stop(coord, threads)
    assert [(b, v.tolist()) for b, v in again] == [(b, v.tolist()) for b, v in after]
    # Not the start again: the first batch after the checkpoint is the fourth.
    assert after[0][1].tolist() != [0, 3, 6, 9]


# -- stratified_sample (sampling_ops_test.py's StratifiedSampleTest) -----------------------


def test_stratified_sample_checks_its_arguments_at_build(training):
    val = [tf.zeros([1, 3]), tf.ones([1, 5])]
    label = tf.constant([1], shape=[1])
    probs, init_probs, size = [0.2] * 5, [0.1, 0.3, 0.1, 0.3, 0.2], 16
    sample = training.stratified_sample
    failing = [
        # Labels with more than a batch dimension, or none, under enqueue_many.
        (ValueError, lambda: sample(val, tf.zeros([]), probs, size, init_probs, enqueue_many=True)),
        (ValueError, lambda: sample(val, tf.zeros([1, 1]), probs, size, init_probs, True)),
        # One-hot labels.
        (ValueError, lambda: sample(val, tf.constant([0, 1, 0, 0, 0]), probs, size, init_probs)),
        # A bare tensor for the data.
        (TypeError, lambda: sample(tf.zeros([1, 3]), label, probs, size, init_probs)),
        (ValueError, lambda: sample(val, tf.constant(1), probs, size, init_probs, True)),
        # Data and labels with different batch sizes.
        (ValueError, lambda: sample([tf.zeros([2, 1])], label, probs, size, init_probs, True)),
        (ValueError, lambda: sample(val, label, 1, size, init_probs)),
        (ValueError, lambda: sample(val, label, tf1.placeholder(tf.float32, [None]), size)),
        (ValueError, lambda: sample(val, label, [0.1] * 10, size, init_probs=[0.2] * 5)),
        (ValueError, lambda: sample(val, label, [0.2, 0.4, 0.4], size, init_probs=[0, 0.5, 0.5])),
    ]
    with tf.Graph().as_default():
        for error, call in failing:
            with pytest.raises(error):
                call()


def test_verify_input_fails_when_run_on_bad_labels_or_probabilities():
    with tf.Graph().as_default():
        label_ph = tf1.placeholder(tf.int32, shape=[None])
        probs_ph = tf1.placeholder(tf.float32, shape=[5])
        vals, labels, [probs] = sampling._verify_input([tf.zeros([3, 1])], label_ph, [probs_ph])
        with tf1.Session() as sess:
            for bad in ([0, -1, 1], [5, 1, 1], [2, 3]):
                with pytest.raises(tf.errors.InvalidArgumentError):
                    sess.run(vals + [labels], {label_ph: bad, probs_ph: [0.2] * 5})
            for bad in ([0.1] * 5, [-0.5, 0.5, 0.5, 0.4, 0.1]):
                with pytest.raises(tf.errors.InvalidArgumentError):
                    sess.run(probs, {label_ph: [1, 2, 3], probs_ph: bad})
            assert sess.run(labels, {label_ph: [1, 2, 3], probs_ph: [0.2] * 5}).tolist() == [
                1,
                2,
                3,
            ]


def test_verify_input_needs_no_static_batch_dimension():
    with tf.Graph().as_default():
        vals_ph, labels_ph = tf1.placeholder(tf.float32), tf1.placeholder(tf.int32)
        vals, labels, _ = sampling._verify_input([vals_ph], labels_ph, [tf.constant([0.2] * 5)])
        with tf1.Session() as sess:
            for n, width in ((2, 3), (4, 15), (10, 1)):
                got = sess.run(
                    vals + [labels],
                    {vals_ph: np.zeros([n, width]), labels_ph: [x % 5 for x in range(n)]},
                )
                assert got[0].shape == (n, width) and got[1].tolist() == [x % 5 for x in range(n)]


def test_stratified_sample_can_be_called_twice_in_one_graph(training):
    with tf.Graph().as_default():
        probs = np.array([0, 1, 0, 0, 0])
        label = tf.ones([], dtype=tf.int32)
        batches = training.stratified_sample([tf.zeros([2, 3, 4])], label, probs, 20, probs)
        batches += training.stratified_sample([tf.zeros([2, 3, 4])], label, probs, 20, probs)
        # contrib's testCanBeCalledMultipleTimes: the batchers' queue summaries, merged, run
        # with the batches (a merge of no summaries fails to build).
        summary = tf1.summary.merge(tf1.get_collection(tf1.GraphKeys.SUMMARIES))
        with tf1.Session() as sess:
            coord, threads = started(sess)
            (a,), la, (b,), lb, merged = sess.run(batches + (summary,))
            assert a.shape == b.shape == (20, 2, 3, 4) and la.tolist() == lb.tolist() == [1] * 20
            tags = [v.tag for v in tf1.Summary.FromString(merged).value]
            assert len(tags) >= 2 and all("/fraction_of_" in t for t in tags)
            stop(coord, threads)


def test_stratified_sample_of_batches(training):
    with tf.Graph().as_default():
        labels = tf1.cond(
            tf.greater(0.5, tf1.random_uniform([])),
            lambda: tf.ones([11], dtype=tf.int32),
            lambda: tf.ones([11], dtype=tf.int32) * 3,
        )
        data, sampled = training.stratified_sample(
            [tf.zeros([11, 2, 3, 4])],
            labels,
            np.array([0, 0.2, 0, 0.8, 0]),
            20,
            init_probs=[0, 0.3, 0, 0.7, 0],
            enqueue_many=True,
        )
        with tf1.Session() as sess:
            coord, threads = started(sess)
            [d], got = sess.run([data, sampled])
            assert d.shape == (20, 2, 3, 4) and set(got.tolist()) <= {1, 3}
            stop(coord, threads)


def test_stratified_sample_returns_a_list_and_a_label_tensor(training):
    with tf.Graph().as_default():
        inputs = [tf.zeros([2, 3, 4]), tf.ones([2, 4]), tf.ones(2) * 3]
        vals, labels = training.stratified_sample(
            inputs,
            tf.ones([], dtype=tf.int32),
            np.array([0, 1, 0, 0, 0]),
            20,
            init_probs=[0, 1, 0, 0, 0],
        )
        assert isinstance(vals, list) and len(vals) == 3 and isinstance(labels, tf.Tensor)
        with tf1.Session() as sess:
            coord, threads = started(sess)
            out = sess.run(vals + [labels])
            assert [o.shape for o in out] == [(20, 2, 3, 4), (20, 2, 4), (20, 2), (20,)]
            stop(coord, threads)


@pytest.mark.parametrize("init_probs", [[0.7, 0, 0, 0.3, 0], None])
def test_stratified_sample_follows_the_target_distribution(training, init_probs):
    """sampling_ops_test's normalBehaviorHelper: seeded, 20 batches of 16, data matching
    labels, the mean label within 3 standard deviations of the target's."""
    probs = np.array([0.8, 0, 0, 0.2, 0])
    with tf.Graph().as_default():
        tf1.set_random_seed(1234)
        label = tf1.cond(
            tf.greater(0.5, tf1.random_uniform([])), lambda: tf.constant(0), lambda: tf.constant(3)
        )
        data, labels = training.stratified_sample(
            [np.array([1, 4]) * label], label, probs, 16, init_probs=init_probs
        )
        with tf1.Session() as sess:
            sess.run(tf1.global_variables_initializer())
            coord, threads = started(sess)
            runs = [sess.run([data, labels]) for _ in range(20)]
            stop(coord, threads)
    for [d], lbl in runs:
        np.testing.assert_array_equal(d, np.array([1, 4]) * lbl[:, None])
    expected = probs[0] * 0 + probs[3] * 3
    spread = np.sqrt(np.sum(np.square(np.arange(5) - expected))) / np.sqrt(len(runs))
    assert abs(np.mean([lbl for _, lbl in runs]) - expected) < 3 * spread


def test_estimate_of_the_data_distribution_from_many_threads(training):
    """sampling_ops_threading_test: 25 threads of a queue fetch the running estimate."""
    with tf.Graph().as_default():
        tf1.set_random_seed(1234)
        label = tf.cast(tf.round(tf1.random_uniform([1]) * 10), tf.int32)
        estimate = sampling._estimate_data_distribution(label, 10)
        _, _, [estimate] = sampling._verify_input([], label, [estimate])
        queue = tf1.FIFOQueue(capacity=25, dtypes=[estimate.dtype], shapes=[estimate.shape])
        tf1.train.add_queue_runner(tf1.train.QueueRunner(queue, [queue.enqueue([estimate])] * 25))
        out = queue.dequeue()
        with tf1.Session() as sess:
            sess.run(tf1.global_variables_initializer())
            coord, threads = started(sess)
            for _ in range(25):
                got = sess.run(out)
                assert abs(got.sum() - 1) < 1e-6 and (got > 0).all()
            stop(coord, threads)


# -- rejection_sample (sampling_ops_test.py's RejectionSampleTest) -------------------------


def test_rejection_sample_checks_batch_dimensions_at_build(training):
    accept = lambda _: tf.constant(1.0)  # noqa: E731
    with tf.Graph().as_default():
        with pytest.raises(ValueError):
            training.rejection_sample([tf.zeros([])], accept, 32, enqueue_many=True)
        with pytest.raises(ValueError):
            training.rejection_sample(
                [tf.zeros([5, 1]), tf.zeros([4, 1])], accept, 32, enqueue_many=True
            )


def test_rejection_sample_runtime_checks(training):
    with tf.Graph().as_default():
        prob_ph = tf1.placeholder(tf.float32, [])
        tf1.set_random_seed(1234)
        training.rejection_sample(
            [tf.zeros([])], lambda _: prob_ph, 32, runtime_checks=True, name="rejection_sample"
        )
        checked = tf1.get_default_graph().get_tensor_by_name("rejection_sample/prob_with_checks:0")
        with tf1.Session() as sess:
            for bad in (-0.1, 1.1):
                with pytest.raises(tf.errors.InvalidArgumentError):
                    sess.run(checked, {prob_ph: bad})
            assert sess.run(checked, {prob_ph: 0.5}) == 0.5


def test_rejection_sample_keeps_what_it_accepts(training):
    with tf.Graph().as_default():
        example = [
            tf1.cond(
                tf.greater(0.5, tf1.random_uniform([])),
                lambda: tf.constant(1.0),
                lambda: tf.constant(2.0),
            )
        ]
        sample = training.rejection_sample(example, lambda x: x[0] - 1.0, 10)
        with tf1.Session() as sess:
            coord, threads = started(sess)
            for _ in range(5):
                assert sess.run(sample)[0].tolist() == [2.0] * 10
            stop(coord, threads)


# -- beyond contrib's tests: seeded sampling draws legacy's numbers -------------------------


def _legacy_stratified(tensors, label, accept):
    """What contrib's stratified_sample built on legacy queues, for known `init_probs`: a
    batch of one example at a time, then a maybe_batch keeping an example when a uniform
    draw falls below its class's acceptance probability."""
    *examples, labels = tf1.train.batch(
        tensors + [label], batch_size=1, capacity=16, enqueue_many=True
    )
    examples = [tf.squeeze(t, [0]) for t in examples]
    labels = tf.squeeze(labels, [0])
    keep = tf1.random_uniform([]) < tf.gather(accept, labels)
    return tf1.train.maybe_batch(examples + [labels], keep_input=keep, batch_size=8)


def _seeded_sample(sample):
    with tf.Graph().as_default():
        tf1.set_random_seed(7)
        value = tf1.random_uniform([3], maxval=100, dtype=tf.int32)
        label = value % 3
        out = sample([value], label)
        with tf1.Session() as sess:
            coord, threads = started(sess)
            runs = [
                np.concatenate([t[:, None] for t in sess.run(out)], 1).tolist() for _ in range(6)
            ]
            stop(coord, threads)
    return runs


def test_seeded_stratified_sample_draws_legacy_numbers(training):
    init, target = [0.5, 0.25, 0.25], [0.2, 0.4, 0.4]
    # contrib's acceptance: (t_i / p_i) / max_j (t_j / p_j).
    ratio = np.array(target) / np.array(init)
    accept = (ratio / ratio.max()).astype(np.float32)

    def served_sample(tensors, label):
        data, labels = training.stratified_sample(tensors, label, target, 8, init, True)
        return data + [labels]

    served = _seeded_sample(served_sample)
    compat_input.uninstall()
    legacy = _seeded_sample(lambda t, label: _legacy_stratified(t, label, accept))
    compat_input.install()
    assert served == legacy
