"""tf.contrib.training.batch_sequences_with_states served by tf.data.

TensorFlow 1.x's own tests of it (contrib/training/python/training/
batch_sequences_with_states_test.py: BatchSequencesWithStatesTest, PaddingTest) are the
contract: each scenario is written again here, run on what `install()` serves as
`tf.contrib.training`, with the same inputs and expected values. Beyond them: sequences
of different lengths laid out in lanes against a schedule written here from contrib's
description, state carried through every segment, the end of the input, and a program
that forgets `save_state()` gets an error instead of legacy's endless wait.
"""

import numpy as np
import pytest
import tensorflow as tf

from compat_input._src.batchers import state_saving
from helpers import started
from helpers import stop

tf1 = tf.compat.v1
LENGTH, BATCH = 4, 2


class _Inputs:
    """batch_sequences_with_states_test's setUp: two dense and two sparse sequences of 4
    steps, a dense and a sparse context, two states, a random key per example."""

    def __init__(self):
        rng = np.random.RandomState(0)
        self.sparse1 = tf.SparseTensor(
            tf.constant([[0, 0], [1, 0], [1, 3], [1, 4], [3, 2], [3, 3]], tf.int64),
            tf.constant([0, 10, 13, 14, 32, 33], tf.int64),
            tf1.placeholder_with_default(np.array([LENGTH, 6]), shape=[2]),
        )
        self.sparse2 = tf.SparseTensor(
            tf.constant(
                [
                    [0, 0, 1],
                    [0, 1, 0],
                    [0, 1, 2],
                    [1, 0, 3],
                    [1, 1, 0],
                    [1, 1, 1],
                    [1, 1, 2],
                    [1, 2, 2],
                ],
                tf.int64,
            ),
            tf.constant([1, 10, 12, 103, 150, 149, 150, 122], tf.int64),
            tf1.placeholder_with_default(np.array([LENGTH, 3, 4]), shape=[3]),
        )
        self.sparse_context = tf.SparseTensor(
            tf.constant([[1, 9], [2, 2], [2, 10]], tf.int64),
            tf.constant([7, 15, 2], tf.int64),
            tf.constant([5, 12], tf.int64),
        )
        self.key = tf.strings.join(
            ["key_", tf.strings.as_string(tf.cast(10000 * tf1.random_uniform(()), tf.int32))]
        )
        self.seq1, self.seq2 = rng.rand(LENGTH, 5), rng.rand(LENGTH, 4, 2)
        self.sequences = {
            "seq1": self.seq1,
            "seq2": self.seq2,
            "seq3": self.sparse1,
            "seq4": self.sparse2,
        }
        self.context = {"context1": [3, 4], "sp_context": self.sparse_context}
        self.initial_states = {"state1": rng.rand(6, 7), "state2": rng.rand(8)}


def _prefixes(keys):
    return {k.decode("ascii").split(":")[0] for k in keys}


def _tiled(value):
    return np.tile(value[np.newaxis], (BATCH,) + (1,) * value.ndim)


def _sparse_rows(indices, values, shape):
    """A batch of the same sparse segment twice, as the test spells it."""
    indices = np.array(indices, np.int64).reshape(-1, len(shape))
    rows = [np.concatenate([np.full((len(indices), 1), b), indices], 1) for b in range(BATCH)]
    return np.concatenate(rows).tolist(), list(values) * BATCH, [BATCH, *shape]


def _assert_sparse(got, want):
    indices, values, shape = want
    assert got.indices.tolist() == indices
    assert got.values.tolist() == values
    assert got.dense_shape.tolist() == shape


def _basics(training, num_unroll, length, pad, key=None, make_keys_unique=False):
    """Two steps of one batch of two copies of the input; the expected segments follow."""
    data = _Inputs()
    batch = training.batch_sequences_with_states(
        input_key=key if key is not None else data.key,
        input_sequences=data.sequences,
        input_context=data.context,
        input_length=length,
        initial_states=data.initial_states,
        num_unroll=num_unroll,
        batch_size=BATCH,
        num_threads=3,
        capacity=2,
        pad=pad,
        make_keys_unique=make_keys_unique,
        make_keys_unique_seed=9,
    )
    state1, state2 = batch.state("state1"), batch.state("state2")
    updates = (batch.save_state("state1", state1 + 1), batch.save_state("state2", state2 - 1))
    fetches = (
        batch.key,
        batch.next_key,
        batch.sequences["seq1"],
        batch.sequences["seq2"],
        batch.sequences["seq3"],
        batch.sequences["seq4"],
        batch.context["context1"],
        batch.context["sp_context"],
        state1,
        state2,
        batch.length,
        updates,
    )
    context_sparse = (
        [[0, 1, 9], [0, 2, 2], [0, 2, 10], [1, 1, 9], [1, 2, 2], [1, 2, 10]],
        [7, 15, 2, 7, 15, 2],
        [2, 5, 12],
    )
    with tf1.Session() as sess:
        coord, threads = started(sess)
        steps = [sess.run(fetches) for _ in range(2)]
        stop(coord, threads)
    for step, got in enumerate(steps):
        keys, next_keys, seq1, seq2, seq3, seq4, context1, context2, s1, s2, lengths, _ = got
        assert _prefixes(keys) == {f"0000{step}_of_00002"}
        assert _prefixes(next_keys) == ({"00001_of_00002"} if step == 0 else {"STOP"})
        np.testing.assert_array_equal(context1, np.tile([3, 4], (BATCH, 1)))
        _assert_sparse(context2, context_sparse)
        np.testing.assert_array_equal(s1, _tiled(data.initial_states["state1"]) + step)
        np.testing.assert_array_equal(s2, _tiled(data.initial_states["state2"]) - step)
        yield step, keys, seq1, seq2, seq3, seq4, lengths


def _padded(value, num_unroll, step):
    part = value[step * num_unroll : (step + 1) * num_unroll]
    extra = np.zeros((num_unroll - len(part),) + value.shape[1:])
    return _tiled(np.concatenate([part, extra]))


_SPARSE1 = {0: ([[0, 0], [1, 0], [1, 3], [1, 4]], [0, 10, 13, 14])}
_SPARSE2_FIRST = (
    [[0, 0, 1], [0, 1, 0], [0, 1, 2], [1, 0, 3], [1, 1, 0], [1, 1, 1], [1, 1, 2], [1, 2, 2]],
    [1, 10, 12, 103, 150, 149, 150, 122],
)


@pytest.mark.parametrize(
    "pad, key, unique",
    [(True, None, False), (False, None, False), (False, "fixed_key", True)],
    ids=["padding", "no-padding", "random-key-gen"],
)
def test_basic_padding(training, pad, key, unique):
    with tf.Graph().as_default():
        data = _Inputs()
        for step, keys, seq1, seq2, seq3, seq4, lengths in _basics(
            training, 2, 3, pad, key if key is None else tf.constant(key), unique
        ):
            np.testing.assert_array_equal(seq1, _padded(data.seq1, 2, step))
            np.testing.assert_array_equal(seq2, _padded(data.seq2, 2, step))
            sparse1 = _SPARSE1[0] if step == 0 else ([[1, 2], [1, 3]], [32, 33])
            _assert_sparse(seq3, _sparse_rows(*sparse1, [2, 6]))
            sparse2 = _SPARSE2_FIRST if step == 0 else ([], [])
            _assert_sparse(seq4, _sparse_rows(*sparse2, [2, 3, 4]))
            assert lengths.tolist() == ([2, 2] if step == 0 else [1, 1])
            if unique:  # "fixed_key" and a random number after it.
                assert all(k.decode().split(":")[1].startswith("fixed_key") for k in keys)
                assert all(len(k.decode().split(":")[1]) > len("fixed_key") for k in keys)


def test_advanced_padding(training):
    """num_unroll 3 of 4 steps: the second segment is one step and two of padding."""
    with tf.Graph().as_default():
        data = _Inputs()
        for step, _, seq1, seq2, seq3, seq4, lengths in _basics(training, 3, None, True):
            np.testing.assert_array_equal(seq1, _padded(data.seq1, 3, step))
            np.testing.assert_array_equal(seq2, _padded(data.seq2, 3, step))
            sparse1 = (
                ([[0, 0], [1, 0], [1, 3], [1, 4]], [0, 10, 13, 14])
                if step == 0
                else ([[0, 2], [0, 3]], [32, 33])
            )
            _assert_sparse(seq3, _sparse_rows(*sparse1, [3, 6]))
            _assert_sparse(
                seq4, _sparse_rows(*(_SPARSE2_FIRST if step == 0 else ([], [])), [3, 3, 4])
            )
            assert lengths.tolist() == ([3, 3] if step == 0 else [1, 1])


def test_not_a_multiple_of_num_unroll_without_padding_fails_when_run(training):
    with tf.Graph().as_default():
        data = _Inputs()
        sequences = {
            "seq1": tf1.placeholder_with_default(data.seq1, shape=(None, 5)),
            "seq2": tf1.placeholder_with_default(data.seq2, shape=(None, 4, 2)),
            "seq3": data.sparse1,
            "seq4": data.sparse2,
        }
        batch = training.batch_sequences_with_states(
            data.key,
            sequences,
            data.context,
            3,
            data.initial_states,
            num_unroll=3,
            batch_size=BATCH,
            pad=False,
        )
        with tf1.Session() as sess:
            coord, threads = started(sess)
            with pytest.raises(
                tf.errors.InvalidArgumentError,
                match="should be a multiple of: 3, but saw value: 4. Consider setting pad=True",
            ):
                sess.run(batch.key)
            stop(coord, threads)


# -- _padding (batch_sequences_with_states_test.py's PaddingTest) ---------------------------


def test_padding_of_unequal_lengths_fails_when_run():
    with tf.Graph().as_default():
        _, padded = state_saving._padding(
            {"key_1": tf.constant([1, 2, 3]), "key_2": tf.constant([1.5, 2.5])}, 2
        )
        with tf1.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match="All sequence lengths must"):
                sess.run(padded["key_1"])


def test_padding_fills_with_zeros_and_empty_strings():
    with tf.Graph().as_default():
        length, padded = state_saving._padding(
            {
                "key_1": tf.constant([1, 2]),
                "key_2": tf.constant([0.5, -1.0]),
                "key_3": tf.constant(["a", "b"]),
                "key_4": tf.constant([[1, 2, 3], [4, 5, 6]]),
            },
            5,
        )
        with tf1.Session() as sess:
            got = sess.run(padded)
            assert sess.run(length) == 2
    assert got["key_1"].tolist() == [1, 2, 0, 0, 0]
    assert got["key_2"].tolist() == [0.5, -1.0, 0.0, 0.0, 0.0]
    assert got["key_3"].tolist() == [b"a", b"b", b"", b"", b""]
    assert got["key_4"].tolist() == [[1, 2, 3], [4, 5, 6], [0, 0, 0], [0, 0, 0], [0, 0, 0]]


def test_padding_of_sparse_sequences_only():
    with tf.Graph().as_default():
        one = tf.SparseTensor(tf.constant([[0], [2]], tf.int64), [3, 4], tf.constant([4], tf.int64))
        two = tf.SparseTensor(
            tf.constant([[1], [2]], tf.int64), [9, 12], tf.constant([5], tf.int64)
        )
        _, padded = state_saving._padding({"key_1": one, "key_2": two}, 4)
        with tf1.Session() as sess:
            dense = sess.run({k: tf.sparse.to_dense(v) for k, v in padded.items()})
    assert dense["key_1"].tolist() == [3, 0, 4, 0, 0, 0, 0, 0]
    assert dense["key_2"].tolist() == [0, 9, 12, 0, 0, 0, 0, 0]


@pytest.mark.parametrize("bad", [2.0, None])
def test_padding_checks_its_arguments(bad):
    with tf.Graph().as_default():
        if bad is None:
            with pytest.raises(TypeError):
                state_saving._padding([tf.constant([1])], 2)
        else:
            with pytest.raises(ValueError):
                state_saving._padding({"a": tf.constant([1])}, bad)


# -- beyond contrib's tests ---------------------------------------------------------------


def _in_lanes(counts, lanes):
    """contrib's barrier, from its description: a segment is due once the one before it
    was, older sequences first, a free batch position going to the next sequence read."""
    free, due = [0] * lanes, {}
    for i, count in enumerate(counts):
        lane = min(range(lanes), key=lambda n: (free[n], n))
        for k in range(count):
            due.setdefault(free[lane] + k, []).append((i, k))
        free[lane] += count
    return [due[t] for t in sorted(due)]


def _sequences(training, allow_small_batch=True, batch_size=2, initial=0.0):
    """Seven sequences of 2, 4 or 6 steps (values 100 * i + t), in segments of 2; the state
    sums what each sequence showed so far, from `initial`."""
    index = tf1.train.range_input_producer(7, num_epochs=1, shuffle=False).dequeue()
    steps = (index % 3 + 1) * 2
    values = tf.cast(100 * index + tf.range(steps), tf.float32)
    batch = training.batch_sequences_with_states(
        tf.strings.as_string(index),
        {"values": values},
        {"index": index},
        steps,
        {"sum": tf.constant(initial)},
        num_unroll=2,
        batch_size=batch_size,
        allow_small_batch=allow_small_batch,
    )
    total = batch.state("sum") + tf.reduce_sum(batch.sequences["values"], 1)
    return batch, total, batch.save_state("sum", total)


def test_sequences_of_different_lengths_keep_their_lane_and_carry_their_state(training):
    counts = [(i % 3 + 1) for i in range(7)]
    want = _in_lanes(counts, 2)
    with tf.Graph().as_default():
        batch, total, save = _sequences(training)
        fetches = [batch.context["index"], batch.sequence, batch.next_key, total, save]
        with tf1.Session() as sess:
            sess.run(tf1.local_variables_initializer())
            coord, threads = started(sess)
            for due in want:
                index, sequence, next_key, sums, _ = sess.run(fetches)
                assert list(zip(index.tolist(), sequence.tolist())) == due
                for i, k, key, got in zip(index, sequence, next_key, sums):
                    # The state carried: everything the sequence showed up to here.
                    shown = 2 * (k + 1)
                    assert got == sum(100 * i + t for t in range(shown))
                    assert key.startswith(b"STOP:") == (k + 1 == counts[i])
            for _ in range(2):  # The end of the input, every time after: never a hang.
                with pytest.raises(tf.errors.OutOfRangeError):
                    sess.run(fetches)
            # Every sequence ended: nothing saved is left behind (no growth over a run).
            assert sess.run([batch._tables["sum"].size(), batch._saved.size()]) == [0, 0]
            stop(coord, threads)


def test_without_small_batches_the_last_partial_step_is_dropped(training):
    want = [due for due in _in_lanes([(i % 3 + 1) for i in range(7)], 3) if len(due) == 3]
    with tf.Graph().as_default():
        batch, _, save = _sequences(training, allow_small_batch=False, batch_size=3)
        assert batch.key.shape.as_list() == [3]
        with tf1.Session() as sess:
            sess.run(tf1.local_variables_initializer())
            coord, threads = started(sess)
            got = []
            with pytest.raises(tf.errors.OutOfRangeError):
                while True:
                    index, sequence, _ = sess.run([batch.context["index"], batch.sequence, save])
                    got.append(list(zip(index.tolist(), sequence.tolist())))
            assert got == want
            stop(coord, threads)


def test_a_run_that_saves_no_state_restarts_the_next_segment_from_the_initial_state(
    training, capfd
):
    """A run that reads the batch but not save_state() (the Supervisor's summary thread of
    adversarial_text's classifier fetching its loss): legacy's barrier never released the
    next segment of those sequences; here it starts from the initial state, said on stderr,
    and every other sequence carries its state as before."""
    with tf.Graph().as_default():
        # Not 0: an unsaved state reads as 0 from the tables.
        batch, total, save = _sequences(training, initial=1000.0)
        fetches = [batch.context["index"], batch.sequence, total]
        with tf1.Session() as sess:
            sess.run(tf1.local_variables_initializer())
            coord, threads = started(sess)
            # Segment 0 of sequences 0 (one segment) and 1 (two), read without a save.
            index, sequence, _ = sess.run(fetches)
            assert list(zip(index.tolist(), sequence.tolist())) == [(0, 0), (1, 0)]
            assert "started from their initial state" not in capfd.readouterr().err
            index, sequence, sums, _ = sess.run([*fetches, save])
            got = {i: (k, total) for i, k, total in zip(index.tolist(), sequence, sums)}
            # Sequence 1's second segment from the initial state: its first was never saved.
            assert got == {1: (1, 1000 + 102 + 103), 2: (0, 1000 + 200 + 201)}
            err = capfd.readouterr().err
            assert "1 segment(s)" in err and "00001_of_00002:1" in err
            assert "started from their initial state" in err
            # Saved from here on: sequence 2 carries its state into its next segment.
            index, sequence, sums, _ = sess.run([*fetches, save])
            got = {i: (k, total) for i, k, total in zip(index.tolist(), sequence, sums)}
            assert got[2] == (1, 1000 + sum(200 + t for t in range(4)))
            assert "started from their initial state" not in capfd.readouterr().err
            stop(coord, threads)


@pytest.mark.parametrize("allow_small_batch", [False, True])
def test_every_part_has_the_static_shape_contrib_documented(training, allow_small_batch):
    """contrib's NextQueuedSequenceBatch documents `sequences[k]` as [batch_size, num_unroll,
    d1, ...], `context[k]` as [batch_size, d1, ...], key and lengths as [batch_size], and
    legacy's barrier's take_many gave batch_size statically where small batches were not
    allowed. adversarial_text's LSTM unstacks a segment's steps: unknown, it failed."""
    with tf.Graph().as_default():
        data = _Inputs()
        batch = training.batch_sequences_with_states(
            data.key,
            {"seq1": data.seq1, "seq2": data.seq2},
            {"context1": tf.constant([1.0, 2.0, 3.0])},
            LENGTH,
            data.initial_states,
            num_unroll=2,
            batch_size=BATCH,
            allow_small_batch=allow_small_batch,
        )
        b = None if allow_small_batch else BATCH
        assert batch.sequences["seq1"].shape.as_list() == [b, 2, 5]
        assert batch.sequences["seq2"].shape.as_list() == [b, 2, 4, 2]
        assert batch.context["context1"].shape.as_list() == [b, 3]
        for part in (batch.key, batch.next_key, batch.length, batch.sequence):
            assert part.shape.as_list() == [b]
        for name, initial in data.initial_states.items():
            assert batch.state(name).shape.as_list() == [b, *initial.shape]
        assert len(tf.unstack(batch.sequences["seq1"], axis=1)) == 2


def test_unknown_states_and_shapes_fail_at_build(training):
    with tf.Graph().as_default():
        data = _Inputs()
        batch = training.batch_sequences_with_states(
            data.key, {"seq1": data.seq1}, {}, 4, data.initial_states, 2, BATCH
        )
        with pytest.raises(KeyError, match="state was not declared: nope"):
            batch.state("nope")
        with pytest.raises(KeyError, match="state was not declared: nope"):
            batch.save_state("nope", tf.zeros([2]))
        with pytest.raises(ValueError, match="Shape for state"):
            training.batch_sequences_with_states(
                data.key, {"seq1": data.seq1}, {}, 4, {"s": tf1.placeholder(tf.float32)}, 2, 2
            )
