"""Runs Ctrl-C cancelled (commands/interrupts.py closes the session of a run that waits
forever): such a run raises KeyboardInterrupt in place of its CancelledError
(bad_records/located_errors.py), and while the session closes, Python's SIGINT handler
leaves that to it (raised inside TensorFlow's making of the CancelledError, the
KeyboardInterrupt became a RuntimeError of pybind11's)."""

import threading
import weakref

closing = threading.Event()
_closed = threading.Event()
_cancelled: weakref.WeakSet = weakref.WeakSet()
# How long the cancelled run waits for the close to return: far longer than a close takes,
# and bounded, so nothing waits forever.
_CLOSE_S = 30.0


def cancel(session) -> None:
    """Marks `session`'s runs as cancelled by Ctrl-C, then closes it."""
    _cancelled.add(session)
    _closed.clear()
    closing.set()
    try:
        session.close()
    finally:
        _closed.set()


def raise_if_cancelled(session) -> None:
    """Called where `session`'s run raised CancelledError: KeyboardInterrupt in its place
    where Ctrl-C cancelled it (asked once, by the run that ends); else nothing."""
    if session in _cancelled:
        _cancelled.discard(session)
        # Not before the close has returned: the KeyboardInterrupt may end the program,
        # and a thread still inside TensorFlow's close as the interpreter finalizes is
        # ended there, which aborts the process ("FATAL: exception not rethrown").
        _closed.wait(_CLOSE_S)
        raise KeyboardInterrupt from None
