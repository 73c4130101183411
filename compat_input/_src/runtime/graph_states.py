"""What compat_input knows about each graph: its pipelines, sources and state (pipeline.py
builds them), and the names of the pipelines built in this process."""

import dataclasses
import threading
import weakref
from typing import Optional

import tensorflow as tf

tf1 = tf.compat.v1


@dataclasses.dataclass
class StateGroup:
    """State variables initialized together (whether they are: the last one's check)."""

    variables: list


class GraphState:
    """What compat_input knows about one graph."""

    def __init__(self):
        self.pipelines: list = []  # pipeline.Pipeline
        # Source element tensors, by tensor name: (source, index in the flat element).
        self.source_tensors: dict = {}
        # Variables in no collection that pipelines use: initialized once per session at start.
        self.state_variables: list = []
        # They are initialized in groups (`StateGroup`), one per pipeline; `chain` initializes
        # every group not yet initialized, each after the one before, from the graph alone.
        self.groups: list = []
        self.chain: Optional[tf.Operation] = None
        self.chained = 0
        self.covered: dict = {}  # How many of `state_variables` each link of `chain` covers.
        # Resource mirrors of reference-variable counters, by op name (capture/capture.py).
        self.mirrors: dict[str, tf.Variable] = {}
        # Op names of variables a service worker may keep its own copy of (data_service.py).
        self.remote_safe: list[str] = []
        self.runner = None  # input_runner.PipelineRunner
        # Sessions that started this graph's pipelines: one built later starts in them at once.
        self.sessions: weakref.WeakSet = weakref.WeakSet()
        # What each of them last started (pipeline.start_pipelines): its pipelines and chain.
        self.started_with: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        # Closes of the program's own queues that pipelines dequeue from, by queue: run as
        # its sessions close (session_close.py).
        self.queue_closes: dict = {}
        self.lock = threading.Lock()


# Names of every pipeline built in this process, for `compat-input run`'s report.
built_pipelines: list[str] = []

_graph_states: "weakref.WeakKeyDictionary[tf.Graph, GraphState]" = weakref.WeakKeyDictionary()
_graph_states_lock = threading.Lock()


def graph_state(graph: Optional[tf.Graph] = None) -> GraphState:
    graph = graph or tf1.get_default_graph()
    with _graph_states_lock:
        state = _graph_states.get(graph)
        if state is None:
            state = _graph_states[graph] = GraphState()
        return state


def to_start(state: GraphState) -> list:
    """The pipelines a start starts (the rest start on their first direct read, if any).

    A reader or producer that batchers read through their own iterators is left: 50 towers
    started 1.9 s sooner. So is a producer that only such readers' own pipelines pull from
    (inputs/shared_work.py), never read itself: its start instantiated its functions, 9 ms
    of the youtube-8m-shaped trainer's start run.
    """
    left = {p for p in state.pipelines if p.lazy and p.source.captured}
    left |= {p for p in state.pipelines if p.lazy and not p.read_op_names and _feeds(p, left)}
    return [p for p in state.pipelines if p not in left]


def left_to_direct_reads(pipeline) -> bool:
    """Whether the input's start leaves `pipeline` to a direct read (`to_start`)."""
    state = graph_state(pipeline.started_handle.graph)
    with state.lock:
        return pipeline not in to_start(state)


def _feeds(pipeline, left: set) -> bool:
    """Whether `pipeline` is pulled from by readers' own pipelines, all of them in `left`."""
    readers = pipeline.source.direct_readers
    return bool(readers) and all(r in left for r in readers)


def reads_later_state(state: GraphState, pipeline) -> bool:
    """Whether `pipeline`'s dataset (its ops, and every op they take inputs from: a dataset
    function's captures are its op's inputs) reads state registered after its own link of
    the chain (which its start does not wait for)."""
    later = state.state_variables[state.covered.get(pipeline.state_initialized(), 0) :]
    handles = {v.handle.op.name for v in later}
    seen: set = set()
    pending = [pipeline.variant.op]
    while handles and pending:
        op = pending.pop()
        if op.name not in seen:
            seen.add(op.name)
            if op.name in handles:
                return True
            pending.extend(t.op for t in op.inputs)
    return False
