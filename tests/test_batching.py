"""Batchers against TensorFlow's own queues (contract §4, exp2, exp5, exp6)."""

import time

import pytest
import tensorflow as tf

import compat_input
from helpers import assert_same
from helpers import assert_same_examples
from helpers import compat_api
from helpers import differential
from helpers import examples
from helpers import legacy_api
from helpers import run_scenario
from helpers import write
from helpers import write_tfrecords

tf1 = tf.compat.v1


def _seven(tmp_path):
    return write(str(tmp_path / "seven.txt"), "".join(f"line{i}\n" for i in range(1, 8)))


@pytest.mark.parametrize("allow_smaller", [True, False])
def test_reference_experiment_batches_straddle_epochs_and_end_like_legacy(tmp_path, allow_smaller):
    f = _seven(tmp_path)

    def build(api):
        queue = api.string_input_producer([f], num_epochs=2, shuffle=False)
        key, value = api.TextLineReader().read(queue)
        return api.batch([key, value], 3, allow_smaller_final_batch=allow_smaller)

    run = assert_same(build)
    assert len(run.values) == (5 if allow_smaller else 4)
    assert run.after_end == [tf.errors.OutOfRangeError] * 2


def test_per_example_ops_are_captured_between_reader_and_batch(tmp_path):
    f = write(str(tmp_path / "d.csv"), "".join(f"{i},{i * 0.5}\n" for i in range(9)))

    def build(api):
        queue = api.string_input_producer([f], num_epochs=1, shuffle=False)
        _, line = api.TextLineReader().read(queue)
        a, b = tf1.decode_csv(line, [[0], [0.0]])
        feature = tf.stack([tf.cast(a, tf.float32) * 2.0, b])
        return api.batch([feature, a], 4, allow_smaller_final_batch=True)

    assert_same(build)


@pytest.mark.parametrize("num_threads", [1, 3])
def test_batch_of_a_producer_keeps_order(num_threads):
    def build_with(api, threads):
        x = api.range_input_producer(10, num_epochs=1, shuffle=False).dequeue()
        return api.batch(
            [x * 10, tf.strings.as_string(x)],
            4,
            num_threads=threads,
            allow_smaller_final_batch=True,
        )

    def build(api):
        return build_with(api, num_threads)

    assert_same_examples(build)
    # Deterministic where legacy was not: with any number of threads, the order of legacy's
    # one thread.
    one_thread = run_scenario(legacy_api(), lambda api: build_with(api, 1))
    assert run_scenario(compat_api(), build).values == one_thread.values


def test_one_element_list_returns_a_bare_tensor_and_dict_returns_dict():
    def build(api):
        x = api.range_input_producer(6, num_epochs=1, shuffle=False).dequeue()
        return [api.batch([x], 2, name="single"), api.batch({"b": x + 1, "a": x}, 2)]

    legacy, compat = differential(build)
    assert compat.structure == legacy.structure
    assert compat.structure[0][0] == "tensor" and isinstance(compat.structure[1], dict)


def test_output_names_follow_the_scope():
    names = []
    for api in (legacy_api(), compat_api()):
        with tf.Graph().as_default():
            x = api.range_input_producer(6).dequeue()
            names.append(
                [
                    [t.name for t in api.batch([x, x], 2)],
                    api.batch([x], 2, name="mybatch").name,
                    api.shuffle_batch([x], 2, 10, 2).name,
                    [t.name for t in api.batch_join([[x, x]], 2)],
                ]
            )
    assert names[1] == names[0]


def test_allow_smaller_final_batch_makes_the_batch_dimension_unknown():
    def build(api):
        x = api.range_input_producer(5, num_epochs=1, shuffle=False).dequeue()
        return [api.batch([x], 2, allow_smaller_final_batch=True), api.batch([x], 2)]

    legacy, compat = differential(build, steps=0)
    assert compat.structure == legacy.structure
    assert compat.structure[0][2] == [None] and compat.structure[1][2] == [2]


def test_dynamic_pad_pads_each_batch_to_its_longest_example():
    def build(api):
        n = api.range_input_producer(5, num_epochs=1, shuffle=False).dequeue()
        return api.batch(
            [tf.range(n), tf.strings.as_string(tf.range(n))],
            2,
            dynamic_pad=True,
            allow_smaller_final_batch=True,
        )

    run = assert_same(build)
    assert run.values[1][0] == [[0, 1, 0], [0, 1, 2]]


def test_dynamic_pad_carries_a_sparse_tensor_beside_the_padded_ones():
    """tf.data's padded_batch refuses a SparseTensor; legacy's padding queue took one."""

    def build(api):
        n = api.range_input_producer(5, num_epochs=1, shuffle=False).dequeue()
        sparse = tf.SparseTensor([[0]], tf.reshape(tf.cast(n, tf.float32), [1]), [1])
        return api.batch(
            [tf.range(n), sparse, n], 2, dynamic_pad=True, allow_smaller_final_batch=True
        )

    run = assert_same(build)
    assert run.values[1][0] == [[0, 1, 0], [0, 1, 2]]
    assert run.values[1][1][2] == [2.0, 3.0]  # The sparse values of examples 2 and 3.


def test_enqueue_many_rebatches_across_runs():
    def build(api):
        x = api.range_input_producer(3, num_epochs=1, shuffle=False).dequeue()
        return api.batch(
            [tf.stack([x * 10, x * 10 + 1])], 4, enqueue_many=True, allow_smaller_final_batch=True
        )

    run = assert_same(build)
    assert run.values == [[0, 1, 10, 11], [20, 21]]


def test_maybe_batch_drops_examples_where_keep_input_is_false():
    def build(api):
        x = api.range_input_producer(10, num_epochs=1, shuffle=False).dequeue()
        return api.maybe_batch([x], tf.equal(x % 2, 0), 2, allow_smaller_final_batch=True)

    run = assert_same(build)
    assert run.values == [[0, 2], [4, 6], [8]]


def test_maybe_batch_with_a_vector_keep_input_and_enqueue_many():
    def build(api):
        x = api.range_input_producer(3, num_epochs=1, shuffle=False).dequeue()
        rows = tf.stack([x * 10, x * 10 + 1, x * 10 + 2])
        return api.maybe_batch([rows], tf.constant([True, False, True]), 2, enqueue_many=True)

    run = assert_same(build)
    assert run.values == [[0, 2], [10, 12], [20, 22]]


def test_shapes_argument_overrides_inferred_shapes():
    def build(api):
        x = api.range_input_producer(4, num_epochs=1, shuffle=False).dequeue()
        v = tf.unique(tf.stack([x, x + 1]))[0]
        return api.batch([v], 2, shapes=[[2]])

    legacy, compat = differential(build, steps=0)
    assert compat.structure == legacy.structure == ("tensor", "int32", [2, 2])


def test_sparse_tensors_are_batched_with_legacy_dense_shapes():
    def build(api):
        n = api.range_input_producer(4, num_epochs=1, shuffle=False).dequeue()
        sparse = tf.sparse.from_dense(tf.reshape(tf.range(1, n + 1), [-1]))
        return api.batch([sparse, n], 2)

    assert_same(build)


@pytest.mark.parametrize("allow_smaller", [True, False])
def test_shuffle_batch_delivers_every_whole_example_once(allow_smaller):
    # Without a smaller final batch, which examples stay in the queue is random: 2 x 55
    # examples fill whole batches of 5.
    count = 53 if allow_smaller else 55

    def build(api):
        x = api.range_input_producer(count, num_epochs=2, shuffle=False).dequeue()
        return api.shuffle_batch(
            [x, tf.strings.as_string(x * 7)],
            5,
            capacity=30,
            min_after_dequeue=10,
            allow_smaller_final_batch=allow_smaller,
        )

    assert_same_examples(build)


def test_seeded_shuffle_batch_is_reproducible_even_with_threads():
    def build_with(api, seed):
        x = api.range_input_producer(40, num_epochs=1, shuffle=False).dequeue()
        return api.shuffle_batch(
            [x * 2, -x], 4, capacity=20, min_after_dequeue=8, num_threads=4, seed=seed
        )

    # Legacy's examples, whole, and its end; its order was up to its four threads.
    assert_same_examples(lambda api: build_with(api, 7))
    first, second, other = (
        run_scenario(compat_api(), lambda api, s=s: build_with(api, s)) for s in (7, 7, 8)
    )
    assert first.values == second.values
    shuffled = [e for step in first.values for e in step[0]]
    assert shuffled != sorted(shuffled)  # Shuffled, yet reproducible...
    assert other.values != first.values  # ... and another seed gives another order.


def test_batch_join_of_independent_producers():
    def build(api):
        a = api.range_input_producer(5, num_epochs=1, shuffle=False).dequeue()
        b = api.range_input_producer(3, num_epochs=1, shuffle=False).dequeue() + 100
        return api.batch_join([[a], [b]], 2, allow_smaller_final_batch=True)

    assert_same_examples(build)


def test_batch_join_of_readers_over_one_producer(tmp_path):
    files = [
        write_tfrecords(str(tmp_path / f"f{i}.tfr"), [b"%d-%d" % (i, j) for j in range(3)])
        for i in range(4)
    ]

    def build(api):
        queue = api.string_input_producer(files, num_epochs=1, shuffle=False)
        lists = []
        for _ in range(2):
            key, value = api.TFRecordReader().read(queue)
            lists.append([key, value])
        return api.shuffle_batch_join(
            lists, 3, capacity=20, min_after_dequeue=4, allow_smaller_final_batch=True
        )

    assert_same_examples(build)


def _grappler_off(how: str) -> tf1.ConfigProto:
    config = tf1.ConfigProto()
    if how == "disable_meta_optimizer":
        config.graph_options.rewrite_options.disable_meta_optimizer = True
    elif how == "function_optimization":
        config.graph_options.rewrite_options.function_optimization = 2  # RewriterConfig.OFF
    else:
        config.graph_options.optimizer_options.opt_level = tf1.OptimizerOptions.L0
        config.graph_options.optimizer_options.do_function_inlining = False
    return config


@pytest.mark.parametrize("how", ["disable_meta_optimizer", "function_optimization", "L0"])
@pytest.mark.parametrize("kind", ["join", "vectorized"])
def test_sessions_with_graph_rewrites_off(tmp_path, how, kind):
    # Programs turn Grappler off (to debug, for determinism): nothing of ours may rely on
    # a rewrite. With `disable_meta_optimizer` a _join batcher over readers failed
    # ("experimental_ints_on_device ... not supported by multi-device functions").
    files = [
        write_tfrecords(str(tmp_path / f"f{i}.tfr"), [b"%d,%d" % (i, j) for j in range(5)])
        for i in range(3)
    ]

    def build(api):
        queue = api.string_input_producer(files, num_epochs=2, shuffle=False)
        if kind == "join":
            lists = [list(api.TFRecordReader().read(queue)) for _ in range(2)]
            return api.shuffle_batch_join(
                lists, 3, capacity=20, min_after_dequeue=4, allow_smaller_final_batch=True
            )
        _, value = api.TFRecordReader().read(queue)
        a, b = tf1.decode_csv(value, [[0], [0]])
        return api.shuffle_batch(
            [a * 10 + b], 4, capacity=20, min_after_dequeue=4, allow_smaller_final_batch=True
        )

    legacy, _ = assert_same_examples(build, config=_grappler_off(how))
    assert len(examples(legacy)) == 30


def test_batch_join_lists_sharing_one_reader_split_its_records(tmp_path):
    f = write(str(tmp_path / "t.txt"), "".join(f"{i}\n" for i in range(8)))

    def build(api):
        queue = api.string_input_producer([f], num_epochs=1, shuffle=False)
        _, value = api.TextLineReader().read(queue)
        return api.batch_join(
            [[value], [tf.strings.join([value, value])]], 2, allow_smaller_final_batch=True
        )

    # Legacy handed each line to one list or the other by thread timing: whole examples are
    # each a line or a line doubled, every line exactly once, in batches of legacy's sizes.
    legacy, compat = differential(build)
    assert compat.structure == legacy.structure
    assert compat.error == legacy.error
    assert [len(step) for step in compat.values] == [len(step) for step in legacy.values]

    def lines(run):
        out = []
        for value in (v.decode() for step in run.values for v in step):
            half = value[: len(value) // 2]
            out.append(int(half) if value == half * 2 and len(value) % 2 == 0 else int(value))
        return sorted(out)

    assert lines(compat) == lines(legacy) == list(range(8))
    # Both lists took lines: the join is not one list's reading alone.
    values = [v.decode() for step in compat.values for v in step]
    assert any(len(v) == 2 for v in values) and any(len(v) == 1 for v in values)


def test_stateful_random_ops_run_once_per_example():
    def build(api):
        x = api.range_input_producer(6, num_epochs=1, shuffle=False).dequeue()
        noise = tf.random.uniform([], seed=3)
        return api.batch([x, noise], 6)

    legacy, compat = differential(build)
    assert compat.structure == legacy.structure and compat.error == legacy.error
    for run in (legacy, compat):
        assert run.values[0][0] == list(range(6))
        assert len(set(run.values[0][1])) == 6  # A draw per example, as each enqueue drew.


def test_batching_a_source_free_random_tensor_runs_forever():
    def build(api):
        return api.batch([tf.random.normal([2])], 3)

    legacy, compat = differential(build, steps=3)
    assert compat.structure == legacy.structure == ("tensor", "float32", [3, 2])
    assert compat.error is legacy.error is None and len(compat.values) == 3
    rows = [tuple(r) for step in compat.values for r in step]
    assert len(set(rows)) == 9


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda x: compat_input.batch([], 2), ValueError, "Expected at least one tensor"),
        (
            lambda x: compat_input.shuffle_batch([x], 2, 10, 10),
            ValueError,
            "capacity 10 must be bigger than min_after_dequeue 10",
        ),
        (lambda x: compat_input.batch(x, 2), TypeError, "wrap a single tensor in a list"),
        (
            lambda x: compat_input.batch([tf.unique(tf.stack([x]))[0]], 2),
            ValueError,
            "All shapes must be fully defined",
        ),
        (
            lambda x: compat_input.maybe_batch([x], tf.constant([True]), 2),
            ValueError,
            "cannot be a vector",
        ),
        (
            lambda x: compat_input.batch_join([[x], [tf.cast(x, tf.float32)]], 2),
            TypeError,
            "Expected types to be consistent",
        ),
        (lambda x: compat_input.batch_join([{"a": x}, {"b": x}], 2), ValueError, "same keys"),
    ],
)
def test_bad_arguments_raise_the_legacy_errors(call, error, message):
    with tf.Graph().as_default():
        x = compat_input.range_input_producer(4).dequeue()
        with pytest.raises(error, match=message):
            call(x)


def test_a_placeholder_with_default_in_the_per_example_graph_gives_its_default():
    # Legacy's runner threads never fed it (contrib's own tests build sparse sequences so).
    def build(api):
        x = api.range_input_producer(6, num_epochs=1, shuffle=False).dequeue()
        scale = tf1.placeholder_with_default(tf.constant(10, tf.int32), [])
        return api.batch([x * scale], 2)

    run = assert_same(build)
    assert run.values == [[0, 10], [20, 30], [40, 50]]


def test_a_placeholder_in_the_per_example_graph_builds_with_legacy_shapes_and_fails_when_run():
    def build(api):
        x = api.range_input_producer(10, num_epochs=1, shuffle=False).dequeue()
        rows = tf1.placeholder(tf.int64, [None, 3], name="scale")
        sparse = tf.SparseTensor(
            tf1.placeholder(tf.int64, [None, None], name="ids"),
            tf1.placeholder(tf.float32, [None], name="weights"),
            tf1.placeholder(tf.int64, [None], name="shape"),
        )
        return api.batch([x, sparse, tf.shape(rows)], 2)

    legacy, compat = differential(build)
    # Legacy built it, static shapes and all, and its runner failed on the placeholder
    # (the program saw the queue close). compat_input builds the same, and names it.
    assert compat.structure == legacy.structure
    assert compat.values == legacy.values == []
    assert legacy.error is tf.errors.OutOfRangeError
    assert compat.error is tf.errors.InvalidArgumentError
    assert any(f"placeholder \\'{n}\\'" in compat.error_message for n in ("scale", "ids"))
    assert "test_batching.py" in compat.error_message


@pytest.mark.parametrize("api", [legacy_api(), compat_api()], ids=lambda a: a.name)
def test_a_resource_variable_in_the_per_example_graph_is_read_live(api):
    with tf.Graph().as_default():
        x = api.range_input_producer(100, shuffle=False).dequeue()
        w = tf1.Variable(1, use_resource=True)
        # As in a legacy batch queue, up to `capacity` examples computed earlier are buffered.
        b = api.batch([x * w.read_value()], 1, capacity=2)
        with tf1.Session() as sess:
            sess.run(tf1.global_variables_initializer())
            coord = tf1.train.Coordinator()
            threads = api.start_queue_runners(sess, coord)
            first = sess.run(b)
            sess.run(w.assign(1000))
            later = [int(sess.run(b)[0]) for _ in range(10)]
            coord.request_stop()
            try:
                sess.run(b)  # Unblocks a legacy runner waiting on its full queue.
            except tf.errors.OutOfRangeError:
                pass  # The runner saw the stop first and closed its queue: nothing to unblock.
            coord.join(threads, stop_grace_period_secs=5)
    assert first[0] == 0
    # Examples computed after the assignment see it; the input itself is not disturbed.
    assert later[-1] >= 1000 and later[-1] % 1000 == 0
    assert [v // 1000 if v >= 1000 else v for v in later] == sorted(
        v // 1000 if v >= 1000 else v for v in later
    )


@pytest.mark.parametrize(
    "variant", ["maybe_shuffle_batch", "maybe_batch_join", "maybe_shuffle_batch_join"]
)
def test_maybe_shuffle_batch_and_maybe_joins_filter_like_legacy(variant):
    def build(api):
        x = api.range_input_producer(12, num_epochs=1, shuffle=False).dequeue()
        pair = [x, tf.strings.as_string(x * 3)]
        keep = tf.equal(x % 3, 0)
        if variant == "maybe_shuffle_batch":
            return api.maybe_shuffle_batch(pair, 2, 20, 4, keep, allow_smaller_final_batch=True)
        # Same transform in both lists: legacy hands elements to lists by thread timing.
        if variant == "maybe_batch_join":
            return api.maybe_batch_join([pair, pair], keep, 2, allow_smaller_final_batch=True)
        return api.maybe_shuffle_batch_join(
            [pair, pair], 2, 20, 4, keep, allow_smaller_final_batch=True
        )

    legacy, compat = assert_same_examples(build)
    kept = sorted(x for step in compat.values for x in step[0])
    assert kept == [0, 3, 6, 9]  # keep_input filtered: x % 3 == 0 of range(12).


def test_a_constant_tensor_batch_size_gives_a_static_batch_dimension():
    def build(api):
        x = api.range_input_producer(5).dequeue()
        return [api.batch([x], tf.constant(2)), api.batch([x], tf.constant(2) + 1)]

    legacy, compat = differential(build, steps=2)
    assert compat.structure == legacy.structure
    assert [len(step[1]) for step in compat.values] == [3, 3]


def test_batchers_write_legacy_s_fill_summary_tags():
    # Their values, measured: tests/test_fill_levels.py.
    tags = []
    for api in (legacy_api(), compat_api()):
        with tf.Graph().as_default():
            x = api.range_input_producer(5).dequeue()
            api.batch([x], 2)
            api.batch_join([[x]], 2, capacity=16, name="mybatch")
            api.shuffle_batch([x], 2, capacity=8, min_after_dequeue=4)
            api.shuffle_batch_join([[x]], 2, capacity=20, min_after_dequeue=2)
            summaries = tf1.get_collection(tf1.GraphKeys.SUMMARIES)
            tags.append(sorted(tf.get_static_value(s.op.inputs[0]) for s in summaries))
    assert b"shuffle_batch/fraction_over_4_of_4_full" in tags[0]
    assert b"mybatch/fraction_of_16_full" in tags[0]
    assert tags[1] == tags[0]


@pytest.mark.parametrize(
    "call, error",
    [
        (lambda: compat_input.batch([tf.constant(1)], 2), ValueError),
        (lambda: compat_input.string_input_producer(["a"]), RuntimeError),
        (lambda: compat_input.TextLineReader(), RuntimeError),
        (lambda: compat_input.start_queue_runners(), RuntimeError),
    ],
)
def test_eager_execution_gets_the_legacy_error_types(call, error):
    with tf.Graph().as_default():
        pass
    with tf1.get_default_graph().as_default():
        from tensorflow.python.eager import context

        with context.eager_mode():
            with pytest.raises(error, match="eager"):
                call()


def test_vectorized_csv_parsing_with_threads_delivers_what_legacy_delivers(tmp_path):
    files = [
        write(str(tmp_path / f"{k}.csv"), "".join(f"{k}{i},{i * 0.5},x{i}\n" for i in range(300)))
        for k in (1, 2)
    ]

    def build(api, threads=2):
        queue = api.string_input_producer(files, num_epochs=2, shuffle=False)
        _, line = api.TextLineReader().read(queue)
        a, b, c = tf1.decode_csv(line, [[0], [0.0], [""]])
        return api.batch([a, b * 2.0, c], 64, num_threads=threads, allow_smaller_final_batch=True)

    legacy, compat = assert_same_examples(build)
    # Vectorized, yet exactly in the order of legacy's one thread.
    one_thread = run_scenario(legacy_api(), lambda api: build(api, threads=1))
    assert compat.values == one_thread.values
    assert len(examples(compat)) == 1200


def test_cond_lookup_table_and_py_func_run_inside_the_captured_graph(tmp_path):
    f = write(str(tmp_path / "words.txt"), "apple\npear\nfig\napple\nkiwi\n")

    def build(api):
        queue = api.string_input_producer([f], num_epochs=1, shuffle=False)
        _, word = api.TextLineReader().read(queue)
        table = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(
                ["apple", "pear", "fig"], [1, 2, 3], tf.string, tf.int64
            ),
            -1,
        )
        ident = table.lookup(word)
        length = tf.strings.length(word)
        bucket = tf.cond(length > 3, lambda: length * 10, lambda: length)
        doubled = tf1.py_func(lambda v: (v * 2).astype("int64"), [ident], tf.int64, stateful=False)
        doubled.set_shape([])
        return api.batch([ident, bucket, doubled], 2, allow_smaller_final_batch=True)

    def run(api):
        g = tf.Graph()
        with g.as_default():
            out = build(api)
            with tf1.Session() as sess:
                sess.run([tf1.tables_initializer(), tf1.local_variables_initializer()])
                coord = tf1.train.Coordinator()
                threads = api.start_queue_runners(sess, coord)
                got = []
                try:
                    while True:
                        got.append([v.tolist() for v in sess.run(out)])
                except tf.errors.OutOfRangeError:
                    pass
                coord.request_stop()
                coord.join(threads)
        return got

    assert (
        run(compat_api())
        == run(legacy_api())
        == [
            [[1, 2], [50, 40], [2, 4]],
            [[3, 1], [3, 50], [6, 2]],
            [[-1], [40], [-2]],
        ]
    )


def _limit_epochs_without_a_source(api):
    return [api.limit_epochs(tf.constant([1, 2]), num_epochs=5)]


def _count_up_to_a_resource_variable(api):
    return [tf1.Variable(0, use_resource=True, name="counter").count_up_to(7)]


def _count_up_to_a_reference_variable(api):
    # TF1's default variables (disable_v2_behavior, as `compat-input run` runs programs).
    return [tf1.Variable(0, use_resource=False, name="counter").count_up_to(7)]


def _limit_epochs_beside_a_producer(api):
    x = api.range_input_producer(10, num_epochs=1, shuffle=False).dequeue()
    return [x + api.limit_epochs(tf.constant(5), num_epochs=4)]


@pytest.mark.parametrize("allow_smaller", [True, False])
@pytest.mark.parametrize(
    "inputs",
    [
        _limit_epochs_without_a_source,
        _count_up_to_a_resource_variable,
        _count_up_to_a_reference_variable,
        _limit_epochs_beside_a_producer,
    ],
)
def test_out_of_range_inside_the_per_example_graph_ends_the_input_like_legacy(
    inputs, allow_smaller
):
    def build(api):
        return api.batch(inputs(api), 3, allow_smaller_final_batch=allow_smaller)

    assert_same(build)


@pytest.mark.parametrize(
    "batcher", ["batch_threads", "maybe_batch", "shuffle_batch", "dict", "dynamic_pad"]
)
def test_out_of_range_inside_the_per_example_graph_ends_every_batcher_like_legacy(batcher):
    def build(api):
        x = _count_up_to_a_reference_variable(api)[0]
        pair = [x, tf.strings.as_string(x)]
        if batcher == "batch_threads":
            return api.batch(pair, 3, num_threads=3, allow_smaller_final_batch=True)
        if batcher == "maybe_batch":
            return api.maybe_batch(pair, x % 2 > 0, 2, allow_smaller_final_batch=True)
        if batcher == "shuffle_batch":
            return api.shuffle_batch(pair, 2, 10, 2, allow_smaller_final_batch=True)
        if batcher == "dict":
            return api.batch({"x": x, "s": pair[1]}, 3, allow_smaller_final_batch=True)
        return api.batch([tf.range(x)], 3, dynamic_pad=True, allow_smaller_final_batch=True)

    # Several threads or a shuffle: legacy's order was its own; whole examples, sizes, end.
    assert_same_examples(build)


@pytest.mark.parametrize("join", ["batch_join", "shuffle_batch_join"])
def test_joins_over_a_counter_on_a_reference_variable_deliver_each_count_once(join):
    def build(api):
        x = _count_up_to_a_reference_variable(api)[0]
        if join == "batch_join":
            return api.batch_join([[x, -x], [x, -x]], 2, allow_smaller_final_batch=True)
        return api.shuffle_batch_join([[x, -x], [x, -x]], 2, 10, 1, allow_smaller_final_batch=True)

    legacy, compat = assert_same_examples(build)
    assert sorted(x for step in compat.values for x in step[0]) == list(range(7))


def _first_batch(api, sparse=False, as_dict=False):
    x = api.range_input_producer(10, num_epochs=1, shuffle=False).dequeue()
    if sparse:
        tensors = [tf.sparse.from_dense(tf.reshape(tf.range(x + 1), [1, -1])), x]
    else:
        tensors = {"x": x, "y": x * 2} if as_dict else [x, x * 2]
    return api.batch(tensors, 3, allow_smaller_final_batch=True)


@pytest.mark.parametrize(
    "second",
    ["batch", "dict", "sparse", "maybe_vector", "maybe_scalar", "maybe_join_vector", "padded"],
)
def test_a_batcher_over_another_batchers_output_with_enqueue_many_like_legacy(second):
    def build(api):
        if second == "padded":
            n = api.range_input_producer(5, num_epochs=1, shuffle=False).dequeue()
            first = api.batch([tf.range(n)], 2, dynamic_pad=True)
            return api.batch(
                [first], 2, enqueue_many=True, dynamic_pad=True, allow_smaller_final_batch=True
            )
        first = _first_batch(api, sparse=second == "sparse", as_dict=second == "dict")
        if second in ("batch", "dict", "sparse"):
            return api.batch(first, 4, enqueue_many=True, allow_smaller_final_batch=True)
        x = first[0]
        if second == "maybe_scalar":
            keep = tf.reduce_sum(x) > 5
            return api.maybe_batch(
                first, keep, 4, enqueue_many=True, allow_smaller_final_batch=True
            )
        keep = tf.equal(x % 2, 0)
        if second == "maybe_vector":
            return api.maybe_batch(
                first, keep, 4, enqueue_many=True, allow_smaller_final_batch=True
            )
        return api.maybe_batch_join(
            [first], keep, 4, enqueue_many=True, allow_smaller_final_batch=True
        )

    assert_same(build)


@pytest.mark.parametrize("join", [False, True])
def test_a_sparse_tensor_with_a_vector_keep_input_keeps_whole_rows_like_legacy(join):
    def build(api):
        x = api.range_input_producer(6, num_epochs=1, shuffle=False).dequeue()
        rows = tf.stack([x * 10, x * 10 + 1, x * 10 + 2, x * 10 + 3])
        sparse = tf.sparse.from_dense(tf.reshape(rows, [4, 1]))
        keep = tf.constant([True, False, True, False])
        if join:
            return api.maybe_batch_join(
                [[sparse, rows]], keep, 3, enqueue_many=True, allow_smaller_final_batch=True
            )
        return api.maybe_batch(
            [sparse, rows], keep, 3, enqueue_many=True, allow_smaller_final_batch=True
        )

    assert_same(build)


_BATCHERS_OF_ONE = {
    "batch": lambda api, t, many: api.batch([t], 2, enqueue_many=many),
    "batch_join": lambda api, t, many: api.batch_join([[t], [t]], 2, enqueue_many=many),
    "shuffle_batch": lambda api, t, many: api.shuffle_batch([t], 2, 10, 1, enqueue_many=many),
    "shuffle_batch_join": lambda api, t, many: api.shuffle_batch_join(
        [[t], [t]], 2, 10, 1, enqueue_many=many
    ),
    "maybe_batch": lambda api, t, many: api.maybe_batch([t], True, 2, enqueue_many=many),
    "maybe_shuffle_batch": lambda api, t, many: api.maybe_shuffle_batch(
        [t], 2, 10, 1, True, enqueue_many=many
    ),
}


def _batched_sparse_shapes(api, batcher, many) -> tuple:
    """Static shapes of a batch of SparseTensors whose rank nothing tells (placeholders)."""
    with tf.Graph().as_default():
        sparse = tf.SparseTensor(
            indices=tf1.placeholder(tf.int64),
            values=tf1.placeholder(tf.float32),
            dense_shape=tf1.placeholder(tf.int64),
        )
        batched = _BATCHERS_OF_ONE[batcher](api, sparse, many)
        batched = batched[0] if isinstance(batched, list) else batched
        return tuple(
            t.shape.as_list() if t.shape.rank is not None else None
            for t in (batched.indices, batched.values, batched.dense_shape)
        )


@pytest.mark.parametrize("many", [False, True])
@pytest.mark.parametrize("batcher", sorted(_BATCHERS_OF_ONE))
def test_sparse_tensors_of_unknown_rank_batch_with_legacys_static_shapes(batcher, many):
    # TensorFlow's input_test builds these (placeholders never fed): legacy builds them,
    # and so must we.
    legacy = _batched_sparse_shapes(legacy_api(), batcher, many)
    assert _batched_sparse_shapes(compat_api(), batcher, many) == legacy


def _padded_join(api) -> tuple:
    """Two lists: `a` tiled 1 to 12 times (length unknown when built), `b` tiled 9 times
    (length 9 when built); joined with dynamic_pad. Static shapes, and each example as
    (number, letters in its row without padding), sorted."""
    with tf.Graph().as_default():
        counter = tf1.Variable(tf.constant(0, tf.int64)).count_up_to(12)
        nine = api.limit_epochs(tf.constant(9, tf.int64), 8)
        a = tf.tile(["a"], tf.cast(tf.stack([counter + 1]), tf.int32))
        b = tf.tile(["b"], tf.cast(tf.stack([nine]), tf.int32))
        batched = api.batch_join([[counter, a], [nine, b]], 4, dynamic_pad=True)
        shapes = [t.shape.as_list() for t in batched]
        got = []
        with tf1.Session() as sess:
            sess.run([tf1.global_variables_initializer(), tf1.local_variables_initializer()])
            coord = tf1.train.Coordinator()
            threads = api.start_queue_runners(sess, coord=coord)
            for _ in range(5):
                numbers, rows = sess.run(batched)
                got += [(int(n), sum(1 for x in row if x)) for n, row in zip(numbers, rows)]
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=10)
    return shapes, sorted(got)


def test_a_join_pads_to_the_first_lists_shape_as_legacy_did():
    # TensorFlow's batch_join merged the lists' shapes but kept the first list's (it dropped
    # the merge's result): `b`'s known length 9 must not be forced on `a`'s rows.
    legacy = _padded_join(legacy_api())
    assert legacy[0] == [[4], [4, None]]
    assert _padded_join(compat_api()) == legacy


def test_a_branch_not_taken_holds_back_nothing_of_the_branch_taken():
    # facenet: tf.cond(flag, random_crop, resize_image_with_crop_or_pad) over a decoded
    # image. The Assert of the branch not taken, chained before the other branch's Asserts
    # by the map function's automatic control dependencies, made the output dead ("No
    # return value for index 0") on every run.
    def build(api):
        x = api.range_input_producer(6, num_epochs=1, shuffle=False).dequeue()
        image = tf.zeros(tf.stack([12, 10 + x * 0, 3]), tf.uint8) + tf.cast(x, tf.uint8)

        def checked():
            check = tf1.Assert(tf.reduce_all(tf.shape(image) > 0), [tf.shape(image)])
            with tf.control_dependencies([check]):
                return tf.identity(image[:8, :8])

        image = tf.cond(
            tf.equal(x, 99), checked, lambda: tf1.image.crop_to_bounding_box(image, 2, 1, 8, 8)
        )
        image.set_shape([8, 8, 3])
        return api.batch([image, x], 2)

    compat = assert_same(build)
    assert len(compat.values) == 3


def _map_calls(graph: tf.Graph) -> dict:
    """The function of each map of `graph` and of its functions -> whether the map runs it
    with inter-op parallelism (False: inline)."""
    graph_def = graph.as_graph_def()
    nodes = [*graph_def.node, *(n for f in graph_def.library.function for n in f.node_def)]
    return {
        n.attr["f"].func.name: n.attr["use_inter_op_parallelism"].b
        for n in nodes
        if n.op in ("MapDataset", "ParallelMapDatasetV2")
    }


def test_maps_run_inline_unless_the_per_example_graph_has_tf1_control_flow(tmp_path):
    # Each call handing its ops to the session's threads costs a wake-up or two per
    # element (100-140 us a map call here, 15 inline). A captured TF1 tf.cond is Switch and
    # Merge, which the inline executor refuses (facenet's crop-or-resize cond): that
    # graph keeps the session's threads. Errors of an inline graph name no node; its map's
    # name says it ran the program's examples (test_origins names their records).
    f = write(str(tmp_path / "lines.txt"), "".join(f"{i}\n" for i in range(6)))

    def build(api, cond):
        queue = api.string_input_producer([f], num_epochs=1, shuffle=False)
        _, line = api.TextLineReader().read(queue)
        x = tf1.string_to_number(line, tf.int32)
        y = tf.cond(tf.equal(x, 3), lambda: x + 1, lambda: x - 1) if cond else x * 2 + 1
        return api.batch([y, x], 2)

    for cond in (True, False):
        compat = assert_same(lambda api, cond=cond: build(api, cond))
        assert len(compat.values) == 3
        with tf.Graph().as_default() as graph:
            build(compat_api(), cond)
        calls = _map_calls(graph)
        examples = [parallel for name, parallel in calls.items() if "examples" in name]
        counting = [parallel for name, parallel in calls.items() if "counting" in name]
        assert examples == [cond] and counting and not any(counting), (cond, calls)
        named = [
            n.attr["metadata"].s
            for n in graph.as_graph_def().node
            if n.op == "MapDataset" and "examples" in n.attr["f"].func.name
        ]
        assert named and all(b"compat_input_example" in m for m in named), named


@pytest.mark.parametrize("stateful", [True, False])
def test_one_thread_runs_a_stateful_per_example_op_one_call_at_a_time(tmp_path, stateful):
    # Examples of several shapes go one at a time (no blocks): with num_threads=1, a
    # stateful py_func is never called twice at once, as on legacy's one thread. (Parallel
    # calls for stateless per-example graphs were tried and left out: reading ahead, they
    # let the log that names a bad record move past it.)
    lines = "".join(" ".join(["7"] * (1 + i % 4)) + "\n" for i in range(24))
    f = write(str(tmp_path / "lines.txt"), lines)
    active, most = [0], [0]

    def slow(v):
        active[0] += 1
        most[0] = max(most[0], active[0])
        time.sleep(0.002)  # Without the GIL: a second call could start meanwhile.
        active[0] -= 1
        return v

    def build(api):
        queue = api.string_input_producer([f], num_epochs=1, shuffle=False)
        _, line = api.TextLineReader().read(queue)
        ids = tf.strings.to_number(tf1.string_split([line]).values, tf.int32)
        ids = tf1.py_func(slow, [ids], tf.int32, stateful=stateful)
        ids.set_shape([None])
        return api.batch([ids], 4, dynamic_pad=True, allow_smaller_final_batch=True)

    for api in (legacy_api(), compat_api()):
        most[0] = 0
        run = run_scenario(api, build)
        assert len(examples(run)) == 24
        if stateful or api.name == "legacy":
            assert most[0] == 1, (api.name, most[0])
    compat = assert_same(build)
    assert len(examples(compat)) == 24
