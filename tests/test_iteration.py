"""reset / iterate / hold / from_dataset / as_dataset: what queues could never do."""

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_datasets as tfds

import compat_input

tf1 = tf.compat.v1


def _train_and_validation(evaluate_every):
    """Train on an endless shuffled stream; every K steps, a full validation pass."""
    graph = tf.Graph()
    with graph.as_default():
        x = compat_input.range_input_producer(50, seed=3).dequeue()
        train = compat_input.batch([tf.cast(x, tf.float32)], 5)
        v = compat_input.range_input_producer(10, num_epochs=1, shuffle=False).dequeue()
        val = compat_input.batch([tf.cast(v, tf.float32)], 4, allow_smaller_final_batch=True)
        w = tf1.Variable(0.0, use_resource=True)
        step = w.assign_add(tf.reduce_mean(train) * 0.001)
        val_loss = val * w
        trained, passes = [], []
        with tf1.Session() as sess:
            sess.run(tf1.global_variables_initializer())
            compat_input.start_queue_runners(sess)
            for i in range(1, 13):
                trained.append(sess.run(train).tolist())
                sess.run(step)
                if evaluate_every and i % evaluate_every == 0:
                    passes.append(
                        [
                            (b.tolist(), loss.shape[0])
                            for b, loss in compat_input.iterate(sess, [val, val_loss])
                        ]
                    )
    return trained, passes


def test_validation_every_k_steps_sees_each_example_once_and_leaves_training_alone():
    trained, passes = _train_and_validation(evaluate_every=4)
    baseline, _ = _train_and_validation(evaluate_every=0)
    assert trained == baseline
    assert len(passes) == 3
    for one_pass in passes:
        examples = [x for batch, _ in one_pass for x in batch]
        assert examples == [float(i) for i in range(10)]
        assert [n for _, n in one_pass] == [4, 4, 2]


def test_iterate_refuses_an_endless_pipeline_and_names_it():
    with tf.Graph().as_default():
        b = compat_input.batch([compat_input.range_input_producer(5, name="endless").dequeue()], 2)
        with tf1.Session() as sess:
            with pytest.raises(ValueError, match="never end"):
                next(compat_input.iterate(sess, b))


def test_reset_rewinds_only_the_pipelines_behind_the_tensors():
    with tf.Graph().as_default():
        a = compat_input.batch([compat_input.range_input_producer(100, shuffle=False).dequeue()], 2)
        b = compat_input.batch([compat_input.range_input_producer(100, shuffle=False).dequeue()], 2)
        with tf1.Session() as sess:
            compat_input.start_queue_runners(sess)
            sess.run([a, b])
            sess.run([a, b])
            compat_input.reset(sess, a * 2)
            got_a, got_b = sess.run([a, b])
    assert got_a.tolist() == [0, 1] and got_b.tolist() == [4, 5]


def test_hold_keeps_a_variable_shape_batch_until_advanced():
    with tf.Graph().as_default():
        n = compat_input.range_input_producer(6, num_epochs=1, shuffle=False).dequeue()
        padded = compat_input.batch([tf.range(n + 1)], 2, dynamic_pad=True)
        held = compat_input.hold(padded)
        scale = tf1.placeholder(tf.int32, [])
        loss = tf.reduce_sum(held.tensors * scale)
        with tf1.Session() as sess:
            compat_input.start_queue_runners(sess)
            with pytest.raises(
                tf.errors.InvalidArgumentError, match="run sess.run\\(held.advance\\) first"
            ):
                sess.run(loss, {scale: 1})
            sess.run(held.advance)
            # A line search: the loss at several points, all on one batch.
            losses = [sess.run(loss, {scale: s}) for s in (1, 2, 3)]
            first = sess.run(held.tensors)
            sess.run(held.advance)
            second = sess.run(held.tensors)
    assert losses == [1, 2, 3] and first.tolist() == [[0, 0], [0, 1]]
    assert second.shape == (2, 4)


def test_from_dataset_brings_a_tfds_dataset_into_legacy_batching():
    with tfds.testing.mock_data(num_examples=7, policy=tfds.testing.MockPolicy.USE_CODE):
        with tf.Graph().as_default():
            dataset = tfds.load("mnist", split="train")
            example = compat_input.from_dataset(dataset)
            images, labels = compat_input.batch(
                [tf.cast(example["image"], tf.float32), example["label"]],
                3,
                allow_smaller_final_batch=True,
            )
            sizes = []
            with tf1.Session() as sess:
                compat_input.start_queue_runners(sess)
                for _ in range(2):
                    sizes.append(
                        [len(lb) for _, lb in compat_input.iterate(sess, [images, labels])]
                    )
    assert sizes == [[3, 3, 1], [3, 3, 1]]


def test_as_dataset_returns_the_dataset_behind_a_batch():
    with tf.Graph().as_default():
        x = compat_input.range_input_producer(5, num_epochs=1, shuffle=False).dequeue()
        b = compat_input.batch([x * 2], 2, allow_smaller_final_batch=True)
        dataset = compat_input.as_dataset(b)
        it = tf1.data.make_initializable_iterator(dataset)
        nxt = it.get_next()
        got = []
        with tf1.Session() as sess:
            sess.run(it.initializer)
            try:
                while True:
                    got.append(np.asarray(sess.run(nxt)[0]).tolist())
            except tf.errors.OutOfRangeError:
                pass
    assert got == [[0, 2], [4, 6], [8]]


def test_as_dataset_serves_legacy_input_to_eager_tensorflow_2_and_model_fit(tmp_path):
    import os
    import subprocess
    import sys

    script = tmp_path / "eager.py"
    script.write_text(
        "import numpy as np, tensorflow as tf, keras, compat_input\n"
        "with tf.Graph().as_default():\n"
        "    x, y = compat_input.slice_input_producer([np.arange(40, dtype='float32').reshape(20, 2),"
        " np.arange(20) % 2], num_epochs=1, shuffle=False)\n"
        "    batch = compat_input.batch([x, y], 4, allow_smaller_final_batch=True)\n"
        "ds = compat_input.as_dataset(batch)\n"
        "assert tf.executing_eagerly()\n"
        "passes = [[int(v) for b in ds for v in b[1].numpy()] for _ in range(2)]\n"
        "print(passes[0] == passes[1] == [i % 2 for i in range(20)])\n"
        "model = keras.Sequential([keras.layers.Dense(2)])\n"
        "model.compile('sgd', keras.losses.SparseCategoricalCrossentropy(from_logits=True))\n"
        "print(len(model.fit(ds, epochs=3, verbose=0).history['loss']))\n"
    )
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["True", "3"]
