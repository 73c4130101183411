"""Batches copied ahead to a device (runtime/device_prefetch.py), tested without a GPU on a
second logical CPU: the same batches as the host path, the iterator on the device; and
"auto" never trades a saved position for the copy."""

import numpy as np
import pytest
import tensorflow as tf

import compat_input
from compat_input._src.runtime import iteration

tf1 = tf.compat.v1


@pytest.fixture
def configured():
    yield compat_input.configure
    compat_input.configure(input_device="auto", save_input_position=True)


def _images(path) -> str:
    with tf1.io.TFRecordWriter(str(path)) as writer:
        for i in range(45):
            image = np.full([4, 4, 3], i % 251, np.uint8)
            feature = {
                "image": tf.train.Feature(bytes_list=tf.train.BytesList(value=[image.tobytes()])),
                "label": tf.train.Feature(int64_list=tf.train.Int64List(value=[i])),
            }
            example = tf.train.Example(features=tf.train.Features(feature=feature))
            writer.write(example.SerializeToString())
    return str(path)


def _read(path: str) -> tuple:
    """Every batch of an image pipeline on a session with two CPUs, and its iterator's device."""
    with tf.Graph().as_default() as graph:
        queue = compat_input.string_input_producer([path], num_epochs=2, shuffle=False)
        _, record = compat_input.TFRecordReader().read(queue)
        parsed = tf1.parse_single_example(
            record,
            {
                "image": tf1.FixedLenFeature([], tf.string),
                "label": tf1.FixedLenFeature([], tf.int64),
            },
        )
        image = tf.reshape(tf1.decode_raw(parsed["image"], tf.uint8), [4, 4, 3])
        batch = compat_input.batch(
            [tf.cast(image, tf.float32) / 255, parsed["label"]], 10, allow_smaller_final_batch=True
        )
        pipeline = iteration.pipelines_behind(batch)[0]
        batches = []
        with tf1.Session(config=tf1.ConfigProto(device_count={"CPU": 2})) as sess:
            sess.run(tf1.local_variables_initializer())
            compat_input.start_queue_runners(sess)
            try:
                while True:
                    batches.append([v.tolist() for v in sess.run(batch)])
            except tf.errors.OutOfRangeError:
                pass
        devices = {op.device for op in graph.get_operations() if op.type == "IteratorV2"}
        return batches, pipeline.device, devices


def test_batches_copied_ahead_to_a_device_are_the_batches_of_the_host_path(
    configured, tmp_path, caplog
):
    path = _images(tmp_path / "images.tfrecord")
    configured(input_device=None)
    host, host_device, host_iterators = _read(path)
    configured(input_device="/cpu:1")
    copied, device, iterators = _read(path)
    assert copied == host and len(host) == 9  # 90 examples: 9 batches, the last full.
    assert host_device is None and device == "/cpu:1"
    assert any(d.endswith("CPU:1") for d in iterators)
    assert not any(d.endswith("CPU:1") for d in host_iterators)
    # tf.data cannot save a position copied to a device: said, not silently wrong.
    assert "left out of checkpoints (batches copied ahead to /cpu:1" in caplog.text


def test_auto_copies_ahead_to_a_gpu_only_where_no_position_is_saved(configured, monkeypatch):
    real = tf.config.list_physical_devices
    monkeypatch.setattr(
        tf.config,
        "list_physical_devices",
        lambda kind=None: ["GPU:0"] if kind == "GPU" else real(kind),
    )

    def device_chosen():
        with tf.Graph().as_default():
            value = compat_input.range_input_producer(10, 1, False).dequeue()
            batch = compat_input.batch([value], 2)
            return iteration.pipelines_behind(batch)[0].device

    configured(input_device="auto", save_input_position=True)
    assert device_chosen() is None
    configured(save_input_position=False)
    assert device_chosen() == "/gpu:0"
    configured(input_device=None)
    assert device_chosen() is None


def test_input_device_must_be_a_name(configured):
    with pytest.raises(TypeError, match="input_device must be 'auto'.*got 1"):
        configured(input_device=1)


def test_auto_copies_a_batcher_left_out_for_its_size_to_a_gpu_and_says_why_once(
    configured, monkeypatch, caplog
):
    # Its position is left out because its buffers are large (position_costs.py), so
    # "auto" copies its batches ahead; it is said for that size (at info: legacy saved no
    # queue), not warned of as a position tf.data could not save.
    import logging

    from compat_input._src.runtime import position_costs

    real = tf.config.list_physical_devices
    monkeypatch.setattr(
        tf.config,
        "list_physical_devices",
        lambda kind=None: ["GPU:0"] if kind == "GPU" else real(kind),
    )
    configured(input_device="auto", save_input_position=True, input_position_max_mb=0.01)
    try:
        with caplog.at_level(logging.INFO, "compat_input"), tf.Graph().as_default():
            value = compat_input.range_input_producer(10, 1, False).dequeue()
            batch = compat_input.batch([value], 2, capacity=1000, name="sized")
            assert iteration.pipelines_behind(batch)[0].device == "/gpu:0"
    finally:
        configured(input_position_max_mb=64)
    said = [r for r in caplog.records if "'sized'" in r.getMessage()]
    assert [r.levelname for r in said] == ["INFO"], [r.getMessage() for r in said]
    assert "its buffers can hold about" in said[0].getMessage()
    assert position_costs.left_out["sized"].startswith("its buffers can hold about")
