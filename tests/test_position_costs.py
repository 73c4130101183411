"""Input positions that would cost a checkpoint more than they give are left out of it.

Legacy's queues saved nothing: a program's checkpoints held its variables only. A position
holds what the pipeline's buffers held (skip_thoughts' 384,000-record shuffle buffer: 198 MB
in each checkpoint, about 16 s a save). A pipeline whose buffers can hold more than
`input_position_max_mb` is left out, and reads after a restore as legacy's queues did.
"""

import pytest
import tensorflow as tf

import compat_input
from helpers import checkpoint_bytes
from helpers import compat_api
from helpers import legacy_api
from helpers import started
from helpers import stop
from helpers import trained_and_saved

tf1 = tf.compat.v1

# 3,000 examples of 1,024 floats: about 12.8 MB of buffers (4 KB and a key each).
_CAPACITY, _WIDTH = 3000, 1024


@pytest.fixture
def position_limit():
    """configure(input_position_max_mb=...) for the test; the default comes back after."""
    default = compat_input.configure().input_position_max_mb
    yield lambda mb: compat_input.configure(input_position_max_mb=mb)
    compat_input.configure(input_position_max_mb=default)


def _train(api):
    x = api.range_input_producer(100000, shuffle=False).dequeue()
    example = tf1.fill([_WIDTH], tf1.cast(x, tf.float32))
    batch = api.batch([example], 4, capacity=_CAPACITY)
    w = tf1.Variable(tf1.zeros([_WIDTH]))
    return batch, tf1.assign_add(w, tf1.reduce_mean(batch, 0))


def _train_save_restore(api, path):
    """Three steps, a checkpoint, then a fresh graph that restores it: the first examples
    read after the restore, and the checkpoint's data (bytes) beyond its variables."""
    with tf.Graph().as_default():
        written = trained_and_saved(api, _train(api)[1], path)
    with tf.Graph().as_default():
        batch, _ = _train(api)
        saver = tf1.train.Saver()
        with tf1.Session() as sess:
            sess.run(tf1.global_variables_initializer())
            saver.restore(sess, written)
            coord, threads = started(sess, api)
            first = sess.run(batch)[:, 0].tolist()
            stop(coord, threads)
    data, model = checkpoint_bytes(written)
    return first, data - model


def test_a_position_over_the_limit_is_left_out_and_the_input_restarts_as_legacy(
    tmp_path, position_limit
):
    position_limit(4)
    legacy = _train_save_restore(legacy_api(), str(tmp_path / "legacy" / "model"))
    compat = _train_save_restore(compat_api(), str(tmp_path / "compat" / "model"))
    # Legacy's restored queues read from the start; so does the input left out.
    assert legacy[0] == compat[0] == [0.0, 1.0, 2.0, 3.0]
    # Its checkpoint holds what legacy's held: no buffered examples.
    assert compat[1] < legacy[1] + 100_000, (compat[1], legacy[1])


def test_the_limit_lifted_saves_the_position_and_the_input_resumes(tmp_path, position_limit):
    position_limit(None)
    first, position = _train_save_restore(compat_api(), str(tmp_path / "model"))
    assert first == [12.0, 13.0, 14.0, 15.0]  # Three batches of 4 were read before the save.
    assert position > 100_000  # Batches read ahead, which legacy's checkpoint never held.


def test_the_estimate_is_what_a_full_buffer_puts_in_a_checkpoint(tmp_path, position_limit):
    # The limit is checked at build against an estimate; a full buffer's position, saved,
    # is within a third of it (a shuffle of scalar strings, the costliest per byte).
    from compat_input._src.runtime import pipeline
    from compat_input._src.runtime import position_costs

    position_limit(None)
    path = str(tmp_path / "model")
    with tf.Graph().as_default():
        line = tf1.strings.as_string(compat_input.range_input_producer(10**5).dequeue())
        batch = compat_input.shuffle_batch(
            [tf1.strings.join([line, "-abcdefghijklmnopqrstuvwxyz"])],
            10,
            capacity=20000,
            min_after_dequeue=19990,
            seed=1,
        )
        source = tf1.get_default_graph()
        estimated = next(
            p.source.buffered for p in pipeline.graph_state(source).pipelines if p.source.buffered
        )
        with tf1.Session() as sess:
            coord, threads = started(sess, compat_input)
            sess.run(batch)  # The buffer is full once a batch leaves it.
            written = tf1.train.Saver().save(sess, path)
            stop(coord, threads)
    data, _ = checkpoint_bytes(written)
    assert estimated[0] == 20000
    assert 0.67 < data / 1e6 / estimated[1] < 1.5, (data, estimated)
    position_limit(data / 1e6 / 2)
    with tf.Graph().as_default():
        line = tf1.strings.as_string(compat_input.range_input_producer(10**6).dequeue())
        compat_input.shuffle_batch([line], 10, capacity=20000, min_after_dequeue=19990)
        saved = [s.name.split("/")[1] for s in tf1.get_collection(tf1.GraphKeys.SAVEABLE_OBJECTS)]
    assert saved == ["input_producer"]  # Its producer's position, small, stays.
    assert position_costs.left_out["shuffle_batch"].startswith("its buffers can hold about")


def test_by_default_a_tutorial_sized_shuffle_buffer_is_left_out_and_named_at_exit():
    # The CIFAR-10 tutorial's distorted_inputs: min_after_dequeue 20,000 of 24x24x3 floats
    # (about 150 MB a checkpoint); a batch of 128 read ahead 3 deep stays in (1.3 MB).
    from compat_input._src.runtime import position_costs

    position_costs.last_written[:] = [None, 0.0, False]
    with tf.Graph().as_default():
        image = tf1.random_uniform([24, 24, 3])
        label = tf1.constant(1, tf.int32)
        compat_input.shuffle_batch(
            [image, label], 128, capacity=20000 + 3 * 128, min_after_dequeue=20000, name="cifar"
        )
        compat_input.batch([image, label], 128, capacity=3 * 128, name="test")
        saved = tf1.get_collection(tf1.GraphKeys.SAVEABLE_OBJECTS)
    assert [s.name.split("/")[1] for s in saved] == ["test"]
    assert position_costs.left_out_said() is None  # No checkpoint written: nothing missed.
    position_costs.last_written[:] = ["/tmp/model.ckpt-0", 0.1, False]
    said = position_costs.left_out_said()
    assert "'cifar' (its buffers can hold about 14" in said and "(20,384 examples" in said, said
    assert "input_position_max_mb=None" in said
    position_costs.last_written[:] = [None, 0.0, False]


@pytest.mark.parametrize("bad", [-1, "64", True])
def test_a_limit_that_is_no_size_names_itself(bad):
    with pytest.raises(ValueError, match=f"input_position_max_mb .* got {bad!r}"):
        compat_input.configure(input_position_max_mb=bad)


def test_a_slice_producer_puts_a_block_of_its_rows_in_a_checkpoint_not_its_data_set(tmp_path):
    # The MNIST-from-numpy pattern: slice_input_producer over the whole data set. Its
    # position held the epoch it gathered, a shuffled copy of the data set (15.6 MB of the
    # 16 MB here) in every checkpoint; legacy's checkpoint held none of it. Still resumed
    # exactly where the checkpoint was taken.
    import numpy as np

    images = np.random.RandomState(0).rand(5000, 784).astype(np.float32)  # 15.7 MB

    def build():
        image, label = compat_input.slice_input_producer(
            [images, np.arange(5000)], shuffle=True, seed=1
        )
        return compat_input.batch([image, label], 8, capacity=16)[1]

    with tf.Graph().as_default():
        tf1.set_random_seed(3)
        labels = build()
        with tf1.Session() as sess:
            coord, threads = started(sess, compat_input)
            before = [sess.run(labels).tolist() for _ in range(3)]
            written = tf1.train.Saver().save(sess, str(tmp_path / "model"))
            after = [sess.run(labels).tolist() for _ in range(2)]
            stop(coord, threads)
    data, _ = checkpoint_bytes(written)
    assert data < 1_000_000, data
    with tf.Graph().as_default():
        tf1.set_random_seed(3)
        labels = build()
        with tf1.Session() as sess:
            tf1.train.Saver().restore(sess, written)
            coord, threads = started(sess, compat_input)
            resumed = [sess.run(labels).tolist() for _ in range(2)]
            stop(coord, threads)
    assert resumed == after and sorted(sum(before + after, [])) != list(range(40))
