"""The tf.data service: inputs read by several trainer processes, as `shared_name` queues were.

A TF1 program shared one input between trainers by giving a producer or a batcher a
`shared_name`: the queue lived on a parameter server and every example went to one trainer.
With a service configured (`configure(service=...)`, `COMPAT_INPUT_SERVICE`, or
`compat-input run --service`), a batcher's examples are made on the service's workers:

- an input with a `shared_name` (the batcher's own, or that of a producer it reads) is a
  job named after it in `distributed_epoch` mode: the trainers that read the job split
  each epoch, every example delivered once (while no worker fails);
- an input without one is an anonymous job: still made on the workers, private to its
  trainer.

Only the examples travel (in blocks of 256 where their shapes are fixed, as one request
per example costs more than making it): shuffling and batching stay in the trainer, so batch sizes,
`allow_smaller_final_batch` and the end of input keep their legacy meaning per trainer,
as with a shared filename queue and per-trainer batch queues.

A worker runs the serialized graph of the examples, without the trainer's session: a
`py_func` (its Python function lives in the trainer) or a variable, table or other
resource of the trainer's session cannot run there. Found at build: a shared input fails
with the op named; a private one stays local, with a warning.
"""

import atexit
import http.server
import json
import logging
import os
import socket
import threading
import time
import urllib.request
import uuid
import warnings
from typing import Optional

import numpy as np
import tensorflow as tf

from compat_input._src import pipeline as pipeline_lib
from compat_input._src import tracing
from compat_input._src.options import options
from compat_input._src.options import service_address

logger = logging.getLogger("compat_input")

ENVIRONMENT = "COMPAT_INPUT_SERVICE"
# Examples sent in one response (see `distribute`).
_BLOCK = 256
_PY_FUNCS = frozenset({"PyFunc", "PyFuncStateless", "EagerPyFunc"})
# Ops that own state of the trainer's session. Serialized for a worker, each would make a
# fresh, empty resource there (an uninitialized variable, a table with no entries).
_STATE_OPS = frozenset(
    {
        "VarHandleOp",
        "VariableV2",
        "Variable",
        "HashTableV2",
        "HashTable",
        "MutableHashTableV2",
        "MutableHashTableOfTensorsV2",
        "MutableDenseHashTableV2",
    }
)


def address() -> Optional[str]:
    """The service to read through, `grpc://host:port`, or None: `configure(service=...)`
    first, then the environment."""
    if options.service is not None:
        return options.service or None  # Checked by configure.
    chosen = os.environ.get(ENVIRONMENT)
    return service_address(chosen, f"the environment's {ENVIRONMENT}") if chosen else None


# How long a trainer waits, at build, for a dispatcher that is not up yet.
DISPATCHER_WAIT_SECONDS = 10.0


def check_reachable(service: str, name: str) -> None:
    """Raises, naming the address and what to check, unless something accepts connections
    at `service` within DISPATCHER_WAIT_SECONDS. Unchecked, a trainer whose dispatcher is not there
    (a typo, a dispatcher not started) waited on its first read forever, silently."""
    host, port = service.split("://", 1)[1].rsplit(":", 1)
    wait = DISPATCHER_WAIT_SECONDS
    deadline = time.monotonic() + wait
    while True:
        try:
            with socket.create_connection((host.strip("[]"), int(port)), timeout=2.0):
                return
        except OSError as error:
            if time.monotonic() >= deadline:
                raise ConnectionError(
                    f"compat_input: input '{name}' reads through the tf.data service at "
                    f"{service}, and no dispatcher answered there within {wait:.0f} s "
                    f"({error.strerror or error}). Check that `compat-input serve` runs there "
                    f"and that host and port are right; or read locally: unset {ENVIRONMENT} "
                    "(or configure(service=''))."
                ) from None
        time.sleep(0.5)


class NotRemotable(ValueError):
    """The examples of an input need the trainer's session."""


def _functions_of(node_def, library: dict, seen: set) -> list:
    """The FunctionDefs `node_def` calls (map functions, cond branches), transitively."""
    names = []
    for value in node_def.attr.values():
        if value.func.name:
            names.append(value.func.name)
        names.extend(f.name for f in value.list.func)
    found = []
    for name in names:
        if name in seen or name not in library:
            continue
        seen.add(name)
        found.append(library[name])
        for inner in library[name].node_def:
            found.extend(_functions_of(inner, library, seen))
    return found


def blockers(dataset: tf.data.Dataset) -> list[str]:
    """What in `dataset`'s graph cannot run on a remote worker: 'op name (type): why'."""
    graph = dataset._variant_tensor.graph
    state = pipeline_lib.graph_state(graph)
    # Our own state (record counters, logs for naming bad records) is informational: a
    # worker keeps its own copy, which only the worker reads.
    ours = {v.handle.op.name for v in state.state_variables} | set(state.remote_safe)
    library = {f.signature.name: f for f in graph.as_graph_def().library.function}
    found, seen_ops, seen_functions = [], set(), set()
    stack = [dataset._variant_tensor.op]
    while stack:
        op = stack.pop()
        if op.name in seen_ops:
            continue
        seen_ops.add(op.name)
        stack.extend(t.op for t in op.inputs)
        stack.extend(op.control_inputs)
        if op.type in _PY_FUNCS:
            found.append(f"{op.name} ({op.type}): runs Python of this process")
        elif op.type in _STATE_OPS and op.name not in ours:
            found.append(f"{op.name} ({op.type}): state of this process's session")
        for function in _functions_of(op.node_def, library, seen_functions):
            for node in function.node_def:
                if node.op in _PY_FUNCS:
                    found.append(f"{node.name} ({node.op}): runs Python of this process")
    return sorted(set(found))


def distribute(dataset: tf.data.Dataset, name: str, shared_name: Optional[str]) -> tf.data.Dataset:
    """`dataset` made on the service's workers when a service is configured.

    `name` is the pipeline's (for messages); `shared_name` makes the job shared between
    the trainers that read it.
    """
    service = address()
    if service is None:
        return dataset
    blocked = blockers(dataset)
    if blocked and shared_name:
        raise NotRemotable(
            f"compat_input: input '{name}' (shared_name={shared_name!r}) is to be shared through "
            f"the tf.data service at {service}, but its examples need this process: "
            f"{'; '.join(blocked)}. Move the op after the batcher (it then runs on each trainer "
            "on whole batches), or drop shared_name to read this input locally."
        )
    if blocked:
        logger.warning(
            "compat_input: input '%s' stays in this process instead of the tf.data service at "
            "%s: its examples need this process (%s).",
            name,
            service,
            "; ".join(blocked),
        )
        return dataset
    check_reachable(service, name)
    with warnings.catch_warnings():
        # `distribute` reads the dataset's options, which TensorFlow warns are not final in
        # graph mode; ours are set where the pipeline's iterator is made.
        warnings.filterwarnings("ignore", "To make it possible to preserve tf.data options")
        spec = tf.nest.flatten(dataset.element_spec)
        # One request per example costs more than making it: examples of fixed shapes
        # travel in blocks, taken apart again in the trainer.
        blocks = all(isinstance(c, tf.TensorSpec) and c.shape.is_fully_defined() for c in spec)
        if blocks:
            dataset = dataset.batch(_BLOCK)
        served = dataset.apply(
            tf.data.experimental.service.distribute(
                processing_mode="distributed_epoch", service=service, job_name=shared_name
            )
        )
        served = _watched(served, service, name, shared_name)
        return tracing.unbatch(served) if blocks else served


# A worker that stops answering is dropped after 10 s (TensorFlow's default is 10 min:
# trainers would wait that long on its share of the data).
_HEARTBEAT_MS = 1000
_WORKER_TIMEOUT_MS = 10_000


def serve(
    port: int = 5050,
    workers: int = 2,
    worker_port: int = 0,
    work_dir: Optional[str] = None,
    dispatcher: Optional[str] = None,
    host: str = "localhost",
) -> tuple:
    """Starts a tf.data service in this process: a dispatcher (unless `dispatcher` names
    one to join) and `workers` workers. Returns (dispatcher address, servers).

    `worker_port` 0 lets each worker take a free port; otherwise workers take
    `worker_port`, `worker_port + 1`, ... `host` is the name the workers give the
    dispatcher, which trainers on other machines use to reach them.
    """
    service = tf.data.experimental.service
    if workers < 0 or (workers == 0 and dispatcher):
        raise ValueError(f"workers must be at least {1 if dispatcher else 0}, got {workers}")
    servers = []
    liveness = None
    if dispatcher is None:
        config = service.DispatcherConfig(
            port=port,
            work_dir=work_dir,
            fault_tolerant_mode=bool(work_dir),
            worker_timeout_ms=_WORKER_TIMEOUT_MS,
        )
        servers.append(service.DispatchServer(config))
        dispatcher = f"grpc://{host}:{servers[0].target.rsplit(':', 1)[1]}"
        liveness = _Liveness()
        status_port = int(dispatcher.rsplit(":", 1)[1]) + STATUS_PORT_OFFSET
        try:
            _status_servers.append(_status_server(status_port, liveness))
        except OSError as error:
            logger.warning(
                "compat_input: the status port %d is taken (%s): trainers cannot tell when "
                "this service's workers are gone, and would wait on them.",
                status_port,
                error.strerror or error,
            )
    else:
        dispatcher = service_address(dispatcher, "--dispatcher")
    for index in range(workers):
        config = service.WorkerConfig(
            dispatcher_address=dispatcher.split("://", 1)[1],
            worker_address=f"{host}:%port%",
            port=worker_port + index if worker_port else 0,
            heartbeat_interval_ms=_HEARTBEAT_MS,
        )
        servers.append(service.WorkerServer(config))
    if workers:
        _say_alive(dispatcher, workers, liveness)
    return dispatcher, servers


# -- liveness: no trainer waits forever on a job whose workers are gone ----------------------
#
# TensorFlow's dispatcher keeps counting a worker killed long ago (`num_workers`), and a
# trainer reading a job whose only worker is gone waits for it forever. So every process
# of `compat-input serve` that runs workers says so each second, over HTTP, to the process
# of the dispatcher, which answers how many are alive at the dispatcher's port + 1; and a
# trainer that reads through the service watches that answer. Its reads race the service
# stream against a watch (a parallel interleave that yields whichever is ready): when no
# worker has been alive, or the dispatcher has not answered, for
# `configure(service_timeout=...)` seconds, the watch raises UnavailableError, naming the
# job, the address and the fix, from the read that waits. A stream that ends ends the race.

STATUS_PORT_OFFSET = 1
_status_servers: list = []  # Served until the process ends (daemon threads).
_ALIVE_EVERY = 1.0  # seconds between a serve process's "alive"
_ALIVE_FOR = 3.0  # an "alive" older than this is a process gone
_WATCH_EVERY = 1.0
_exiting = False


@atexit.register
def _exit() -> None:
    global _exiting
    _exiting = True  # Watches still waiting in tf.data threads return.


def status_url(service: str, path: str) -> str:
    host, port = service.split("://", 1)[1].rsplit(":", 1)
    return f"http://{host}:{int(port) + STATUS_PORT_OFFSET}/{path}"


class _Liveness:
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


def _status_server(port: int, liveness: _Liveness):
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


def _say_alive(dispatcher: str, workers: int, liveness: Optional[_Liveness]) -> None:
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

    def _dispatcher_answers(self) -> bool:
        host, port = self.service.split("://", 1)[1].rsplit(":", 1)
        try:
            with socket.create_connection((host.strip("[]"), int(port)), timeout=2.0):
                return True
        except OSError:
            return False

    def _loop(self) -> None:
        stuck_since = None
        while not _exiting:
            time.sleep(_WATCH_EVERY)
            workers = self._workers()
            if workers is None and not self.answered and self._dispatcher_answers():
                continue  # A dispatcher not started by `compat-input serve`: nothing to tell.
            dispatcher_gone = workers is None and not self._dispatcher_answers()
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


def _watched(served: tf.data.Dataset, service: str, name: str, job: Optional[str]):
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
