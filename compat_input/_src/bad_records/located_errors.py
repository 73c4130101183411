"""Located errors: an error raised by `sess.run` from a pipeline, raised again naming its record.

The hooks `install()` puts on `Session.run` and `Session.make_callable` (commands/install.py) call
`raise_located` on an error; it asks the pipelines behind the fetches what they know of
the failure (origins.py) and raises the same error type again with the record named in a
first line, TensorFlow's message kept whole after it. Nothing happens on the success path
but a try block.
"""

import re
import weakref
from typing import Optional

import tensorflow as tf

from compat_input._src.core import errors
from compat_input._src.core import interrupted_runs
from compat_input._src.core.tf_internals import session_lib
from compat_input._src.runtime import iteration
from compat_input._src.runtime import pipeline as pipeline_lib

_LOCATED = (
    tf.errors.InvalidArgumentError,
    tf.errors.DataLossError,
    tf.errors.NotFoundError,
    tf.errors.UnknownError,
    tf.errors.UnimplementedError,
    tf.errors.PermissionDeniedError,
    tf.errors.FailedPreconditionError,
    tf.errors.ResourceExhaustedError,
)


# The assertion a pipeline run before it was started fails with (runtime/pipeline.py).
# TensorFlow prints an Assert's message with its quotes escaped.
_NEVER_STARTED = re.compile(
    r"compat_input pipeline \\?'.*? was never started in this session:[^\]]*"
)


# An uninitialized variable as graph and resource variables name it.
_UNINITIALIZED = re.compile(
    r"uninitialized value ([\w./-]+)|reading resource variable ([\w./-]+) from Container"
    r"|Could not find variable ([\w./-]+)"
)


def _local_uninitialized(sess, error: tf.errors.OpError) -> Optional[str]:
    """The fix, where `error` is a local variable of the graph's read uninitialized (what
    `match_filenames_once` makes): TensorFlow's message names the variable, not the fix."""
    found = _UNINITIALIZED.search(error.message)
    if not isinstance(error, tf.errors.FailedPreconditionError) or found is None:
        return None
    name = next(g for g in found.groups() if g).rstrip(".")
    local = {v.op.name for v in sess.graph.get_collection(tf.compat.v1.GraphKeys.LOCAL_VARIABLES)}
    if name not in local:
        return None
    return (
        f"compat_input: the input reads the local variable '{name}', not initialized in this "
        "session: run tf.compat.v1.local_variables_initializer() (match_filenames_once and "
        "num_epochs make local variables) before reading the input."
    )


def _again(error: tf.errors.OpError, first_line: str) -> Optional[tf.errors.OpError]:
    """`error`, same type, with `first_line` before TensorFlow's message."""
    try:
        located = type(error)(error.node_def, error.op, f"{first_line}\n{error.message}")
    except TypeError:
        return None
    located._compat_input_located = True
    return located


def _locate(sess, fetches, error: tf.errors.OpError, run) -> tuple:
    """`(error again, its message starting with the record it came from, and the pipeline
    it came from)`; `(None, None)` if unknown."""
    if getattr(error, "_compat_input_located", False):
        return None, None
    never_started = _NEVER_STARTED.search(error.message)
    if never_started:  # The fix first, not after "Graph execution error:" and a stack.
        return _again(error, never_started.group(0).replace("\\'", "'")), None
    if isinstance(error, tf.errors.OutOfRangeError):
        return _ended(fetches, error), None
    if not isinstance(error, _LOCATED):
        return None, None
    # Raised as the input starts too (its start reads the variable), or by a read.
    fix = _local_uninitialized(sess, error) if pipeline_lib.pipelines_of(sess.graph) else None
    if fix:
        return _again(error, fix), None
    pipelines = [p for p in iteration.pipelines_behind(fetches) if p.origins is not None]
    named = [p for p in pipelines if _read_named(p, error.message) is not None]
    if len(pipelines) > 1:
        pipelines = named
    if len(pipelines) != 1:
        return None, None
    pipeline = pipelines[0]
    try:
        where = pipeline.origins.explain(run, sess, error)
    except (tf.errors.OpError, RuntimeError, ValueError):
        return None, None  # A closed session, state never initialized: the error stays.
    if where is None:
        return None, None
    return _again(error, f"compat_input pipeline '{pipeline.name}' {where}:"), pipeline


def _read_named(pipeline, message: str) -> Optional[str]:
    """The name of `pipeline`'s read op that `message` (an error's) names, or None."""
    for name in pipeline.read_op_names:
        if re.search(rf"\b{re.escape(name)}\b", message):
            return name
    return None


def _ended(fetches, error: tf.errors.OutOfRangeError) -> Optional[tf.errors.OpError]:
    """The end of the input, named: tf.data's own message is "End of sequence", where
    legacy's queue named itself, closed, and the count it lacked."""
    for pipeline in iteration.pipelines_behind(fetches):
        name = _read_named(pipeline, error.message)
        if name is not None:
            where = errors.created_at(pipeline.resource.graph.get_operation_by_name(name))
            return _again(
                error,
                f"compat_input pipeline '{pipeline.name}' (made at {where}) has ended: its "
                "input ran out (num_epochs, or a queue of the program's closed) with no "
                "more to deliver, where legacy's queue said it was closed and had "
                "insufficient elements.",
            )
    return None


def raise_located(sess, fetches, error: tf.errors.OpError) -> None:
    located, _ = _locate(sess, fetches, error, _TF_RUN)
    if located is not None:
        raise located.with_traceback(error.__traceback__) from None


# Session -> {pipeline: the located error it raises at its next run}: the error of a bad
# example whose run was given the final partial batch instead (`_with_final_batch`).
_pending: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()


def _raise_pending(sess, fetches) -> None:
    pending = _pending.get(sess)
    for pipeline in iteration.pipelines_behind(fetches) if pending else ():
        if pipeline in pending:
            raise pending.pop(pipeline)


def _with_final_batch(sess, fetches, feed_dict, pipeline, rerun) -> Optional[tuple]:
    """`(result,)` of the failed run made again on the examples its batch had gathered
    before the bad one, or None.

    Legacy delivered those as the final partial batch (`allow_smaller_final_batch`), then
    the input ended; tf.data's batch drops them when its input fails. The probe that
    named the bad example ran them (origins.Suspect.final_batch); their values are fed to
    the batcher's outputs, so the program's step runs once on them, as it did on legacy.
    Only for a run that reads this pipeline alone: another pipeline would be read twice.
    """
    origins = pipeline.origins
    if origins.outputs is None or iteration.pipelines_behind(fetches) != [pipeline]:
        return None
    try:
        columns = origins.final_batch(_TF_RUN, sess)
        if columns is None:
            return None
        feeds = dict(feed_dict or {})
        feeds.update(zip(origins.outputs, columns))
        return (rerun(feeds),)
    except (tf.errors.OpError, RuntimeError, ValueError):
        return None


# TensorFlow's own `run`, for the probes: they must not be located themselves.
_TF_RUN = session_lib.BaseSession.run


def locating_run(original):
    """`BaseSession.run` that names the bad record in errors raised from pipelines.

    Installed by `install()` (commands/install.py). Nothing changes on the success path but a try
    block; it only acts on an error whose fetches read a compat_input pipeline.
    """

    def run(self, fetches, feed_dict=None, options=None, run_metadata=None):
        _raise_pending(self, fetches)
        try:
            return original(self, fetches, feed_dict, options, run_metadata)
        except tf.errors.CancelledError:
            interrupted_runs.raise_if_cancelled(self)  # Ctrl-C ended a run that waited.
            raise
        except tf.errors.OpError as error:
            located, pipeline = _locate(self, fetches, error, _TF_RUN)
            if located is None:
                raise
            final = None
            if pipeline is not None:
                final = _with_final_batch(
                    self,
                    fetches,
                    feed_dict,
                    pipeline,
                    lambda feeds: original(self, fetches, feeds, options, run_metadata),
                )
            if final is None:
                raise located.with_traceback(error.__traceback__) from None
            _pending.setdefault(self, {})[pipeline] = located
            return final[0]

    run.__doc__ = original.__doc__
    run.__wrapped__ = original
    return run


def locating_make_callable(original):
    """`BaseSession.make_callable` whose callables name the bad record, as `run` does."""

    def make_callable(self, fetches, feed_list=None, accept_options=False):
        call = original(self, fetches, feed_list, accept_options)

        def located_call(*args, **kwargs):
            try:
                return call(*args, **kwargs)
            except tf.errors.CancelledError:
                interrupted_runs.raise_if_cancelled(self)
                raise
            except tf.errors.OpError as error:
                raise_located(self, fetches, error)
                raise

        return located_call

    make_callable.__doc__ = original.__doc__
    make_callable.__wrapped__ = original
    return make_callable
