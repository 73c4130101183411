"""Sessions that started pipelines, deleted when the interpreter exits if already closed."""

import atexit
import weakref

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
