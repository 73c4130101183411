"""The graph files a chief writes as its session starts, written by a thread of their own.

TensorFlow's Supervisor and MonitoredTrainingSession's `CheckpointSaverHook` write the graph
(`graph.pbtxt`, a text proto that `text_format` formats in Python, and the GraphDef of the
event file) in the thread that starts the session, before its first step. A graph with
tf.data functions has more to write: the youtube-8m-shaped trainer's took 130 ms of its
start (legacy's graph 60), a CheckpointSaverHook's 75-100 ms. Nothing the program runs
reads them, so a thread of their own writes them while the session starts and runs its
first steps; the Supervisor's `stop()` and the hook's `end()` wait for them and raise their
error. The thread is no daemon: an interpreter exit waits for the files too.
"""

import threading

import tensorflow as tf

tf1 = tf.compat.v1

_PBTXT = "graph.pbtxt"


class Writer(threading.Thread):
    """Runs `write()` in a thread of its own, keeping its error for `finished()`."""

    def __init__(self, write):
        super().__init__(name="compat_input_graph_files")
        self._write = write
        self._error = None
        self.start()

    def run(self) -> None:
        try:
            self._write()
        except Exception as error:  # noqa: BLE001 - raised again where it is waited for.
            self._error = error

    def finished(self):
        """Waits for the writes; the error they raised, or None."""
        self.join()
        error, self._error = self._error, None
        return error


def write_pbtxt(graph: tf.Graph, logdir: str) -> None:
    """`graph.pbtxt` in `logdir`, as TensorFlow's Supervisor and saver hook write it."""
    tf1.train.write_graph(graph.as_graph_def(add_shapes=True), logdir, _PBTXT)


def start(owner, write) -> None:
    """`write()` in a thread of its own, for `finished(owner)`; writes `owner` began before
    (a second session of one Supervisor) are waited for first, and their error raised."""
    error = finished(owner)
    if error is not None:
        raise error
    owner._compat_input_graph_files = Writer(write)


def finished(owner):
    """Waits for the writes `start(owner, ...)` began, if any: their error, or None."""
    writer = owner.__dict__.pop("_compat_input_graph_files", None)
    return writer.finished() if writer is not None else None


def after_writes(owner, work):
    """`work()` once the writes `owner` began are done; their error raised after it (the
    Supervisor's `stop()` and the hook's `end()` still do their own work)."""
    error = finished(owner)
    result = work()
    if error is not None:
        raise error
    return result


class _GraphOnItsThread:
    """Stands in for a CheckpointSaverHook's summary writer while the hook starts: its
    `add_graph` is run in a thread of its own, after `graph.pbtxt` (TensorFlow's hook writes
    that file first, in the same method, turned off for that call); all else is the
    writer's own."""

    def __init__(self, hook, pbtxt: bool):
        self._hook, self._pbtxt = hook, pbtxt
        self._writer = hook._summary_writer

    def add_graph(self, graph, *args, **kwargs) -> None:
        def write():
            if self._pbtxt:
                write_pbtxt(graph, self._hook._checkpoint_dir)
            self._writer.add_graph(graph, *args, **kwargs)

        start(self._hook, write)

    def __getattr__(self, name):
        return getattr(self._writer, name)


def hook_writing_on_its_thread(after_create_session):
    """`CheckpointSaverHook.after_create_session` whose graph files a thread writes."""

    def after_create_session_writing_on_its_thread(self, session, coord):
        pbtxt, stand_in = self._save_graph_def, _GraphOnItsThread(self, self._save_graph_def)
        self._save_graph_def, self._summary_writer = False, stand_in
        try:
            return after_create_session(self, session, coord)
        finally:
            self._save_graph_def, self._summary_writer = pbtxt, stand_in._writer

    return after_create_session_writing_on_its_thread


def hook_end_waiting(end):
    """`CheckpointSaverHook.end` that waits for the graph files first, and raises their
    error after its own work."""

    def end_waiting_for_graph_files(self, session):
        return after_writes(self, lambda: end(self, session))

    return end_waiting_for_graph_files
