"""Readers against TensorFlow's own readers (contract §2, exp4, exp11, exp15)."""

import logging

import pytest
import tensorflow as tf

import compat_input
from helpers import assert_same
from helpers import compat_api
from helpers import differential
from helpers import legacy_api
from helpers import plain
from helpers import write
from helpers import write_gzip
from helpers import write_tfrecords

tf1 = tf.compat.v1


def _read(reader_factory, files, epochs=1, up_to=None):
    def build(api):
        queue = api.string_input_producer(files, num_epochs=epochs, shuffle=False)
        reader = reader_factory(api)
        return reader.read(queue) if up_to is None else reader.read_up_to(queue, up_to)

    return build


def test_text_lines_keep_blank_lines_strip_crlf_and_count_physical_lines(tmp_path):
    f = write(str(tmp_path / "t.txt"), b"h1\nh2\nr1\r\n\nr3")
    run = assert_same(_read(lambda api: api.TextLineReader(skip_header_lines=2), [f], epochs=2))
    assert run.values[0] == [f"{f}:3".encode(), b"r1"]
    assert [v for _, v in run.values] == [b"r1", b"", b"r3"] * 2


def test_text_lines_over_several_files_with_an_empty_one(tmp_path):
    files = [write(str(tmp_path / n), d) for n, d in (("a", "1\n2\n"), ("e", ""), ("b", "3\n"))]
    assert_same(_read(lambda api: api.TextLineReader(), files))


def test_read_up_to_never_crosses_a_file_and_skips_empty_files(tmp_path):
    small = write(str(tmp_path / "small.txt"), "a\nb\n")
    hdr = write(str(tmp_path / "hdr.txt"), "".join(f"{i}\n" for i in range(6)))
    empty = write(str(tmp_path / "empty.txt"), "")
    run = assert_same(_read(lambda api: api.TextLineReader(), [small, hdr, empty, small], up_to=3))
    assert [len(k) for k, _ in run.values] == [2, 3, 3, 2]


def test_fixed_length_records_honour_header_footer_and_drop_a_partial_tail(tmp_path):
    f = write(str(tmp_path / "f.bin"), b"HHAAAABBBBCCCCDDFFF")
    run = assert_same(
        _read(lambda api: api.FixedLengthRecordReader(4, header_bytes=2, footer_bytes=3), [f])
    )
    assert [v for _, v in run.values] == [b"AAAA", b"BBBB", b"CCCC"]
    assert run.values[0][0] == f"{f}:0".encode()


def test_fixed_length_records_with_hop_bytes_overlap(tmp_path):
    f = write(str(tmp_path / "h.bin"), b"0123456789")
    run = assert_same(_read(lambda api: api.FixedLengthRecordReader(4, hop_bytes=3), [f]))
    assert [v for _, v in run.values] == [b"0123", b"3456", b"6789"]


def test_fixed_length_records_in_a_gzip_file(tmp_path):
    f = write_gzip(str(tmp_path / "r.gz"), b"AAAABBBBCC")
    assert_same(_read(lambda api: api.FixedLengthRecordReader(4, encoding="GZIP"), [f]))


@pytest.mark.parametrize("compression", [None, "GZIP", "ZLIB"])
def test_tfrecord_keys_are_byte_offsets(tmp_path, compression):
    f = write_tfrecords(str(tmp_path / "r.tfr"), [b"abcde", b"xy", b"123456"], compression)
    run = assert_same(_read(lambda api: api.TFRecordReader(options=compression), [f]))
    assert [k for k, _ in run.values] == [f"{f}:{o}".encode() for o in (0, 21, 39)]


def test_tfrecord_options_object_is_accepted(tmp_path):
    f = write_tfrecords(str(tmp_path / "r.tfr"), [b"a", b"b"], "GZIP")
    opts = tf1.io.TFRecordOptions(tf1.io.TFRecordCompressionType.GZIP)
    assert_same(_read(lambda api: api.TFRecordReader(options=opts), [f]))


def test_gzip_tfrecords_read_without_options_fail_at_build_time_with_the_fix(tmp_path):
    f = write_tfrecords(str(tmp_path / "r.tfr"), [b"abc"], "GZIP")
    with tf.Graph().as_default():
        queue = compat_input.string_input_producer([f])
        with pytest.raises(
            tf.errors.DataLossError, match="GZIP-compressed.*compression_type='GZIP'"
        ):
            compat_input.TFRecordReader().read(queue)


def test_gzip_tfrecords_named_at_run_time_fail_with_data_loss_like_legacy(tmp_path):
    write_tfrecords(str(tmp_path / "r.tfr"), [b"abc"], "GZIP")

    def build(api):
        computed = tf.stack([tf.strings.join([str(tmp_path), "/r.tfr"])])
        return api.TFRecordReader().read(api.string_input_producer(computed))

    legacy, compat = differential(build)
    assert compat.values == legacy.values == []
    assert compat.error is legacy.error is tf.errors.DataLossError
    assert compat.after_end == legacy.after_end


def test_whole_file_reader_returns_name_and_contents(tmp_path):
    files = [write(str(tmp_path / n), n * 3) for n in ("x", "y")]
    assert_same(_read(lambda api: api.WholeFileReader(), files, epochs=2))


@pytest.mark.parametrize("reader_class", ["WholeFileReader", "IdentityReader"])
def test_one_record_readers_count_each_record_and_work_item_as_legacy(tmp_path, reader_class):
    files = [write(str(tmp_path / n), n * 3) for n in ("x", "y", "z")]

    def build(api):
        queue = api.string_input_producer(files, num_epochs=2, shuffle=False)
        reader = getattr(api, reader_class)()
        key, value = reader.read(queue)
        # Read, then counted, in one run: the counts after each record, as legacy keeps them.
        with tf.control_dependencies([key, value]):
            produced = tf.identity(reader.num_records_produced())
            completed = tf.identity(reader.num_work_units_completed())
        return [key, value, produced, completed]

    run = assert_same(build)
    assert [v[2:] for v in run.values] == [[n, n] for n in range(1, 7)]


@pytest.mark.parametrize("damaged", [False, True])
def test_a_tfrecord_reader_counts_each_file_finished_as_legacy(tmp_path, damaged):
    # The last block of a file counts it finished, once the rest of the file was found
    # empty: a damaged file raises first and is never counted, as on legacy.
    files = [
        write_tfrecords(str(tmp_path / f"f{i}.tfr"), [f"{i}-{j}".encode() for j in range(3)])
        for i in range(3)
    ]
    if damaged:
        with open(files[1], "ab") as f:
            f.write(b"\x07" * 20)

    def build(api):
        queue = api.string_input_producer(files, num_epochs=1, shuffle=False)
        reader = api.TFRecordReader()
        key, value = reader.read(queue)
        with tf.control_dependencies([key, value]):
            completed = tf.identity(reader.num_work_units_completed())
        return [value, completed]

    run = assert_same(build)
    assert [v[1] for v in run.values] == [0, 0, 0, 1, 1, 1, 2, 2, 2][: len(run.values)]
    assert len(run.values) == (6 if damaged else 9)


def test_identity_reader_returns_the_work_item_twice():
    run = assert_same(_read(lambda api: api.IdentityReader(), ["foo", "bar"], epochs=2))
    assert run.values == [[b"foo", b"foo"], [b"bar", b"bar"]] * 2


def test_missing_files_are_named_at_build_time(tmp_path):
    present = write(str(tmp_path / "here.txt"), "x\n")
    with tf.Graph().as_default():
        queue = compat_input.string_input_producer([present, str(tmp_path / "nope.txt")])
        with pytest.raises(tf.errors.NotFoundError, match="1 of the 2 files.*nope.txt"):
            compat_input.TextLineReader().read(queue)


def test_a_directory_given_as_a_file_is_named_at_build_time(tmp_path):
    (tmp_path / "shards").mkdir()
    with tf.Graph().as_default():
        queue = compat_input.string_input_producer([str(tmp_path / "shards")])
        with pytest.raises(tf.errors.FailedPreconditionError, match="shards.*is a directory"):
            compat_input.TFRecordReader().read(queue)


def test_an_unreadable_file_is_named_at_build_time(tmp_path, monkeypatch):
    import os

    f = write(str(tmp_path / "secret.csv"), "1,2\n")
    if os.geteuid() != 0:
        os.chmod(f, 0)
    else:  # Root reads any file: make the file system refuse it instead.
        real = tf.io.gfile.GFile

        def refusing(path, mode="r"):
            if path == f:
                raise tf.errors.PermissionDeniedError(None, None, f"{path}; Permission denied")
            return real(path, mode)

        monkeypatch.setattr(tf.io.gfile, "GFile", refusing)
    with tf.Graph().as_default():
        queue = compat_input.string_input_producer([f])
        with pytest.raises(tf.errors.PermissionDeniedError, match="secret.csv.*cannot be read"):
            compat_input.TextLineReader().read(queue)


def test_missing_file_named_at_run_time_raises_not_found(tmp_path):
    def build(api):
        missing = tf.stack([tf.strings.join([str(tmp_path), "/nope"])])
        return api.TextLineReader().read(api.string_input_producer(missing))

    legacy, compat = differential(build)
    assert compat.values == legacy.values == []
    assert compat.error is legacy.error is tf.errors.NotFoundError
    assert "nope" in compat.error_message


def test_identity_reader_items_are_not_taken_for_files(tmp_path):
    # Work items that are no file (one names a directory, one a missing path): neither is
    # opened, at build time or at run time; each is read back as it is.
    (tmp_path / "adir").mkdir()
    items = ["not-a-file", str(tmp_path / "adir"), str(tmp_path / "missing")]
    run = assert_same(_read(lambda api: api.IdentityReader(), items))
    assert [k for k, _ in run.values] == [i.encode() for i in items]


def test_a_partial_fixed_length_tail_is_dropped_and_named(tmp_path, caplog):
    f = write(str(tmp_path / "t.bin"), b"AAAABBBBCC")
    with tf.Graph().as_default(), caplog.at_level(logging.WARNING, logger="compat_input"):
        compat_input.FixedLengthRecordReader(4).read(compat_input.string_input_producer([f]))
    assert f"{f} ends with 2 bytes" in caplog.text


def test_reader_counters_count_records_and_files(tmp_path):
    files = [write(str(tmp_path / n), "1\n2\n") for n in ("a", "b")]
    with tf.Graph().as_default():
        q = compat_input.string_input_producer(files, num_epochs=1, shuffle=False)
        reader = compat_input.TextLineReader()
        _, value = reader.read(q)
        with tf1.Session() as sess:
            sess.run(tf1.local_variables_initializer())
            compat_input.start_queue_runners(sess)
            # tf.data prefetches, as legacy queues did: counters are exact once input ends.
            for _ in range(4):
                sess.run(value)
            with pytest.raises(tf.errors.OutOfRangeError):
                sess.run(value)
            assert sess.run(reader.num_records_produced()) == 4
            assert sess.run(reader.num_work_units_completed()) == 2


def test_serialize_state_is_unimplemented_for_text_lines():
    with tf.Graph().as_default():
        with pytest.raises(tf.errors.UnimplementedError):
            compat_input.TextLineReader().serialize_state()


def test_fixed_length_files_of_whole_records_are_streamed_with_legacy_keys(tmp_path):
    files = [
        write(str(tmp_path / f"w{i}.bin"), b"HH" + bytes(range(i * 40, i * 40 + 40)) + b"F")
        for i in range(2)
    ]
    run = assert_same(
        _read(lambda api: api.FixedLengthRecordReader(4, header_bytes=2, footer_bytes=1), files)
    )
    assert len(run.values) == 20 and run.values[10][0] == f"{files[1]}:0".encode()


def _over_a_hand_built_queue(api, reader_class, items, close=True):
    """Reads, then counters, reset, and (IdentityReader) state round trip, as run values."""
    out = []
    with tf.Graph().as_default():
        queue = tf1.FIFOQueue(10, tf.string)
        enqueue = queue.enqueue_many([items])
        reader = getattr(api, reader_class)()
        key, value = reader.read(queue)
        counts = [reader.num_records_produced(), reader.num_work_units_completed()]
        with tf1.Session() as sess:  # Only what a legacy program runs: no initializers.
            sess.run(enqueue)
            if close:
                sess.run(queue.close())
            out.append([sess.run([key, value]) for _ in range(3)])
            out.append(sess.run(counts))
            if reader_class == "IdentityReader":
                state = sess.run(reader.serialize_state())
                sess.run(reader.reset())
                out.append(sess.run(counts))
                sess.run(reader.restore_state(state))
            else:
                sess.run(reader.reset())
            out.append(sess.run(counts))
    return plain(out)


@pytest.mark.parametrize("reader_class", ["TextLineReader", "IdentityReader"])
def test_readers_over_hand_built_queues_count_reset_and_keep_state_like_legacy(
    tmp_path, reader_class
):
    f = write(str(tmp_path / "d.txt"), "a\nb\n")
    items = [f, f] if reader_class == "TextLineReader" else ["x", "y", "z"]
    legacy = _over_a_hand_built_queue(legacy_api(), reader_class, items)
    compat = _over_a_hand_built_queue(compat_api(), reader_class, items)
    assert compat == legacy
    assert legacy[1][0] == 3  # Records were counted: the comparison is not of zeros.


def _readers_sharing_one_queue(api, files, readers, up_to):
    """`readers` readers over one producer, each enqueueing what it reads into a common
    queue by one QueueRunner (tf_slim's ParallelReader): every record dequeued, to the end."""
    with tf.Graph().as_default():
        names = api.string_input_producer(files, num_epochs=1, shuffle=False)
        common = tf1.FIFOQueue(64, [tf.string, tf.string], shapes=[[], []])
        made = [api.TFRecordReader() for _ in range(readers)]
        if up_to:
            reads = [common.enqueue_many(r.read_up_to(names, up_to)) for r in made]
        else:
            reads = [common.enqueue(r.read(names)) for r in made]
        tf1.train.add_queue_runner(tf1.train.QueueRunner(common, reads))
        out = common.dequeue_up_to(3)
        got = []
        config = tf1.ConfigProto(operation_timeout_in_ms=20000)
        with tf1.Session(config=config) as sess:
            sess.run(tf1.local_variables_initializer())
            coord = tf1.train.Coordinator()
            threads = api.start_queue_runners(sess, coord=coord)
            try:
                while True:
                    keys, values = sess.run(out)
                    got.extend(zip(keys.tolist(), values.tolist()))
            except tf.errors.OutOfRangeError:
                pass
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=10)
    return sorted(got)


@pytest.mark.parametrize("up_to", [None, 4])
def test_readers_sharing_one_producer_each_take_their_own_files_like_legacy(tmp_path, up_to):
    # Each file is a work item that exactly one reader takes: five readers over three files
    # read every record once, not five times.
    files = [
        write_tfrecords(str(tmp_path / f"part{i}.tfr"), [f"r{i}-{j}".encode() for j in range(7)])
        for i in range(3)
    ]
    legacy = _readers_sharing_one_queue(legacy_api(), files, 5, up_to)
    assert len(legacy) == 21 == len(set(legacy))
    assert _readers_sharing_one_queue(compat_api(), files, 5, up_to) == legacy


def _counters_built_first(api, hand_built: bool) -> list:
    """Counters made before the reader reads anything (TensorFlow's reader tests do), read
    as the reader works through three items."""
    with tf.Graph().as_default():
        reader = api.IdentityReader("counted")
        counts = [reader.num_work_units_completed(), reader.num_records_produced()]
        if hand_built:
            queue = tf1.FIFOQueue(9, [tf.string], shapes=[[]])
            fill = [queue.enqueue_many([["A", "B", "C"]]), queue.close()]
        else:
            items = tf.constant(["A", "B", "C"])
            queue, fill = api.input_producer(items, num_epochs=1, shuffle=False), []
        key, _ = reader.read(queue)
        out = []
        with tf1.Session() as sess:
            sess.run(tf1.local_variables_initializer())
            out.append(plain(sess.run(counts)) if hand_built else None)
            for op in fill:
                sess.run(op)
            coord = tf1.train.Coordinator()
            threads = api.start_queue_runners(sess, coord=coord)
            for _ in range(3):
                out.append(plain(sess.run(key)))
            out.append(plain(sess.run(counts)))
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=10)
    return out


@pytest.mark.parametrize("hand_built", [True, False])
def test_counters_made_before_the_first_read_count_like_legacy(hand_built):
    legacy = _counters_built_first(legacy_api(), hand_built)
    assert legacy[-1] == [2, 3] or legacy[-1] == [3, 3]  # Counted: not a comparison of zeros.
    assert _counters_built_first(compat_api(), hand_built) == legacy


@pytest.mark.parametrize("reader_class", ["TextLineReader", "IdentityReader"])
def test_readers_over_hand_built_queues_work_with_compat_input_installed(tmp_path, reader_class):
    # Over a hand-built queue our reader makes TensorFlow's, whose constructor looks its
    # own class up in io_ops, where install() put ours (tf_slim and TensorFlow's tests
    # construct readers through io_ops).
    f = write(str(tmp_path / "d.txt"), "a\nb\n")
    items = [f, f] if reader_class == "TextLineReader" else ["x", "y", "z"]
    legacy = _over_a_hand_built_queue(legacy_api(), reader_class, items)
    compat_input.install()
    try:
        compat = _over_a_hand_built_queue(compat_api(), reader_class, items)
    finally:
        compat_input.uninstall()
    assert compat == legacy


def _bad_state_error(api, name, scope) -> str:
    """The error restoring a corrupt state into a named reader over a hand-built queue."""
    with tf.Graph().as_default():
        with tf1.name_scope(scope):
            reader = api.IdentityReader(name)
        queue = tf1.FIFOQueue(9, [tf.string], shapes=[[]])
        reader.read(queue)
        with tf1.Session() as sess:
            try:
                sess.run(reader.restore_state(b"BOGUS"))
            except tf.errors.InvalidArgumentError as e:
                return next(line for line in e.message.splitlines() if "parse state" in line)
    return "no error"


@pytest.mark.parametrize("scope", [None, "outer"])
def test_a_named_reader_over_a_hand_built_queue_is_named_in_its_errors_like_legacy(scope):
    # TensorFlow's reader_ops_test matches "Could not parse state for IdentityReader
    # 'test_reader'": the reader's op must take the name, not `test_reader_1`.
    legacy = _bad_state_error(legacy_api(), "test_reader", scope)
    assert "Could not parse state for IdentityReader" in legacy
    assert _bad_state_error(compat_api(), "test_reader", scope) == legacy


def _unserved_reader_over_a_producer(api) -> list:
    """TensorFlow's own IdentityReader (a reader compat_input does not serve, as LMDBReader
    or a program's own ReaderBase) reads a producer through its `queue_ref`, to the end."""
    with tf.Graph().as_default():
        names = api.string_input_producer(["a", "b", "c"], num_epochs=2, shuffle=False)
        key, value = tf1.IdentityReader("theirs").read(names)
        got = []
        with tf1.Session() as sess:
            sess.run(tf1.local_variables_initializer())
            coord = tf1.train.Coordinator()
            threads = api.start_queue_runners(sess, coord=coord)
            try:
                while True:
                    got.append(plain(sess.run([key, value])))
            except tf.errors.OutOfRangeError:
                got.append("end")
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=10)
    return got


def test_a_reader_we_do_not_serve_reads_a_producer_through_its_queue_ref_like_legacy():
    legacy = _unserved_reader_over_a_producer(legacy_api())
    assert len(legacy) == 7 and legacy[-1] == "end"
    assert _unserved_reader_over_a_producer(compat_api()) == legacy
