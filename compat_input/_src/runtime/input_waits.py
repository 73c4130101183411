"""How long a program's runs waited on its input: `compat-input run`'s report at exit.

`install()` times every `Session.run` and every call of a `make_callable` callable. Each
read of a batcher's pipeline has a clock that only sampled runs fetch (fill_levels.py): a
run is sampled once the runs of its session since the last sampled one took
`SAMPLE_SECONDS`, with the clocks of the reads it runs anyway (run_closures.py), so the
clocks' few ops cost well under 1% of run time (a clock in every step cost 4% of a tiny
trainer's 0.2 ms step: benchmarks/results/fill-levels.md). Each set of fetches sampled
costs the session an executor of its own: none is sampled in a session's first
`WARMUP_SECONDS` of runs, nor on its first run, nor before the runs took `TWIN_BUDGET`
times its slowest. Each pipeline's waits are the
seconds its sampled reads waited for each example they took, times the examples it took
(counted in every read); where `input_wait_summaries` are on, every read times its wait
in the step and the waits are that sum. When a session closes, or the program ends with
it open, its graph's counts are read in one run and added to the totals here. The report
gives each pipeline's waits, in seconds and as a share of the time the program spent in
`Session.run`, and calls the program input-bound where its reads waited for at least
`INPUT_BOUND` of it: the question a `fraction_of_N_full` summary near 0 answered on legacy
queues.
"""

import dataclasses
import threading
import time
import weakref
from typing import Optional

from compat_input._src.core.options import options
from compat_input._src.runtime import fill_levels
from compat_input._src.runtime import run_closures

# The share of run time spent waiting on input from which a program is input-bound.
INPUT_BOUND = 0.2
# A session's run is sampled once its runs since the last sampled one took this long.
SAMPLE_SECONDS = 0.005
# Nor are the runs of a session's first second sampled: they are its start-up (the first
# batch waits for the input to start, whatever the model), and a sampled run's fetches cost
# the session an executor of their own, 20-40 ms: a tiny trainer's whole 0.3 s of runs
# paid 27 ms in its second step, and 30 ms more at exit to read the counts of no sample.
WARMUP_SECONDS = 1.0
# Nor is a set of fetches sampled before the session's runs took this many times the
# slowest run of those fetches: the first run of a set pays for the session's executor of
# it, and a sampled run's set (the fetches and clocks) a new one as long to make (0.3-0.4 s
# a set for a small CNN trainer's Adam step, 10% of its 30 steps' wall time when sampled at
# once). Sampling costs a session at most 2% of its run time so, as a clock would a step.
TWIN_BUDGET = 50
# Runs faster than this are not timed a set (the key costs microseconds; a set this fast
# to make is affordable after the warm-up anyway).
SLOW_RUN_SECONDS = 0.01

_lock = threading.Lock()
run_seconds = [0.0]  # The time spent in Session.run, all sessions together.
# Pipeline name -> [examples taken, seconds waited, runs sampled, whether its waits were
# sampled (else every read was timed)].
waits: dict = {}
_sessions: weakref.WeakSet = weakref.WeakSet()  # Ran a graph with counted pipelines.
_sampling: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # Session -> _Sampling.


@dataclasses.dataclass
class _Sampling:
    """A session's sampling: its run seconds since its last sampled run (due from
    SAMPLE_SECONDS on) and in all, its known fetch sets (run_closures) and the slowest run
    of each set that ran slow (`SLOW_RUN_SECONDS`)."""

    since: float = dataclasses.field(default_factory=lambda: SAMPLE_SECONDS - WARMUP_SECONDS)
    total: float = 0.0
    known: dict = dataclasses.field(default_factory=dict)
    slowest: dict = dataclasses.field(default_factory=dict)
    seen: set = dataclasses.field(default_factory=set)  # Sets that ran when a run was due.

    def affords(self, key) -> bool:
        """Whether a run of the fetch set `key` may be sampled now: not the first run of it
        seen (a set's first run makes its executor: sampled, the next made another), and
        its twin, as slow to make as the set's slowest run, within the budget."""
        if key not in self.seen:
            if len(self.seen) >= run_closures.MAX_REMEMBERED:
                self.seen.clear()
            self.seen.add(key)
            return False
        return self.total >= TWIN_BUDGET * self.slowest.get(key, 0.0)


unsampled = [False]  # A session's pipelines were left out: it ran too briefly to sample.


def _timed(session, call, args, kwargs, run_key=None):
    """`call(*args, **kwargs)`, timed; `run_key()` names its fetch set where it ran slow."""
    start = time.perf_counter()
    try:
        return call(*args, **kwargs)
    finally:
        seconds = time.perf_counter() - start
        with _lock:
            run_seconds[0] += seconds
            if fill_levels.levels.get(session.graph):
                _sessions.add(session)
                state = _sampling_state(session)
                state.since += seconds
                state.total += seconds
                if run_key is not None and seconds >= SLOW_RUN_SECONDS:
                    _note_slow(state, run_key(), seconds)


def _note_slow(state: _Sampling, key, seconds: float) -> None:
    if key is not None:
        if len(state.slowest) >= run_closures.MAX_REMEMBERED:
            state.slowest.clear()
        state.slowest[key] = max(seconds, state.slowest.get(key, 0.0))


def _sampling_state(session) -> _Sampling:
    """The session's sampling state, due once its runs took `WARMUP_SECONDS`. Under `_lock`."""
    return _sampling.setdefault(session, _Sampling())


def _due(session) -> Optional[_Sampling]:
    """The session's sampling state where a run of it is due to be sampled, else None."""
    state = _sampling.get(session) if options.input_waits else None
    if state is None and options.input_waits and fill_levels.levels.get(session.graph):
        with _lock:
            state = _sampling_state(session)
    return state if state is not None and state.since >= SAMPLE_SECONDS else None


def _key_of(fetches, feeds):
    """A zero-argument function naming a run's fetch set (None where it cannot), worked
    out on its first call only: most runs are neither due nor slow and never ask."""
    made: list = []

    def key():
        if not made:
            try:
                made.append(run_closures.run_key(fetches, feeds))
            except Exception:  # noqa: BLE001 - a run must run as it would have.
                made.append(None)
        return made[0]

    return key


def _tensors(clocks: list) -> Optional[list]:
    """The clocks' tensors, made now, or None: made for a run left unsampled, they were ops
    added after the session ran the graph, which makes its next run copy and place the
    whole graph again (0.56 s of real_nvp's first step, a 24,000-op graph; legacy paid
    none)."""
    try:
        return [clock.tensor for _, clock in clocks] or None
    except Exception:  # noqa: BLE001 - sampling must never fail a run.
        return None


def _record(session, clocks: list, values) -> None:
    with _lock:
        _sampling[session].since = 0.0
        for (level, _), (seconds, examples) in zip(clocks, values):
            level.samples[0] += 1
            level.samples[1] += float(seconds)
            level.samples[2] += float(examples)


def timed_run(original):
    """`BaseSession.run` that adds its time to `run_seconds` and, now and then, fetches the
    clocks of the reads it runs too. Installed by `install()`."""

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        state = _due(self)
        key = _key_of(fetches, feed_dict)
        clocks = state and run_closures.clocks_run(
            self.graph,
            fetches,
            feed_dict,
            fill_levels.levels.get(self.graph, []),
            state.known,
            key(),
        )
        if clocks and not state.affords(key()):
            clocks = None
        tensors = _tensors(clocks) if clocks else None
        if not tensors:
            if state is not None:  # Due, but reads none with a clock: try again later.
                state.since = 0.0
            args = (self, fetches, feed_dict, options, run_metadata)
            return _timed(self, original, args, {}, key)
        args = (self, [fetches, tensors], feed_dict, options, run_metadata)
        values = _timed(self, original, args, {})
        _record(self, clocks, values[1])
        return values[0]

    run.__doc__ = original.__doc__
    run.__wrapped__ = original
    return run


def timed_make_callable(original):
    """`BaseSession.make_callable` whose callables add their time too (training loops of
    Keras and of benchmarks run steps through them), and now and then run a twin that
    fetches the clocks of their reads too."""

    def make_callable(self, fetches, feed_list=None, accept_options=False):
        began = time.perf_counter()
        call = original(self, fetches, feed_list, accept_options)
        made = time.perf_counter() - began  # Its executor's making, most of it: the twin's.
        sampled: list = []  # [clocks, the twin], made when first due.

        def timed(*call_args, **call_kwargs):
            state = _due(self)
            if state is not None and not sampled and state.total >= TWIN_BUDGET * made:
                levels = fill_levels.levels.get(self.graph, [])
                key = _key_of(fetches, feed_list)()
                clocks = run_closures.clocks_run(
                    self.graph, fetches, feed_list, levels, state.known, key
                )
                twin = _twin(original, self, fetches, clocks, feed_list, accept_options)
                sampled.extend([clocks if twin else [], twin])
            if state is None or not sampled or not sampled[0]:
                return _timed(self, call, call_args, call_kwargs)
            values = _timed(self, sampled[1], call_args, call_kwargs)
            _record(self, sampled[0], values[1])
            return values[0]

        return timed

    make_callable.__doc__ = original.__doc__
    make_callable.__wrapped__ = original
    return make_callable


def _twin(make, session, fetches, clocks, feed_list, accept_options):
    """A callable of `fetches` and `clocks`, or None: sampling must never fail a call."""
    try:
        tensors = _tensors(clocks)
        return make(session, [fetches, tensors], feed_list, accept_options) if tensors else None
    except Exception:  # noqa: BLE001
        return None


def collect(session) -> None:
    """Adds the counts of `session`'s pipelines to `waits`, once (as it closes)."""
    with _lock:
        if session not in _sessions:
            return
        levels = [v for v in fill_levels.levels.get(session.graph, []) if v.made_read is not None]
        # Waits of no sampled run are unknown: not read (a run of its own at exit), but said.
        sampled = [v for v in levels if not (v.sampled and not v.samples[0])]
        unsampled[0] = unsampled[0] or len(sampled) < len(levels)
        levels = sampled
    try:  # One run for all (a pipeline not started reads 0: its read initializes its state).
        values = session.run([level.made_read for level in levels]) if levels else []
    except Exception:  # noqa: BLE001 - a closed or broken session: nothing to add.
        values = []
    with _lock:
        _sessions.discard(session)  # After its runs here, which add it again.
        for level, counts in zip(levels, values):
            taken = int(counts[1])  # [made, taken, waited]
            total = waits.setdefault(level.name, [0, 0.0, 0, level.sampled])
            total[0] += taken
            if level.sampled:  # What its sampled reads waited an example, for every example.
                runs, seconds, examples = level.samples
                level.samples = [0, 0.0, 0.0]
                total[1] += seconds / examples * taken if examples else 0.0
                total[2] += runs
            else:
                total[1] += float(counts[2])


def clear() -> None:
    """Forgets every count so far (a test's fresh start)."""
    with _lock:
        run_seconds[0] = 0.0
        unsampled[0] = False
        waits.clear()
        _sessions.clear()
        _sampling.clear()


def report() -> list:
    """The report's lines: the program's waits on input, then each pipeline's."""
    for session in list(_sessions):
        collect(session)
    with _lock:
        counted = {name: list(v) for name, v in waits.items() if v[0]}
        total_run = run_seconds[0]
    if not counted and unsampled[0] and total_run > 0:
        return [
            f"input: no run was sampled for its reads' waits in the {total_run:.2f} s "
            f"Session.run took (a session's runs are sampled after its first "
            f"{WARMUP_SECONDS:g} s, a set of fetches once the runs took {TWIN_BUDGET} times its "
            "slowest run): no waits to report"
        ]
    if not counted or total_run <= 0:
        return []
    if not options.input_waits:
        return ["input: reads were not timed (--no-input-waits)"]
    waited = sum(v[1] for v in counted.values())
    share = waited / total_run
    verdict = (
        "input-bound: the model waited for its input; see migration_guide.md#summaries-and-queue-sizes"
        if share >= INPUT_BOUND
        else "not input-bound"
    )
    lines = [
        f"input: Session.run took {total_run:.2f} s; reads waited {waited:.2f} s on the "
        f"input ({share:.0%}): {verdict}"
    ]
    for name, (examples, seconds, runs, sampled) in sorted(
        counted.items(), key=lambda kv: -kv[1][1]
    ):
        lines.append(
            f"input: '{name}' waited {seconds:.2f} s ({seconds / total_run:.0%} of run time) "
            f"for {examples} examples, {seconds * 1e3 / examples:.3f} ms an example"
            + (f" (from {runs} sampled runs)" if sampled else "")
        )
    return lines
