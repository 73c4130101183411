"""Runners: starting the input, where legacy code started queue runner threads.

compat_input pipelines need no threads: starting one runs its iterator initializer. They are
started by the runner (input_runner.py) that every graph with pipelines holds in
`QUEUE_RUNNERS`, so TensorFlow's own `start_queue_runners`, `Supervisor`,
`MonitoredTrainingSession` and `qr.create_threads` start them too. A queue the program
built and fills with its own `QueueRunner` is served by tf.data where it can be
(batchers/queues.py): then its runner starts no threads; otherwise the runner is
TensorFlow's, threads and all, beside our pipelines.
"""

import weakref

import tensorflow as tf

from compat_input._src.core.tf_internals import monitored_session
from compat_input._src.core.tf_internals import session_lib
from compat_input._src.runtime import pipeline as pipeline_lib

tf1 = tf.compat.v1

# Every runner of ours the program holds (or a collection holds).
made: "weakref.WeakSet" = weakref.WeakSet()


class QueueRunner(tf1.train.QueueRunner):
    """Drop-in replacement for `tf.compat.v1.train.QueueRunner`.

    Differences: where compat_input serves its queue from tf.data (a FIFOQueue,
    RandomShuffleQueue, PaddingFIFOQueue or PriorityQueue the program built, read before
    or after this runner was made), `create_threads` starts the input's pipelines and
    returns no threads; the queue's pipeline ends the input where legacy's threads closed
    the queue; the runner leaves the graph's collections once its queue is served, so an
    exported meta-graph holds the pipeline's start instead of it.
    """

    def __new__(cls, *args, **kwargs):
        del args, kwargs  # For TensorFlow's __init__.
        runner = super().__new__(cls)
        # Found by its queue's first dequeue whether or not it is in a collection: a program
        # may start it with `qr.create_threads(sess)` alone (TensorFlow's own tests do).
        # Here, not in an __init__ of ours: TensorFlow's deprecation warning names the frame
        # that calls its __init__, which must stay the program's line.
        made.add(runner)
        return runner

    def _init_from_args(self, *args, **kwargs):
        # TensorFlow's __init__ calls it (its deprecation warning names the program's line).
        super()._init_from_args(*args, **kwargs)
        # A queue read before this runner of it was made is served now (early_reads.py).
        serve_late = getattr(self.queue, "_serve_late", None)
        if serve_late is not None:
            serve_late()

    def create_threads(self, sess, coord=None, daemon=False, start=False):
        if getattr(self.queue, "_served", None) is None:
            return super().create_threads(sess, coord=coord, daemon=daemon, start=start)
        # Started now whatever `start` says: there is no thread to start later.
        with sess.graph.as_default():
            pipeline_lib.start_pipelines(sess)
        return []


Coordinator = tf.train.Coordinator
LooperThread = tf1.train.LooperThread


def add_queue_runner(qr, collection=tf1.GraphKeys.QUEUE_RUNNERS):
    """Drop-in replacement for `tf.compat.v1.train.add_queue_runner`.

    Differences: a runner whose queue compat_input serves already is not added (the graph's
    pipeline runner starts its pipeline; exported, its threads would take the examples).
    """
    if getattr(getattr(qr, "queue", None), "_served", None) is None:
        tf1.add_to_collection(collection, qr)


def start_queue_runners(
    sess=None, coord=None, daemon=True, start=True, collection=tf1.GraphKeys.QUEUE_RUNNERS
):
    """Drop-in replacement for `tf.compat.v1.train.start_queue_runners`.

    Differences: compat_input pipelines start synchronously (their initializers run before
    this returns) and contribute no threads; hand-built queue runners start as before.
    Starting twice in one session is a no-op.
    """
    if tf.executing_eagerly():
        raise RuntimeError("Queues are not compatible with eager execution.")
    if sess is None:
        sess = tf1.get_default_session()
        if not sess:
            raise ValueError(
                "Cannot start queue runners: No default session is registered. Use `with "
                "sess.as_default()` or pass an explicit session to "
                "tf.start_queue_runners(sess=sess)"
            )
    if isinstance(sess, monitored_session._MonitoredSession):
        # Monitored sessions start their own runners; a second start would do nothing.
        return []
    if not isinstance(sess, session_lib.SessionInterface):
        raise TypeError(f"sess must be a `tf.Session` object. Given class: {sess.__class__}")
    queue_runners = tf1.get_collection(collection)
    if not queue_runners:
        tf1.logging.warning(
            "`tf.train.start_queue_runners()` was called when no queue runners were defined. "
            "You can safely remove the call to this deprecated function."
        )
    with sess.graph.as_default():
        threads = []
        for qr in queue_runners:
            threads.extend(qr.create_threads(sess, coord=coord, daemon=daemon, start=start))
    return threads


def start_pipelines(sess) -> int:
    """Starts the compat_input pipelines of `sess`'s graph not yet started; returns how many."""
    return pipeline_lib.start_pipelines(sess)
