"""No trainer waits forever on a tf.data service job whose workers are gone.

TensorFlow's dispatcher keeps counting a worker killed long ago (`num_workers`), and a
trainer reading a job whose only worker is gone waits for it forever. So every process
of `compat-input serve` that runs workers says so each second, over HTTP, to the process
of the dispatcher, which answers how many are alive at the dispatcher's port + 1; and a
trainer that reads through the service watches that answer. Its reads race the service
stream against a watch (a parallel interleave that yields whichever is ready): when no
worker has been alive, or the dispatcher has not answered, for
`configure(service_timeout=...)` seconds, the watch raises UnavailableError, naming the
job, the address and the fix, from the read that waits. A stream that ends ends the race.
"""

import atexit
import http.server
import json
import socket
import threading
import time
import urllib.request
import uuid
from typing import Optional

import numpy as np
import tensorflow as tf

from compat_input._src.core.options import options

STATUS_PORT_OFFSET = 1
status_servers: list = []  # Served until the process ends (daemon threads).
_ALIVE_EVERY = 1.0  # seconds between a serve process's "alive"
_ALIVE_FOR = 3.0  # an "alive" older than this is a process gone
_WATCH_EVERY = 1.0
_exiting = False


@atexit.register
def _exit() -> None:
    global _exiting
    _exiting = True  # Watches still waiting in tf.data threads return.


def _address(service: str) -> tuple:
    """(host as written, port) of `grpc://host:port`."""
    host, port = service.split("://", 1)[1].rsplit(":", 1)
    return host, int(port)


def status_url(service: str, path: str) -> str:
    host, port = _address(service)
    return f"http://{host}:{port + STATUS_PORT_OFFSET}/{path}"


def connect_error(service: str) -> Optional[OSError]:
    """Why nothing accepts connections at the dispatcher's address, or None if something does."""
    host, port = _address(service)
    try:
        with socket.create_connection((host.strip("[]"), port), timeout=2.0):
            return None
    except OSError as error:
        return error


class Liveness:
    """In the dispatcher's process: which serve processes said they are alive, and when."""

    def __init__(self):
        self._lock = threading.Lock()
        self._seen: dict = {}

    def alive(self, who: str, workers: int) -> None:
        with self._lock:
            self._seen[who] = (time.monotonic(), workers)

    def workers(self) -> int:
        now = time.monotonic()
        with self._lock:
            return sum(n for t, n in self._seen.values() if now - t < _ALIVE_FOR)


def status_server(port: int, liveness: Liveness):
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - http.server's name.
            body = json.dumps({"workers": liveness.workers()}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self):  # noqa: N802
            sent = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            liveness.alive(str(sent["id"]), int(sent["workers"]))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args):
            pass  # Every second from every serve process: not for the terminal.

    server = http.server.ThreadingHTTPServer(("", port), Handler)
    threading.Thread(target=server.serve_forever, daemon=True, name="compat_input-status").start()
    return server


def say_alive(dispatcher: str, workers: int, liveness: Optional[Liveness]) -> None:
    """Tells the dispatcher's process, each second, that this process's workers are alive."""
    who = uuid.uuid4().hex

    def loop():
        while True:
            if liveness is not None:  # The dispatcher's own process.
                liveness.alive(who, workers)
            else:
                body = json.dumps({"id": who, "workers": workers}).encode()
                request = urllib.request.Request(status_url(dispatcher, "alive"), body)
                try:
                    urllib.request.urlopen(request, timeout=2).close()
                except OSError:
                    pass  # The dispatcher's process may be restarting: say it again.
            time.sleep(_ALIVE_EVERY)

    threading.Thread(target=loop, daemon=True, name="compat_input-alive").start()


class _Input:
    """A trainer's input on the service: the verdict its reads raise, and its streams' ends."""

    def __init__(self, name: str, job: Optional[str]):
        self.name, self.job = name, job
        self.failure: Optional[str] = None
        self.ends = 0

    def end(self):
        self.ends += 1
        return np.int64(0)

    def wait(self):
        # Runs in a tf.data thread beside the stream's reads, until the stream ends (the
        # race is over then) or the service cannot go on.
        begun = self.ends
        while not _exiting and self.ends == begun:
            if self.failure:
                raise tf.errors.UnavailableError(None, None, self.failure)
            time.sleep(0.25)
        return np.int64(0)


class _Watch:
    """One thread a service address: tells its inputs when their jobs cannot go on."""

    def __init__(self, service: str):
        self.service = service
        self.inputs: list = []
        self.answered = False  # Whether the dispatcher's process ever told its workers.
        threading.Thread(target=self._loop, daemon=True, name="compat_input-watch").start()

    def _workers(self) -> Optional[int]:
        try:
            with urllib.request.urlopen(status_url(self.service, "status"), timeout=2) as reply:
                self.answered = True
                return int(json.loads(reply.read())["workers"])
        except (OSError, ValueError, KeyError):
            return None

    def _loop(self) -> None:
        stuck_since = None
        while not _exiting:
            time.sleep(_WATCH_EVERY)
            workers = self._workers()
            dispatcher_gone = workers is None and connect_error(self.service) is not None
            if workers is None and not dispatcher_gone and not self.answered:
                continue  # A dispatcher not started by `compat-input serve`: nothing to tell.
            now = time.monotonic()
            stuck_since = (stuck_since or now) if workers == 0 or dispatcher_gone else None
            bound = options.service_timeout
            failing = stuck_since is not None and now - stuck_since >= bound
            for read in list(self.inputs):
                # Cleared when workers are back: a stream begun then may go on.
                read.failure = (
                    _message(read, self.service, dispatcher_gone, bound) if failing else None
                )


def _message(read: _Input, service: str, dispatcher_gone: bool, bound: float) -> str:
    job = f"job '{read.job}'" if read.job else "its private job"
    what = (
        "whose dispatcher has not answered" if dispatcher_gone else "which has had no live worker"
    )
    return (
        f"compat_input: input '{read.name}' ({job}) reads through the tf.data service at "
        f"{service}, {what} for {bound:.0f} s: the job cannot go on, and its reads end here. "
        f"Start workers for it again (`compat-input serve --dispatcher {service} --workers N`) "
        "and run the trainer again; or wait longer before failing with "
        "compat_input.configure(service_timeout=SECONDS)."
    )


_watches: dict = {}
_watches_lock = threading.Lock()


def watched(served: tf.data.Dataset, service: str, name: str, job: Optional[str]):
    """`served` raced against the watch of `service` (see above)."""
    spec = tf.nest.flatten(served.element_spec)
    if not all(isinstance(c, tf.TensorSpec) for c in spec):
        return served  # No stand-in element to race with: read as TensorFlow reads it.
    read = _Input(name, job)
    with _watches_lock:
        if service not in _watches:
            _watches[service] = _Watch(service)
        _watches[service].inputs.append(read)

    def empty(marker):
        # An element of `served`'s structure: the end marker's, or the watch's (never kept).
        with tf.control_dependencies([marker]):
            return [
                tf.fill([d or 0 for d in c.shape.as_list()], tf.constant("", c.dtype))
                if c.dtype == tf.string
                else tf.zeros([d or 0 for d in c.shape.as_list()], c.dtype)
                for c in spec
            ]

    def flagged(*element):
        return tuple(tf.nest.flatten(element)), tf.constant(False)

    def end_marker(_):
        return tuple(empty(tf.py_function(read.end, [], tf.int64))), tf.constant(True)

    def watch(_):
        return tuple(empty(tf.py_function(read.wait, [], tf.int64))), tf.constant(False)

    def kept(element, is_end):
        del is_end
        return element

    stream = served.map(flagged).concatenate(tf.data.Dataset.range(1).map(end_marker))
    watcher = tf.data.Dataset.range(1).map(watch).filter(lambda element, is_end: is_end)
    raced = tf.data.Dataset.from_tensors(stream).concatenate(tf.data.Dataset.from_tensors(watcher))
    raced = raced.interleave(lambda d: d, cycle_length=2, num_parallel_calls=2, deterministic=False)
    raced = raced.take_while(lambda element, is_end: tf.logical_not(is_end)).map(kept)
    return raced.map(lambda *flat: tf.nest.pack_sequence_as(served.element_spec, list(flat)))
