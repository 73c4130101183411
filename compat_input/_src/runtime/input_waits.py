"""How long a program's runs waited on its input: `compat-input run`'s report at exit.

Each read of a batcher's pipeline adds the time it waited in the iterator's read to the
pipeline's counts (fill_levels.py). `install()` times every `Session.run` and every call
of a `make_callable` callable; when a session closes, or the program ends with it open,
the counts of its graph's pipelines are read in one run and added to the totals here. The
report gives each pipeline's waits, in seconds and as a share of the time the program spent
in `Session.run`, and calls the program input-bound where its reads waited for at least
`INPUT_BOUND` of it: the question a `fraction_of_N_full` summary near 0 answered on legacy
queues.
"""

import threading
import time
import weakref

from compat_input._src.core.options import options
from compat_input._src.runtime import fill_levels

# The share of run time spent waiting on input from which a program is input-bound.
INPUT_BOUND = 0.2

_lock = threading.Lock()
run_seconds = [0.0]  # The time spent in Session.run, all sessions together.
waits: dict = {}  # Pipeline name -> [examples taken, seconds waited].
_sessions: weakref.WeakSet = weakref.WeakSet()  # Ran a graph with counted pipelines.


def _ran(session, seconds: float) -> None:
    with _lock:
        run_seconds[0] += seconds
        if fill_levels.levels.get(session.graph):
            _sessions.add(session)


def _timed(session, call, args, kwargs):
    start = time.perf_counter()
    try:
        return call(*args, **kwargs)
    finally:
        _ran(session, time.perf_counter() - start)


def timed_run(original):
    """`BaseSession.run` that adds its time to `run_seconds`. Installed by `install()`."""

    def run(self, *args, **kwargs):
        return _timed(self, original, (self, *args), kwargs)

    run.__doc__ = original.__doc__
    run.__wrapped__ = original
    return run


def timed_make_callable(original):
    """`BaseSession.make_callable` whose callables add their time too (training loops of
    Keras and of benchmarks run steps through them)."""

    def make_callable(self, *args, **kwargs):
        call = original(self, *args, **kwargs)

        def timed(*call_args, **call_kwargs):
            return _timed(self, call, call_args, call_kwargs)

        return timed

    make_callable.__doc__ = original.__doc__
    make_callable.__wrapped__ = original
    return make_callable


def collect(session) -> None:
    """Adds the counts of `session`'s pipelines to `waits`, once (as it closes)."""
    with _lock:
        if session not in _sessions:
            return
        levels = [v for v in fill_levels.levels.get(session.graph, []) if v.made_read is not None]
    try:  # One run for all (a pipeline not started reads 0: its read initializes its state).
        values = session.run([level.made_read for level in levels]) if levels else []
    except Exception:  # noqa: BLE001 - a closed or broken session: nothing to add.
        values = []
    counts = [(level.name, value) for level, value in zip(levels, values)]
    with _lock:
        _sessions.discard(session)  # After its runs here, which add it again.
        for name, values in counts:
            total = waits.setdefault(name, [0, 0.0])
            total[0] += int(values[1])  # [made, taken, waited]
            total[1] += float(values[2])


def clear() -> None:
    """Forgets every count so far (a test's fresh start)."""
    with _lock:
        run_seconds[0] = 0.0
        waits.clear()
        _sessions.clear()


def report() -> list:
    """The report's lines: the program's waits on input, then each pipeline's."""
    for session in list(_sessions):
        collect(session)
    with _lock:
        counted = {name: list(v) for name, v in waits.items() if v[0]}
        total_run = run_seconds[0]
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
    for name, (examples, seconds) in sorted(counted.items(), key=lambda kv: -kv[1][1]):
        lines.append(
            f"input: '{name}' waited {seconds:.2f} s ({seconds / total_run:.0%} of run time) "
            f"for {examples} examples, {seconds * 1e3 / examples:.3f} ms an example"
        )
    return lines
