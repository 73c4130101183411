"""Errors name the record they came from; legacy said "record 0" or nothing at all.

The oracle for "which record" is TensorFlow's own reader: each bad record is found by
reading the files with the legacy reader one record at a time and running the same
per-example op on each value alone; its legacy key (file:line, file:byte offset) is what
compat_input's message must name, and the op's own error type is the type it must keep.
"""

import numpy as np
import pytest
import tensorflow as tf

import compat_input
from helpers import compat_api
from helpers import example
from helpers import legacy_api
from helpers import run_scenario
from helpers import write
from helpers import write_tfrecords

tf1 = tf.compat.v1


def legacy_bad_records(files, make_reader, per_example) -> list:
    """`(legacy key, error type)` of each record whose per-example op fails, in order."""
    found = []
    with tf.Graph().as_default():
        queue = tf1.train.string_input_producer(files, num_epochs=1, shuffle=False)
        key, value = make_reader(tf1).read(queue)
        raw = tf1.placeholder(tf.string, [])
        checked = per_example(raw)
        with tf1.Session() as sess:
            sess.run(tf1.local_variables_initializer())
            coord = tf1.train.Coordinator()
            threads = tf1.train.start_queue_runners(sess, coord)
            try:
                while True:
                    k, v = sess.run([key, value])
                    try:
                        sess.run(checked, {raw: v})
                    except tf.errors.OpError as e:
                        found.append((k.decode(), type(e)))
            except tf.errors.OutOfRangeError:
                pass
            coord.request_stop()
            coord.join(threads)
    return found


def run_compat(build, steps=200):
    return run_scenario(compat_api(), build, steps=steps, install=True)


def csv_files(tmp_path) -> list:
    good = write(str(tmp_path / "a.csv"), "".join(f"{i},{i}\n" for i in range(300)))
    lines = [f"{i},{i}\n" for i in range(300)]
    lines[176] = "oops\n"
    bad = write(str(tmp_path / "b.csv"), "".join(lines))
    return [good, bad]


def decode_pair(line):
    return tf1.decode_csv(line, [[0], [0]])


@pytest.mark.parametrize("threads", [1, 2])
def test_a_malformed_csv_line_is_named_by_file_and_line(tmp_path, threads):
    files = csv_files(tmp_path)
    [(key, legacy_type)] = legacy_bad_records(files, lambda api: api.TextLineReader(), decode_pair)

    def build(api):
        queue = api.string_input_producer(files, num_epochs=1, shuffle=False)
        _, line = api.TextLineReader().read(queue)
        return api.batch(decode_pair(line), 16, num_threads=threads)

    compat = run_compat(build)
    assert compat.error is legacy_type is tf.errors.InvalidArgumentError
    assert key == f"{files[1]}:177"
    # Named first, then TensorFlow's own message, unchanged.
    assert compat.error_message.startswith(
        f"compat_input pipeline 'batch' failed on the example read from {key}:\n"
    )
    assert "Expect 2 fields but have 1" in compat.error_message


def test_a_bad_line_is_named_when_the_input_is_shuffled(tmp_path):
    files = csv_files(tmp_path)

    def build(api):
        queue = api.string_input_producer(files, num_epochs=1)
        _, line = api.TextLineReader().read(queue)
        return api.shuffle_batch(decode_pair(line), 16, 200, 100, num_threads=2)

    compat = run_compat(build)
    assert compat.error is tf.errors.InvalidArgumentError
    assert f"failed on the example read from {files[1]}:177:" in compat.error_message


def test_a_bad_example_in_a_tfrecord_file_is_named_by_its_byte_offset(tmp_path):
    records = [example(x=i) for i in range(40)]
    records[23] = b"not an Example proto"
    f = write_tfrecords(str(tmp_path / "data.tfrecord"), records)

    def parse(value):
        return tf1.parse_single_example(value, {"x": tf1.FixedLenFeature([], tf.int64)})["x"]

    [(key, legacy_type)] = legacy_bad_records([f], lambda api: api.TFRecordReader(), parse)
    offset = key.rpartition(":")[2]

    def build(api):
        queue = api.string_input_producer([f], num_epochs=1, shuffle=False)
        _, value = api.TFRecordReader().read(queue)
        return api.batch([parse(value)], 8)

    compat = run_compat(build)
    assert compat.error is legacy_type
    assert f"the example read from {f} at byte offset {offset}:" in compat.error_message


def test_a_corrupted_tfrecord_file_is_named_among_good_ones(tmp_path):
    files = [
        write_tfrecords(str(tmp_path / f"{i}.tfrecord"), [example(x=j) for j in range(50)])
        for i in range(3)
    ]
    corrupt = files[1]
    data = bytearray(open(corrupt, "rb").read())
    data[200] ^= 0xFF  # Inside a record: its CRC no longer matches.
    write(corrupt, bytes(data))

    def read_all(api):
        queue = api.string_input_producer(files, num_epochs=1, shuffle=False)
        _, value = api.TFRecordReader().read(queue)
        return value

    with tf.Graph().as_default():
        value = read_all(legacy_api())
        with tf1.Session() as sess:
            sess.run(tf1.local_variables_initializer())
            coord = tf1.train.Coordinator()
            threads = tf1.train.start_queue_runners(sess, coord)
            with pytest.raises(tf.errors.DataLossError) as legacy_error:
                while True:
                    sess.run(value)
            coord.request_stop()
            coord.join(threads)
    assert corrupt not in legacy_error.value.message  # Legacy: "corrupted record at N".

    compat = run_compat(lambda api: api.batch([read_all(api)], 10))
    assert compat.error is tf.errors.DataLossError
    # The record's start: the legacy message counts from its data, 12 bytes on.
    assert compat.error_message.startswith(
        f"compat_input pipeline 'batch' failed reading {corrupt} at byte offset 180:\n"
    )
    assert len(compat.values) == 5  # The good file before it, whole.


def test_a_bad_image_file_from_a_producer_is_named(tmp_path):
    with tf.Graph().as_default(), tf1.Session() as sess:
        pngs = sess.run([tf.io.encode_png(np.full([4, 4, 1], i, np.uint8)) for i in range(6)])
    pngs[4] = b"not a png"
    paths = [write(str(tmp_path / f"{i}.png"), data) for i, data in enumerate(pngs)]

    def build(api):
        name = api.string_input_producer(paths, num_epochs=1, shuffle=False).dequeue()
        image = tf.io.decode_png(tf.io.read_file(name), channels=1)
        return api.batch([tf.reshape(image, [4, 4, 1])], 1)

    compat = run_compat(build)
    assert compat.error is tf.errors.InvalidArgumentError
    assert [v.flatten()[0] for v in np.asarray(compat.values)] == [0, 1, 2, 3]
    assert f"failed on the example read from {paths[4]}:" in compat.error_message


def test_a_bad_work_item_holding_separator_bytes_is_named_whole():
    # The log joins a block's keys with NUL and its lines with newlines; a work item
    # holding both is still one key, named whole, as legacy's reader keys it. (The log
    # keeps the last 16 blocks, here the last 16 items: the bad one is among them.)
    items = [f"{i:02d}\x00\n{i:02d}" for i in range(40)]
    items[30] = "30\x00\nxx"

    def per_example(value):
        return tf.strings.to_number(tf.strings.substr(value, 4, 2))

    [(key, legacy_type)] = legacy_bad_records(items, lambda api: api.IdentityReader(), per_example)

    def build(api):
        queue = api.string_input_producer(items, num_epochs=1, shuffle=False)
        _, value = api.IdentityReader().read(queue)
        return api.batch([per_example(value)], 4)

    compat = run_compat(build)
    assert compat.error is legacy_type is tf.errors.InvalidArgumentError
    assert key == items[30]
    assert [float(x) for x in np.concatenate(compat.values)] == list(range(28))
    assert f"failed on the example read from {key}" in compat.error_message


def test_an_example_without_a_record_to_name_keeps_tensorflows_message():
    def build(api):
        x = api.range_input_producer(10, num_epochs=1, shuffle=False).dequeue()
        inverse = tf.debugging.check_numerics(1.0 / tf.cast(7 - x, tf.float32), "x is 7")
        return api.batch([inverse], 1)

    compat = run_compat(build)
    assert compat.error is tf.errors.InvalidArgumentError
    assert len(compat.values) == 7
    # TensorFlow's own message, first line and all: no record to name, nothing added.
    assert compat.error_message.startswith("Graph execution error:\n\n")
    assert "x is 7 : Tensor had Inf" in compat.error_message
    assert "compat_input pipeline" not in compat.error_message


def test_batch_join_names_the_bad_line_of_whichever_reader_read_it(tmp_path):
    files = csv_files(tmp_path)

    def build(api):
        queue = api.string_input_producer(files, num_epochs=1, shuffle=False)
        lists = [decode_pair(api.TextLineReader().read(queue)[1]) for _ in range(2)]
        return api.batch_join(lists, 16)

    compat = run_compat(build)
    assert compat.error is tf.errors.InvalidArgumentError
    assert f"failed on the example read from {files[1]}:177:" in compat.error_message


def test_an_error_caught_and_run_past_names_the_next_bad_record_next(tmp_path, installed):
    lines = [f"{i},{i}\n" for i in range(20)]
    lines[5] = lines[12] = "oops\n"
    f = write(str(tmp_path / "two_bad.csv"), "".join(lines))
    with tf.Graph().as_default():
        queue = compat_input.string_input_producer([f], num_epochs=1, shuffle=False)
        _, line = compat_input.TextLineReader().read(queue)
        batch = compat_input.batch(decode_pair(line), 1)
        named = []
        with tf1.Session() as sess:
            compat_input.start_queue_runners(sess)
            while True:
                try:
                    sess.run(batch)
                except tf.errors.InvalidArgumentError as e:
                    named.append(e.message.splitlines()[0])
                except tf.errors.OutOfRangeError:
                    break
    assert named == [
        f"compat_input pipeline 'batch' failed on the example read from {f}:{n}:" for n in (6, 13)
    ]


def test_errors_of_code_outside_pipelines_are_left_as_they_were():
    with tf.Graph().as_default():
        x = tf1.placeholder(tf.int32)
        with tf1.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError) as raised:
                sess.run(tf.debugging.assert_positive(x), {x: -1})
    assert "compat_input" not in raised.value.message


@pytest.mark.parametrize("bad_lines", [[3, 7], [9]])
def test_skip_policy_names_the_first_skipped_record_and_logs_each(
    tmp_path, capfd, bad_lines, skip_bad_records
):
    lines = [f"{i},{i}\n" for i in range(10)]
    for n in bad_lines:
        lines[n] = "oops\n"
    f = write(str(tmp_path / "bad.csv"), "".join(lines))
    with tf.Graph().as_default():
        queue = compat_input.string_input_producer([f], num_epochs=1, shuffle=False)
        _, line = compat_input.TextLineReader().read(queue)
        batch = compat_input.batch(decode_pair(line), 1)
        with tf1.Session() as sess:
            compat_input.start_queue_runners(sess)
            with pytest.raises(tf.errors.OutOfRangeError):
                while True:
                    sess.run(batch)
            count = compat_input.skipped_records(sess, batch)
            first = compat_input.first_skipped_record(sess, batch)
    assert count == len(bad_lines)
    assert first == f"{f}:{bad_lines[0] + 1}"
    # Each skipped record is logged when the next one shows it was skipped.
    logged = capfd.readouterr().err
    for n in bad_lines:
        if n != 9:
            assert f"compat_input: skipped a bad record: {f}:{n + 1}" in logged


def test_first_skipped_record_is_none_when_nothing_was_skipped(tmp_path, skip_bad_records):
    f = write(str(tmp_path / "good.csv"), "1,2\n3,4\n")
    with tf.Graph().as_default():
        queue = compat_input.string_input_producer([f], num_epochs=1, shuffle=False)
        batch = compat_input.batch(decode_pair(compat_input.TextLineReader().read(queue)[1]), 1)
        with tf1.Session() as sess:
            compat_input.start_queue_runners(sess)
            sess.run(batch)
            sess.run(batch)
            assert compat_input.first_skipped_record(sess, batch) is None


@pytest.mark.parametrize("what", ["first_skipped_record", "skipped_records"])
def test_the_skip_counters_refuse_pipelines_built_without_the_skip_policy(what):
    with tf.Graph().as_default():
        batch = compat_input.batch([compat_input.range_input_producer(3).dequeue()], 1)
        with tf1.Session() as sess:
            with pytest.raises(ValueError, match=f'^{what}: .*bad_records="skip"'):
                getattr(compat_input, what)(sess, batch)


def test_errors_from_make_callable_callables_name_the_record_too(tmp_path):
    files = csv_files(tmp_path)
    [(key, legacy_type)] = legacy_bad_records(files, lambda api: api.TextLineReader(), decode_pair)
    compat_input.install()  # After the oracle ran: installed, tf.compat.v1 is ours.
    with tf.Graph().as_default():
        queue = compat_input.string_input_producer(files, num_epochs=1, shuffle=False)
        _, line = compat_input.TextLineReader().read(queue)
        batch = compat_input.batch(decode_pair(line), 16)
        with tf1.Session() as sess:
            sess.run(tf1.local_variables_initializer())
            compat_input.start_queue_runners(sess)
            step = sess.make_callable(batch)
            with pytest.raises(legacy_type) as raised:
                for _ in range(100):
                    step()
    assert raised.value.message.startswith(
        f"compat_input pipeline 'batch' failed on the example read from {key}:\n"
    )


def test_without_install_errors_keep_tensorflows_message(tmp_path):
    files = csv_files(tmp_path)

    def build(api):
        queue = api.string_input_producer(files, num_epochs=1, shuffle=False)
        _, line = api.TextLineReader().read(queue)
        return api.batch(decode_pair(line), 16)

    compat = run_scenario(compat_api(), build)
    assert compat.error is tf.errors.InvalidArgumentError
    assert "compat_input pipeline" not in compat.error_message
    assert "Expect 2 fields but have 1" in compat.error_message


def test_the_end_of_the_input_names_the_pipeline_that_ended(tmp_path):
    # tf.data says "End of sequence"; legacy's queue named itself, closed, short of a batch.
    path = write(str(tmp_path / "a.csv"), "".join(f"{i},{i}\n" for i in range(50)))

    def build(api):
        queue = api.string_input_producer([path], num_epochs=1, shuffle=False)
        _, line = api.TextLineReader().read(queue)
        return api.shuffle_batch(decode_pair(line), 16, 40, 10, num_threads=2)

    legacy = run_scenario(legacy_api(), build)
    compat = run_compat(build)
    assert compat.error is legacy.error is tf.errors.OutOfRangeError
    assert len(compat.values) == len(legacy.values) == 3
    assert "is closed and has insufficient elements" in legacy.error_message
    first, rest = compat.error_message.split("\n", 1)
    assert first.startswith("compat_input pipeline 'shuffle_batch' (made at ")
    assert "test_origins.py:" in first and "has ended" in first
    assert "End of sequence" in rest  # TensorFlow's own message, kept whole after it.
