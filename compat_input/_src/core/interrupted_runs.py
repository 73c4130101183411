"""Runs Ctrl-C cancelled (commands/interrupts.py closes the session of a run that waits
forever): such a run raises KeyboardInterrupt in place of its CancelledError
(bad_records/located_errors.py), and while the session closes, Python's SIGINT handler
leaves that to it (raised inside TensorFlow's making of the CancelledError, the
KeyboardInterrupt became a RuntimeError of pybind11's)."""

import threading
import weakref

closing = threading.Event()
_cancelled: weakref.WeakSet = weakref.WeakSet()


def cancel(session) -> None:
    """Marks `session`'s runs as cancelled by Ctrl-C, then closes it."""
    _cancelled.add(session)
    closing.set()
    session.close()


def raise_if_cancelled(session) -> None:
    """Called where `session`'s run raised CancelledError: KeyboardInterrupt in its place
    where Ctrl-C cancelled it (asked once, by the run that ends); else nothing."""
    if session in _cancelled:
        _cancelled.discard(session)
        raise KeyboardInterrupt from None
