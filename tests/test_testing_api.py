"""compat_input.testing: the public helpers users call to prove their input unchanged.
Each helper must pass on real legacy-vs-compat runs and fail on a planted difference."""

import pytest
import tensorflow as tf

import compat_input
from compat_input import testing
from helpers import write

tf1 = tf.compat.v1


@pytest.fixture
def csv(tmp_path):
    return write(str(tmp_path / "d.csv"), "".join(f"{i},{i % 5}\n" for i in range(40)))


def _input(path, shuffle=False, swap_under_compat=False, drop_under_compat=False):
    def build():
        queue = tf1.train.string_input_producer([path], num_epochs=2, shuffle=shuffle)
        _, line = tf1.TextLineReader().read(queue)
        x, label = tf1.decode_csv(line, [[0], [0]])
        if compat_input.installed() and swap_under_compat:
            # The same x values and labels, but x 3 now carries x 4's label and back.
            label = tf.where(tf.equal(x, 3), 4, tf.where(tf.equal(x, 4), 3, label))
        if compat_input.installed() and drop_under_compat:
            x = tf.where(tf.equal(x, 7), 8, x)
        if shuffle:
            return tf1.train.shuffle_batch([x, label], 4, 30, 10, seed=1)
        return tf1.train.batch([x, label], 4)

    return build


def test_the_same_input_passes_in_order_and_the_runs_are_real(csv):
    legacy, compat = testing.assert_same_input(_input(csv), steps=100)
    assert len(legacy.batches) == 20 and legacy.error is tf.errors.OutOfRangeError
    assert [b[0].tolist() for b in compat.batches[:2]] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert not compat_input.installed()  # The install state is restored.


def test_a_changed_example_fails_naming_the_batch(csv):
    with pytest.raises(AssertionError, match="batch 1 differs"):
        testing.assert_same_input(_input(csv, drop_under_compat=True), steps=100)


def test_shuffled_input_compares_whole_examples(csv):
    testing.assert_same_input(_input(csv, shuffle=True), steps=100, shuffled=True)
    # Same x values and same labels overall, paired differently: whole examples differ.
    with pytest.raises(AssertionError, match="the shuffled input differs"):
        testing.assert_same_input(
            _input(csv, shuffle=True, swap_under_compat=True), steps=100, shuffled=True
        )


def test_shuffled_input_that_does_not_end_is_refused(csv):
    with pytest.raises(AssertionError, match="did not end within 3 steps"):
        testing.assert_same_input(_input(csv, shuffle=True), steps=3, shuffled=True)


def test_a_shorter_input_fails_at_the_end(csv):
    def build():
        epochs = 1 if compat_input.installed() else 2
        queue = tf1.train.string_input_producer([csv], num_epochs=epochs, shuffle=False)
        _, line = tf1.TextLineReader().read(queue)
        return tf1.train.batch(tf1.decode_csv(line, [[0], [0]]), 4)

    with pytest.raises(AssertionError, match="legacy delivered 20 batches"):
        testing.assert_same_input(build, steps=100)
