"""How full an input is: legacy's `fraction_of_N_full` summaries and queue `size()`, measured.

Each scenario runs on TensorFlow's queues and on compat_input: a slow consumer (the model
sleeps, the queue fills) and a slow producer (a `py_func` that sleeps, the queue stays
empty) must read the same way both ways. Timing makes the readings vary a little: each is
the median over a run's steps, both must fall on the same side (at least 0.75 full, or at
most 0.25), and within 0.25 of each other.
"""

import contextlib
import statistics
import time
from typing import Optional

import pytest
import tensorflow as tf

import compat_input
from compat_input._src.core.options import options
from compat_input._src.runtime import fill_levels
from compat_input._src.runtime import input_waits
from compat_input._src.runtime import run_closures
from helpers import compat_api
from helpers import legacy_api
from helpers import started
from helpers import stop

tf1 = tf.compat.v1

_STEPS = 16
_TOLERANCE = 0.25


def _example(api, slow_producer: bool):
    x = api.range_input_producer(10**6, shuffle=False).dequeue()
    if slow_producer:
        # 5 ms an example: a batch of 4 from 2 threads takes about 10 ms.
        x = tf1.py_func(lambda v: (time.sleep(0.005), v)[1], [x], tf.int32, stateful=False)
        x.set_shape([])
    return x


@contextlib.contextmanager
def _started():
    """A session of the default graph with the input started, stopped after."""
    with tf1.Session() as sess:
        sess.run(tf1.local_variables_initializer())
        coord, threads = started(sess)
        yield sess
        stop(coord, threads)


def _steps(count: int, slow_producer: bool):
    """The program's steps; where the model is the slow side, each takes 20 ms first."""
    for step in range(count):
        if not slow_producer:
            time.sleep(0.02)  # The model's step: the input runs ahead.
        yield step


_BATCHERS = {
    "batch": lambda api, x: api.batch([x], 4, num_threads=2, capacity=32),
    "shuffle_batch": lambda api, x: api.shuffle_batch(
        [x], 4, capacity=40, min_after_dequeue=10, num_threads=2
    ),
    "batch_join": lambda api, x: api.batch_join([[x], [x + 1]], 4, capacity=24),
}


def _readings(api, batcher: str, slow_producer: bool) -> tuple:
    """The batcher's summary value at each step after the first few, and its tag."""
    with tf.Graph().as_default():
        batch = _BATCHERS[batcher](api, _example(api, slow_producer))
        merged = tf1.summary.merge_all()
        assert merged is not None  # The input's summaries are the program's only ones.
        values, tag = [], None
        with _started() as sess:
            for step in _steps(_STEPS, slow_producer):
                _, summary = sess.run([batch, merged])
                value = next(
                    v for v in tf1.Summary.FromString(summary).value if v.tag.startswith(batcher)
                )
                tag = value.tag
                if step >= 4:  # Started: legacy's runners fill at start, tf.data as read.
                    values.append(value.simple_value)
    return statistics.median(values), tag


@pytest.mark.parametrize("batcher", sorted(_BATCHERS))
@pytest.mark.parametrize("slow_producer", [False, True], ids=["slow_model", "slow_input"])
def test_a_batcher_s_summary_reads_how_full_it_is_as_legacy_s(batcher, slow_producer):
    legacy, legacy_tag = _readings(legacy_api(), batcher, slow_producer)
    compat, compat_tag = _readings(compat_api(), batcher, slow_producer)
    assert compat_tag == legacy_tag
    if slow_producer:
        assert legacy <= _TOLERANCE and compat <= _TOLERANCE, (legacy, compat)
    else:
        assert legacy >= 1 - _TOLERANCE and compat >= 1 - _TOLERANCE, (legacy, compat)
    assert abs(compat - legacy) <= _TOLERANCE


def _queue_sizes(api, slow_producer: bool) -> list:
    """A program's own FIFOQueue (capacity 20) fed by two runner threads, read by
    dequeue_many(4): its size() before each read, after the first few."""
    with tf.Graph().as_default():
        x = _example(api, slow_producer)
        q = api.FIFOQueue(20, [tf.int32], shapes=[[]])
        api.add_queue_runner(api.QueueRunner(q, [q.enqueue([x])] * 2))
        batch, size = q.dequeue_many(4), q.size()
        sizes = []
        with _started() as sess:
            for step in _steps(_STEPS, slow_producer):
                if step >= 4:
                    sizes.append(sess.run(size))
                sess.run(batch)
    return sizes


@pytest.mark.parametrize("slow_producer", [False, True], ids=["slow_model", "slow_input"])
def test_a_served_queue_s_size_counts_what_it_holds_as_legacy_s(slow_producer):
    legacy = statistics.median(_queue_sizes(legacy_api(), slow_producer))
    compat = statistics.median(_queue_sizes(compat_api(), slow_producer))
    if slow_producer:  # Near empty: what it holds is at most what a read takes.
        assert legacy <= 4 and compat <= 4, (legacy, compat)
    else:
        assert legacy >= 16 and compat >= 16, (legacy, compat)


def _summary_tags(api) -> list:
    with tf.Graph().as_default():
        x = api.range_input_producer(10, num_epochs=1, shuffle=False).dequeue()
        api.string_input_producer(["a", "b"], num_epochs=2)
        api.slice_input_producer([tf.range(5)])
        api.input_producer(tf.constant([1, 2]), summary_name="myq")
        api.batch([x], 4)
        api.maybe_batch([x], True, 4, capacity=8)
        api.shuffle_batch([x], 4, 20, 5)
        api.batch_join([[x]], 4, capacity=16)
        api.maybe_shuffle_batch_join([[x]], 4, 20, 5, True)
        return sorted(s.name for s in tf1.get_collection(tf1.GraphKeys.SUMMARIES))


def test_every_batcher_and_producer_writes_legacy_s_summary_under_its_name():
    legacy = _summary_tags(legacy_api())
    assert _summary_tags(compat_api()) == legacy
    assert "shuffle_batch/fraction_over_5_of_15_full:0" in legacy


def _items_left(api) -> list:
    """A producer of 40 items, 1 epoch, read 4 at a time by a one-thread batch: its
    summary before each read (legacy's queue: the items left, up to its capacity of 8)."""
    with tf.Graph().as_default():
        x = api.range_input_producer(40, num_epochs=1, shuffle=False, capacity=8).dequeue()
        batch = api.batch([x], 4, capacity=4)
        merged = tf1.summary.merge_all()
        values = []
        with _started() as sess:
            for _ in range(10):
                time.sleep(0.05)  # Both settle: legacy's queues full, the pipeline ahead.
                summary = tf1.Summary.FromString(sess.run(merged))
                values.append(
                    next(v.simple_value for v in summary.value if v.tag.startswith("input"))
                )
                sess.run(batch)
    return values


def test_a_finite_producer_reads_its_items_left_as_legacy_s():
    legacy, compat = _items_left(legacy_api()), _items_left(compat_api())
    # Full while 8 or more are left, then emptying as the last ones are read.
    assert legacy[:4] == [1.0] * 4 and legacy[-1] == 0.0
    assert compat[:4] == [1.0] * 4 and compat[-1] <= 0.25
    assert all(abs(a - b) <= _TOLERANCE for a, b in zip(legacy, compat)), (legacy, compat)


def _program(slow_producer: bool, steps: int = 30) -> list:
    """A trainer of a `batch` input under install(), as `compat-input run` runs it, with
    input wait summaries on: each 10th step's `input_wait_share`. Where the model is the
    slow side, its step takes 20 ms inside the run, as a model's does (a sleep between runs
    would leave the run's time to the read alone, and a busy machine's read to a share)."""
    shares = []
    with tf.Graph().as_default():
        x = _example(compat_input, slow_producer)
        batch = compat_input.batch([x], 4, num_threads=2, capacity=32)
        loss = tf.reduce_sum(tf.cast(batch, tf.float32))
        if not slow_producer:
            loss = tf1.py_func(lambda v: (time.sleep(0.02), v)[1], [loss], tf.float32)
        merged = tf1.summary.merge_all()
        with _started() as sess:
            for step in range(steps):
                if step % 10 == 9 and options.input_wait_summaries:
                    summary = tf1.Summary.FromString(sess.run([loss, merged])[1])
                    shares.append(
                        next(v.simple_value for v in summary.value if v.tag.endswith("wait_share"))
                    )
                else:
                    sess.run(loss)
    return shares


@contextlib.contextmanager
def _installed(summaries: bool):
    """install(), input wait summaries on or off; the waits counted from nothing."""
    compat_input.configure(input_wait_summaries=summaries)
    compat_input.install()
    input_waits.clear()
    try:
        yield
    finally:
        compat_input.uninstall()
        compat_input.configure(input_wait_summaries=False)
        input_waits.clear()


@pytest.fixture
def waits_counted():
    """Every read timed in its step, as input wait summaries need."""
    with _installed(summaries=True):
        yield


def test_the_exit_report_names_an_input_bound_pipeline(waits_counted):
    shares = _program(slow_producer=True)
    lines = input_waits.report()
    assert "input-bound" in lines[0] and "not input-bound" not in lines[0]
    assert lines[1].startswith("input: 'batch' waited") and "for 120 examples" in lines[1]
    # The summary says the same every 10 steps: most of the time went waiting.
    assert min(shares[1:]) >= 0.5, shares


def test_the_exit_report_of_a_model_bound_program_says_so(waits_counted):
    shares = _program(slow_producer=False)
    lines = input_waits.report()
    assert "not input-bound" in lines[0] and "'batch'" in lines[1]
    assert max(shares[1:]) <= 0.1, shares


def test_a_read_that_fails_at_the_end_of_the_input_stops_waiting(waits_counted):
    # The last read fails (OutOfRange) before its clock ends; the program then spends a
    # second on other runs. The report must not count that second as a wait on the input.
    with tf.Graph().as_default():
        x = compat_input.range_input_producer(8, num_epochs=1, shuffle=False).dequeue()
        batch = compat_input.batch([x], 4, capacity=8)
        other = tf.constant(1)
        with _started() as sess:
            with pytest.raises(tf.errors.OutOfRangeError):
                while True:
                    sess.run(batch)
            deadline = time.perf_counter() + 1.0
            while time.perf_counter() < deadline:
                sess.run(other)
    lines = input_waits.report()
    waited = float(lines[1].split(" waited ")[1].split(" s ")[0])
    assert "for 8 examples" in lines[1] and waited < 0.5, lines


@pytest.fixture
def waits_sampled(monkeypatch):
    """As `compat-input run` runs: reads' clocks fetched by sampled runs only, from the
    second run on (these programs run for less than the warm-up and its budget)."""
    monkeypatch.setattr(input_waits, "WARMUP_SECONDS", 0.0)
    monkeypatch.setattr(input_waits, "TWIN_BUDGET", 0)
    with _installed(summaries=False):
        yield


def test_a_program_shorter_than_the_warm_up_is_not_sampled():
    # Its start-up says nothing of its waits, and a sampled run would cost it an executor.
    with _installed(summaries=False):
        with tf.Graph().as_default():
            x = compat_input.range_input_producer(100, shuffle=False).dequeue()
            batch = compat_input.batch([x], 4, capacity=8)
            with _started() as sess:
                read = [sess.run(batch).tolist() for _ in range(3)]
            level = fill_levels.levels[batch.graph][0]
        assert read == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9, 10, 11]]
        assert level.samples[0] == 0 and not level.clocks[0]._tensor
        lines = input_waits.report()
    assert len(lines) == 1 and "no waits to report" in lines[0], lines


def test_a_run_left_unsampled_makes_no_op(monkeypatch):
    # An op made once a session ran the graph makes its next run copy and place the whole
    # graph again: 0.56 s of the first step of real_nvp's trainer (24,000 ops), for clocks
    # that a run due for a sample made and then did not fetch (its set's first run).
    monkeypatch.setattr(input_waits, "WARMUP_SECONDS", 0.0)
    monkeypatch.setattr(input_waits, "TWIN_BUDGET", 0)
    with _installed(summaries=False):
        with tf.Graph().as_default() as graph:
            x = compat_input.range_input_producer(10**6, shuffle=False).dequeue()
            batch = compat_input.batch([x], 4, capacity=8)
            with _started() as sess:
                made = len(graph.get_operations())
                read = sess.run(batch).tolist()  # Due, and the first run of its set.
                assert len(graph.get_operations()) == made
                level = fill_levels.levels[graph][0]
                while not level.samples[0] and len(read) < 400:  # Until one is sampled.
                    read += sess.run(batch).tolist()
                sampled = level.samples[0]
    assert read == list(range(len(read)))
    assert sampled == 1 and level.clocks[0]._tensor is not None


def test_a_clock_that_cannot_be_made_leaves_the_run_unsampled(waits_sampled, monkeypatch):
    # Sampling must never fail a run: the clocks are made as a sampled run begins.
    def broken(self):
        raise RuntimeError("no clock")

    monkeypatch.setattr(fill_levels.SampleClock, "tensor", property(broken))
    with tf.Graph().as_default() as graph:
        x = compat_input.range_input_producer(10**6, shuffle=False).dequeue()
        batch = compat_input.batch([x], 4, capacity=8)
        with _started() as sess:
            read = [value for _ in range(40) for value in sess.run(batch).tolist()]
            sampled = fill_levels.levels[graph][0].samples[0]
    assert read == list(range(160))
    assert sampled == 0


def _slow_steps(api, steps: Optional[int] = None) -> tuple:
    """Batches of a program whose every step takes 40 ms or more (its fetch set as slow to
    make a twin of); on compat_input, run until a run was sampled (at most 150 steps), with
    what the session had run before each step: `(run seconds, the set's slowest run, runs
    sampled)`."""
    with tf.Graph().as_default():
        x = api.range_input_producer(10**6, shuffle=False).dequeue()
        batch = api.batch([x], 4, capacity=8)
        slow = tf1.py_func(lambda b: time.sleep(0.04) or b, [batch], tf.int32, stateful=True)
        read, before = [], []
        with _started() as sess:
            while len(read) < (steps or 150):
                if api.name == "compat":
                    state = input_waits._sampling.get(sess)
                    slowest = state.slowest.get(run_closures.run_key(slow, None), 0.0)
                    samples = fill_levels.levels[batch.graph][0].samples[0]
                    before.append((state.total if state else 0.0, slowest, samples))
                    if samples and not steps:
                        break
                read.append(sess.run(slow).tolist())
    return read, before


def test_a_fetch_set_is_sampled_only_once_runs_took_its_budget(monkeypatch):
    # Its twin (the fetches and the clocks) costs the session a new executor, as long to make
    # as the set's slowest run: only once the runs took TWIN_BUDGET times that.
    monkeypatch.setattr(input_waits, "WARMUP_SECONDS", 0.0)
    monkeypatch.setattr(input_waits, "TWIN_BUDGET", 5)
    with _installed(summaries=False):
        compat, before = _slow_steps(compat_api())
    legacy, _ = _slow_steps(legacy_api(), len(compat))
    assert compat == legacy  # Sampled or not, the program reads what it read.
    assert before[-1][2] > 0, before  # Sampled, in the end.
    first = next(k for k, (_, _, samples) in enumerate(before) if samples)
    total, slowest, _ = before[first - 1]  # Before the step that was sampled.
    assert slowest >= 0.04 and total >= 5 * slowest, before
    assert len(before) > 3, before  # Not from the start: the budget held it back.


@pytest.mark.parametrize("slow_producer", [True, False])
def test_sampled_runs_tell_an_input_bound_program_from_a_model_bound_one(
    waits_sampled, slow_producer
):
    _program(slow_producer)
    lines = input_waits.report()
    bound = "input-bound" in lines[0] and "not input-bound" not in lines[0]
    assert bound == slow_producer, lines
    assert "for 120 examples" in lines[1] and "sampled runs)" in lines[1], lines


def _fed_and_read(api) -> list:
    """Batches read, with runs between them that feed the batch in the input's place (an
    evaluation on arrays) or fetch no input at all, for longer than a sampling period."""
    with tf.Graph().as_default():
        x = api.range_input_producer(10**6, shuffle=False).dequeue()
        batch = api.batch([x], 4, capacity=8)
        doubled = batch * 2
        other = tf.constant(0)
        read = []
        with _started() as sess:
            step = sess.make_callable(doubled)
            for _ in range(4):
                read.append(sess.run(doubled).tolist())
                deadline = time.perf_counter() + 2 * input_waits.SAMPLE_SECONDS
                while time.perf_counter() < deadline:
                    sess.run(doubled, feed_dict={batch: [7, 7, 7, 7]})
                    sess.run(other)
                read.append(step().tolist())
    return read


def test_a_sampled_run_never_reads_where_the_program_did_not(waits_sampled):
    # A run sampled fetches its reads' clocks, which run the reads: a run that fed the
    # batch, or fetched no input, must take no batch from the program.
    compat = _fed_and_read(compat_input)
    compat_input.uninstall()
    legacy = _fed_and_read(legacy_api())
    compat_input.install()
    assert compat == legacy
