"""Process-wide options, set with `compat_input.configure` before building pipelines."""

import dataclasses

_BAD_RECORDS = ("raise", "skip")


@dataclasses.dataclass
class Options:
    # Save each pipeline's position with every checkpoint (a Saver built after it).
    save_input_position: bool = True
    # What a record that fails its per-example graph does: "raise" (legacy: the error ends
    # the input) or "skip" (dropped and counted; see compat_input.skipped_records).
    bad_records: str = "raise"


options = Options()


def configure(save_input_position=None, bad_records=None) -> Options:
    """Sets process-wide options for pipelines built from now on; returns them.

    Args:
      save_input_position: whether pipelines put their position in checkpoints. Turn it off
        to restore checkpoints written without positions through a plain Saver.
      bad_records: "raise" (default, as legacy: a malformed record raises its error from
        `sess.run`) or "skip" (the record is dropped, the pipeline goes on, and the count
        is readable with `compat_input.skipped_records(sess, tensors)`).
    """
    if save_input_position is not None:
        options.save_input_position = bool(save_input_position)
    if bad_records is not None:
        if bad_records not in _BAD_RECORDS:
            raise ValueError(f"bad_records must be one of {_BAD_RECORDS}, got {bad_records!r}")
        options.bad_records = bad_records
    return options
