"""TensorFlow's QueueRunner contract (training/queue_runner_test.py), both ways.

Each scenario of TensorFlow's own QueueRunner tests, written again here and run on
TensorFlow's classes and on compat_input's, with the same assertions on both. Whether the
runner is made before the queue's first dequeue or after (`runner_first`), compat_input
serves that queue from tf.data, and the outcome must still be legacy's.
"""

import collections
import time
import types

import pytest
import tensorflow as tf

import compat_input
from compat_input._src.core.tf_internals import monitored_session
from helpers import WORLD
from helpers import compat_api
from helpers import legacy_api

tf1 = tf.compat.v1

# An "op" a runner cannot find in the graph: each of its threads records the error.
_NotAnOp = collections.namedtuple("NotAnOp", ["name"])


@pytest.fixture(params=["legacy", "compat"])
def api(request):
    if request.param == "legacy":
        yield legacy_api()
    elif WORLD == "tf2":
        # Converted code reaches compat_input through tf.compat.v1's own names.
        compat_input.install()
        try:
            yield types.SimpleNamespace(**{**vars(legacy_api()), "name": "compat"})
        finally:
            compat_input.uninstall()
    else:
        yield compat_api()


def _counter(limit):
    var = tf1.Variable(tf.constant(0, tf.int64))
    return var, var.count_up_to(limit)


def _runner_and_dequeue(api, queue, enqueue, runner_first: bool) -> tuple:
    """The queue's runner and its dequeue, made in either order; compat_input serves the
    queue either way (a runner made after the dequeue: batchers/early_reads.py)."""
    if runner_first:
        qr = api.QueueRunner(queue, [enqueue])
        take = queue.dequeue()
    else:
        take = queue.dequeue()
        qr = api.QueueRunner(queue, [enqueue])
    served = getattr(queue, "_served", None) is not None
    assert served == (api.name == "compat")
    return qr, take


def test_a_runner_runs_its_op_until_out_of_range(api):
    with tf.Graph().as_default(), tf1.Session() as sess:
        var, count = _counter(3)
        queue = api.FIFOQueue(10, tf.float32)
        sess.run(tf1.global_variables_initializer())
        qr = api.QueueRunner(queue, [count])
        threads = qr.create_threads(sess)
        assert [t.name for t in threads] == [f"QueueRunnerThread-fifo_queue-{count.name}"]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert qr.exceptions_raised == []
        assert sess.run(var) == 3


def test_a_runner_runs_each_op_in_its_own_thread(api):
    with tf.Graph().as_default(), tf1.Session() as sess:
        var0, count3 = _counter(3)
        var1, count30 = _counter(30)
        qr = api.QueueRunner(api.FIFOQueue(10, tf.float32), [count3, count30])
        threads = qr.create_threads(sess)
        assert sorted(t.name for t in threads) == [
            f"QueueRunnerThread-fifo_queue-{count3.name}",
            f"QueueRunnerThread-fifo_queue-{count30.name}",
        ]
        sess.run(tf1.global_variables_initializer())
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert qr.exceptions_raised == []
        assert sess.run([var0, var1]) == [3, 30]


def test_errors_of_runner_threads_are_kept(api):
    with tf.Graph().as_default(), tf1.Session() as sess:
        qr = api.QueueRunner(api.FIFOQueue(10, tf.float32), [_NotAnOp("i"), _NotAnOp("j")])
        for t in qr.create_threads(sess, start=True):
            t.join()
        assert len(qr.exceptions_raised) == 2
        assert all("Operation not in the graph" in str(e) for e in qr.exceptions_raised)


@pytest.mark.parametrize("runner_first", [False, True])
def test_a_queue_filled_from_another_queue_ends_when_that_one_closes(api, runner_first):
    with tf.Graph().as_default(), tf1.Session() as sess:
        source = api.FIFOQueue(3, tf.float32)
        put, close = source.enqueue((10.0,)), source.close()
        target = api.FIFOQueue(30, tf.float32)
        enqueue = target.enqueue((source.dequeue(),))
        qr, take = _runner_and_dequeue(api, target, enqueue, runner_first)
        threads = qr.create_threads(sess, start=True)
        sess.run(put)
        sess.run(put)
        sess.run(close)
        for t in threads:
            t.join()
        assert qr.exceptions_raised == []
        assert [sess.run(take), sess.run(take)] == [10.0, 10.0]
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(take)


def test_a_runner_started_after_stop_was_requested_does_nothing(api):
    with tf.Graph().as_default(), tf1.Session() as sess:
        var, count = _counter(3)
        queue = api.FIFOQueue(10, tf.float32)
        sess.run(tf1.global_variables_initializer())
        qr = api.QueueRunner(queue, [count])
        coord = tf1.train.Coordinator()
        coord.request_stop()
        threads = qr.create_threads(sess, coord)
        assert sorted(t.name for t in threads) == [
            f"QueueRunnerThread-fifo_queue-{count.name}",
            "QueueRunnerThread-fifo_queue-close_on_stop",
        ]
        for t in threads:
            t.start()
        coord.join()
        assert qr.exceptions_raised == []
        assert sess.run(var) == 0


def test_a_runner_error_is_raised_by_the_coordinator(api):
    with tf.Graph().as_default(), tf1.Session() as sess:
        qr = api.QueueRunner(api.FIFOQueue(10, tf.float32), [_NotAnOp("not an op")])
        coord = tf1.train.Coordinator()
        for t in qr.create_threads(sess, coord):
            t.start()
        with pytest.raises(ValueError, match="Operation not in the graph"):
            coord.join()


@pytest.mark.parametrize("runner_first", [False, True])
def test_a_stop_request_ends_runners_blocked_on_a_full_queue(api, runner_first):
    with tf.Graph().as_default(), tf1.Session() as sess:
        queue = api.FIFOQueue(2, tf.float32)
        enqueue = queue.enqueue((10.0,))
        qr, take = _runner_and_dequeue(api, queue, enqueue, runner_first)
        coord = tf1.train.Coordinator()
        qr.create_threads(sess, coord, start=True)
        assert sess.run(take) == 10.0
        time.sleep(0.02)
        coord.request_stop()
        coord.join(stop_grace_period_secs=10.0)  # Raises if a thread is still running.


def test_threads_are_made_once_per_session(api):
    with tf.Graph().as_default(), tf1.Session() as sess, tf1.Session() as other:
        _, count = _counter(3)
        qr = api.QueueRunner(api.FIFOQueue(10, tf.float32), [count])
        coord = tf1.train.Coordinator()
        # Not started: its op's thread and, with a coordinator, the one that closes on stop.
        threads = qr.create_threads(sess, coord=coord)
        assert len(threads) == 2
        assert len(qr.create_threads(other, coord=coord)) == 2
        assert qr.create_threads(sess, coord=coord) == []


def test_a_finished_runner_starts_again(api):
    with tf.Graph().as_default(), tf1.Session() as sess:
        var, count = _counter(3)
        queue = api.FIFOQueue(10, tf.float32)
        sess.run(tf1.global_variables_initializer())
        qr = api.QueueRunner(queue, [count, _NotAnOp("bad_op")])
        for _ in range(2):
            threads = qr.create_threads(sess, start=True)
            assert len(threads) == 2
            for t in threads:
                t.join()
            assert len(qr.exceptions_raised) == 1
            assert "Operation not in the graph" in str(qr.exceptions_raised[0])
        assert sess.run(var) == 3


def test_a_runner_is_named_after_its_queue_and_found_by_scope(api):
    with tf.Graph().as_default():
        with tf.name_scope("scope"):
            queue = api.FIFOQueue(10, tf.float32, name="queue")
        qr = api.QueueRunner(queue, [tf.no_op()])
        assert qr.name == "scope/queue"
        api.add_queue_runner(qr)
        assert len(tf1.get_collection(tf1.GraphKeys.QUEUE_RUNNERS, "scope")) == 1


@pytest.mark.parametrize("default_graph", [True, False])
def test_start_queue_runners_starts_the_collection(api, default_graph):
    graph = tf.Graph()
    with graph.as_default():
        var, count = _counter(3)
        queue = api.FIFOQueue(10, tf.float32)
        init = tf1.global_variables_initializer()
        qr = api.QueueRunner(queue, [count])
        api.add_queue_runner(qr)
    with graph.as_default() if default_graph else tf.Graph().as_default():
        with tf1.Session(graph=graph) as sess:
            sess.run(init)
            for t in api.start_queue_runners(sess):
                t.join()
            assert qr.exceptions_raised == []
            assert sess.run(var) == 3


def test_start_queue_runners_wants_a_session(api):
    with tf.Graph().as_default(), tf1.Session():
        _, count = _counter(3)
        api.add_queue_runner(api.QueueRunner(api.FIFOQueue(10, tf.float32), [count]))
        with pytest.raises(TypeError, match="tf.Session"):
            api.start_queue_runners("NotASession")


def test_start_queue_runners_leaves_a_monitored_session_alone(api):
    with tf.Graph().as_default():
        _, count = _counter(3)
        api.add_queue_runner(api.QueueRunner(api.FIFOQueue(10, tf.float32), [count]))
        with monitored_session.MonitoredSession() as sess:
            assert not api.start_queue_runners(sess)


def test_a_runner_round_trips_through_its_proto(api):
    with tf.Graph().as_default():
        queue = api.FIFOQueue(10, tf.float32, name="queue")
        ops = [tf.no_op(name=n) for n in ("enqueue", "close", "cancel")]
        errors = (tf.errors.OutOfRangeError, tf.errors.CancelledError)
        qr = api.QueueRunner(queue, ops[:1], ops[1], ops[2], queue_closed_exception_types=errors)
        proto = tf1.train.QueueRunner.to_proto(qr)
        back = tf1.train.QueueRunner.from_proto(proto)
        assert back.queue.name == "queue"
        assert back.enqueue_ops == ops[:1]
        assert (back.close_op, back.cancel_op) == (ops[1], ops[2])
        assert back.queue_closed_exception_types == errors
        # A proto written before the field existed reads as OutOfRangeError.
        del proto.queue_closed_exception_types[:]
        old = tf1.train.QueueRunner.from_proto(proto)
        assert old.queue_closed_exception_types == (tf.errors.OutOfRangeError,)
