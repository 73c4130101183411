"""Vectorized per-example graphs (a block of examples at a time) against legacy queues.

With num_threads > 1, compat_input maps whole blocks through a vectorized per-example
graph (capture/vectorize.py). These scenarios check that it is used where it should be, that it
gives the examples legacy gives, and that it steps aside where it cannot be the same.
"""

import collections

import numpy as np
import pytest
import tensorflow as tf
from tensorflow.python.ops.parallel_for import pfor

import compat_input
from compat_input._src.capture import vectorize
from helpers import WORLD
from helpers import assert_in_one_thread_order
from helpers import assert_same
from helpers import assert_same_examples
from helpers import compat_api
from helpers import differential
from helpers import example
from helpers import flatten_examples
from helpers import legacy_api
from helpers import run_scenario
from helpers import write
from helpers import write_tfrecords

tf1 = tf.compat.v1


def _vectorized(graph: tf.Graph) -> bool:
    """Whether some function of `graph` holds ops that tf.vectorized_map wrote."""
    library = graph.as_graph_def().library
    return any("/pfor/" in node.name for f in library.function for node in f.node_def)


def _built_vectorized(build) -> bool:
    with tf.Graph().as_default() as graph:
        build(compat_api())
    return _vectorized(graph)


def _images(tmp_path, count=40, size=6):
    """TFRecords of raw uint8 images whose pixels encode (record, row, column)."""
    records = []
    for k in range(count):
        rows, cols = np.meshgrid(np.arange(size), np.arange(size), indexing="ij")
        pixels = np.stack([rows * 10 + cols, np.full_like(rows, k), rows], axis=-1)
        records.append(example(image=pixels.astype(np.uint8).tobytes(), label=k))
    half = count // 2
    return [
        write_tfrecords(str(tmp_path / "a.tfr"), records[:half]),
        write_tfrecords(str(tmp_path / "b.tfr"), records[half:]),
    ]


def _decode(serialized, size=6):
    parsed = tf.io.parse_single_example(
        serialized,
        {
            "image": tf.io.FixedLenFeature([], tf.string),
            "label": tf.io.FixedLenFeature([], tf.int64),
        },
    )
    image = tf.reshape(tf.io.decode_raw(parsed["image"], tf.uint8), [size, size, 3])
    return tf.cast(image, tf.float32), parsed["label"]


def _read_images(api, files, num_epochs):
    """`(image, label)` of the records of `files`, read in order by one TFRecordReader."""
    queue = api.string_input_producer(files, num_epochs=num_epochs, shuffle=False)
    _, serialized = api.TFRecordReader().read(queue)
    return _decode(serialized)


def test_an_image_pipeline_is_vectorized_and_gives_legacy_examples(tmp_path):
    files = _images(tmp_path)

    def build(api, threads=2):
        image, label = _read_images(api, files, num_epochs=2)
        image = tf.image.per_image_standardization(tf.image.flip_left_right(image))
        return api.batch([image, label], 8, num_threads=threads, allow_smaller_final_batch=True)

    assert _built_vectorized(build)
    # One op over a block may round differently from one op per example.
    _, compat = assert_in_one_thread_order(build, rtol=1e-5, atol=1e-6)
    assert len(flatten_examples(compat.values, 1)) == 80


def test_each_constant_value_is_held_once_in_each_of_the_input_s_functions(tmp_path):
    # Every op of a graph's function library costs each new set of fetches a session runs
    # (core/function_defs.py); pfor and tracing give each use of a shape its own constant.
    files = _images(tmp_path)
    with tf.Graph().as_default() as graph:
        image, label = _read_images(compat_api(), files, num_epochs=1)
        image = tf.image.per_image_standardization(tf.image.flip_left_right(image))
        compat_api().batch([image, label], 8, num_threads=2)
    assert _vectorized(graph)
    for function in graph.as_graph_def().library.function:
        constants = [
            (node.device, node.attr["dtype"].type, node.attr["value"].SerializeToString())
            for node in function.node_def
            if node.op == "Const" and not node.input
        ]
        repeated = [c for c, n in collections.Counter(constants).items() if n > 1]
        assert not repeated, (function.signature.name, repeated[:3])


def test_random_crops_are_drawn_for_each_example_of_a_block(tmp_path):
    files = _images(tmp_path)

    def build(api):
        image, label = _read_images(api, files, num_epochs=1)
        crop = tf.image.random_flip_left_right(tf.image.random_crop(image, [3, 3, 3]))
        return api.batch([crop, label], 40, num_threads=2)

    assert _built_vectorized(build)
    legacy, compat = differential(build)
    for run in (legacy, compat):
        crops, labels = (np.array(v) for v in run.values[0])
        assert sorted(labels.tolist()) == list(range(40))
        corners = set()
        for crop, label in zip(crops, labels):
            assert (crop[..., 1] == label).all()  # The example's own pixels.
            rows = crop[..., 2][:, 0]
            cols = crop[..., 0][0] - rows[0] * 10
            if cols[0] > cols[-1]:
                cols = cols[::-1]  # Flipped.
            # A 3x3 window of the 6x6 image, contiguous, at a valid offset.
            assert rows.tolist() == list(range(int(rows[0]), int(rows[0]) + 3))
            assert cols.tolist() == list(range(int(cols[0]), int(cols[0]) + 3))
            corners.add((int(rows[0]), int(cols[0])))
        # 16 possible offsets: one shared draw for a block would give one corner.
        assert len(corners) > 4, (run, corners)


def test_records_of_several_lengths_decode_as_legacy_decodes_them(tmp_path):
    lines = [bytes(range(1 + k % 5)) for k in range(50)]
    f = write_tfrecords(str(tmp_path / "v.tfr"), lines)

    def build(api, threads=2):
        queue = api.string_input_producer([f], num_epochs=1, shuffle=False)
        _, value = api.TFRecordReader().read(queue)
        raw = tf.cast(tf.io.decode_raw(value, tf.uint8), tf.int32)
        # Lengths differ within a block; every example still has one shape.
        return api.batch(
            [tf.reduce_sum(raw), tf.size(raw)],
            7,
            num_threads=threads,
            allow_smaller_final_batch=True,
        )

    assert _built_vectorized(build)
    _, compat = assert_in_one_thread_order(build)
    assert flatten_examples(compat.values, 1) == [1 + k % 5 for k in range(50)]


def test_fixed_length_records_are_vectorized_and_match_legacy(tmp_path):
    data = np.random.default_rng(0).integers(0, 255, size=13 * 30, dtype=np.uint8)
    f = write(str(tmp_path / "r.bin"), data.tobytes())

    def build(api, threads=2):
        queue = api.string_input_producer([f], num_epochs=1, shuffle=False)
        _, record = api.FixedLengthRecordReader(13).read(queue)
        raw = tf.io.decode_raw(record, tf.uint8)
        return api.batch(
            [tf.reshape(tf.cast(raw[1:], tf.float32), [12]) / 255.0, tf.cast(raw[0], tf.int32)],
            4,
            num_threads=threads,
            allow_smaller_final_batch=True,
        )

    assert _built_vectorized(build)
    # One division over a block may round the last bit differently.
    _, compat = assert_in_one_thread_order(build, rtol=1e-6)
    assert flatten_examples(compat.values, 1) == data[::13].astype(int).tolist()


def test_fixed_length_records_need_no_example_at_a_time_fallback(tmp_path):
    # Records of a text file may differ in length: decode_raw's block keeps a per-example
    # map beside it for such blocks, a second trace of the whole example graph at build.
    # A fixed-length reader's records all have one length: no fallback is traced.
    binary = write(str(tmp_path / "r.bin"), bytes(range(13)) * 4)
    lines = write(str(tmp_path / "r.txt"), "abcd\nefgh\n")

    def loops(reader, path):
        with tf.Graph().as_default() as graph:
            queue = compat_input.string_input_producer([path], num_epochs=1, shuffle=False)
            _, record = reader().read(queue)
            raw = tf.cast(tf.io.decode_raw(record, tf.uint8), tf.float32) / 2.0
            compat_input.batch([tf.reshape(raw[:4], [4])], 4, num_threads=2)
        library = graph.as_graph_def().library.function
        vectorized = [f for f in library if any("/pfor/" in n.name for n in f.node_def)]
        assert vectorized
        # The choice between the block's result and the per-example map over it.
        return {n.op for f in vectorized for n in f.node_def} & {"If", "StatelessIf"}

    assert loops(compat_input.TextLineReader, lines)
    assert not loops(lambda: compat_input.FixedLengthRecordReader(13), binary)


def test_an_out_of_range_crop_fails_as_the_legacy_slice_fails(tmp_path):
    f = write(str(tmp_path / "n.txt"), "".join(f"{i}\n" for i in [0, 1, 2, 5, 1]))

    def build(api):
        queue = api.string_input_producer([f], num_epochs=1, shuffle=False)
        _, line = api.TextLineReader().read(queue)
        begin = tf.strings.to_number(line, tf.int32)
        window = tf.slice(tf.range(10), [begin], [6])  # begin 5 runs past the end.
        return api.batch([window], 5, num_threads=2)

    assert _built_vectorized(build)
    legacy, compat = differential(build, install=True)
    assert compat.values == legacy.values == []
    # Legacy hid the slice's error behind OutOfRangeError; the failing line is named here,
    # found by running the block's examples one at a time.
    assert legacy.error is tf.errors.OutOfRangeError
    assert compat.error is tf.errors.InvalidArgumentError
    assert "n.txt:4:" in compat.error_message


def _numbered_tfrecords(tmp_path) -> list:
    """Four TFRecord files of nine examples each, feature `v`: 100 * file + record + 1."""
    return [
        write_tfrecords(str(tmp_path / f"{k}.tfr"), [example(v=k * 100 + i + 1) for i in range(9)])
        for k in range(4)
    ]


def _read_v(api, queue) -> dict:
    """A new TFRecordReader's next example of `queue`, parsed: {"v": int64}."""
    _, serialized = api.TFRecordReader().read(queue)
    return tf.io.parse_single_example(serialized, {"v": tf.io.FixedLenFeature([], tf.int64)})


def test_a_join_of_different_readers_lists_is_vectorized_and_reads_each_record_once(tmp_path):
    files = _numbered_tfrecords(tmp_path)

    def build(api):
        queue = api.string_input_producer(files, num_epochs=1, shuffle=False)
        lists = []
        for scale in (2, -1):  # Two different per-example graphs.
            v = _read_v(api, queue)
            lists.append([v["v"], v["v"] * scale])
        return api.batch_join(lists, 5, allow_smaller_final_batch=True)

    assert _built_vectorized(build)
    legacy, compat = differential(build)
    for run in (legacy, compat):
        pairs = list(zip(flatten_examples(run.values, 0), flatten_examples(run.values, 1)))
        assert sorted(v for v, _ in pairs) == sorted(
            k * 100 + i + 1 for k in range(4) for i in range(9)
        )
        # Each record (none is 0, where 2v == -v) went through one list, whole files at a time (one reader per file).
        by_file = collections.defaultdict(set)
        for v, out in pairs:
            assert out in (2 * v, -v)
            by_file[v // 100].add(out == 2 * v)
        assert all(len(s) == 1 for s in by_file.values()), (run is legacy, pairs)


def test_examples_of_several_shapes_are_not_vectorized():
    def build(api, threads=2):
        n = api.range_input_producer(6, num_epochs=1, shuffle=False).dequeue()
        return api.batch(
            [tf.range(n), n],
            2,
            num_threads=threads,
            dynamic_pad=True,
            allow_smaller_final_batch=True,
        )

    assert not _built_vectorized(build)
    assert_in_one_thread_order(build)
    # The reason says the shapes differ by design (street's batch_join of images of their
    # own widths, dynamic_pad=True), not to give them a fixed shape.
    (how,) = _mapped(build)
    assert "padded per batch (dynamic_pad)" in how and "'range" in how.lower()
    assert "give it a fixed shape" not in how


def test_a_seeded_random_op_is_vectorized_and_draws_what_one_legacy_thread_draws():
    def build(api, threads=2):
        x = api.range_input_producer(8, num_epochs=1, shuffle=False).dequeue()
        return api.batch([x, tf.random.uniform([], seed=1)], 4, num_threads=threads)

    assert _built_vectorized(build)
    _, compat = assert_in_one_thread_order(build)
    assert len(set(flatten_examples(compat.values, 1))) == 8  # A draw per example.


def test_a_seeded_random_op_of_a_shape_per_example_is_not_vectorized():
    # Its counter moves on by the example's own size: the k-th draw depends on the sizes
    # before it, so the examples go one at a time, in order.
    def build(api, threads=2):
        x = api.range_input_producer(8, num_epochs=1, shuffle=False).dequeue()
        noise = tf.reduce_sum(tf.random.uniform([x % 3 + 1], seed=1))
        return api.batch([x, noise], 4, num_threads=threads)

    assert not _built_vectorized(build)
    legacy = run_scenario(legacy_api(), lambda api: build(api, 1))
    compat = run_scenario(compat_api(), build)
    assert compat.structure == legacy.structure and compat.error == legacy.error
    assert flatten_examples(compat.values, 0) == flatten_examples(legacy.values, 0)
    assert len(set(flatten_examples(compat.values, 1))) == 8  # A draw per example.


def test_tensorflows_converter_registry_is_left_as_it_was(tmp_path):
    before = dict(pfor._pfor_converter_registry)
    files = _images(tmp_path, count=4)
    with tf.Graph().as_default():
        queue = compat_api().string_input_producer(files)
        _, serialized = compat_api().TFRecordReader().read(queue)
        image, _ = _decode(serialized)
        compat_api().batch([tf.image.random_crop(image, [2, 2, 3])], 2, num_threads=2)
    assert pfor._pfor_converter_registry == before
    assert "DecodeRaw" not in pfor._pfor_converter_registry
    assert "StringToNumber" not in pfor._pfor_converter_registry


def test_a_vocabulary_lookup_is_vectorized_and_matches_legacy(tmp_path):
    f = write(str(tmp_path / "w.txt"), "".join(f"{w}\n" for w in "b a c a zz b c".split()))

    def build(api, threads=2):
        queue = api.string_input_producer([f], num_epochs=2, shuffle=False)
        _, word = api.TextLineReader().read(queue)
        table = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(["a", "b", "c"], [0, 1, 2]), default_value=-1
        )
        ids = table.lookup(tf.strings.strip(word))
        return api.batch([word, ids], 3, num_threads=threads, allow_smaller_final_batch=True)

    assert _built_vectorized(build)
    _, compat = assert_in_one_thread_order(build)
    assert len(flatten_examples(compat.values, 0)) == 14


@pytest.mark.parametrize("threads, size", [(1, 2), (1, 20), (2, 20)])
def test_the_vectorized_and_the_per_example_path_give_the_same_examples(tmp_path, threads, size):
    files = _images(tmp_path, count=20)

    def build(api, num_threads=threads):
        image, label = _read_images(api, files, num_epochs=1)
        return api.batch(
            [tf.image.per_image_standardization(image), label], size, num_threads=num_threads
        )

    # One thread: blocks of the batch's size; batches of 2 are too small to gain by it.
    assert _built_vectorized(build) == (size > 2)
    assert_in_one_thread_order(build, threads=threads, rtol=1e-5, atol=1e-6)


def test_a_record_of_the_wrong_length_before_a_fixed_reshape_fails_and_is_named(tmp_path):
    records = [bytes([k] * 4) for k in range(9)] + [b"\x01\x02\x03"]
    f = write_tfrecords(str(tmp_path / "short.tfr"), records)

    def build(api):
        queue = api.string_input_producer([f], num_epochs=1, shuffle=False)
        _, value = api.TFRecordReader().read(queue)
        pixels = tf.reshape(tf.io.decode_raw(value, tf.uint8), [2, 2])
        return api.batch([pixels], 10, num_threads=2)

    assert _built_vectorized(build)
    legacy, compat = differential(build, install=True)
    assert compat.values == legacy.values == []
    assert legacy.error is tf.errors.OutOfRangeError  # Legacy hid the reshape's error.
    assert compat.error is tf.errors.InvalidArgumentError
    offset = sum(len(r) + 16 for r in records[:-1])
    assert f"short.tfr at byte offset {offset}" in compat.error_message


@pytest.mark.parametrize("threads", [1, 2])
def test_functions_conds_and_loops_in_the_per_example_graph_match_legacy(threads):
    @tf.function
    def inner(x):
        return tf.cond(tf.equal(x % 2, 0), lambda: x * 10, lambda: -x)

    @tf.function
    def outer(x):
        return inner(x) + 1  # A function calling a function.

    def build(api, num_threads=threads):
        x = api.range_input_producer(12, num_epochs=1, shuffle=False).dequeue()
        squares = tf.while_loop(lambda i, s: i < x, lambda i, s: (i + 1, s + i * i), [0, 0])[1]
        return api.batch(
            [x, outer(x), squares], 4, num_threads=num_threads, allow_smaller_final_batch=True
        )

    if threads == 1:
        assert_same(build)
    else:
        assert_in_one_thread_order(build, threads=threads)


def test_converting_leaves_the_logger_and_other_threads_records_alone(tmp_path):
    import logging
    import threading

    from compat_input._src.capture.block_converters import _QuietConversion

    logger = tf.get_logger()
    level, filters = logger.level, list(logger.filters)
    files = _images(tmp_path, count=4)

    def build(api):
        return api.batch(list(_read_images(api, files, num_epochs=1)), 2, num_threads=2)

    assert _built_vectorized(build)
    assert (logger.level, logger.filters) == (level, filters)

    quiet = _QuietConversion()
    pfor_path = pfor.__file__

    def record(path):
        return logging.LogRecord("tensorflow", logging.ERROR, path, 1, "msg", None, None)

    assert not quiet.filter(record(pfor_path))  # pfor's, from the converting thread.
    assert quiet.filter(record(__file__))  # Anything else from that thread passes.
    elsewhere = []
    thread = threading.Thread(target=lambda: elsewhere.append(quiet.filter(record(pfor_path))))
    thread.start()
    thread.join()
    assert elsewhere == [True]  # Even pfor's records, from any other thread.


def test_a_block_is_vectorized_without_gathering_each_examples_view(tmp_path):
    # tf.vectorized_map takes each example's view by gathering it at the example's index
    # (broadcasting blocks of one), and pfor kept that machinery: 31 of the CSV function's
    # 41 nodes, which every pipeline's iterator instantiates. The views are the block.
    path = write(str(tmp_path / "rows.csv"), "".join(f"{i},{i * 2}\n" for i in range(20)))

    def build(api):
        queue = api.string_input_producer([path], num_epochs=1, shuffle=False)
        _, line = api.TextLineReader().read(queue)
        return api.shuffle_batch(tf1.decode_csv(line, [[0], [0]]), 4, 40, 8, num_threads=2)

    with tf.Graph().as_default() as graph:
        build(compat_api())
    library = graph.as_graph_def().library.function
    vectorized = [f for f in library if any("/pfor/" in n.name for n in f.node_def)]
    assert vectorized
    kinds = {node.op for f in vectorized for node in f.node_def}
    assert "DecodeCSV" in kinds and not kinds & {"GatherV2", "SelectV2", "Range", "Max"}
    # Not per epoch: a reader that ends its file takes the next epoch's first, as legacy.
    assert_same_examples(build)


def _mapped(build) -> list:
    """How each batcher of `build` mapped its per-example graph (what `compat-input run`
    reports at exit)."""
    before = len(vectorize.mappings)
    with tf.Graph().as_default():
        build(compat_api())
    return [how for _, how in vectorize.mappings[before:]]


def test_a_var_len_feature_made_dense_per_example_says_so_in_the_program_s_words(tmp_path):
    # swivel's input: each example's `VarLenFeature` values become a dense matrix through
    # `sparse_to_dense`; its values are of a number of their own, so the batcher runs one
    # example at a time. The reason names the program's op and line, without TensorFlow's
    # node of pfor's own loop ("{{node compat_input_example/loop_body/...}}").
    def serialized(i):
        return tf.train.Example(
            features=tf.train.Features(
                feature={
                    "at": tf.train.Feature(
                        int64_list=tf.train.Int64List(value=[i % 4] * (i % 3 + 1))
                    ),
                }
            )
        ).SerializeToString()

    path = write_tfrecords(str(tmp_path / "s.tfrecord"), [serialized(i) for i in range(12)])

    def build(api):
        queue = api.string_input_producer([path], shuffle=False)
        _, record = api.TFRecordReader().read(queue)
        at = tf.compat.v1.parse_single_example(record, {"at": tf.io.VarLenFeature(tf.int64)})
        rows = tf.expand_dims(at["at"].values, 1)
        return api.batch([tf.reduce_sum(tf.concat([rows, rows], axis=1), 0)], 2, num_threads=2)

    (how,) = _mapped(build)
    assert how.startswith("per example (ExpandDims"), how
    assert "test_vectorize.py" in how and "could not run over a block" in how, how
    assert "a fixed shape there (FixedLenFeature" in how, how
    assert "{{node" not in how and "loop_body" not in how, how


def test_csv_and_fixed_length_decoding_run_vectorized_and_say_so(tmp_path):
    csv = write(str(tmp_path / "a.csv"), "".join(f"{i},{i * 3}\n" for i in range(30)))
    fixed = write(str(tmp_path / "r.bin"), bytes(range(90)))

    def csv_build(api, threads=2):
        queue = api.string_input_producer([csv], num_epochs=1, shuffle=False)
        _, line = api.TextLineReader().read(queue)
        a, b = tf1.decode_csv(line, [[0], [0]])
        return api.batch([a, b], 7, num_threads=threads, allow_smaller_final_batch=True)

    def fixed_build(api, threads=2):
        queue = api.string_input_producer([fixed], num_epochs=1, shuffle=False)
        _, record = api.FixedLengthRecordReader(3).read(queue)
        raw = tf.io.decode_raw(record, tf.uint8)
        return api.batch([raw[0], tf.reshape(raw[1:], [2])], 7, num_threads=threads)

    for build in (csv_build, fixed_build):
        assert _built_vectorized(build)
        (how,) = _mapped(build)
        assert how.startswith("vectorized"), how
        assert_in_one_thread_order(build)


def test_a_per_example_cond_is_vectorized_and_picks_each_examples_branch():
    def build(api, threads=2):
        x = api.range_input_producer(20, num_epochs=1, shuffle=False).dequeue()
        v = tf.cast(tf.fill([3], x), tf.float32)
        # v1 control flow under TF1 behaviour (Switch/Merge); an If op under TF2's.
        picked = tf.cond(tf.equal(x % 3, 0), lambda: tf.reverse(v * 2.0, [0]), lambda: -v)
        return api.batch([x, picked], 6, num_threads=threads, allow_smaller_final_batch=True)

    assert _built_vectorized(build)
    _, compat = assert_in_one_thread_order(build)
    for x, picked in zip(flatten_examples(compat.values, 0), flatten_examples(compat.values, 1)):
        assert picked == ([2.0 * x] * 3 if x % 3 == 0 else [-float(x)] * 3)


def test_a_cond_whose_untaken_branch_would_fail_is_not_run_for_every_example():
    def build(api, threads=2):
        x = api.range_input_producer(8, num_epochs=1, shuffle=False).dequeue()
        row = tf.range(x)  # Empty for x == 0: its first element exists only for x > 0.
        first = tf.cond(x > 0, lambda: tf.reshape(row[:1], []), lambda: tf.constant(-1))
        return api.batch([x, first], 4, num_threads=threads)

    _, compat = assert_in_one_thread_order(build)
    assert flatten_examples(compat.values, 1) == [-1] + [0] * 7


# Pixels a channel: 25 and 36 fold through odd lengths (a middle one kept); 576, CIFAR-10's crop.
@pytest.mark.parametrize("size", [5, 6, 24])
def test_a_contrast_factor_of_each_example_is_applied_to_that_example(tmp_path, size):
    files = _images(tmp_path, count=20, size=size)

    def build(api, threads=2):
        queue = api.string_input_producer(files, num_epochs=1, shuffle=False)
        _, serialized = api.TFRecordReader().read(queue)
        image, label = _decode(serialized, size)
        image = image * 1.37 - 40.0  # Values whose sums round.
        factor = 0.5 + tf.cast(label, tf.float32) / 10.0  # Differs between examples.
        return api.batch([tf.image.adjust_contrast(image, factor), label], 10, num_threads=threads)

    assert _built_vectorized(build)
    # The kernel's own bits, though a whole block is adjusted at once.
    assert_in_one_thread_order(build)


def _fixed_size_images(api, threads, make):
    """Ten 2x2x3 float images, each `make(image)`, with their number, batched by 4."""
    x = api.range_input_producer(10, num_epochs=1, shuffle=False).dequeue()
    image = tf.reshape(tf.cast(tf.range(12) * (x + 1), tf.float32) / 7.0, [2, 2, 3])
    return api.batch([make(image, x), x], 4, num_threads=threads, allow_smaller_final_batch=True)


def test_a_slice_past_a_whole_axis_fails_in_a_block_as_for_one_example():
    # A per-example slice keeping an axis whole: only begin 0 is valid there, as the kernel
    # checks for one example. Example 6 begins at 1 on the whole first axis.
    def make(image, x):
        begin = tf.stack([tf.cast(tf.equal(x, 6), tf.int32), tf.cast(x % 2, tf.int32), 0])
        return tf.slice(image, begin, [2, 1, 3])

    build = lambda api, threads=1: _fixed_size_images(api, threads, make)  # noqa: E731
    assert _built_vectorized(build)
    legacy, compat = differential(build, install=True)
    # Legacy: the examples before 6, then the end (the slice's error in coord.join);
    # compat_input: the whole batch before 6's, then the error (see the migration guide).
    assert flatten_examples(legacy.values, 1) == [0, 1, 2, 3, 4, 5]
    assert legacy.error is tf.errors.OutOfRangeError
    assert compat.values == legacy.values[:1]
    assert compat.error is tf.errors.InvalidArgumentError, compat.error_message[:300]


@pytest.mark.parametrize("op", ["RGBToHSV", "SparseToDense", "Unique"])
def test_an_op_with_no_block_conversion_is_named_without_tracing_a_block(monkeypatch, op):
    # pfor has no converter for an RGB-to-HSV or a sparse-to-dense (nor a JPEG decode): a
    # block of the graph was traced and converted up to it, then refused (inception's
    # input: 0.11 s of its build). The op's type says so before.
    traced = []
    over_block = vectorize._over_block
    monkeypatch.setattr(vectorize, "_over_block", lambda *a: traced.append(a) or over_block(*a))

    def make(image, x):
        if op == "RGBToHSV":
            return tf.image.rgb_to_hsv(image)
        if op == "Unique":  # Values of a count of their own, as a decoded image's size.
            return tf.reduce_sum(tf.unique(tf.stack([x, x, 1]))[0])
        return tf.compat.v1.sparse_to_dense([[0, 0], [1, 1]], [2, 3], [x, x + 1])

    def build(api, threads=2):
        return _fixed_size_images(api, threads, make)

    (how,) = _mapped(build)
    assert how.startswith(f"per example (no block conversion for {op} '"), how
    assert f"at {__file__}:" in how, how
    # Moving it after the batcher helps only where its values would batch.
    own_shape = "a shape of their own in each example" in how
    assert own_shape == (op == "Unique") != ("after the batcher" in how), how
    assert not traced
    assert_in_one_thread_order(build)  # The same examples, floats bit for bit.


@pytest.mark.parametrize(
    "method",
    ["bilinear", "nearest", "bicubic", "area", "bilinear_half_pixel", "bilinear_4d"],
)
def test_a_resize_to_one_size_runs_a_block_at_a_time_as_legacy(method):
    # Each image of a batch is resized on its own: a block's images are one call of the
    # kernel (pfor has no converter for the resizes), each with the values it had alone.
    resize = tf.compat.v1.image.resize_images
    methods = tf.compat.v1.image.ResizeMethod

    def make(image, x):
        if method == "bilinear_half_pixel":  # tf.image.resize's (TF2's) kernel settings.
            return tf.image.resize(image, [3, 5])
        if method == "bilinear_4d":
            return tf.compat.v1.image.resize_bilinear(image[None], [5, 3])[0]
        kind = {"bilinear": methods.BILINEAR, "nearest": methods.NEAREST_NEIGHBOR}
        kind.update(bicubic=methods.BICUBIC, area=methods.AREA)
        return resize(image, [5, 4], method=kind[method])

    def build(api, threads=2):
        return _fixed_size_images(api, threads, make)

    (how,) = _mapped(build)
    assert how.startswith("vectorized"), how
    assert_in_one_thread_order(build)  # Floats bit for bit.


def test_compat_input_run_reports_how_each_batcher_mapped_its_examples(tmp_path):
    import subprocess
    import sys

    csv = write(str(tmp_path / "a.csv"), "".join(f"{i},{i}\n" for i in range(50)))
    program = write(
        str(tmp_path / "prog.py"),
        "import tensorflow as tf\n"
        f"queue = tf.train.string_input_producer([{csv!r}], num_epochs=1)\n"
        "_, line = tf.TextLineReader().read(queue)\n"
        "a, b = tf.decode_csv(line, [[0], [0]])\n"
        "fast = tf.train.batch([a, b], 5, num_threads=2)\n"
        "b = tf.reshape(tf.py_func(lambda v: v, [b], tf.int32), [])\n"
        "slow = tf.train.batch([a, b], 5, num_threads=2)\n",
    )
    out = subprocess.run(
        [sys.executable, "-m", "compat_input._src.commands.cli", "run", program],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    lines = [line for line in out.stderr.splitlines() if " ran " in line]
    assert lines[0].startswith("compat-input: batch ran vectorized"), lines
    # What runs slowly, the line of the program that made it, and what would make it fast.
    assert lines[1].startswith("compat-input: batch_1 ran per example (PyFunc"), lines
    assert f"at {program}:6 runs Python once per example" in lines[1], lines
    assert "TensorFlow ops would run a block at a time" in lines[1], lines


def test_a_join_of_readers_with_the_same_preprocessing_is_vectorized_as_one_and_matches(
    tmp_path,
):
    files = _numbered_tfrecords(tmp_path)

    def build(api):
        queue = api.string_input_producer(files, num_epochs=2, shuffle=False)
        lists = []
        for _ in range(3):  # One preprocessing function called for each reader.
            v = _read_v(api, queue)
            lists.append([v["v"], tf.strings.as_string(v["v"] * 3), v["v"] % 7])
        return api.batch_join(lists, 5, allow_smaller_final_batch=True)

    assert _built_vectorized(build)
    (how,) = _mapped(build)
    assert how.startswith("vectorized"), how
    # Whole examples: each value with its string and remainder.
    # Not per epoch: a reader that ends its file takes the next epoch's first, as legacy.
    assert_same_examples(build)


@pytest.mark.parametrize("stream", ["reader", "queue"])
def test_copies_of_one_preprocessing_over_one_stream_run_a_block_at_a_time_in_order(
    tmp_path, stream
):
    # inception's and im2txt's input: several batch_join threads parse and preprocess one
    # dequeue() of the program's own queue (or one reader's read()), each thread a copy of
    # one function. Copies of one computation over one stream are one list run by that
    # many threads: a block at a time, in one thread's order (legacy's threads took the
    # stream's elements by timing, so one thread is the order there is to compare).
    files = _numbered_tfrecords(tmp_path)

    def build(api, threads=3):
        queue = api.string_input_producer(files, num_epochs=2, shuffle=False)
        serialized = api.TFRecordReader().read(queue)[1]
        if stream == "queue":
            records = api.FIFOQueue(8, [tf.string], shapes=[[]])
            api.add_queue_runner(api.QueueRunner(records, [records.enqueue([serialized])]))
            serialized = records.dequeue()
        lists = []
        for _ in range(threads):
            v = tf.io.parse_single_example(serialized, {"v": tf.io.FixedLenFeature([], tf.int64)})[
                "v"
            ]
            scaled = tf.cast(v, tf.float32) / 255.0
            lists.append([v, scaled * 3.0 - 1.0 / 7.0, tf.strings.as_string(v % 7)])
        return api.batch_join(lists, 5, allow_smaller_final_batch=True)

    assert _mapped(build)[-1].startswith("vectorized"), _mapped(build)
    # Whole examples, floats bit for bit, in the order of one legacy thread.
    assert_in_one_thread_order(build)


def _rewrites_made(build, monkeypatch) -> int:
    """How many Grappler rewrites (captured_graphs.as_the_session_computes) compat_input's
    build of `build` ran, none cached before."""
    from compat_input._src.capture import captured_graphs
    from compat_input._src.core import tf_internals

    rewrites = []

    def counted(config, meta_graph):
        rewrites.append(meta_graph)
        return optimize(config, meta_graph)

    optimize = tf_internals.optimize_graph
    monkeypatch.setattr(captured_graphs, "_REWRITES", {})
    monkeypatch.setattr(tf_internals, "optimize_graph", counted)
    with tf.Graph().as_default():
        build(compat_api())
    return len(rewrites)


def test_readers_whose_preprocessing_computes_floats_alike_are_rewritten_once_and_match(
    tmp_path, monkeypatch
):
    # Each capture is rewritten as the session rewrites the legacy graph (constant folding
    # changes `x / 255.0` by an ulp); readers joined alike capture one graph each, which is
    # rewritten once, then renamed for each (youtube-8m's four readers: 16 ms a rewrite).
    files = _numbered_tfrecords(tmp_path)

    def build(api):
        queue = api.string_input_producer(files, num_epochs=2, shuffle=False)
        lists = []
        for _ in range(3):
            v = _read_v(api, queue)
            scaled = tf.cast(v["v"], tf.float32) / 255.0
            lists.append([v["v"], scaled * 3.0 - 1.0 / 7.0, tf.sqrt(scaled + 0.5)])
        return api.batch_join(lists, 5, allow_smaller_final_batch=True)

    assert _rewrites_made(build, monkeypatch) == 1
    # Whole examples, bit for bit: each value with what was computed from it.
    assert_same_examples(build)


def test_seeded_copies_of_one_preprocessing_are_rewritten_once_and_draw_their_own_numbers(
    tmp_path, monkeypatch
):
    # A seeded program's copies of one function (facenet's four preprocessing threads) make
    # the same ops, but each random op its own seeds, each py_func its own token and each
    # assertion its own messages: one Grappler rewrite serves them all, each copy given its
    # own back.
    files = _numbered_tfrecords(tmp_path)

    def preprocessed(api, files, k):
        queue = api.string_input_producer(files, num_epochs=2, shuffle=False)
        scaled = tf.cast(_read_v(api, queue)["v"], tf.float32) / 255.0
        with tf.control_dependencies([tf.debugging.assert_non_negative(scaled)]):
            # Drawn in a branch (facenet's flips): per example, by the op itself.
            noisy = tf.cond(
                scaled >= 0.0, lambda: scaled * 3.0 + tf.random.uniform([]), lambda: scaled
            )
        # Its checks gathered in a set: each copy reaches its ops in an order of its own.
        side = 4 + tf.cast(scaled < 0.0, tf.int32)  # Known when run, as a decoded image's.
        image = tf.fill(tf.stack([side, side, 1]), scaled)
        crop = tf.cond(
            scaled >= 0.0,
            lambda: tf.image.resize_with_crop_or_pad(image, 3, 3),
            lambda: tf.reshape(image[:3, :3], [3, 3, 1]),
        )
        # One Python function a copy, each its own: a token each, as each its own seeds.
        shifted = tf1.py_func(lambda v: v + np.float32(k), [scaled], tf.float32)
        shifted.set_shape([])
        return api.batch([scaled, noisy, crop, shifted], 4, allow_smaller_final_batch=True)

    def build(api):
        tf1.set_random_seed(3)
        return [preprocessed(api, files[k : k + 1], k) for k in range(3)]

    # TF2 behaviour makes each copy's branches functions of its own, named apart.
    assert _rewrites_made(build, monkeypatch) == (1 if WORLD == "tf1" else 3)
    # Each tower's batches, bit for bit: its records with the numbers its own op drew.
    assert_same(build)


@pytest.mark.skipif(WORLD != "tf1", reason="TF1 control flow: assertions of the graph's own")
def test_a_rewrite_shared_by_copies_gives_each_its_own_seeds_and_messages(monkeypatch):
    from compat_input._src.capture import captured_graphs

    monkeypatch.setattr(captured_graphs, "_REWRITES", {})
    with tf.Graph().as_default() as graph:
        tf1.set_random_seed(3)
        copies = []
        for k in range(2):
            x = tf1.placeholder(tf.float32, [], name=f"x{k}")
            with tf.control_dependencies([tf.debugging.assert_non_negative(x)]):
                copies.append((x, x / 255.0 + tf.random.uniform([])))
    drawn = set()
    for x, y in copies:
        # Pruned as capture prunes a copy: its input a placeholder named by position.
        reached = tf1.graph_util.extract_sub_graph(graph.as_graph_def(), [y.op.name]).node
        ops = [graph.get_operation_by_name(n.name) for n in reached if n.name != x.op.name]
        own = captured_graphs.pruned(graph, [x.name], ops, {x.name: "arg_0"})
        rewritten, renamed = captured_graphs.as_the_session_computes(
            own, {"arg_0:0": tf.float32, y.name: tf.float32}, []
        )
        nodes = {node.name: node for node in rewritten.node}
        draw = next(
            op for op in graph.get_operations() if op.type == "RandomUniform" and op.name in nodes
        )
        seeds = (draw.get_attr("seed"), draw.get_attr("seed2"))
        drawn.add(seeds)
        assert (nodes[draw.name].attr["seed"].i, nodes[draw.name].attr["seed2"].i) == seeds
        messages = {
            b"".join(node.attr["value"].tensor.string_val)
            for node in rewritten.node
            if node.op == "Const" and node.attr["dtype"].type == tf.string.as_datatype_enum
        }
        # The assertion names this copy's tensor, as the program's graph does.
        assert any(f"({x.name})".encode() in m for m in messages), messages
        assert renamed[y.name].partition(":")[0] in nodes
        assert renamed["arg_0:0"] == "arg_0:0"
    assert len(drawn) == 2  # The copies' own seeds differ.
    assert len(captured_graphs._REWRITES) == 1


def test_a_many_way_merge_picks_each_examples_case_as_legacy():
    from tensorflow.python.ops import control_flow_ops

    def build(api, threads=2):
        x = api.range_input_producer(24, num_epochs=1, shuffle=False).dequeue()
        v = tf.cast(tf.fill([2], x), tf.float32)
        case = x % 3  # slim's apply_with_random_selector, with a selector known per example.
        cases = [control_flow_ops.switch(v, tf.equal(case, k))[1] * (k + 1.0) - k for k in range(3)]
        return api.batch([x, control_flow_ops.merge(cases)[0]], 5, num_threads=threads)

    assert _built_vectorized(build)
    _, compat = assert_in_one_thread_order(build)
    for x, got in zip(flatten_examples(compat.values, 0), flatten_examples(compat.values, 1)):
        assert got == [x * (x % 3 + 1.0) - x % 3] * 2


def test_an_unseeded_random_op_in_a_branch_runs_for_every_example_of_the_block():
    def build(api, threads=2):
        x = api.range_input_producer(20, num_epochs=1, shuffle=False).dequeue()
        noise = lambda: tf.random.uniform([]) * 0.0  # noqa: E731 - a draw in the branch.
        picked = tf.cond(tf.equal(x % 2, 0), lambda: tf.cast(x, tf.float32) + noise(), lambda: -1.0)
        return api.batch([x, picked], 4, num_threads=threads)

    # TF2 behaviour makes a stateful If op of it, which keeps one example at a time there.
    assert _built_vectorized(build) == (WORLD == "tf1")
    assert_in_one_thread_order(build)


@pytest.mark.parametrize("adjust", ["saturation", "hue"])
def test_a_saturation_or_hue_factor_of_each_example_is_applied_to_that_example(tmp_path, adjust):
    files = _images(tmp_path, count=20)

    def build(api, threads=2):
        image, label = _read_images(api, files, num_epochs=1)
        factor = tf.cast(label, tf.float32) / 10.0  # Differs between examples.
        if adjust == "saturation":
            image = tf.image.adjust_saturation(image / 255.0, 0.5 + factor)
        else:
            image = tf.image.adjust_hue(image / 255.0, factor - 0.9)
        return api.batch([image, label], 10, num_threads=threads)

    assert _built_vectorized(build)
    assert_in_one_thread_order(build, rtol=1e-5, atol=1e-5)


def _csv_line(api, path):
    queue = api.string_input_producer([path], num_epochs=1, shuffle=False)
    return api.TextLineReader().read(queue)[1]


def _csv_rows(api, path, size, **kwargs):
    a, b = tf1.decode_csv(_csv_line(api, path), [[0], [0.0]])
    return api.batch([a, b / 3.0], size, num_threads=1, **kwargs)


def test_one_thread_batches_run_in_blocks_that_line_up_with_them(tmp_path):
    path = write(str(tmp_path / "a.csv"), "".join(f"{i},{i * 7}\n" for i in range(40)))
    for size, final in ((8, False), (6, True)):

        def build(api, threads=1, size=size, final=final):
            return _csv_rows(api, path, size, allow_smaller_final_batch=final)

        assert _mapped(build) == [f"vectorized, {size} examples a block"]
        legacy, compat = assert_in_one_thread_order(build, threads=1)
        assert len(flatten_examples(compat.values, 0)) == (40 if final else 40 // size * size)


def test_one_thread_batchers_whose_blocks_would_not_line_up_map_one_example_at_a_time(tmp_path):
    path = write(str(tmp_path / "a.csv"), "".join(f"{i},{i}\n" for i in range(40)))

    def kept(api):
        a, b = tf1.decode_csv(_csv_line(api, path), [[0], [0]])
        return api.maybe_batch([a, b], a % 2 > 0, 8, num_threads=1)

    small = lambda api: _csv_rows(api, path, 2)  # noqa: E731
    for build in (kept, small):
        (how,) = _mapped(build)
        assert how.startswith("per example (num_threads=1"), how


def test_a_one_thread_shuffling_batcher_maps_blocks_and_loses_no_more_than_its_buffer(tmp_path):
    # A bad example's error reaches a shuffle buffer and what the buffer holds is lost,
    # however the examples were mapped (legacy's queue kept it, and delivered it once its
    # thread died): one example at a time bought nothing there, and cost 3.5x (a one-thread
    # `shuffle_batch` of fixed-length records, flip, standardization: 17.6k -> 61.6k/s).
    rows = [f"{i},{i}\n" for i in range(100)]
    rows[30] = "oops,1\n"
    path = write(str(tmp_path / "a.csv"), "".join(rows))

    def shuffled(api):
        row = tf1.decode_csv(_csv_line(api, path), [[0], [0]])
        return api.shuffle_batch(row, 4, 40, 20, num_threads=1, allow_smaller_final_batch=True)

    (how,) = _mapped(shuffled)
    assert how.startswith("vectorized"), how
    legacy, compat = differential(shuffled, install=True)
    # Legacy: every example read before the bad row, then the end; the error only from
    # the runner thread. compat_input: the error, naming the row; nothing legacy did not.
    assert legacy.error is tf.errors.OutOfRangeError
    assert sorted(flatten_examples(legacy.values, 0)) == list(range(30))
    assert compat.error is tf.errors.InvalidArgumentError
    assert "a.csv:31" in compat.error_message, compat.error_message[:300]
    assert set(flatten_examples(compat.values, 0)) <= set(range(30))


def test_enqueue_many_blocks_are_reported_as_the_program_made_them(tmp_path):
    # youtube-8m's readers parse whole read_up_to blocks and enqueue them: the report said
    # "ran per example", which sent users looking for a per-example op there is none of.
    path = write(str(tmp_path / "a.csv"), "".join(f"{i},{i}\n" for i in range(12)))

    def blocks(api):
        queue = api.string_input_producer([path], num_epochs=1, shuffle=False)
        _, lines = api.TextLineReader().read_up_to(queue, 4)
        a, b = tf1.decode_csv(lines, [[0], [0]])
        return api.shuffle_batch([a, b], 3, 20, 5, enqueue_many=True)

    assert _mapped(blocks) == ["a block at a time, as the program enqueued them (enqueue_many)"]
    legacy, compat = differential(blocks, install=True)
    assert sorted(flatten_examples(compat.values, 0)) == sorted(flatten_examples(legacy.values, 0))


@pytest.mark.parametrize("bad", [0, 5, 13, 23])
def test_a_bad_row_in_a_one_thread_block_fails_its_batch_as_one_example_at_a_time_did(
    tmp_path, bad
):
    rows = [f"{i},{i}\n" for i in range(30)]
    rows[bad] = "oops,1\n"
    path = write(str(tmp_path / "a.csv"), "".join(rows))
    build = lambda api: _csv_rows(api, path, 6)  # noqa: E731
    assert _mapped(build) == ["vectorized, 6 examples a block"]
    legacy, compat = differential(build, install=True)
    # Legacy: every whole batch before the bad row's, then the input ends (the row's error
    # in coord.join()); compat_input: the same batches, then the row's own error.
    assert len(legacy.values) == bad // 6 and legacy.error is tf.errors.OutOfRangeError
    assert compat.structure == legacy.structure and compat.values == legacy.values
    assert compat.error is tf.errors.InvalidArgumentError
    assert f"read from {path}:{bad + 1}" in compat.error_message.splitlines()[0]


@pytest.mark.parametrize("unconverted", ["case", "sparse"])
def test_a_trace_that_failed_leaves_the_programs_variables_as_legacy_makes_them(
    tmp_path, unconverted
):
    # tf_slim's image classifier: its DatasetDataProvider decodes behind a `case` that pfor
    # cannot convert, and every variable of the model made after it was a resource
    # variable (another optimizer op, a graph 44 ops larger), where legacy's were not.
    path = write_tfrecords(str(tmp_path / "c.tfr"), [example(x=float(k)) for k in range(8)])

    def build(api):
        queue = api.string_input_producer([path], shuffle=False)
        _, record = api.TFRecordReader().read(queue)
        x = tf1.parse_single_example(record, {"x": tf.io.FixedLenFeature([], tf.float32)})["x"]
        if unconverted == "case":
            x = tf1.case([(x > 3.0, lambda: x * 2.0)], default=lambda: x, exclusive=True)
            total = tf.reduce_sum(api.batch([x], 2, num_threads=2))
        else:  # A sparse example: traced, found not dense, mapped as tf.data maps it.
            sparse = tf.sparse.from_dense(tf.reshape(x, [1]))
            total = tf.sparse.reduce_sum(api.batch([sparse], 2, num_threads=2))
        weight = tf1.get_variable("w", [], initializer=tf1.zeros_initializer())
        tf1.train.GradientDescentOptimizer(0.1).minimize(weight * total)
        ops = tf1.get_default_graph().get_operations()
        return type(weight).__name__, sorted(
            {op.type for op in ops if "GradientDescent" in op.name}
        )

    made = {}
    for api in (legacy_api(), compat_api()):
        with tf.Graph().as_default():
            made[api.name] = build(api)
    assert made["compat"] == made["legacy"]
    if WORLD == "tf1":
        assert made["legacy"][0] == "RefVariable"


def test_a_decoder_s_case_that_pfor_refuses_is_not_traced_for_blocks(tmp_path, monkeypatch):
    # tf_slim's DatasetDataProvider decodes each image behind a `case` on its format, with
    # an exclusivity Assert: pfor refuses both (their branches can fail), after a trace of
    # the block that cost every tf_slim image program 37-44 ms of its build. Found from the
    # captured graph, the example is mapped on its own, with the same reason.
    with tf.Graph().as_default(), tf1.Session() as sess:
        rng = np.random.RandomState(5)
        pixels = [rng.randint(0, 255, (4 + k % 3, 5, 3)).astype(np.uint8) for k in range(10)]
        encoded = sess.run(
            [tf.io.encode_png(p) if k % 2 else tf.io.encode_jpeg(p) for k, p in enumerate(pixels)]
        )
    records = [
        example(encoded=e, format=b"png" if k % 2 else b"jpeg", label=k)
        for k, e in enumerate(encoded)
    ]
    path = write_tfrecords(str(tmp_path / "images.tfr"), records)

    def build(api, threads=2):
        queue = api.string_input_producer([path], num_epochs=1, shuffle=False)
        _, serialized = api.TFRecordReader().read(queue)
        parsed = tf1.parse_single_example(
            serialized,
            {
                "encoded": tf.io.FixedLenFeature([], tf.string),
                "format": tf.io.FixedLenFeature([], tf.string),
                "label": tf.io.FixedLenFeature([], tf.int64),
            },
        )
        image = tf1.case(
            [
                (
                    tf.equal(parsed["format"], "png"),
                    lambda: tf.image.decode_png(parsed["encoded"], 3),
                )
            ],
            default=lambda: tf.image.decode_jpeg(parsed["encoded"], 3),
            exclusive=True,
        )
        image = tf1.image.resize_image_with_crop_or_pad(image, 4, 4)
        return api.batch([image, parsed["label"]], 3, num_threads=threads)

    attempts = []
    real = vectorize.map_blocks
    monkeypatch.setattr(
        vectorize, "map_blocks", lambda *a, **k: attempts.append(1) or real(*a, **k)
    )
    (how,) = _mapped(build)
    if WORLD == "tf1":  # TF2 behaviour's `If` ops are refused from the graph as they were.
        assert how.startswith("per example (no block conversion for Switch 'case/"), how
    assert how.startswith("per example (") and "test_vectorize.py" in how, how
    assert attempts == []
    assert_in_one_thread_order(build)


def _sequences(tmp_path, lengths) -> str:
    """TFRecords of SequenceExamples: context `label` k, feature list `frames` of
    `lengths[k]` steps, each of 4 floats that name (k, step, place)."""

    def sequence(k, steps):
        frames = [
            tf.train.Feature(
                float_list=tf.train.FloatList(value=[k + t / 10 + p / 100 for p in range(4)])
            )
            for t in range(steps)
        ]
        return tf.train.SequenceExample(
            context=tf.train.Features(
                feature={"label": tf.train.Feature(int64_list=tf.train.Int64List(value=[k]))}
            ),
            feature_lists=tf.train.FeatureLists(
                feature_list={"frames": tf.train.FeatureList(feature=frames)}
            ),
        ).SerializeToString()

    records = [sequence(k, n) for k, n in enumerate(lengths)]
    return write_tfrecords(str(tmp_path / "seq.tfrecord"), records)


def _parse_frames(serialized):
    context, lists = tf1.parse_single_sequence_example(
        serialized,
        context_features={"label": tf1.FixedLenFeature([], tf.int64)},
        sequence_features={"frames": tf1.FixedLenSequenceFeature([4], tf.float32)},
    )
    return context["label"], lists["frames"]


def test_sequence_examples_reshaped_to_a_fixed_shape_are_vectorized_and_match_legacy(tmp_path):
    # cross_conv's input: a sequence of frames of one count, reshaped to images.
    path = _sequences(tmp_path, [3] * 30)

    def build(api, threads=2):
        queue = api.string_input_producer([path], num_epochs=1, shuffle=False)
        _, serialized = api.TFRecordReader().read(queue)
        label, frames = _parse_frames(serialized)
        images = tf.reshape(frames, [3, 2, 2])
        return api.batch([images, label], 4, num_threads=threads, allow_smaller_final_batch=True)

    assert _mapped(build) == [f"vectorized, {vectorize.BLOCK} examples a block"]
    assert _built_vectorized(build)
    _, compat = assert_in_one_thread_order(build)
    assert flatten_examples(compat.values, 1) == list(range(30))


def test_a_sequence_of_another_length_before_a_fixed_reshape_fails_and_is_named(tmp_path):
    # The block is parsed padded to its longest sequence; the short one's reshape would
    # pass there, and must fail as it failed alone.
    path = _sequences(tmp_path, [2] * 9 + [1])

    def build(api):
        queue = api.string_input_producer([path], num_epochs=1, shuffle=False)
        _, serialized = api.TFRecordReader().read(queue)
        label, frames = _parse_frames(serialized)
        return api.batch([tf.reshape(frames, [8]), label], 10, num_threads=2)

    assert _built_vectorized(build)
    legacy, compat = differential(build, install=True)
    assert compat.values == legacy.values == []
    assert legacy.error is tf.errors.OutOfRangeError  # Legacy hid the reshape's error.
    assert compat.error is tf.errors.InvalidArgumentError
    assert "seq.tfrecord at byte offset" in compat.error_message, compat.error_message


def test_sequences_of_their_own_length_run_per_example_and_say_which_feature_list(tmp_path):
    path = _sequences(tmp_path, [1 + k % 4 for k in range(20)])

    def build(api, threads=2):
        queue = api.string_input_producer([path], num_epochs=1, shuffle=False)
        _, serialized = api.TFRecordReader().read(queue)
        label, frames = _parse_frames(serialized)
        first = tf.pad(frames, [[0, 4], [0, 0]])[:4]
        first.set_shape([4, 4])
        return api.batch([first, tf.shape(frames)[0], label], 4, num_threads=threads)

    (how,) = _mapped(build)
    assert how.startswith("per example (ParseSequenceExampleV2"), how
    assert "feature list 'frames'" in how and "test_vectorize.py:" in how, how
    _, compat = assert_in_one_thread_order(build)
    assert flatten_examples(compat.values, 1) == [1 + k % 4 for k in range(20)]


def _blocks_at_once(graph: tf.Graph) -> list:
    """`(blocks mapped at once, examples a block)` of each block map in `graph`."""
    found = []
    for op in graph.get_operations():
        if op.type == "ParallelMapDatasetV2":
            calls = tf.get_static_value(op.inputs[-1])
            source = op.inputs[0].op
            if source.type == "BatchDatasetV2":  # The blocks' own batch.
                found.append((int(calls), int(tf.get_static_value(source.inputs[1]))))
    return found


@pytest.mark.parametrize("frame", [12, 6144])
def test_blocks_mapped_at_once_hold_what_many_threads_would_without_growing_with_big_examples(
    tmp_path, frame
):
    # cross_conv: shuffle_batch(num_threads=64) of sequences of frames, 98 KB each. As many
    # blocks (16 examples) at once as threads held 100 MB, all of it in each checkpoint.
    path = _sequences(tmp_path, [2] * 4)

    with tf.Graph().as_default() as graph:
        queue = compat_input.string_input_producer([path])
        _, serialized = compat_input.TFRecordReader().read(queue)
        _, frames = _parse_frames(serialized)
        big = tf.tile(tf.reshape(frames, [2, 4]), [1, frame // 4])
        compat_input.shuffle_batch([big], 2, capacity=40, min_after_dequeue=4, num_threads=64)
    ((calls, block),) = _blocks_at_once(graph)
    example = 2 * frame * 4
    if block * example * 64 <= 32 * 1024 * 1024:
        assert calls == 64  # Small blocks: one for each of the program's threads.
    else:
        assert 2 <= calls < 64 and calls * block * example <= 32 * 1024 * 1024, (calls, block)
