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

import logging
import time
import warnings
from typing import Optional

import tensorflow as tf

from compat_input._src.core import dataset_ops
from compat_input._src.core import errors
from compat_input._src.core.options import SERVICE_ENVIRONMENT
from compat_input._src.core.options import chosen_service
from compat_input._src.core.options import options
from compat_input._src.core.options import service_address
from compat_input._src.runtime import pipeline as pipeline_lib
from compat_input._src.runtime import service_liveness

logger = logging.getLogger("compat_input")

ENVIRONMENT = SERVICE_ENVIRONMENT
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
    chosen = chosen_service()
    if chosen is None or options.service is not None:  # configure's is checked there.
        return chosen
    return service_address(chosen, f"the environment's {ENVIRONMENT}")


# How long a trainer waits, at build, for a dispatcher that is not up yet.
DISPATCHER_WAIT_SECONDS = 10.0


def check_reachable(service: str, name: str) -> None:
    """Raises, naming the address and what to check, unless something accepts connections
    at `service` within DISPATCHER_WAIT_SECONDS. Unchecked, a trainer whose dispatcher is not there
    (a typo, a dispatcher not started) waited on its first read forever, silently."""
    wait = DISPATCHER_WAIT_SECONDS
    deadline = time.monotonic() + wait
    while True:
        error = service_liveness.connect_error(service)
        if error is None:
            return
        if time.monotonic() >= deadline:
            raise errors.ServiceUnreachable(
                f"compat_input: input '{name}' reads through the tf.data service at "
                f"{service}, and no dispatcher answered there within {wait:.0f} s "
                f"({error.strerror or error}). Check that `compat-input serve` runs there "
                f"and that host and port are right; or read locally: unset {ENVIRONMENT} "
                "(or configure(service=''))."
            ) from None
        time.sleep(0.5)


class NotRemotable(errors.ServiceError, ValueError):
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
        served = service_liveness.watched(served, service, name, shared_name)
        return dataset_ops.unbatch(served) if blocks else served


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
        liveness = service_liveness.Liveness()
        status_port = int(dispatcher.rsplit(":", 1)[1]) + service_liveness.STATUS_PORT_OFFSET
        try:
            service_liveness.status_servers.append(
                service_liveness.status_server(status_port, liveness)
            )
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
        service_liveness.say_alive(dispatcher, workers, liveness)
    return dispatcher, servers
