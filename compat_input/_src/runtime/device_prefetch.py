"""Batches copied ahead to an accelerator, so a training step never waits for the copy.

A batcher's pipeline ends in `prefetch_to_device`, its iterator on that device: batches
are in the GPU's memory before the step that reads them. tf.data cannot save the position
of an iterator that copies to a device (SerializeIterator: Unimplemented), so "auto" (the
default) copies ahead only pipelines whose position is not saved anyway; exact resuming
from checkpoints, a promise of compat_input, is not traded for speed behind the user's
back. A device named with `configure(input_device=...)` copies every batcher's pipeline,
and those are left out of checkpoints, with a warning.
"""

from typing import Optional

import tensorflow as tf

from compat_input._src.core.options import options

# Batches held on the device: one being read, one arriving.
_AHEAD = 2


def target(position_saved: bool) -> Optional[str]:
    """The device a batcher's pipeline copies its batches to, or None."""
    chosen = options.input_device
    if chosen != "auto":
        return chosen
    if position_saved or not tf.config.list_physical_devices("GPU"):
        return None
    return "/gpu:0"


def copy_ahead(dataset: tf.data.Dataset, device: str) -> tf.data.Dataset:
    return dataset.apply(tf.data.experimental.prefetch_to_device(device, _AHEAD))
