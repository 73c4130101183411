"""Reliability: errors where legacy hid them, no hangs, nothing lost, property tests."""

import collections
import os
import threading
import time

import hypothesis
import hypothesis.strategies as st
import pytest
import tensorflow as tf

import compat_input
from helpers import assert_same
from helpers import assert_same_examples
from helpers import compat_api
from helpers import differential
from helpers import legacy_api
from helpers import one_world
from helpers import run_scenario
from helpers import write

tf1 = tf.compat.v1


def test_a_malformed_csv_line_raises_its_own_error_after_the_rows_before_it(tmp_path):
    f = write(str(tmp_path / "bad.csv"), "1,2\n3,4\n5,6,7\n8,9\n")

    def build(api):
        queue = api.string_input_producer([f], num_epochs=1, shuffle=False)
        _, line = api.TextLineReader().read(queue)
        return api.batch(tf1.decode_csv(line, [[0], [0]]), 1)

    legacy, compat = differential(build)
    assert compat.values == legacy.values == [[[1], [2]], [[3], [4]]]
    # Legacy hid the real error behind OutOfRangeError (and in coord.join()).
    assert legacy.error is tf.errors.OutOfRangeError
    assert compat.error is tf.errors.InvalidArgumentError
    assert "Expect 2 fields but have 3" in compat.error_message


def test_forgetting_local_init_with_num_epochs_no_longer_ends_the_input():
    def build(api):
        x = api.range_input_producer(6, num_epochs=1, shuffle=False).dequeue()
        return api.batch([x], 2)

    legacy = run_scenario(legacy_api(), build, init_local=False)
    compat = run_scenario(compat_api(), build, init_local=False)
    assert legacy.values == [] and legacy.error is tf.errors.OutOfRangeError
    assert compat.values == [[0, 1], [2, 3], [4, 5]] and compat.error is tf.errors.OutOfRangeError


def test_min_after_dequeue_larger_than_the_data_drains_at_the_end():
    def build(api):
        x = api.range_input_producer(20, num_epochs=1, shuffle=False).dequeue()
        return api.shuffle_batch(
            [x, -x], 6, capacity=2000, min_after_dequeue=1000, allow_smaller_final_batch=True
        )

    legacy, compat = assert_same_examples(build)
    assert len([x for step in compat.values for x in step[0]]) == 20


def test_join_after_request_stop_returns_at_once():
    with tf.Graph().as_default():
        b = compat_input.batch([compat_input.range_input_producer(10).dequeue()], 2)
        with tf1.Session() as sess:
            coord = compat_input.Coordinator()
            threads = compat_input.start_queue_runners(sess, coord)
            sess.run(b)
            coord.request_stop()
            start = time.monotonic()
            coord.join(threads)
            assert time.monotonic() - start < 1


def test_threads_running_one_batch_tensor_get_disjoint_batches():
    with tf.Graph().as_default():
        x = compat_input.range_input_producer(400, num_epochs=1, shuffle=False).dequeue()
        batch = compat_input.batch([x], 4, allow_smaller_final_batch=True)
        seen, lock = [], threading.Lock()
        with tf1.Session() as sess:
            compat_input.start_queue_runners(sess)

            def tower():
                while True:
                    try:
                        values = sess.run(batch).tolist()
                    except tf.errors.OutOfRangeError:
                        return
                    with lock:
                        seen.append(values)

            towers = [threading.Thread(target=tower) for _ in range(4)]
            for t in towers:
                t.start()
            for t in towers:
                t.join(timeout=60)
    counts = collections.Counter(x for b in seen for x in b)
    assert counts == collections.Counter(range(400))


@hypothesis.settings(max_examples=12, deadline=None, derandomize=True)
@hypothesis.given(
    size=st.integers(1, 17),
    batch_size=st.integers(1, 6),
    epochs=st.integers(1, 3),
    allow_smaller=st.booleans(),
    capacity=st.integers(1, 40),
    enqueue_many=st.booleans(),
    keep_every=st.integers(1, 3),
    dynamic_pad=st.booleans(),
)
def test_batches_match_legacy_queues_for_random_configurations(
    size, batch_size, epochs, allow_smaller, capacity, enqueue_many, keep_every, dynamic_pad
):
    def build(api):
        x = api.range_input_producer(size, num_epochs=epochs, shuffle=False).dequeue()
        value = tf.range(x % 3 + 1) if dynamic_pad else x
        if enqueue_many:
            value = tf.stack([value, value + 100]) if not dynamic_pad else tf.expand_dims(value, 0)
        keep = tf.equal(x % keep_every, 0)
        if enqueue_many:
            keep = tf.fill([2 if not dynamic_pad else 1], keep)
        return api.maybe_batch(
            [value],
            keep,
            batch_size,
            capacity=capacity,
            enqueue_many=enqueue_many,
            dynamic_pad=dynamic_pad,
            allow_smaller_final_batch=allow_smaller,
        )

    assert_same(build)


@hypothesis.settings(max_examples=8, deadline=None, derandomize=True)
@hypothesis.given(
    size=st.integers(1, 30),
    batch_size=st.integers(1, 8),
    min_after=st.integers(0, 20),
    epochs=st.integers(1, 2),
)
def test_shuffle_batch_delivers_the_legacy_multiset_for_random_configurations(
    size, batch_size, min_after, epochs
):
    def build(api):
        x = api.range_input_producer(size, num_epochs=epochs, shuffle=False).dequeue()
        return api.shuffle_batch(
            {"x": x, "name": tf.strings.as_string(x * 3)},
            batch_size,
            capacity=min_after + batch_size + 1,
            min_after_dequeue=min_after,
            allow_smaller_final_batch=True,
        )

    assert_same_examples(build)


def test_skip_policy_drops_bad_records_counts_them_and_goes_on(tmp_path, skip_bad_records):
    f = write(str(tmp_path / "bad.csv"), "1,2\n3,4\n5,6,7\nx,9\n8,9\n")
    with tf.Graph().as_default():
        queue = compat_input.string_input_producer([f], num_epochs=1, shuffle=False)
        _, line = compat_input.TextLineReader().read(queue)
        a, b = tf1.decode_csv(line, [[0], [0]])
        batch = compat_input.batch([a, b], 1)
        got = []
        with tf1.Session() as sess:
            compat_input.start_queue_runners(sess)
            try:
                while True:
                    got.append(sess.run(batch)[0].tolist())
            except tf.errors.OutOfRangeError:
                pass
            skipped = compat_input.skipped_records(sess, batch)
    assert got == [[1], [3], [8]] and skipped == 2


def test_configure_rejects_an_unknown_policy_and_names_the_choices():
    import pytest

    with pytest.raises(
        ValueError, match=r"bad_records must be one of \('raise', 'skip'\), got 'ignore'"
    ):
        compat_input.configure(bad_records="ignore")


_INTERRUPTED_PROGRAM = """
import signal, sys, time, tensorflow as tf, compat_input
# Ctrl-C as a program started from a terminal has it: a child inherits an ignored SIGINT,
# and the test's worker process may ignore it (the whole suite timed out here, before and
# after any change of ours).
signal.signal(signal.SIGINT, signal.default_int_handler)
tf.compat.v1.disable_eager_execution()
x = compat_input.range_input_producer(10**6).dequeue()
# Slow enough that the pipeline's threads are inside it when the program ends.
slow = tf.compat.v1.py_func(lambda v: (time.sleep(float(sys.argv[1])), v)[1], [x], tf.int32)
slow.set_shape([])
if sys.argv[2] == "batch":
    batch = compat_input.batch([slow], 4)
else:  # The program's own queue, filled by its own runner's threads: served by tf.data.
    queue = compat_input.RandomShuffleQueue(16, 4, [tf.int32], shapes=[[]])
    runner = compat_input.QueueRunner(queue, [queue.enqueue([slow])] * 4)
    compat_input.add_queue_runner(runner)
    batch = queue.dequeue_many(4)
    assert queue._served is not None
with tf.compat.v1.Session() as sess:
    compat_input.start_queue_runners(sess)
    print("running", flush=True)
    try:
        while True:
            sess.run(batch)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
"""


def _busy(stop):
    while not stop.is_set():
        pass


@one_world
@pytest.mark.parametrize("delay", [0.3, 1.7])
@pytest.mark.parametrize("reads", ["batch", "queue"])
def test_keyboard_interrupt_ends_the_program_on_a_loaded_machine(tmp_path, delay, reads):
    """Ctrl-C while a py_func pipeline runs ahead: the program must end, every time.

    The race is made on purpose: the machine is loaded with busy processes, the py_func
    sleeps long enough to be running in the pipeline's threads when the session closes
    and the interpreter exits (tensorflow/tensorflow#21277: a py_func taking the GIL
    during finalization could hang the process), and SIGINT comes at several moments.
    """
    import multiprocessing
    import signal
    import subprocess
    import sys

    script = tmp_path / "loop.py"
    script.write_text(_INTERRUPTED_PROGRAM)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    stop = multiprocessing.Event()
    load = [multiprocessing.Process(target=_busy, args=(stop,), daemon=True) for _ in range(3)]
    for process in load:
        process.start()
    try:
        for _ in range(2):
            # The context manager waits for the process; the finally kills it first on
            # any outcome, so a failing assertion never leaves the training loop running.
            with subprocess.Popen(
                [sys.executable, str(script), "0.05", reads],
                stdout=subprocess.PIPE,
                text=True,
                env=env,
            ) as proc:
                try:
                    assert proc.stdout.readline().strip() == "running"
                    time.sleep(delay)
                    proc.send_signal(signal.SIGINT)
                    out, _ = proc.communicate(timeout=60)
                    assert out.strip() == "interrupted" and proc.returncode == 0
                finally:
                    proc.kill()
    finally:
        stop.set()
        for process in load:
            process.join(timeout=5)


@st.composite
def legacy_programs(draw):
    """A random legacy input program: producer, per-example ops, batcher, maybe a re-batch."""
    return {
        "producer": draw(st.sampled_from(["range", "slice", "lines"])),
        "size": draw(st.integers(1, 12)),
        "epochs": draw(st.integers(1, 2)),
        "limit": draw(st.sampled_from([None, 3, 7])),  # limit_epochs on a per-example op
        "sparse": draw(st.booleans()),
        "as_dict": draw(st.booleans()),
        "batcher": draw(st.sampled_from(["batch", "maybe_batch", "shuffle_batch"])),
        "batch_size": draw(st.integers(1, 5)),
        "allow_smaller": draw(st.booleans()),
        "rebatch": draw(st.sampled_from([None, "batch", "maybe_batch"])),
        "rebatch_size": draw(st.integers(1, 4)),
    }


def _program(spec, path):
    def build(api):
        size, epochs = spec["size"], spec["epochs"]
        if spec["producer"] == "range":
            x = api.range_input_producer(size, num_epochs=epochs, shuffle=False).dequeue()
        elif spec["producer"] == "slice":
            x = api.slice_input_producer([tf.range(size) * 3], num_epochs=epochs, shuffle=False)[0]
        else:
            queue = api.string_input_producer([path], num_epochs=epochs, shuffle=False)
            _, line = api.TextLineReader().read(queue)
            x = tf.strings.to_number(line, tf.int32)
        if spec["limit"]:
            x = x + api.limit_epochs(tf.constant(0), num_epochs=spec["limit"])
        values = [x, tf.strings.as_string(x * 7)]
        if spec["sparse"]:
            values.append(tf.sparse.from_dense(tf.reshape(tf.range(x % 3 + 1) + 1, [1, -1])))
        tensors = {f"c{i}": v for i, v in enumerate(values)} if spec["as_dict"] else values
        size_ = spec["batch_size"]
        smaller = spec["allow_smaller"]
        if spec["batcher"] == "batch":
            out = api.batch(tensors, size_, allow_smaller_final_batch=smaller)
        elif spec["batcher"] == "maybe_batch":
            keep = tf.equal(x % 2, 0)
            out = api.maybe_batch(tensors, keep, size_, allow_smaller_final_batch=smaller)
        else:
            out = api.shuffle_batch(tensors, size_, 30, 5, allow_smaller_final_batch=smaller)
        if spec["rebatch"] is None or spec["batcher"] == "shuffle_batch":
            return out
        first = out["c0"] if spec["as_dict"] else out[0]
        if spec["rebatch"] == "batch":
            return api.batch(
                out, spec["rebatch_size"], enqueue_many=True, allow_smaller_final_batch=True
            )
        return api.maybe_batch(
            out,
            tf.equal(first % 3, 0),
            spec["rebatch_size"],
            enqueue_many=True,
            allow_smaller_final_batch=True,
        )

    return build


@hypothesis.settings(max_examples=25, deadline=None, derandomize=True)
@hypothesis.given(spec=legacy_programs())
def test_random_legacy_programs_deliver_what_legacy_delivers(spec, tmp_path_factory):
    path = str(tmp_path_factory.mktemp("lines") / "n.txt")
    write(path, "".join(f"{i * 3}\n" for i in range(spec["size"])))
    build = _program(spec, path)
    try:
        with tf.Graph().as_default():
            build(legacy_api())
    except TypeError:
        # Legacy's own limit: it cannot re-batch some SparseTensor outputs of a batcher.
        hypothesis.reject()
    if spec["batcher"] == "shuffle_batch" and not spec["allow_smaller"]:
        # Which examples stay in the queue at the end is random: compare all but those.
        legacy, compat = differential(build)
        assert compat.structure == legacy.structure and compat.error == legacy.error
        assert [len(s[0] if isinstance(s, list) else s["c0"]) for s in compat.values] == [
            len(s[0] if isinstance(s, list) else s["c0"]) for s in legacy.values
        ]
    elif spec["batcher"] == "shuffle_batch":
        assert_same_examples(build)
    else:
        assert_same(build)


def test_no_pipeline_iterator_runs_tf_data_autotuning_or_static_rewrites(tmp_path):
    # tf.data's tuning thread (TF 2.21) misses its iterator's cancellation and sleeps out its
    # period, up to 60 s, in every re-initialization and in `sess.close()`: 50 towers took
    # 200-260 s to close (benchmarks/faults.py). Every iterator we build must run untuned,
    # and without the static rewrites that run at each start (preloaded data 2.3x slower).
    f = write(str(tmp_path / "a.csv"), "1,2\n3,4\n")
    with tf.Graph().as_default() as graph:
        queue = compat_input.string_input_producer([f], num_epochs=2)
        _, line = compat_input.TextLineReader().read(queue)
        row = tf1.decode_csv(line, [[0], [0]])
        compat_input.batch(row, 2, num_threads=2)
        compat_input.shuffle_batch_join([row, row], 2, 20, 2)
        compat_input.batch([compat_input.range_input_producer(5).dequeue()], 2)
        compat_input.slice_input_producer([tf.range(4)], shuffle=False)
        # Datasets started by a MakeIterator, or (a reader's or producer's own, started on
        # first use) passed to the functions that start them.
        made = [
            tensor.op
            for op in graph.get_operations()
            if op.type in ("MakeIterator", "StatefulPartitionedCall")
            for tensor in op.inputs
            if tensor.dtype == tf.variant
        ]
        assert len({op.name for op in made}) >= 5
        for dataset in made:
            options = tf.data.Options()
            while dataset.type != "OptionsDataset":
                dataset = dataset.inputs[0].op
            options._from_proto(_options_proto(dataset))
            assert options.autotune.enabled is False, dataset.name
            assert options.experimental_optimization.apply_default_optimizations is False


def _options_proto(op):
    from tensorflow.core.framework import dataset_options_pb2

    proto = dataset_options_pb2.Options()
    proto.ParseFromString(op.get_attr("serialized_options"))
    return proto
