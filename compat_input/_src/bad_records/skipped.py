"""Skipped records: what the inputs behind a batch left out under `bad_records="skip"`.

With `compat_input.configure(bad_records="skip")` a record whose example fails is dropped
(tf.data logs its error as it happens) and a reader leaves out the files it cannot open. These
functions count, in a running session, what the pipelines behind some tensors dropped, and
name the first record dropped, as an error would have named it (origins.py).
"""

from typing import Any
from typing import Optional

from compat_input._src.bad_records import origins as origins_lib
from compat_input._src.runtime import iteration


def skipped_records(sess, tensors: Any) -> int:
    """How many examples the pipelines behind `tensors` dropped under bad_records="skip".

    Each dropped example's error is also logged by tf.data as it happens.
    """
    counts = sess.run([p.skip_counts for p in _skipping("skipped_records", tensors)])
    return int(sum(entered - passed for entered, passed in counts))


def skipped_files(sess, tensors: Any) -> int:
    """How many files the readers behind `tensors` left out under bad_records="skip":
    missing, directories or unreadable when the reader was built (each logged then), or
    gone when it came to open them (each logged as it is skipped)."""
    readers = {
        id(r): r
        for p in iteration.pipelines_behind(tensors)
        for r in (p.origins.readers if p.origins is not None else [])
        if r.skipped_files is not None
    }
    if not readers:
        raise ValueError(
            "skipped_files: no reader behind these tensors was built with "
            'compat_input.configure(bad_records="skip").'
        )
    gone = sess.run([r.skipped_files for r in readers.values()])
    return sum(len(names) for names in gone) + sum(len(r.unusable) for r in readers.values())


def first_skipped_record(sess, tensors: Any) -> Optional[str]:
    """Where the first example dropped under bad_records="skip" came from, or None.

    A reader's record is named as `file:line`, `file at byte offset N` or `file, record
    N`; a producer's work item (a file name) as itself; anything else by its ordinal.
    """
    for pipe in _skipping("first_skipped_record", tensors):
        logs = pipe.origins.logs
        firsts = sess.run([log.first_skipped for log in logs])
        for log, first in zip(logs, firsts):
            if first:
                return origins_lib.describe(first.decode("utf-8", "replace"), log.kind, -1)
        # The last example of the input has no next one to find it skipped: the log has it.
        snapshots = sess.run([log.snapshot for log in logs])
        for log, snapshot in zip(logs, snapshots):
            found = log.last_failed(snapshot)
            if found:
                return found
    return None


def _skipping(what: str, tensors: Any) -> list:
    """The pipelines behind `tensors` built with bad_records="skip"; `what` names the caller
    in the error raised where there are none."""
    pipelines = [p for p in iteration.pipelines_behind(tensors) if getattr(p, "skip_counts", None)]
    if not pipelines:
        raise ValueError(
            f"{what}: no pipeline behind these tensors was built with "
            'compat_input.configure(bad_records="skip").'
        )
    return pipelines
