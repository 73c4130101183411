"""Sessions that started pipelines: deleted when the interpreter exits if already closed,
and closing the program's queues their pipelines wait on before they close."""

import atexit
import weakref

import tensorflow as tf

from compat_input._src.core import tf_internals

# Every session that started pipelines in this process (each graph's state holds its own).
_started_sessions: weakref.WeakSet = weakref.WeakSet()
_registered = False


def at_exit(sess) -> None:
    """Deletes `sess`, a session that started pipelines, at exit if it is closed by then.

    A session closed but not yet collected keeps its iterators, whose threads run ahead:
    a `py_func` there takes the GIL while the interpreter finalizes, and the process can
    hang (tensorflow/tensorflow#21277). Deleted at exit, the iterators stop while Python
    still runs. Sessions still open may be in use by daemon threads: they are left alone.
    """
    global _registered
    if not _registered:
        atexit.register(_release_sessions)
        _registered = True
    _started_sessions.add(sess)


def _release_sessions() -> None:
    for sess in list(_started_sessions):
        try:
            tf_internals.release_closed_session(sess)
        except Exception:  # noqa: BLE001 - at exit, nothing is left to report to.
            pass


def close_queues_first(sess, queue_closes: dict) -> None:
    """Makes this one session's `close()` run the ops of `queue_closes` (its graph's, a
    dict that may still grow) first: a pipeline's thread waiting in a dequeue from the
    program's own queue crashed TensorFlow's `Session.close` (session_close.py). A program
    that runs compat_input without `install()` (a migrated one) gets it for each session
    that starts pipelines over such queues; `install()` wraps `Session.close` itself."""
    close = type(sess).close
    if hasattr(close, "__wrapped__") or "close" in vars(sess):
        return
    session = weakref.ref(sess)  # The session's own attribute must not keep it alive.

    def close_queues_then_session():
        this = session()
        if this is not None:
            run_queue_closes(this, list(queue_closes.values()))
            close(this)

    sess.close = close_queues_then_session


def run_queue_closes(sess, closes: list) -> None:
    """Runs `closes` in `sess` where it is open; a queue closed already is no error."""
    if closes and not getattr(sess, "_closed", True):
        try:
            sess.run(closes)
        except (tf.errors.OpError, RuntimeError):
            pass  # A queue closed already, or a session that cannot run: closed anyway.
