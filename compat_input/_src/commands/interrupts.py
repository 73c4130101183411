"""Ctrl-C ends a `compat-input run` whose step waits forever inside TensorFlow.

Python raises KeyboardInterrupt in the main thread between two bytecodes; a `Session.run`
blocked inside TensorFlow (a read of an input that never yields, a dequeue of a queue
nothing feeds) runs none, so Ctrl-C did nothing until the run returned, legacy or not.
Python's own signal handler still writes each signal to a wakeup descriptor at once: a
thread waits on it, and where the main thread is still inside the same run a grace period
later, closes that run's session, which cancels the run. The run raises KeyboardInterrupt,
as Ctrl-C does anywhere else. A run that ends within the grace period (a training step) is
left alone: a program that catches the KeyboardInterrupt to save a checkpoint still has its
session. A program that handles SIGINT itself is left alone too.
"""

import signal
import socket
import sys
import threading
import time

from compat_input._src.core import interrupted_runs

# Longer than a step takes (a big model's on a CPU: seconds), short enough not to leave a
# user waiting long; a step that takes longer is ended too, and its session is gone.
GRACE_S = 10.0
_SESSION_RUN_FILE = "client/session.py"
_sockets: list = []


def watch() -> bool:
    """Starts the watch; False where it cannot (not the main thread, SIGINT not Python's
    own, another wakeup descriptor already set), and nothing changes then."""
    if threading.current_thread() is not threading.main_thread():
        return False
    if signal.getsignal(signal.SIGINT) is not signal.default_int_handler:
        return False
    reading, writing = socket.socketpair()
    writing.setblocking(False)
    try:
        previous = signal.set_wakeup_fd(writing.fileno(), warn_on_full_buffer=False)
    except ValueError:
        previous = None
    if previous != -1:  # Refused, or someone's own: theirs put back.
        if previous is not None:
            signal.set_wakeup_fd(previous)
        reading.close()
        writing.close()
        return False
    signal.signal(signal.SIGINT, _on_sigint)
    _sockets[:] = [reading, writing]  # Open for the process's life: Python writes there.
    main = threading.main_thread().ident
    thread = threading.Thread(
        target=_watching, args=(reading, main), name="compat_input-ctrl-c", daemon=True
    )
    thread.start()
    return True


def _watching(reading: socket.socket, main: int) -> None:
    while True:
        try:
            received = reading.recv(64)
        except OSError:
            return
        if not received:
            return
        if signal.SIGINT not in received:
            continue
        frame = sys._current_frames().get(main)
        blocked = _session_run_frame(frame)
        if blocked is None:
            continue
        time.sleep(GRACE_S)
        if _session_run_frame(sys._current_frames().get(main)) is not blocked:
            continue  # The run ended; the KeyboardInterrupt was raised as usual.
        if signal.getsignal(signal.SIGINT) is not _on_sigint:
            continue  # The program handles Ctrl-C itself (a flag to stop after the step).
        session = _session_of(blocked)
        if getattr(session, "close", None) is None:
            continue
        print(
            f"compat-input: Ctrl-C: the run still waited inside TensorFlow {GRACE_S:.0f} s "
            "later; its session is closed, which ends it.",
            file=sys.stderr,
            flush=True,
        )
        try:
            interrupted_runs.cancel(session)
        except Exception:  # noqa: BLE001 - a session that cannot close stays as it was.
            interrupted_runs.closing.clear()


def _on_sigint(signum, frame) -> None:
    """Python's own SIGINT handler, but for the Ctrl-C whose run is being cancelled: that
    run raises the KeyboardInterrupt itself (core/interrupted_runs.py). Once: the next
    Ctrl-C is Python's again, whatever path the cancelled run took."""
    if interrupted_runs.closing.is_set():
        interrupted_runs.closing.clear()
        return
    signal.default_int_handler(signum, frame)


# The frames that call into TensorFlow for a run: `Session.run`'s, and a `make_callable`
# callable's (its `self` the callable, which holds the session).
_RUNS = ("_call_tf_sessionrun", "__call__")


def _session_run_frame(frame):
    """The frame of a run's call into TensorFlow that `frame` is in, or None."""
    while frame is not None:
        code = frame.f_code
        if code.co_name in _RUNS and code.co_filename.endswith(_SESSION_RUN_FILE):
            return frame
        frame = frame.f_back
    return None


def _session_of(frame):
    """The session whose run `frame` (of `_session_run_frame`) is in."""
    owner = frame.f_locals.get("self")
    return owner if frame.f_code.co_name == _RUNS[0] else getattr(owner, "_session", None)
