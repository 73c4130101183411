"""Pipelines: a tf.data Dataset served to legacy graph code as plain tensors.

A `Pipeline` owns one initializable iterator over a Dataset and hands out its `get_next()`
tensors, which is what a legacy dequeue op was. Nothing moves until the pipeline is
started, as nothing moved until queue runners were started: every graph that holds
pipelines has one runner in the `QUEUE_RUNNERS` collection (input_runner.py), and whatever
starts queue runners (`start_queue_runners`, ours or TensorFlow's, a `Supervisor`,
`MonitoredTrainingSession`, `qr.create_threads`) calls its `create_threads`, which runs the
iterator initializers of the pipelines not yet started in that session.

"Started in this session" is a resource variable per pipeline in no collection, uninitialized in
a fresh session: `VarIsInitializedOp` answers "started?", even after `Graph.finalize()`. Each
output waits on it (started_guard.py): a pipeline never started fails with the fix, where
legacy hung.

A `Source` is a pipeline whose element tensors may also be read by a batcher: the batcher
does not dequeue from the source's iterator but captures the per-example graph between the
source's tensors and its own inputs, and rebuilds it over `source.dataset` (capture/capture.py).
So a source's own pipeline makes what a direct read needs now, and its initializer, start
and check ops on first use; one that batchers read is started only by a direct read.
"""

import dataclasses
from collections.abc import Callable
from typing import Any
from typing import Optional

import tensorflow as tf

from compat_input._src.core import graph_ops
from compat_input._src.core import state_variables
from compat_input._src.core import tf_internals
from compat_input._src.core import tracing
from compat_input._src.core.options import chosen_service
from compat_input._src.core.options import options
from compat_input._src.runtime import checkpoint
from compat_input._src.runtime import device_prefetch
from compat_input._src.runtime import graph_states
from compat_input._src.runtime import input_runner
from compat_input._src.runtime import iterators
from compat_input._src.runtime import position_costs
from compat_input._src.runtime import session_release
from compat_input._src.runtime import start_ops
from compat_input._src.runtime import started_guard
from compat_input._src.runtime.graph_states import built_pipelines
from compat_input._src.runtime.graph_states import graph_state

tf1 = tf.compat.v1


def check_graph_mode(what: str) -> None:
    """Legacy queue APIs are graph-only; keep the legacy error for eager callers."""
    if tf.executing_eagerly():
        raise RuntimeError(
            f"{what} builds a graph-mode input pipeline and eager execution is enabled: call "
            "tf.compat.v1.disable_eager_execution() first, or use compat_input.as_dataset / "
            "tf.data directly in TensorFlow 2 code."
        )


class Pipeline:
    """One Dataset, one iterator, and the guarded tensors that read it."""

    def __init__(self, source: "Source"):
        graph = tf1.get_default_graph()
        # Starting a pipeline must not run what the program wrapped the legacy call in
        # (`with tf.control_dependencies([...])`): its state is made outside that context.
        with graph.control_dependencies(None):
            self._make(graph, source)
        # Built after the input was started (`queue.dequeue()` or `reader.read` inside the
        # training loop): legacy's ops read queues that were already filling, so this one
        # starts now in every session that started the graph's input.
        for sess in list(graph_state(graph).sessions):
            try:
                start_pipelines(sess, graph)
            except (RuntimeError, tf.errors.OpError):
                pass  # A closed session: nothing to start.

    def _make(self, graph, source: "Source") -> None:
        self.name = name = source.name
        dataset = source.dataset
        # Pipelines this one's elements are pulled from: its start check waits for theirs.
        self.needs: list = []
        self.source: Optional[Source] = source
        self.fill, self.examples = source.fill, source.counted == "examples"
        # What the pipeline can tell about a failing record (origins.Origins).
        self.origins: Any = source.origins
        self.read_op_names: list[str] = []
        self.dataset = dataset
        self.element_spec = dataset.element_spec
        self.unsaved_because = source.unsaved_because
        dataset = iterators.with_options(dataset)
        saved = options.save_input_position and not self.unsaved_because
        saved = saved and not position_costs.too_big(source)
        self.device = device_prefetch.target(saved) if source.batches else None
        if self.device:
            dataset = device_prefetch.copy_ahead(dataset, self.device)
            self.unsaved_because = f"batches copied ahead to {self.device}"
        # A reader's or producer's own pipeline (not a batcher's) is most often read only
        # through batchers' own iterators: its initializer, string handle, start and check
        # are made on first use (6 ops of a tower's 69, each a cost to the build and every
        # session: 50 towers built in 0.49 s, not 0.69). Its checkpoint marker and meta-graph
        # start stay: an export copies the graph before it reads the collections naming them.
        self.lazy = not source.batches
        with tf.device(self.device):
            self.iterator = iterators.initializable(dataset, deferred=self.lazy)
        self.variant = dataset._variant_tensor
        self.resource = tf_internals.iterator_resource(self.iterator)
        # Lives in no collection: initializers, savers and ready_op must not see it.
        self._started = state_variables.StateVariable(
            state_variables.initial(False, tf.bool), "started"
        )
        self.started_handle = self._started.handle
        self._made: dict = {}
        # Read by counts each run computes (counted_reads.py): what reads found and did not
        # take, for the next reads; emptied when rewound, saved with the position.
        specs = tf.nest.flatten(self.element_spec)
        counted = source.counted and all(
            isinstance(s, tf.TensorSpec) and s.shape.rank is not None for s in specs
        )
        self.blocks = bool(counted) and source.counted != "examples"
        # A padding batcher's blocks: examples' shapes follow them (plan_steps.batch_examples).
        self.padded = bool(counted) and source.counted == "padded blocks"
        self.kept = [_left_rows(s, self.blocks) for s in specs] if counted else None
        runner = ensure_runner(graph)
        deferred = (self.variant, self.resource, runner.input_started.handle)
        self.guard = started_guard.guard(self.started_handle, name, deferred if self.lazy else None)
        state = graph_state(graph)
        with state.lock:
            state.pipelines.append(self)
        built_pipelines.append(name)
        checkpoint.add_saveable(self, list(source.ops), make_start_ops)
        # Started in every session by this op (start_pipelines), and by TensorFlow's own
        # runner threads in a graph imported from a meta-graph.
        self.start_once = runner.add(self)

    def _make_start(self, name: str) -> tf.Operation:
        # Marked started only once the iterator is: a run waiting on the mark reads now.
        # (The variable's own initializer is made at the graph's root, with no such order.)
        with tf.control_dependencies([self.rewind()]):
            started = self._started
            return graph_ops.AssignVariableOp(
                resource=started.handle, value=started.initial_value, name=name
            )

    def _once(self, what: str, make):
        return tf_internals.made_once(self._made, what, self.started_handle.graph, make)

    @property
    def is_started(self) -> tf.Tensor:
        return self._once(
            "is_started", lambda: graph_ops.VarIsInitializedOp(resource=self.started_handle)
        )

    @property
    def start_op(self) -> tf.Operation:
        return self._once("start", lambda: self._make_start(f"{self.name}_start"))

    @property
    def reset_op(self) -> tf.Operation:
        # A lazy pipeline is marked started as it is rewound: its next read must not restart.
        return self.start_op if self.lazy else self._once("rewind", self.rewind)

    def rewind(self) -> tf.Operation:
        """A new op that takes the pipeline back to its first element."""
        resets = [v.assign(v.initial_value) for v in self.kept or []]
        resets += self.fill.reset() if self.fill else []
        return tf.group(self.iterator.initializer, *resets) if resets else self.iterator.initializer

    def marker_variable(self) -> tf.Variable:
        """A variable of the pipeline's own state (checkpoint.py names the position by it)."""
        return state_variable(state_variables.initial(0, tf.int64), "marker")

    def state_initialized(self) -> tf.Operation:
        """Initializes the state of the pipelines built up to this one (made later, up to the
        last one) where not yet, for a restore or an imported start that precedes ours."""
        return self._once("state", lambda: _initialized_so_far(self.started_handle.graph))

    def get_next(self, name: Optional[str] = None, after: Optional[Callable] = None) -> Any:
        """The next element, in the dataset's structure; each run pulls one element.
        `after(element)`, if given, makes an op that each run runs once the element is read."""
        # The read itself waits for the check, or an unstarted iterator fails first.
        guards, started = self.read_guards()
        with tf.control_dependencies(guards):
            element = iterators.get_next(self.iterator, inline_read=iterators.inline(self.variant))
        flat = tf.nest.flatten(element, expand_composites=True)
        self.read_op_names.append(flat[0].op.name)
        with tf.control_dependencies(self.after_read(element, started, after)):
            flat = graph_ops.IdentityN(input=flat, name=name)
        return tf.nest.pack_sequence_as(element, flat, expand_composites=True)

    def read_guards(self) -> tuple:
        """What a read runs after: the started checks, and where its fill is counted, the
        clock that the read began (fill_levels.py), returned too."""
        guards = [self.guard]  # Which waits for the pipelines it pulls from (`needs`).
        return self.fill.clock(guards) if self.fill else (guards, None)

    def after_read(self, element, started, after=None, single=None) -> list:
        """The ops a read runs once `element` is read (`single`: it is one example)."""
        ops = [after(element)] if after else []
        if self.fill is not None:
            single = self.examples if single is None else single
            ops += self.fill.count_taken(element, started, single)
        return ops


@dataclasses.dataclass(eq=False)
class Source:
    """A pipeline whose element tensors batchers may capture and rebuild over `dataset`.

    `work_source` and `records` are set for readers: the producer of work items (file
    names) and the function from one work item to the Dataset of its records, which the
    `_join` batchers need to interleave several readers over one producer.
    """

    name: str
    dataset: tf.data.Dataset
    work_source: Optional["Source"] = None
    records: Optional[Callable[[tf.Tensor], tf.data.Dataset]] = None
    # A reader's: `(index, work item)` elements to records, `cycle_length` items in turn.
    interleave: Optional[Callable[[tf.data.Dataset, int], tf.data.Dataset]] = None
    pipeline: Optional[Pipeline] = None
    # False for endless streams (no num_epochs); `iterate` refuses to run those to the end.
    finite: bool = True
    # Why tf.data cannot save its position (a hand-built queue, the service), or None.
    unsaved_because: Optional[str] = None
    # The captured per-example ops inside `dataset`, for the checks above.
    ops: tuple = ()
    # Readers: what the number in their keys means (see origins.describe), and the reader.
    key_kind: Optional[str] = None
    reader: Any = None
    # Positions in the flat element of strings that all have one length (fixed-length records).
    fixed_length: tuple = ()
    # A producer's work items, when the program gave them as Python values.
    items: Optional[list] = None
    # What this source's own pipeline can tell about a failing record (origins.Origins).
    origins: Any = None
    # The legacy `shared_name`: the tf.data service job its batchers share (data_service.py).
    shared_name: Optional[str] = None
    # A batcher's: read by the model's step, so copied ahead to its device (device_prefetch).
    batches: bool = False
    # Read by a batcher, which rebuilt its dataset: its own iterator starts only if read.
    captured: bool = False
    # The shared tf.data service job it reads, which one trainer cannot rewind.
    service_job: Optional[str] = None
    # A reader's: its own pipeline's dataset once several readers read one producer directly
    # (inputs/shared_work.py): work items from the iterator whose resource it is given.
    own_dataset: Optional[Callable[[tf.Tensor], tf.data.Dataset]] = None
    # A producer's: the own pipelines of the readers that read it.
    direct_readers: list = dataclasses.field(default_factory=list)
    # Read by counts each run computes (counted_reads.py): "blocks" where its elements are
    # blocks of examples, "padded blocks" where blocks padded (with each example's shapes),
    # "examples" where single examples (a queue read by dequeue()).
    counted: Optional[str] = None
    fill: Optional[Any] = None  # A batcher's: how far it runs ahead (fill_levels.py).
    buffered: Optional[tuple] = None  # A batcher's: (examples, MB) (position_costs.buffered).

    def register(self, tensors: list[tf.Tensor]) -> None:
        state = graph_state(tensors[0].graph)
        with state.lock:
            for index, tensor in enumerate(tensors):
                state.source_tensors[tensor.name] = (self, index)

    def make_pipeline(self) -> Pipeline:
        if self.pipeline is None:
            self.pipeline = Pipeline(self)
        return self.pipeline

    def element_tensors(self, name: Optional[str] = None) -> list[tf.Tensor]:
        """New tensors that each pull one element of this source's own stream per run."""
        flat = tf.nest.flatten(self.make_pipeline().get_next(name=name))
        self.register(flat)
        return flat


def _left_rows(spec: tf.TensorSpec, blocks: bool) -> state_variables.StateVariable:
    shape = spec.shape[1:] if blocks else spec.shape
    empty = tracing.stand_in(tf.TensorShape([0]).concatenate(shape), spec.dtype)
    return state_variable(empty, "left", [None, *shape])


def needs_initialization(variables: list) -> None:
    """Registers variables to initialize at start, once per session, before any pipeline."""
    state = graph_state(variables[0].graph)
    with state.lock:
        state.state_variables.extend(variables)
    ensure_runner(variables[0].graph)


def state_variable(value, name: str, shape=None) -> state_variables.StateVariable:
    """A resource variable in no collection, initialized by us at start in each session;
    `shape` (a partial shape) lets its value change shape.

    Pipeline state (counters, logs) must not be touched by the program's initializers,
    savers or `ready_op`, as a legacy queue's internal state was not.
    """
    variable = state_variables.StateVariable(value, name, shape)
    needs_initialization([variable])
    return variable


def _initialized_so_far(graph: tf.Graph) -> tf.Operation:
    """Initializes the state variables registered so far that are not yet initialized.
    A chain, one link per pipeline, each after the one before: a pipeline's link covers the
    state of every pipeline built before it, which its datasets may touch. The state
    registered since the last link is a new group."""
    state = graph_state(graph)
    with state.lock:
        fresh = state.state_variables[state.chained :]
        if fresh or state.chain is None:
            with tf_internals.at_root(graph), tf1.name_scope("compat_input_state"):
                state.chain = start_ops.initialize_missing(fresh, state.chain)
                if fresh:
                    state.groups.append(graph_states.StateGroup(fresh))
            state.chained += len(fresh)
            state.covered[state.chain] = state.chained
        return state.chain


def state_groups(graph: tf.Graph) -> list:
    """Every group of the graph's state, a last one made for state registered since."""
    state = graph_state(graph)
    with state.lock:
        registered = bool(state.state_variables)
    # A graph with no state of ours gets no op of ours: a Supervisor wrote it to its event
    # file already, and TensorFlow's tests compare that graph with the session's.
    if registered:
        _initialized_so_far(graph)
    with state.lock:
        return list(state.groups)


def lookup_source(tensor: tf.Tensor) -> Optional[tuple[Source, int]]:
    return graph_state(tensor.graph).source_tensors.get(tensor.name)


def pipelines_of(graph: tf.Graph) -> list[Pipeline]:
    state = graph_state(graph)
    with state.lock:
        return list(state.pipelines)


def make_start_ops(graph: tf.Graph) -> None:
    """Makes now every op `start_pipelines` runs, where made on first use: a Supervisor
    writes the graph to its event file and finalizes it when it is made, before it starts
    anything, and that graph must be the one its sessions run. (Each pipeline's start
    is made with it; the state's last group may not be.)"""
    state_groups(graph)


def start_pipelines(sess, graph: Optional[tf.Graph] = None, also: Optional[list] = None) -> int:
    """Starts the pipelines of `sess`'s graph not yet started in `sess`; returns how many
    it made sure of (a pipeline restored or started by a read is left as it is). Runs the
    ops `also` in the same run and empties it, where there is one (a run costs 10-15 ms)."""
    graph = graph or sess.graph
    state = graph_state(graph)
    with state.lock:
        state.sessions.add(sess)
        pipelines = graph_states.to_start(state)
    session_release.at_exit(sess)
    if state.queue_closes:
        session_release.close_queues_first(sess, state.queue_closes)
    groups = state_groups(graph)
    if not pipelines and not groups:
        return 0
    with state.lock:
        # Started with nothing new since (a Supervisor starts at its services, then at its
        # queue runners): a run would change nothing, and waited 70-80 ms for the CPU.
        done = (len(state.pipelines), state.chain)
        if state.started_with.get(sess) == done:
            return len(pipelines)
        chain = [state.chain] if groups else []
    # One run: the state not yet initialized (restored, or started before in sess, it is
    # left), then each pipeline not yet started (three runs took 0.10 s of CIFAR-10's start).
    # A start covers the state made before its pipeline; state made since that its dataset
    # reads (a fill level made after it) is initialized first in a run of its own, as is all
    # state where a tf.data service is used (registering a dataset serializes what it reads).
    starts = [p.start_once for p in pipelines]
    reads = graph_states.reads_later_state
    if chain and (chosen_service() or any(reads(state, p) for p in pipelines)):
        sess.run(chain)
        chain = []
    sess.run(chain + starts + (also or []))
    if also:
        also.clear()
    with state.lock:
        state.started_with[sess] = done
    return len(pipelines)


def ensure_runner(graph: tf.Graph) -> input_runner.PipelineRunner:
    state = graph_state(graph)
    with state.lock:
        runner, fresh = state.runner, state.runner is None
        if fresh:
            runner = state.runner = input_runner.PipelineRunner(graph, start_pipelines)
            graph.add_to_collection(tf1.GraphKeys.QUEUE_RUNNERS, runner)
    if fresh:  # Outside the lock: registering the variable takes it.
        with tf_internals.at_root(graph):
            # Initialized where the graph's input starts: a pipeline left unstarted then
            # starts on its first read (started_guard.py).
            runner.input_started = state_variable(
                state_variables.initial(True, tf.bool), "compat_input_started"
            )
    return runner
