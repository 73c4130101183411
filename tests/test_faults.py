"""Faults and restarts: each program runs on legacy queues and on compat_input, and the test
asserts both outcomes, what legacy does and what compat_input does better. Nothing legacy
delivers may be lost."""

import os
import signal
import subprocess
import sys
import threading
import time

import hypothesis
import hypothesis.strategies as st
import pytest
import tensorflow as tf

import compat_input
from helpers import WORLD
from helpers import compat_api
from helpers import differential
from helpers import examples
from helpers import legacy_api
from helpers import one_world
from helpers import run_scenario
from helpers import write
from helpers import write_tfrecords

tf1 = tf.compat.v1

# Each record is 8 (length) + 4 (crc) + data + 4 (crc) bytes.
_DATA = 20
_STRIDE = _DATA + 16


def _records(first: int, count: int) -> list:
    return [b"r%05d" % i + b"x" * (_DATA - 6) for i in range(first, first + count)]


def _damage(path: str, kind: str, record: int, compression) -> None:
    """Flips a data bit of record `record`, or cuts the file inside it."""
    data = bytearray(open(path, "rb").read())
    if compression:  # Only a cut makes sense inside a compressed stream.
        data = data[: len(data) * record // 400]
    elif kind == "flip":
        data[record * _STRIDE + 12 + 3] ^= 0x10
    elif kind == "length":
        data[record * _STRIDE + 1] ^= 0x01
    else:
        data = data[: record * _STRIDE + 9]
    open(path, "wb").write(bytes(data))


def _tensorflow_error(path, compression):
    """The error TensorFlow's own TFRecordDataset raises reading `path`, or None."""
    with tf.Graph().as_default():
        dataset = tf.data.TFRecordDataset(path, compression_type=compression or "")
        element = tf1.data.make_one_shot_iterator(dataset).get_next()
        with tf1.Session() as sess:
            try:
                while True:
                    sess.run(element)
            except tf.errors.OutOfRangeError:
                return None
            except tf.errors.OpError as error:
                return type(error)


def _tfrecord_batches(files, batch_size, threads=1, compression=None, allow_smaller=False):
    options = tf1.io.TFRecordOptions(compression_type=compression) if compression else None

    def build(api):
        queue = api.string_input_producer(files, num_epochs=1, shuffle=False)
        key, value = api.TFRecordReader(options=options).read(queue)
        return api.batch(
            [key, value], batch_size, num_threads=threads, allow_smaller_final_batch=allow_smaller
        )

    return build


@hypothesis.settings(max_examples=10, deadline=None, derandomize=True)
@hypothesis.given(
    kind=st.sampled_from(["flip", "length", "cut"]),
    record=st.integers(1, 299),
    compression=st.sampled_from([None, "GZIP"]),
    damaged_first=st.booleans(),
    batch_size=st.sampled_from([1, 7, 10, 64]),
    allow_smaller=st.booleans(),
)
def test_no_record_before_damage_is_lost(
    tmp_path_factory, kind, record, compression, damaged_first, batch_size, allow_smaller
):
    tmp = tmp_path_factory.mktemp("damage")
    damaged = write_tfrecords(str(tmp / "damaged.tfr"), _records(0, 300), compression)
    good = write_tfrecords(str(tmp / "good.tfr"), _records(1000, 100), compression)
    _damage(damaged, kind, record, compression)
    files = [damaged, good] if damaged_first else [good, damaged]
    build = _tfrecord_batches(
        files, batch_size, compression=compression, allow_smaller=allow_smaller
    )
    legacy, compat = differential(build, install=True, steps=1000)
    # Legacy: the reader thread dies at the damage and the queue closes: every full batch
    # read before it (and the rest as a smaller one, if allowed), then the end of input.
    assert legacy.error is tf.errors.OutOfRangeError
    assert examples(compat) == examples(legacy)
    # compat_input: the same examples, then TensorFlow's own error for the damage (a cut
    # that leaves a stream TensorFlow reads as empty and whole is no damage to it).
    damage = _tensorflow_error(damaged, compression)
    assert compat.error is (damage or tf.errors.OutOfRangeError), compat.error_message[-300:]
    if not compression:
        before = record if damaged_first else 100 + record
        assert len(examples(legacy)) == (before if allow_smaller else before - before % batch_size)


def test_a_damaged_record_is_named_by_file_and_offset(tmp_path):
    path = write_tfrecords(str(tmp_path / "d.tfr"), _records(0, 300))
    _damage(path, "flip", 150, None)
    build = _tfrecord_batches([path], 10)
    legacy = run_scenario(legacy_api(), build)
    compat = run_scenario(compat_api(), build, install=True)
    assert len(examples(legacy)) == len(examples(compat)) == 150
    first_line = compat.error_message.splitlines()[0]
    assert f"{path} at byte offset {150 * _STRIDE}" in first_line, first_line
    assert "corrupted record" in compat.error_message  # TensorFlow's own words kept.


# -- restore, then start: the usual TF1 order ----------------------------------------------


def _reader_input(api, kind, tmp):
    if kind == "tfrecord":
        path = write_tfrecords(os.path.join(tmp, "in.tfr"), _records(0, 60))
        _, value = api.TFRecordReader().read(api.string_input_producer([path], shuffle=False))
    elif kind == "text":
        path = os.path.join(tmp, "in.csv")
        with open(path, "w") as f:
            f.write("".join(f"{i}\n" for i in range(60)))
        _, value = api.TextLineReader().read(api.string_input_producer([path], shuffle=False))
    else:
        value = tf.strings.as_string(api.range_input_producer(60, shuffle=False).dequeue())
    return api.batch([value], 5)


def _train(api, kind, tmp, ckpt_dir, steps, monitored, install=False):
    """A TF1 training program: restore if a checkpoint exists, start queue runners, train
    `steps` steps, checkpoint. Returns the batches it read."""
    with tf.Graph().as_default():
        batch = _reader_input(api, kind, tmp)
        step = tf1.train.get_or_create_global_step()
        train = tf1.assign_add(step, 1)
        if install:
            compat_input.install()
        try:
            if monitored:
                with tf1.train.MonitoredTrainingSession(
                    checkpoint_dir=ckpt_dir,
                    save_checkpoint_steps=1,
                    save_summaries_steps=None,
                    log_step_count_steps=None,
                ) as sess:
                    return [sess.run([batch, train])[0].tolist() for _ in range(steps)]
            saver = tf1.train.Saver()
            path = os.path.join(ckpt_dir, "model")
            with tf1.Session() as sess:
                sess.run([tf1.global_variables_initializer(), tf1.local_variables_initializer()])
                if os.path.exists(path + ".index"):
                    saver.restore(sess, path)
                coord = tf1.train.Coordinator()
                threads = api.start_queue_runners(sess, coord=coord)
                read = [sess.run([batch, train])[0].tolist() for _ in range(steps)]
                saver.save(sess, path)
                coord.request_stop()
                coord.join(threads)
                return read
        finally:
            compat_input.uninstall()


@pytest.mark.parametrize("kind", ["tfrecord", "text", "range"])
@pytest.mark.parametrize("monitored", [False, True], ids=["saver", "monitored"])
def test_restore_then_start_resumes_where_the_checkpoint_was_taken(tmp_path, kind, monitored):
    runs = {}
    for api in (legacy_api(), compat_api()):
        ckpt = str(tmp_path / api.name / "ckpt")
        data = str(tmp_path / api.name)
        os.makedirs(ckpt)
        runs[api.name] = (
            _train(api, kind, data, ckpt, 3, monitored),
            _train(api, kind, data, ckpt, 3, monitored),
        )
    (legacy_first, legacy_again), (first, again) = runs["legacy"], runs["compat"]
    # Legacy kept no position: after the restart the input starts over.
    assert legacy_again == legacy_first
    # compat_input: the first run reads what legacy reads; the restart goes on from there.
    assert first == legacy_first
    uninterrupted = run_scenario(
        legacy_api(), lambda api: _reader_input(api, kind, str(tmp_path / "legacy")), steps=6
    )
    assert first + again == uninterrupted.values


def test_a_file_name_that_is_not_utf8_is_read(tmp_path):
    path = os.path.join(os.fsencode(str(tmp_path)), b"data-\xff\xfe.txt")
    with open(path, "wb") as f:
        f.write(b"a\nb\nc\n")

    def build(api):
        queue = api.string_input_producer([path], num_epochs=1, shuffle=False)
        return api.batch(list(api.TextLineReader().read(queue)), 2, allow_smaller_final_batch=True)

    legacy, compat = differential(build)
    assert [v for step in legacy.values for v in step[1]] == [b"a", b"b", b"c"]
    assert compat.values == legacy.values and compat.error == legacy.error


def _each_way():
    """Legacy's API with compat_input uninstalled, then compat_input's installed; each
    API taken once its world is in force (under install(), tf.compat.v1's are ours)."""
    compat_input.uninstall()
    yield legacy_api()
    compat_input.install()
    yield compat_api()


def test_a_pipeline_run_before_it_was_started_says_so_first(installed):
    outcomes = {}
    for api in _each_way():
        with tf.Graph().as_default():
            batch = api.batch([api.range_input_producer(10).dequeue()], 2)
            # Legacy would wait forever: it gets an operation timeout.
            timeout = 1500 if api.name == "legacy" else 0
            config = tf1.ConfigProto(operation_timeout_in_ms=timeout)
            with tf1.Session(config=config) as sess:
                with pytest.raises(tf.errors.OpError) as raised:
                    sess.run(batch)  # No start_queue_runners.
        outcomes[api.name] = raised.value
    # Legacy waits on an empty queue forever (here: until the operation timeout).
    assert isinstance(outcomes["legacy"], tf.errors.DeadlineExceededError)
    first = outcomes["compat"].message.splitlines()[0]
    assert first.startswith("compat_input pipeline 'batch' was never started in this session")
    assert "start_queue_runners(sess)" in first


def _recordless(tmp_path, kind: str) -> tuple:
    """`(files, reader)`: two files that hold no record for the reader of `kind`."""
    if kind == "tfrecord":
        files = [write(str(tmp_path / f"{k}.tfr"), "") for k in range(2)]
        return files, lambda api: api.TFRecordReader()
    if kind == "text":  # A header only, skipped.
        files = [write(str(tmp_path / f"{k}.csv"), "a,b\n") for k in range(2)]
        return files, lambda api: api.TextLineReader(skip_header_lines=1)
    files = [write(str(tmp_path / f"{k}.bin"), "head") for k in range(2)]
    return files, lambda api: api.FixedLengthRecordReader(3, header_bytes=4)


@pytest.mark.parametrize("kind", ["tfrecord", "text", "fixed"])
def test_files_without_a_record_read_forever_fail_the_read_where_legacy_waits(
    installed, tmp_path, kind
):
    # A data directory of empty files (magenta's input over a file its writer left empty):
    # legacy's reader read them again and again (num_epochs=None) and the batch waited
    # forever, both threads busy; Ctrl-C did not end the run.
    files, reader = _recordless(tmp_path, kind)
    outcomes = {}
    for api in _each_way():
        with tf.Graph().as_default():
            queue = api.string_input_producer(files)
            batch = api.batch([reader(api).read(queue)[1]], 2)
            # Legacy would wait forever: it gets an operation timeout; never a hang here.
            timeout = 1500 if api.name == "legacy" else 60000
            config = tf1.ConfigProto(operation_timeout_in_ms=timeout)
            with tf1.Session(config=config) as sess:
                coord = tf1.train.Coordinator()
                threads = api.start_queue_runners(sess, coord=coord)
                with pytest.raises(tf.errors.OpError) as raised:
                    sess.run(batch)
                coord.request_stop()
                try:
                    coord.join(threads, stop_grace_period_secs=5)
                except tf.errors.DeadlineExceededError:
                    pass  # Legacy's runner threads, timed out as well.
        outcomes[api.name] = raised.value
    # Legacy delivered nothing: the read timed out, or (a busy machine) a runner thread's
    # enqueue timed out first and closed the queue, which ends the read.
    assert isinstance(
        outcomes["legacy"], (tf.errors.DeadlineExceededError, tf.errors.OutOfRangeError)
    ), outcomes["legacy"]
    compat = outcomes["compat"]
    assert isinstance(compat, tf.errors.InvalidArgumentError), compat
    assert "read 8 files of its producer (num_epochs=None" in compat.message
    assert "found not one record" in compat.message
    assert any(f"[{f}]" in compat.message for f in files), compat.message


def test_files_read_forever_of_which_one_holds_records_are_read_by_every_reader(
    installed, tmp_path
):
    # Three readers of one producer, of five files only one holds records: a reader may
    # get only empty files for a while, and must not take that for an input of none.
    full = write_tfrecords(str(tmp_path / "full.tfr"), [b"a", b"b", b"c"])
    files = [write(str(tmp_path / f"{k}.tfr"), "") for k in range(4)] + [full]
    for api in _each_way():
        with tf.Graph().as_default():
            queue = api.string_input_producer(files)
            lists = [[api.TFRecordReader().read(queue)[1]] for _ in range(3)]
            batch = api.batch_join(lists, 2)
            config = tf1.ConfigProto(operation_timeout_in_ms=60000)
            with tf1.Session(config=config) as sess:
                coord = tf1.train.Coordinator()
                threads = api.start_queue_runners(sess, coord=coord)
                values = [v for _ in range(60) for v in sess.run(batch)]
                coord.request_stop()
                coord.join(threads, stop_grace_period_secs=5)
        assert set(values) == {b"a", b"b", b"c"}, api.name


_WAITS_FOREVER = """
import tensorflow as tf
queue = tf.FIFOQueue(4, tf.int32)  # Nothing feeds it: the read waits forever.
with tf.Session() as sess:
    print("reading", flush=True)
    sess.run(queue.dequeue())
"""

_CALLABLE_WAITS_FOREVER = """
import tensorflow as tf
queue = tf.FIFOQueue(4, tf.int32)
with tf.Session() as sess:
    read = sess.make_callable(queue.dequeue())
    print("reading", flush=True)
    read()
"""

_STEPS_THEN_SAVES = """
import time
import tensorflow as tf
v = tf.Variable(0)
step = tf.assign_add(v, 1)
with tf.Session() as sess:
    sess.run(tf.global_variables_initializer())
    print("reading", flush=True)
    try:
        while True:
            sess.run(step)
            time.sleep(0.001)
    except KeyboardInterrupt:
        time.sleep(11)  # Longer than the grace period: the session must still be there.
        print("steps saved:", sess.run(v) > 0, flush=True)
        raise
"""


def _interrupted(program: str, mode: list, wait_s: float) -> tuple:
    """`(return code or None if still running, output)`: `program` run by
    `compat-input run`, sent SIGINT once it printed "reading", given `wait_s` to end."""
    process = subprocess.Popen(
        [sys.executable, "-m", "compat_input._src.commands.cli", "run", *mode, program],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2"),
        # SIGINT as a terminal's Ctrl-C delivers it (a test runner may ignore it).
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    for line in process.stdout:
        if line.startswith("reading"):
            break
    time.sleep(0.5)
    process.send_signal(signal.SIGINT)
    try:
        out, _ = process.communicate(timeout=wait_s)
        return process.returncode, out
    except subprocess.TimeoutExpired:
        process.kill()
        return None, process.communicate()[0]


@pytest.mark.skipif(WORLD != "tf1", reason="`compat-input run`: TF1 behaviour only")
def test_ctrl_c_ends_a_run_that_waits_forever_and_leaves_a_stepping_program_its_session(
    tmp_path,
):
    # A run blocked inside TensorFlow never saw Ctrl-C: legacy's program waits on. So did
    # a `make_callable` callable's.
    for name, program in (("waits", _WAITS_FOREVER), ("callable", _CALLABLE_WAITS_FOREVER)):
        waits = write(str(tmp_path / f"{name}.py"), program)
        legacy, _ = _interrupted(waits, ["--legacy"], wait_s=6)
        assert legacy is None, name  # Still waiting 6 s after Ctrl-C.
        code, out = _interrupted(waits, [], wait_s=30)
        assert code == -signal.SIGINT, out[-2000:]
        assert "KeyboardInterrupt" in out and "its session is closed, which ends it" in out
    # A program that steps, and saves when interrupted: its session stays open both ways.
    steps = write(str(tmp_path / "steps.py"), _STEPS_THEN_SAVES)
    for mode in (["--legacy"], []):
        code, out = _interrupted(steps, mode, wait_s=30)
        assert code == -signal.SIGINT and "steps saved: True" in out, out[-2000:]
        assert "its session is closed" not in out


def test_a_run_cancelled_by_ctrl_c_raises_only_once_its_session_has_closed():
    # The KeyboardInterrupt may end the program, and a thread still inside TensorFlow's
    # close as the interpreter finalizes aborts the process ("FATAL: exception not
    # rethrown": 1 of 12 Ctrl-Cs of a callable that waits forever, two at a time on 2 cores).
    from compat_input._src.core import interrupted_runs

    closed = []

    class SlowToClose:
        def close(self):
            time.sleep(1.0)
            closed.append(True)

    session = SlowToClose()
    closing = threading.Thread(target=interrupted_runs.cancel, args=(session,))
    closing.start()
    try:
        assert interrupted_runs.closing.wait(10)  # Marked cancelled, now closing.
        with pytest.raises(KeyboardInterrupt):
            interrupted_runs.raise_if_cancelled(session)
        assert closed == [True]
    finally:
        closing.join()
        interrupted_runs.closing.clear()  # Python's SIGINT handler is whole again.


def test_a_local_variable_left_uninitialized_is_named_with_the_fix(installed, tmp_path):
    # match_filenames_once makes a local variable, which a program that initializes only
    # the global ones never initializes.
    paths = [write(str(tmp_path / f"{k}.txt"), f"{k}\n") for k in range(2)]
    outcomes = {}
    for api in _each_way():
        with tf.Graph().as_default():
            files = api.match_filenames_once(str(tmp_path / "*.txt"))
            if api.name == "legacy" and WORLD == "tf2":
                # A resource variable (TF2 behaviour) is a tensor legacy's producer takes
                # as a Python bool: it cannot build the program there at all.
                with pytest.raises(tf.errors.OperatorNotAllowedInGraphError):
                    api.string_input_producer(files, shuffle=False)
                continue
            queue = api.string_input_producer(files, shuffle=False)
            batch = api.batch([api.TextLineReader().read(queue)[1]], 2)
            config = tf1.ConfigProto(operation_timeout_in_ms=20000)  # Never a hang.
            with tf1.Session(config=config) as sess:
                sess.run(tf1.global_variables_initializer())
                coord = tf1.train.Coordinator()
                threads = []
                with pytest.raises(tf.errors.OpError) as raised:  # Starting, or reading.
                    threads += api.start_queue_runners(sess, coord)
                    sess.run(batch)
                coord.request_stop()
                joined = None
                try:
                    coord.join(threads)
                except tf.errors.OpError as error:
                    joined = error  # Legacy's runner's own error, raised again.
        outcomes[api.name] = (raised.value, joined)
    # Legacy: the producer's runner thread failed and closed its queue, so the read ended
    # (OutOfRangeError); the cause came only from `coord.join`. compat_input: the cause at
    # the read, with the fix first.
    if WORLD == "tf1":
        legacy, cause = outcomes["legacy"]
        assert isinstance(legacy, tf.errors.OutOfRangeError), legacy
        assert isinstance(cause, tf.errors.FailedPreconditionError), cause
        assert "matching_filenames" in cause.message
        assert len(paths) == 2 and "local_variables_initializer" not in cause.message
    compat, _ = outcomes["compat"]
    assert isinstance(compat, tf.errors.FailedPreconditionError), compat
    assert "matching_filenames" in compat.message
    first = compat.message.splitlines()[0]
    assert "local variable 'matching_filenames" in first, first
    assert "local_variables_initializer()" in first


def _errors_of_a_program_that_starts_before_initializing(api) -> list:
    """The OpErrors of a TF1 program whose example graph reads a variable it starts the
    input before initializing: start, one read, stop, join, each step run whatever failed."""
    raised = []
    with tf.Graph().as_default():
        scale = tf1.Variable(2.0, name="scale")
        x = tf.cast(api.range_input_producer(10).dequeue(), tf.float32)
        batch = api.batch([x * scale], 2)
        config = tf1.ConfigProto(operation_timeout_in_ms=20000)  # Never a hang, either way.
        with tf1.Session(config=config) as sess:
            coord = tf1.train.Coordinator()
            threads = []
            for step in (
                lambda: threads.extend(api.start_queue_runners(sess, coord)),
                lambda: sess.run(batch),
                lambda: (coord.request_stop(), coord.join(threads)),
            ):
                try:
                    step()
                except tf.errors.OpError as error:
                    raised.append(error)
    return raised


def test_state_not_initialized_when_the_input_starts_fails_both_ways_naming_it():
    # A failure at start that no fallback could mend: legacy's runner thread fails on the
    # same read, reports it to the coordinator, and `join` raises it. compat_input raises
    # it as the input starts, where the program asked for it.
    legacy = _errors_of_a_program_that_starts_before_initializing(legacy_api())
    compat = _errors_of_a_program_that_starts_before_initializing(compat_api())
    for raised in (legacy, compat):
        failed = [e for e in raised if isinstance(e, tf.errors.FailedPreconditionError)]
        assert failed and "scale" in failed[0].message, raised
    assert not any(isinstance(e, tf.errors.DeadlineExceededError) for e in legacy + compat)


# -- meta-graphs: exported, then imported in a fresh process --------------------------------

_PROGRAM = os.path.join(os.path.dirname(__file__), "programs", "meta_graph.py")


def _part(*args):
    done = subprocess.run(
        [sys.executable, _PROGRAM, *args], capture_output=True, text=True, timeout=240
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout.split()


@one_world
@pytest.mark.parametrize(
    "install, supervisor",
    [(False, False), (True, False), (False, True)],
    ids=["stock-importer", "installed-importer", "supervisor-importer"],
)
def test_an_exported_graph_runs_its_input_when_imported(tmp_path, install, supervisor):
    data = write_tfrecords(str(tmp_path / "in.tfr"), [b"%d" % i for i in range(50)])
    read = {}
    for api in ("legacy", "compat"):
        meta = str(tmp_path / f"{api}.meta")
        _part("export", "--api", api, "--data", data, "--meta", meta)
        flags = ["--install"] * install + ["--supervisor"] * supervisor
        logdir = str(tmp_path / f"logdir-{api}")
        read[api] = _part("import", "--meta", meta, "--logdir", logdir, *flags)
    assert read["legacy"] == [str(i) for i in range(50)]
    assert read["compat"] == read["legacy"]


def test_naming_a_bad_line_reads_no_file_again_and_reruns_few_examples(tmp_path, installed):
    # A bad line deep in a big file: the recent lines are kept with their keys, and the
    # probe starts at the examples the program took, so the file is not read again and a
    # per-example Python function runs again for a few batches' worth at most (before:
    # every one of the 4096 recent records, after reading the whole file again).
    path = str(tmp_path / "big.csv")
    with open(path, "w") as f:
        f.write("".join("x,y\n" if i == 150_000 else f"{i},{i % 7}\n" for i in range(200_000)))
    calls = []

    def build(api):
        queue = api.string_input_producer([path], num_epochs=1, shuffle=False)
        _, line = api.TextLineReader().read(queue)
        a, b = tf1.decode_csv(line, [[0], [0]])
        a = tf1.py_func(lambda v: calls.append(1) or v, [a], tf.int32)
        a.set_shape([])
        return api.batch([a, b], 128)

    compat = run_scenario(compat_api(), build, steps=2000)
    assert len(compat.values) == 150_000 // 128
    assert compat.error is tf.errors.InvalidArgumentError
    assert f"{path}:150001" in compat.error_message.splitlines()[0]
    # Every example up to the bad one ran once; run-ahead and the probe add a few batches.
    assert len(calls) < 150_000 + 1500, len(calls) - 150_000


def test_skip_mode_keeps_every_record_before_the_damage_and_the_next_file(
    tmp_path, skip_bad_records
):
    damaged = write_tfrecords(str(tmp_path / "d.tfr"), _records(0, 300))
    _damage(damaged, "flip", 150, None)
    good = write_tfrecords(str(tmp_path / "g.tfr"), _records(1000, 100))
    build = _tfrecord_batches([damaged, good], 10, allow_smaller=True)
    compat_input.configure(bad_records="raise")
    legacy = run_scenario(legacy_api(), build)
    compat_input.configure(bad_records="skip")
    skipping = run_scenario(compat_api(), build)

    def values(run):
        return [value for step in run.values for value in step[1]]

    # Legacy: the 150 records before the damage, then the input ends.
    assert values(legacy) == _records(0, 150)
    # Skipping: those same 150, then every record of the next file; then the end.
    assert values(skipping) == values(legacy) + _records(1000, 100)
    assert skipping.error is tf.errors.OutOfRangeError


@pytest.mark.parametrize("bad", ["directory", "deleted", "missing"])
def test_skip_mode_reads_the_good_files_around_one_that_cannot_be_read(
    tmp_path, skip_bad_records, bad, caplog, capfd
):
    first = write(str(tmp_path / "a.csv"), "".join(f"{i},1\n" for i in range(10)))
    last = write(str(tmp_path / "c.csv"), "".join(f"{i},3\n" for i in range(10, 20)))
    middle = str(tmp_path / "b.csv")
    if bad == "directory":
        os.mkdir(middle)

    def build(api):
        if bad == "deleted":
            write(middle, "99,2\n")
        queue = api.string_input_producer([first, middle, last], num_epochs=2, shuffle=False)
        _, line = api.TextLineReader().read(queue)
        batch = api.batch(tf1.decode_csv(line, [[0], [0]]), 5, allow_smaller_final_batch=True)
        if bad == "deleted":
            os.remove(middle)  # After the input was built, before it runs.
        return batch

    compat_input.configure(bad_records="raise")
    legacy = run_scenario(legacy_api(), build)
    compat_input.configure(bad_records="skip")
    with tf.Graph().as_default():
        batch = build(compat_api())
        with tf1.Session() as sess:
            sess.run(tf1.local_variables_initializer())
            compat_input.start_queue_runners(sess)
            rows = []
            with pytest.raises(tf.errors.OutOfRangeError):
                while True:
                    a, b = sess.run(batch)
                    rows.extend(zip(a.tolist(), b.tolist()))
            assert compat_input.skipped_files(sess, batch) == 1

    def legacy_rows():
        return [row for step in legacy.values for row in zip(*step)]

    # Legacy: the first file, then its reader fails and the input ends.
    assert legacy_rows() == [(i, 1) for i in range(10)]
    assert legacy.error is tf.errors.OutOfRangeError
    # Skipping: every row of both good files, in order, each epoch; the bad entry named
    # once, not once per epoch.
    assert rows == 2 * ([(i, 1) for i in range(10)] + [(i, 3) for i in range(10, 20)])
    if bad == "deleted":
        assert capfd.readouterr().err.count(f"TextLineReader skips {middle}: it is gone") == 1
    else:
        named = [r for r in caplog.records if middle in r.getMessage()]
        assert len(named) == 1, named


def test_a_file_deleted_after_the_input_was_built_is_named_by_the_error(tmp_path):
    first = write(str(tmp_path / "a.csv"), "".join(f"{i},1\n" for i in range(10)))
    gone = str(tmp_path / "b.csv")

    def build(api):
        write(gone, "99,2\n")
        queue = api.string_input_producer([first, gone], num_epochs=1, shuffle=False)
        _, line = api.TextLineReader().read(queue)
        batch = api.batch(tf1.decode_csv(line, [[0], [0]]), 5, allow_smaller_final_batch=True)
        os.remove(gone)
        return batch

    legacy = run_scenario(legacy_api(), build)
    compat = run_scenario(compat_api(), build, install=True)
    # Legacy: the first file, then the input ends; the NotFoundError only in coord.join().
    assert legacy.error is tf.errors.OutOfRangeError
    assert compat.values == legacy.values and len(compat.values) == 2
    assert compat.error is tf.errors.NotFoundError
    first_line = compat.error_message.splitlines()[0]
    assert first_line == f"compat_input pipeline 'batch' failed reading {gone}:"


# -- a bad example after a partial batch: the final partial batch, then its own error -------


@hypothesis.settings(max_examples=10, deadline=None, derandomize=True)
@hypothesis.example(bad=37, batch_size=10, cut=0, alike=False)  # The case.
@hypothesis.example(bad=40, batch_size=16, cut=35, alike=False)  # A batch over two files.
@hypothesis.given(
    bad=st.integers(0, 60),
    batch_size=st.sampled_from([1, 4, 10, 16]),
    cut=st.sampled_from([0, 13, 35, 50]),
    alike=st.booleans(),
)
def test_the_examples_before_a_bad_one_come_as_the_final_partial_batch(
    tmp_path_factory, bad, batch_size, cut, alike
):
    tmp = tmp_path_factory.mktemp("partial")
    # Rows alike: where the failed batch began is told by the count of examples taken.
    rows = ["7,7\n" if alike else f"{i},{2 * i}\n" for i in range(70)]
    rows[bad] = "oops\n"
    files = [write(str(tmp / "a.csv"), "".join(rows[:cut]))] if cut else []
    files.append(write(str(tmp / "b.csv"), "".join(rows[cut:])))
    where = f"{files[-1]}:{bad - cut + 1}" if bad >= cut else f"{files[0]}:{bad + 1}"

    def build(api):
        queue = api.string_input_producer(files, num_epochs=1, shuffle=False)
        _, line = api.TextLineReader().read(queue)
        a, b = api.batch(
            tf1.decode_csv(line, [[0], [0]]), batch_size, allow_smaller_final_batch=True
        )
        # A training step: it runs once on each batch, the final partial one too.
        seen = tf1.Variable(0, name="seen")
        return [a, b, tf1.assign_add(seen, tf.size(a))]

    legacy = run_scenario(legacy_api(), build)
    compat = run_scenario(compat_api(), build, install=True)
    # Legacy: every row before the bad one, the last of them in a smaller batch; then the
    # input ends, the row's error only in coord.join().
    assert sum(len(step[0]) for step in legacy.values) == bad
    assert legacy.error is tf.errors.OutOfRangeError
    # compat_input: the same batches and steps, then the row's own error, naming it.
    assert compat.values == legacy.values
    assert compat.error is tf.errors.InvalidArgumentError
    first_line = compat.error_message.splitlines()[0]
    assert first_line == f"compat_input pipeline 'batch' failed on the example read from {where}:"


def test_a_run_reading_two_pipelines_is_not_made_again_for_a_partial_batch(tmp_path):
    # Made again, the run would read the other pipeline a second time: its batch would be
    # lost. Such a run gets the error, as without the final partial batch (the guide says so).
    bad = write(str(tmp_path / "a.csv"), "".join(f"{i},{i}\n" for i in range(7)) + "oops\n")
    good = write(str(tmp_path / "b.csv"), "".join(f"{i},{i}\n" for i in range(100, 120)))

    def build(api):
        batches = []
        for path in (bad, good):
            queue = api.string_input_producer([path], num_epochs=1, shuffle=False)
            _, line = api.TextLineReader().read(queue)
            row = tf1.decode_csv(line, [[0], [0]])
            batches.append(api.batch(row, 5, allow_smaller_final_batch=True)[0])
        return batches

    legacy = run_scenario(legacy_api(), build)
    compat = run_scenario(compat_api(), build, install=True)
    # Legacy: the bad row's runner stops the coordinator, which closes the other queue too;
    # what each run then gets depends on thread timing, and the input ends.
    assert legacy.error is tf.errors.OutOfRangeError
    # compat_input: the first batch of each file, once; then the error, not a second read.
    assert compat.values == [[[0, 1, 2, 3, 4], [100, 101, 102, 103, 104]]]
    assert compat.error is tf.errors.InvalidArgumentError
    assert compat.error_message.startswith(
        f"compat_input pipeline 'batch' failed on the example read from {bad}:8:\n"
    )


def _monitored(api, path: str) -> tuple:
    """A TF1 trainer under MonitoredTrainingSession with a hook: its batch sizes, its step
    counter, and the error that ended it (type, first line)."""
    with tf.Graph().as_default():
        queue = api.string_input_producer([path], num_epochs=1, shuffle=False)
        _, line = api.TextLineReader().read(queue)
        a, _ = api.batch(tf1.decode_csv(line, [[0], [0]]), 10, allow_smaller_final_batch=True)
        step = tf1.train.get_or_create_global_step()
        train = tf1.assign_add(step, 1)
        sizes = []
        hook = tf1.train.StopAtStepHook(last_step=1000)
        try:
            # The hook's fetches are keyed by the hook, next to "caller": keys that cannot be
            # sorted (located errors flattened them with tf.nest, and failed). The graph is
            # finalized: the probe is made without new ops in the program's graph.
            with tf1.train.MonitoredTrainingSession(hooks=[hook]) as sess:
                while not sess.should_stop():
                    sizes.append(len(sess.run([a, train])[0]))
        except tf.errors.OpError as error:
            return sizes, type(error), error.message.splitlines()[0]
    return sizes, None, ""


def test_a_monitored_session_with_hooks_gets_the_final_partial_batch_and_the_named_error(
    tmp_path,
):
    lines = [f"{i},{i}\n" for i in range(60)]
    lines[37] = "oops\n"
    path = write(str(tmp_path / "a.csv"), "".join(lines))
    legacy = _monitored(legacy_api(), path)
    compat_input.install()
    try:
        compat = _monitored(compat_api(), path)
    finally:
        compat_input.uninstall()
    # Legacy: rows before the bad one (all 37 on an idle machine; under load its hook can
    # stop the loop first), then the row's error from the coordinator at close.
    assert legacy[1] is tf.errors.InvalidArgumentError and sum(legacy[0]) <= 37
    # compat_input: every row before the bad one, the last 7 as a smaller batch; its error.
    assert compat[:2] == ([10, 10, 10, 7], tf.errors.InvalidArgumentError)
    assert compat[2] == f"compat_input pipeline 'batch' failed on the example read from {path}:38:"
