"""Starting pipelines wherever legacy code started queue runners (contract §5, §7)."""

import os
import time

import numpy as np
import pytest
import tensorflow as tf

import compat_input
from compat_input._src.runtime import pipeline as pipeline_lib

tf1 = tf.compat.v1


def _pipeline():
    x = compat_input.range_input_producer(100, shuffle=False).dequeue()
    return compat_input.batch([x], 2)


def test_running_a_pipeline_never_started_fails_within_seconds_with_the_fix():
    with tf.Graph().as_default():
        b = _pipeline()
        with tf1.Session() as sess:
            start = time.monotonic()
            with pytest.raises(
                tf.errors.InvalidArgumentError, match="never started.*start_queue_runners"
            ):
                sess.run(b)
            # After waiting for a start that races the run (an imported graph's runners).
            assert 2.5 < time.monotonic() - start < 5


@pytest.mark.parametrize(
    "start",
    [
        lambda sess: compat_input.start_queue_runners(sess),
        lambda sess: tf1.train.start_queue_runners(sess),
        lambda sess: [
            qr.create_threads(sess, start=True)
            for qr in tf1.get_collection(tf1.GraphKeys.QUEUE_RUNNERS)
        ],
    ],
    ids=["ours", "tensorflow", "create_threads"],
)
def test_every_legacy_way_of_starting_starts_pipelines(start):
    with tf.Graph().as_default():
        b = _pipeline()
        with tf1.Session() as sess:
            start(sess)
            assert sess.run(b).tolist() == [0, 1]


def test_starting_twice_in_one_session_does_not_rewind_and_a_new_session_starts_afresh():
    with tf.Graph().as_default():
        b = _pipeline()
        with tf1.Session() as sess:
            compat_input.start_queue_runners(sess)
            sess.run(b)
            assert compat_input.start_queue_runners(sess) == []
            assert sess.run(b).tolist() == [2, 3]
        with tf1.Session() as sess:
            compat_input.start_queue_runners(sess)
            assert sess.run(b).tolist() == [0, 1]


def test_start_queue_runners_without_a_session_names_the_fix():
    with tf.Graph().as_default():
        _pipeline()
        with pytest.raises(ValueError, match="No default session"):
            compat_input.start_queue_runners()


def test_monitored_training_session_starts_pipelines():
    with tf.Graph().as_default():
        b = _pipeline()
        tf1.train.get_or_create_global_step()
        with tf1.train.MonitoredTrainingSession() as sess:
            assert sess.run(b).tolist() == [0, 1]
            assert compat_input.start_queue_runners(sess) == []


def test_stock_supervisor_starts_pipelines_and_swallows_the_end_of_input(tmp_path):
    with tf.Graph().as_default():
        x = compat_input.range_input_producer(5, num_epochs=1, shuffle=False).dequeue()
        b = compat_input.batch([x], 2)
        sv = tf1.train.Supervisor(logdir=str(tmp_path), save_model_secs=0, save_summaries_secs=0)
        seen = []
        with sv.managed_session() as sess:
            while not sv.should_stop():
                seen.append(sess.run(b).tolist())
    assert seen == [[0, 1], [2, 3]]


def test_export_meta_graph_keeps_user_queue_runners_without_a_patch():
    from tensorflow.core.protobuf import queue_runner_pb2

    with tf.Graph().as_default():
        _pipeline()
        q = tf1.FIFOQueue(4, tf.int32, name="user_queue")
        tf1.train.add_queue_runner(tf1.train.QueueRunner(q, [q.enqueue(7)]))
        meta = tf1.train.export_meta_graph()
    exported = meta.collection_def[tf1.GraphKeys.QUEUE_RUNNERS].bytes_list.value
    runners = [queue_runner_pb2.QueueRunnerDef.FromString(b) for b in exported]
    assert "user_queue" in [r.queue_name for r in runners]
    # Ours exports one start op per pipeline (producer and batcher): imported, TensorFlow's
    # own QueueRunner runs each once in a thread that ends at once (test_faults.py runs it).
    ours = [r for r in runners if r.queue_name != "user_queue"]
    assert [len(r.enqueue_op_name) for r in ours] == [2]
    assert all(name.endswith("_start_once/IteratorGetNext") for name in ours[0].enqueue_op_name)


def test_hand_built_queue_fed_from_python_runs_beside_a_pipeline():
    with tf.Graph().as_default():
        b = _pipeline()
        data = tf1.placeholder(tf.float32, [None])
        q = tf1.FIFOQueue(10, tf.float32, shapes=[])
        enqueue = q.enqueue_many([data])
        with tf1.Session() as sess:
            compat_input.start_queue_runners(sess)
            sess.run(enqueue, {data: [1.5, 2.5]})
            assert sess.run(q.dequeue_many(2)).tolist() == [1.5, 2.5]
            assert sess.run(b).tolist() == [0, 1]


def test_hand_built_shuffle_queue_with_a_queue_runner_reading_a_producer():
    """simple_shuffle_batch: a RandomShuffleQueue filled by a user QueueRunner from a reader."""
    with tf.Graph().as_default():
        x = compat_input.range_input_producer(20, num_epochs=1, shuffle=False).dequeue()
        q = tf1.RandomShuffleQueue(10, 2, [tf.int32], shapes=[[]])
        compat_input.add_queue_runner(compat_input.QueueRunner(q, [q.enqueue([x])] * 2))
        out = q.dequeue_up_to(3)
        got = []
        with tf1.Session() as sess:
            coord = compat_input.Coordinator()
            threads = compat_input.start_queue_runners(sess, coord)
            try:
                while True:
                    got.extend(sess.run(out).tolist())
            except tf.errors.OutOfRangeError:
                pass
            coord.request_stop()
            coord.join(threads)
    assert sorted(got) == list(range(20))


def test_batch_over_a_hand_built_queue_ends_when_the_queue_is_drained():
    with tf.Graph().as_default():
        x = compat_input.range_input_producer(9, num_epochs=1, shuffle=False).dequeue()
        q = tf1.FIFOQueue(10, [tf.int32], shapes=[[]])
        compat_input.add_queue_runner(compat_input.QueueRunner(q, [q.enqueue([x])]))
        b = compat_input.batch([q.dequeue() * 2], 4, allow_smaller_final_batch=True)
        got = []
        with tf1.Session() as sess:
            coord = compat_input.Coordinator()
            threads = compat_input.start_queue_runners(sess, coord)
            try:
                while True:
                    got.append(sess.run(b).tolist())
            except tf.errors.OutOfRangeError:
                pass
            coord.request_stop()
            coord.join(threads)
    assert sorted(np.concatenate(got).tolist()) == [2 * i for i in range(9)]


def test_coordinator_is_tensorflows_own_and_queue_runner_a_subclass():
    assert compat_input.Coordinator is tf.train.Coordinator
    # A runner of a queue compat_input does not serve is TensorFlow's, threads and all.
    assert issubclass(compat_input.QueueRunner, tf1.train.QueueRunner)
    with tf.Graph().as_default():
        q = tf1.FIFOQueue(2, [tf.int32], shapes=[[]])  # TensorFlow's own queue.
        runner = compat_input.QueueRunner(q, [q.enqueue([tf.constant(5)])])
        out = q.dequeue()
        with tf1.Session() as sess:
            coord = tf1.train.Coordinator()
            threads = runner.create_threads(sess, coord=coord, start=True)
            assert len(threads) == 2  # The enqueue thread and the close-on-stop one.
            assert sess.run(out) == 5
            coord.request_stop()
            coord.join(threads)


def test_closing_the_session_before_join_leaves_nothing_hanging():
    with tf.Graph().as_default():
        b = _pipeline()
        sess = tf1.Session()
        coord = compat_input.Coordinator()
        threads = compat_input.start_queue_runners(sess, coord)
        sess.run(b)
        sess.close()
        coord.request_stop()
        start = time.monotonic()
        coord.join(threads, stop_grace_period_secs=5)
        assert time.monotonic() - start < 2


def _read_after_start(api, paths):
    """Runs built inside the training loop, after the input started."""
    with tf.Graph().as_default():
        queue = api.string_input_producer(paths, num_epochs=1, shuffle=False)
        files = api.string_input_producer(paths, num_epochs=1, shuffle=False)
        first = queue.dequeue()
        with tf1.Session() as sess:
            sess.run(tf1.local_variables_initializer())
            coord = tf1.train.Coordinator()
            threads = api.start_queue_runners(sess, coord)
            got = [sess.run(first)]
            got.append(sess.run(queue.dequeue()))  # A dequeue made in the loop.
            reader = api.TextLineReader()
            key, _ = reader.read(files)  # A reader made in the loop, over a started queue.
            got.extend(sess.run(key) for _ in range(3))
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=5)
    return got


def test_dequeues_and_reads_built_after_start_queue_runners_are_served_like_legacy(tmp_path):
    paths = [str(tmp_path / name) for name in ("a.txt", "b.txt", "c.txt")]
    for path in paths:
        with open(path, "w") as f:
            f.write("1\n2\n")
    from helpers import compat_api
    from helpers import legacy_api

    legacy = _read_after_start(legacy_api(), paths)
    compat = _read_after_start(compat_api(), paths)
    assert compat == legacy


def test_a_reader_a_batcher_reads_starts_only_if_read_directly(tmp_path):
    # Starting a reader's own iterator that only a batcher reads costs a MakeIterator per
    # tower (50 towers: 1.9 s); it is left to a direct read, which still works.
    path = tmp_path / "rows.txt"
    path.write_text("".join(f"line {i}\n" for i in range(30)))
    with tf.Graph().as_default():
        queue = compat_input.string_input_producer([str(path)], shuffle=False)
        _, line = compat_input.TextLineReader().read(queue)
        batch = compat_input.batch([line], 4)
        with tf1.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match="never started"):
                sess.run(line)  # Before the start: as for every pipeline.
        with tf1.Session() as sess:
            compat_input.start_queue_runners(sess)
            reader = pipeline_lib.lookup_source(line)[0].pipeline
            assert not sess.run(reader.is_started)
            assert sess.run(batch).tolist() == [b"line 0", b"line 1", b"line 2", b"line 3"]
            assert not sess.run(reader.is_started)
            # Read directly, it starts, with a stream of its own (see Known limits).
            assert [sess.run(line) for _ in range(2)] == [b"line 0", b"line 1"]
            assert sess.run(batch).tolist() == [b"line 4", b"line 5", b"line 6", b"line 7"]


@pytest.mark.parametrize("api", ["legacy", "compat"])
def test_an_error_computing_a_producer_when_it_starts(api):
    # As the PTB tutorial's ptb_producer with a batch too big for its data.
    train = tf1.train if api == "legacy" else compat_input
    with tf.Graph().as_default():
        size = tf1.placeholder_with_default(0, [])  # Known only when run.
        check = tf1.assert_positive(size, message="epoch_size == 0, decrease batch_size")
        with tf.control_dependencies([check]):
            size = tf.identity(size)
        i = train.range_input_producer(size, shuffle=False).dequeue()
        with tf1.Session() as sess:
            coord = tf1.train.Coordinator()
            if api == "legacy":
                threads = train.start_queue_runners(sess, coord)
                # The runner thread hit the error: the loop sees the end of input...
                with pytest.raises(tf.errors.OutOfRangeError):
                    sess.run(i)
                # ...and the real error comes from join.
                with pytest.raises(tf.errors.InvalidArgumentError, match="epoch_size == 0"):
                    coord.join(threads)
            else:
                # Raised where the input starts, with its own type and message.
                with pytest.raises(tf.errors.InvalidArgumentError, match="epoch_size == 0"):
                    train.start_queue_runners(sess, coord)


def _ancestors(op: tf.Operation) -> set:
    seen, todo = set(), [op]
    while todo:
        op = todo.pop()
        if op not in seen:
            seen.add(op)
            todo += [t.op for t in op.inputs] + list(op.control_inputs)
    return seen


def test_a_pipeline_is_marked_started_only_once_its_iterator_is():
    # A read waiting on the mark (runtime/started_guard.py) reads as soon as it is set: set before
    # the iterator is made, that read finds no iterator. The variable's own initializer is
    # made at the graph's root, with no such order, so the start writes the mark itself.
    with tf.Graph().as_default() as graph:
        value = compat_input.range_input_producer(5, shuffle=False).dequeue()
        compat_input.batch([value], 2)
        batchers = [p for p in pipeline_lib.pipelines_of(graph) if not p.lazy]
        assert batchers
        for pipeline in batchers:
            marks = [
                op
                for op in _ancestors(pipeline.start_op)
                if op.type == "AssignVariableOp" and op.inputs[0] is pipeline.started_handle
            ]
            assert marks
            for mark in marks:
                assert pipeline.iterator.initializer in _ancestors(mark)


def _counted_through_two_hand_built_queues(api) -> tuple:
    """Rows of growing length waiting in a queue nobody closes, batched with a counter that
    runs out after three examples, then prefetched through a second hand-built queue fed by
    its own QueueRunner (tf_slim's prefetch_queue): the batch, then the end of input."""
    with tf.Graph().as_default():
        rows = [tf.constant([[i, -i]] * (i + 1)) for i in range(1, 4)]
        for row in rows:
            row.set_shape([None, 2])
        taken = tf1.Variable(tf.constant(0, tf.int64)).count_up_to(3)
        first = tf1.PaddingFIFOQueue(8, [tf.int32], shapes=[[None, 2]])
        batch = api.batch([first.dequeue(), taken], 3, num_threads=1, dynamic_pad=True)
        second = tf1.PaddingFIFOQueue(4, [tf.int32, tf.int64], shapes=[[3, None, 2], [3]])
        tf1.train.add_queue_runner(tf1.train.QueueRunner(second, [second.enqueue(batch)]))
        out = second.dequeue()
        config = tf1.ConfigProto(operation_timeout_in_ms=20000)  # A hang fails the test.
        with tf1.Session(config=config) as sess:
            for row in rows:
                sess.run(first.enqueue([row]))
            sess.run(tf1.global_variables_initializer())
            coord = tf1.train.Coordinator()
            threads = api.start_queue_runners(sess, coord=coord)
            values, counts = sess.run(out)
            with pytest.raises(tf.errors.OutOfRangeError):
                sess.run(out)
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=10)
    return values.tolist(), counts.tolist()


def test_an_example_graph_that_runs_out_ends_a_dequeue_waiting_on_an_open_queue():
    # The counter's end came in the same step as a dequeue from an empty queue nobody
    # closes: legacy's step failed and ended the input; a dequeue run on its own waits forever.
    from helpers import compat_api
    from helpers import legacy_api

    legacy = _counted_through_two_hand_built_queues(legacy_api())
    assert _counted_through_two_hand_built_queues(compat_api()) == legacy
    assert legacy[1] == [0, 1, 2]


def _graph_in_events_and_session(supervisor, logdir: str, with_input: bool) -> tuple:
    """The graph a chief Supervisor writes to its event file, and its session's graph."""
    with tf.Graph().as_default():
        total = tf.constant(2.0)
        if with_input:
            total += tf.cast(compat_input.range_input_producer(4).dequeue(), tf.float32)
        summary = tf1.summary.scalar("total", total)
        sv = supervisor(is_chief=True, logdir=logdir, summary_op=None)
        sess = sv.prepare_or_wait_for_session("")
        sv.summary_computed(sess, sess.run(summary))
        sess.close()
        sv.stop()
    import glob

    events = tf1.train.summary_iterator(sorted(glob.glob(os.path.join(logdir, "event*")))[-1])
    written = next(e.graph_def for e in events if e.graph_def)
    return tf1.GraphDef.FromString(written), sess.graph.as_graph_def(add_shapes=True)


def _pbtxt(logdir: str):
    from google.protobuf import text_format

    with open(os.path.join(logdir, "graph.pbtxt")) as f:
        return text_format.Parse(f.read(), tf1.GraphDef())


@pytest.mark.parametrize("with_input", [False, True])
def test_the_supervisors_event_file_holds_the_graph_the_session_ran(tmp_path, with_input):
    # TensorFlow's supervisor_test compares the two: an op of ours made after the
    # Supervisor wrote the graph (the state initializer of a graph with no pipeline) differs.
    written, ran = _graph_in_events_and_session(compat_input.Supervisor, str(tmp_path), with_input)
    assert sorted(n.name for n in written.node) == sorted(n.name for n in ran.node)
    assert written == ran
    # graph.pbtxt too, written by a thread of its own: there once stop() returned.
    assert _pbtxt(str(tmp_path)) == ran


def _slow_graph_writes(monkeypatch) -> None:
    """`tf.compat.v1.train.write_graph` (what our threads call) half a second slower."""
    real = tf1.train.write_graph
    monkeypatch.setattr(tf1.train, "write_graph", lambda *args: time.sleep(0.5) or real(*args))


def _denied(*args):
    raise tf.errors.PermissionDeniedError(None, None, "graph.pbtxt: permission denied")


def test_the_supervisors_graph_files_are_written_by_stop_or_raise_there(tmp_path, monkeypatch):
    # Legacy wrote them before the session's first step; ours are written while it runs:
    # a slow write is waited for by stop(), and a failed one raised there, not lost.
    _slow_graph_writes(monkeypatch)
    legacy = str(tmp_path / "legacy")
    _graph_in_events_and_session(tf1.train.Supervisor, legacy, with_input=False)
    _, ran = _graph_in_events_and_session(compat_input.Supervisor, str(tmp_path), False)
    assert _pbtxt(str(tmp_path)) == ran
    assert [n.name for n in _pbtxt(legacy).node] == [n.name for n in ran.node]

    monkeypatch.setattr(tf1.train, "write_graph", _denied)
    with pytest.raises(tf.errors.PermissionDeniedError, match="graph.pbtxt"):
        _graph_in_events_and_session(compat_input.Supervisor, str(tmp_path / "denied"), False)


def _monitored_graph_files(checkpoint_dir: str, with_install: bool) -> tuple:
    """A MonitoredTrainingSession over a `batch` input, its CheckpointSaverHook writing
    to `checkpoint_dir`: (graph.pbtxt, the event file's graph and meta-graph, the session's
    graph), read once the session is closed."""
    import glob

    if with_install:
        compat_input.install()
    try:
        with tf.Graph().as_default() as graph:
            step = tf1.train.get_or_create_global_step()
            x = tf1.train.batch([tf1.train.range_input_producer(8).dequeue()], 2)
            train = tf1.assign_add(step, tf.cast(tf.reduce_sum(x), tf.int64))
            with tf1.train.MonitoredTrainingSession(checkpoint_dir=checkpoint_dir) as sess:
                sess.run(train)
            ran = graph.as_graph_def(add_shapes=True)
    finally:
        if with_install:
            compat_input.uninstall()
    events = list(tf1.train.summary_iterator(glob.glob(os.path.join(checkpoint_dir, "ev*"))[0]))
    # The last of each: the summary writer's cache wrote the graph as it was first.
    written = tf1.GraphDef.FromString([e.graph_def for e in events if e.graph_def][-1])
    meta = tf1.MetaGraphDef.FromString([e.meta_graph_def for e in events if e.meta_graph_def][-1])
    return _pbtxt(checkpoint_dir), written, meta, ran


def test_monitored_sessions_write_their_graph_files_by_their_end(tmp_path, monkeypatch):
    # Written by a thread of their own under install(), slowly here: the saver hook's end
    # waits for them, and they hold what legacy's hold, the session's graph.
    _slow_graph_writes(monkeypatch)
    legacy = _monitored_graph_files(str(tmp_path / "legacy"), with_install=False)
    compat = _monitored_graph_files(str(tmp_path / "compat"), with_install=True)
    for files in (legacy, compat):
        pbtxt, written, meta, ran = files
        assert pbtxt == ran and written == ran
        assert meta.graph_def == ran and meta.saver_def.save_tensor_name

    monkeypatch.setattr(tf1.train, "write_graph", _denied)
    with pytest.raises(tf.errors.PermissionDeniedError, match="graph.pbtxt"):
        _monitored_graph_files(str(tmp_path / "denied"), with_install=True)


def _dequeues_made_after_the_start(api) -> list:
    """A producer started before any dequeue exists; each step makes a new dequeue op."""
    with tf.Graph().as_default():
        queue = api.string_input_producer(tf.constant(["a", "b", "c"]), shuffle=False)
        got = []
        with tf1.Session(config=tf1.ConfigProto(operation_timeout_in_ms=20000)) as sess:
            coord = tf1.train.Coordinator()
            threads = api.start_queue_runners(sess=sess, coord=coord)
            for _ in range(6):
                got.append(sess.run(queue.dequeue()))
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=10)
    return got


def test_dequeues_made_after_start_queue_runners_read_the_started_producer():
    # TensorFlow's input_test (testConstructionRace): legacy's runner was registered when
    # the producer was made, so a dequeue made later read a filling queue.
    from helpers import compat_api
    from helpers import legacy_api

    legacy = _dequeues_made_after_the_start(legacy_api())
    assert legacy == [b"a", b"b", b"c"] * 2
    assert _dequeues_made_after_the_start(compat_api()) == legacy


def _executed_nodes(sess, fetch) -> set:
    """The names of the nodes one run of `fetch` executed."""
    metadata = tf.compat.v1.RunMetadata()
    options = tf.compat.v1.RunOptions(trace_level=tf.compat.v1.RunOptions.FULL_TRACE)
    sess.run(fetch, options=options, run_metadata=metadata)
    return {n.node_name for d in metadata.step_stats.dev_stats for n in d.node_stats}


@pytest.mark.parametrize("lazy", [False, True])
def test_a_started_pipelines_reads_skip_the_function_that_waits_for_its_start(lazy):
    # The guard's wait (a function call with a loop) cost 180 us a read, more than the
    # rest of a PTB language-model step's input; once started, only its check runs.
    with tf.Graph().as_default():
        if lazy:  # A producer's own pipeline: started on its first direct read.
            read = compat_input.range_input_producer(5, shuffle=False).dequeue()
        else:
            read = compat_input.batch([tf.constant(1)], batch_size=2)
        with tf.compat.v1.Session() as sess:
            sess.run(tf.compat.v1.local_variables_initializer())
            coord = tf.compat.v1.train.Coordinator()
            threads = compat_input.start_queue_runners(sess, coord=coord)
            first = _executed_nodes(sess, read)
            later = _executed_nodes(sess, read)
            coord.request_stop()
            coord.join(threads)
    calls = {n for n in later if "check_started" in n and "Call" in n}
    assert any("check_started" in n for n in later)  # The check itself still runs.
    assert not calls, calls
    assert first  # Traced: an empty trace would pass the assertion above.


class _CountingSession(tf1.Session):
    """A session that counts the runs made through it."""

    runs = 0

    def run(self, *args, **kwargs):
        self.runs += 1
        return super().run(*args, **kwargs)


def test_a_session_started_with_nothing_new_since_is_not_started_again():
    # A Supervisor starts the input at its services, then again at its queue runners: the
    # second start ran the session again, 70-80 ms while its threads made their first runs.
    with tf.Graph().as_default():
        b = _pipeline()
        with _CountingSession() as sess:
            compat_input.start_queue_runners(sess)
            started = sess.runs
            assert started >= 1
            compat_input.start_queue_runners(sess)
            tf1.train.start_queue_runners(sess)
            assert sess.runs == started
            assert sess.run(b).tolist() == [0, 1]
            # A pipeline built since is started by a new start (no rewind of the first).
            later = compat_input.batch([compat_input.range_input_producer(10).dequeue()], 3)
            compat_input.start_queue_runners(sess)
            assert sess.run(b).tolist() == [2, 3]
            assert len(sess.run(later)) == 3


def test_readers_joined_over_one_producer_still_read_directly(tmp_path):
    # youtube-8m's shape: readers over one producer, joined by batch_join. The first reader's
    # read was made before a second reader switched both to the producer's own iterator; the
    # producer, which only those readers pull from, is left unstarted by the input's start,
    # and that read must start it (it failed once: "the iterator has not been initialized").
    paths = []
    for i in range(2):
        with tf.io.TFRecordWriter(str(tmp_path / f"f{i}.tfr")) as writer:
            for j in range(4):
                writer.write(b"%d-%d" % (i, j))
        paths.append(str(tmp_path / f"f{i}.tfr"))
    with tf.Graph().as_default():
        queue = compat_input.string_input_producer(paths, shuffle=False)
        reads = [compat_input.TFRecordReader().read_up_to(queue, 3) for _ in range(2)]
        batch = compat_input.batch_join([[v] for _, v in reads], 4, enqueue_many=True)
        with tf1.Session() as sess:
            compat_input.start_queue_runners(sess)
            # As legacy's enqueue_many: one reader's whole block of a file, then the next.
            blocks = sorted(sess.run(batch))
            assert blocks in ([b"0-0", b"0-1", b"0-2", b"1-0"], [b"0-0", b"1-0", b"1-1", b"1-2"])
            # A reader read directly reads a file of its own.
            assert sess.run(reads[0][1]).tolist() == [b"0-0", b"0-1", b"0-2"]


def test_the_start_leaves_a_producer_that_only_batched_readers_pull_from(tmp_path):
    # Started, it instantiated its functions for nothing (9 ms of youtube-8m's start run);
    # read directly, it still starts (the test above). The batcher starts, its readers and
    # their producer do not.
    path = str(tmp_path / "f.tfr")
    with tf.io.TFRecordWriter(path) as writer:
        writer.write(b"r")
    with tf.Graph().as_default() as graph:
        queue = compat_input.string_input_producer([path])
        reads = [compat_input.TFRecordReader().read_up_to(queue, 3)[1] for _ in range(2)]
        batch = compat_input.batch_join([[v] for v in reads], 2, enqueue_many=True)
        with tf1.Session() as sess:
            compat_input.start_queue_runners(sess)
            started = {p.name: sess.run(p.is_started) for p in pipeline_lib.pipelines_of(graph)}
            assert started == {
                "input_producer": False,
                "TFRecordReader": False,
                "TFRecordReader_1": False,
                "batch_join": True,
            }
            assert sess.run(batch).tolist() == [b"r", b"r"]


def test_the_input_of_readers_joined_over_one_producer_starts_in_one_run(tmp_path):
    # The producer's pipeline (made as the second reader read) reads no state made after
    # it: its start waits for no later state, one run with the rest (youtube-8m's start
    # took a run more, 50 ms).
    path = str(tmp_path / "f.tfr")
    with tf.io.TFRecordWriter(path) as writer:
        writer.write(b"r")
    with tf.Graph().as_default():
        queue = compat_input.string_input_producer([path])
        reads = [compat_input.TFRecordReader().read_up_to(queue, 3)[1] for _ in range(2)]
        batch = compat_input.batch_join([[v] for v in reads], 2, enqueue_many=True)
        with _CountingSession() as sess:
            compat_input.start_queue_runners(sess)
            assert sess.runs == 1
            assert sess.run(batch).tolist() == [b"r", b"r"]


def test_a_pipeline_whose_dataset_reads_later_state_starts_after_it():
    # State made after a pipeline's own link of the chain, read by its dataset's ops: the
    # start waits for it (a run of its own); state it does not read leaves one run.
    from compat_input._src.core import graph_ops
    from compat_input._src.core import state_variables
    from compat_input._src.runtime import graph_states

    with tf.Graph().as_default():
        later = state_variables.StateVariable(state_variables.initial(3, tf.int64), "later")
        stop = graph_ops.ReadVariableOp(resource=later.handle, dtype=tf.int64)
        reading = pipeline_lib.Source(name="reading", dataset=tf.data.Dataset.range(stop))
        reading.make_pipeline()
        other = pipeline_lib.Source(name="other", dataset=tf.data.Dataset.range(2))
        other.make_pipeline()
        pipeline_lib.needs_initialization([later])
        state = graph_states.graph_state()
        assert graph_states.reads_later_state(state, reading.pipeline)
        assert not graph_states.reads_later_state(state, other.pipeline)
        values = reading.element_tensors()
        with _CountingSession() as sess:
            compat_input.start_queue_runners(sess)
            assert sess.runs == 2
            assert [sess.run(values)[0] for _ in range(3)] == [0, 1, 2]


def test_the_runner_ends_its_threads_without_a_dataset_function_of_its_own():
    # An exported graph's runner threads each start one pipeline, then read an empty
    # iterator and end. A one-shot iterator traced a dataset function for it (4-10 ms of
    # every program's build) and drew a seed from the graph's counter.
    with tf.Graph().as_default() as graph:
        tf1.set_random_seed(1)
        x = compat_input.range_input_producer(4, shuffle=False).dequeue()
        drawn = tf1.random.uniform([]).op.get_attr("seed2")
        (runner,) = tf1.get_collection(tf1.GraphKeys.QUEUE_RUNNERS)
        library = [f.signature.name for f in graph.as_graph_def().library.function]
        assert not [name for name in library if "make_dataset" in name], library
        with tf1.Session() as sess:
            for enqueue in runner.enqueue_ops:
                with pytest.raises(tf.errors.OutOfRangeError):
                    sess.run(enqueue)  # Starts the pipeline, then ends its thread.
            assert sess.run(x) == 0
    with tf.Graph().as_default():  # The op seed of a graph's first random op: none drawn.
        tf1.set_random_seed(1)
        assert tf1.random.uniform([]).op.get_attr("seed2") == drawn
