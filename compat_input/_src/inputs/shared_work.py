"""Readers over one producer share its work items, as legacy readers shared their queue.

Readers each read directly (tf_slim's ParallelReader: several readers enqueueing into one
common queue by a QueueRunner) took their work items from one filename queue: each file
went to exactly one reader. A reader reading every file itself delivers every record once
per reader. (Readers that only batchers read are joined there: capture/joins.py.)
"""

import logging

from compat_input._src.core import tf_internals
from compat_input._src.runtime import pipeline as pipeline_lib

logger = logging.getLogger("compat_input")


def share(reader: pipeline_lib.Pipeline) -> None:
    """Registers `reader`, a reader's own pipeline, with its producer; from the second
    reader on, every one of them takes its work items from the producer's own pipeline.

    A single reader keeps its own stream over the producer's items (the common case, which
    costs no op more). When a second reader of the producer is made, every one of them is
    switched to the producer's own pipeline: its options op (the one op between its dataset
    and its iterator) is rewired, so the ops already made to read, start and checkpoint it
    stay as they are. Each reader's start check then waits for the producer's own, which
    starts it on a first direct read where the input's start left it (graph_states.to_start:
    readers only batchers read, and so their producer, start on a direct read, if any).
    """
    work = reader.source.work_source
    if reader in work.direct_readers:
        return  # Read again: registered when its pipeline was made.
    work.direct_readers.append(reader)
    if len(work.direct_readers) < 2:
        return
    if pipeline_lib.graph_state(reader.resource.graph).sessions:
        logger.warning(
            "compat_input: reader '%s' was made after a session ran the graph; the readers "
            "of '%s' made before it each read every file of it.",
            reader.name,
            work.name,
        )
        return
    stream = work.make_pipeline()
    for other in work.direct_readers:
        if stream not in other.needs:
            shared = other.source.own_dataset(stream.resource)
            tf_internals.rewire_input(other.variant.op, 0, shared._variant_tensor)
            # On the check itself: the reads made before the switch wait for it too.
            tf_internals.add_control_input(other.guard, stream.guard)
            other.needs.append(stream)
