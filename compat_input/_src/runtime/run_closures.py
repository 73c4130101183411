"""Which reads a `Session.run` runs anyway: the clocks a sampled run may fetch.

Fetching a read's clock (fill_levels.FillLevel.sample_clock) runs the read; a run that would
not have read (its fetches do not need the input, or it feeds the batch in the input's
place, as an evaluation on arrays does) must not be made to, or it would take a batch from
the program. So a run is sampled only with the clocks of reads it runs anyway: those its
fetches and targets reach through the graph, stopping at fed tensors, as TensorFlow prunes
a run. Anything not understood (a fetch or feed of a kind not listed) samples nothing.
Worked out once per set of fetches and feeds, keyed by their objects, which the answer
keeps alive (an identity is then never another object's).
"""

from collections.abc import Mapping
from typing import Any
from typing import Optional

import tensorflow as tf

# The most fetch and feed sets remembered per session (a program that builds new fetches
# each run would otherwise grow them without end).
MAX_REMEMBERED = 64


def clocks_run(
    graph: tf.Graph, fetches: Any, feeds: Any, levels: list, known: dict, key: Any
) -> list:
    """The (level, clock) pairs of `levels` whose reads a run of `fetches` with `feeds` fed
    runs anyway; `known` remembers the answers of this session's runs by `key` (`run_key`'s,
    None where it could not be worked out: then none). A clock's ops are made only for a
    run that fetches them (`SampleClock.tensor`)."""
    if key is None:
        return []
    try:
        answer = known.get(key)
        if answer is None:
            fetched, fed = _leaves(fetches), _leaves(list(feeds or ()))
            if len(known) >= MAX_REMEMBERED:
                known.clear()
            answer = known[key] = (_clocks(graph, fetched, fed, levels), fetched, fed)
        return answer[0]
    except Exception:  # noqa: BLE001 - a run must run as it would have: sampled or not.
        return []


def run_key(fetches: Any, feeds: Any) -> tuple:
    """What tells one run's fetches and feeds from another's: their objects' identities."""
    fetched, fed = _leaves(fetches), _leaves(list(feeds or ()))
    return (tuple(_identity(x) for x in fetched), tuple(_identity(x) for x in fed))


def _leaves(structure) -> list:
    """The fetches or feeds of a structure as `Session.run` reads it. Not `tf.nest`, which
    sorts a dict's keys (MonitoredSession's are its hooks, which do not sort)."""
    if isinstance(structure, Mapping):
        return [leaf for value in structure.values() for leaf in _leaves(value)]
    if isinstance(structure, (list, tuple)):  # Named tuples too.
        return [leaf for item in structure for leaf in _leaves(item)]
    return [structure]


def _identity(item) -> Any:
    return item if isinstance(item, str) else id(item)


def _clocks(graph: tf.Graph, fetched: list, fed: list, levels: list) -> list:
    clocks = [(level, c) for level in levels for c in level.clocks]
    if not clocks:
        return []
    starts, fed_names = _elements(graph, fetched), _elements(graph, fed)
    if starts is None or fed_names is None:
        return []
    fed_names = {t.name for t in fed_names if isinstance(t, tf.Tensor)}
    ran = _ops_run(starts, fed_names, set().union(*(clock.ops for _, clock in clocks)))
    return [(level, clock) for level, clock in clocks if clock.ops <= ran]


def _elements(graph: tf.Graph, items: list) -> Optional[list]:
    """The tensors and ops `items` name (fetches or feed keys), composites in parts."""
    out = []
    for item in tf.nest.flatten(items, expand_composites=True):
        try:
            out.append(graph.as_graph_element(item, allow_tensor=True, allow_operation=True))
        except (TypeError, ValueError, KeyError):
            return None
    return out


def _ops_run(starts: list, fed: set, wanted: set) -> set:
    """Which of `wanted` a run of `starts` runs: every op an op needs runs before it, but
    a fed tensor's (its value is the feed's)."""
    stack = [x.op for x in starts if isinstance(x, tf.Tensor) and x.name not in fed]
    stack += [x for x in starts if isinstance(x, tf.Operation)]
    seen: set = set()
    found: set = set()
    while stack and len(found) < len(wanted):
        op = stack.pop()
        if op in seen:
            continue
        seen.add(op)
        if op in wanted:
            found.add(op)
        stack.extend(t.op for t in op.inputs if t.name not in fed)
        stack.extend(op.control_inputs)
    return found
