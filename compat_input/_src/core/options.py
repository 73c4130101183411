"""Process-wide options, set with `compat_input.configure` before building pipelines."""

import dataclasses
import os
import re
from typing import Optional

from compat_input._src.core import errors

_BAD_RECORDS = ("raise", "skip")


@dataclasses.dataclass
class Options:
    # Save each pipeline's position with every checkpoint (a Saver built after it).
    save_input_position: bool = True
    # A pipeline whose buffers can hold more than this many MB (estimated at build) is left
    # out of checkpoints, as legacy's queues were; None: no limit (checkpoint/position_cost).
    input_position_max_mb: Optional[float] = 64.0
    # What a record that fails its per-example graph does: "raise" (legacy: the error ends
    # the input) or "skip" (dropped and counted; see compat_input.skipped_records).
    bad_records: str = "raise"
    # The tf.data service batchers read their examples through (runtime/data_service.py); None: the
    # environment's COMPAT_INPUT_SERVICE, "" none.
    service: Optional[str] = None
    # How long a trainer waits on a service whose job has no live worker (or whose
    # dispatcher is gone) before its reads fail, in seconds (runtime/data_service.py).
    service_timeout: float = 60.0
    # Where batches are copied ahead to (runtime/device_prefetch.py): "auto" (the first GPU, for
    # pipelines whose position is not saved), a device name, or None.
    input_device: Optional[str] = "auto"
    # Sampled runs time their reads' waits on the input (runtime/input_waits.py).
    input_waits: bool = True
    # Each batcher also writes `input_wait_share`: how much of the time between summaries
    # its reads waited for it (runtime/fill_levels.py).
    input_wait_summaries: bool = False


options = Options()

# The environment variable that names the service where `configure` did not.
SERVICE_ENVIRONMENT = "COMPAT_INPUT_SERVICE"


def chosen_service() -> Optional[str]:
    """The service batchers read through, as chosen: `configure`'s (checked there), else the
    environment's (unchecked: see data_service.address), else None."""
    if options.service is not None:
        return options.service or None
    return os.environ.get(SERVICE_ENVIRONMENT) or None


_UNSET = object()


def configure(
    save_input_position=None,
    bad_records=None,
    service=None,
    input_device=_UNSET,
    service_timeout=None,
    input_wait_summaries=None,
    input_waits=None,
    input_position_max_mb=_UNSET,
) -> Options:
    """Sets process-wide options for pipelines built from now on; returns them.

    Args:
      save_input_position: whether pipelines put their position in checkpoints. Turn it off
        to restore checkpoints written without positions through a plain Saver.
      bad_records: "raise" (default, as legacy: a malformed record raises its error from
        `sess.run`) or "skip" (the record is dropped, the pipeline goes on, and the count
        is readable with `compat_input.skipped_records(sess, tensors)`).
      service: a tf.data service dispatcher, "grpc://host:port" (`compat-input serve`
        starts one): batchers make their examples on its workers, and inputs with a
        `shared_name` are split between the trainers that read them. "" turns it off;
        unset, the COMPAT_INPUT_SERVICE environment variable is used.
      input_device: where batches are copied ahead to: "auto" (default: the first GPU when
        one is visible, for pipelines whose position is not saved in checkpoints), a device
        name such as "/gpu:0" (its pipelines are left out of checkpoints: tf.data cannot
        save a position copied to a device), or None (batches stay on the host).
      service_timeout: seconds a trainer's reads wait on the service while no worker of
        `compat-input serve` is alive (killed, not restarted) or its dispatcher is gone,
        before they fail naming the job, the address and the fix (default 60). A worker
        restarted within it lets the job go on.
      input_wait_summaries: each batcher built from now on also writes an
        `<batcher>/input_wait_share` scalar summary: the share of the time since the
        summary was last evaluated that its reads waited for input (run it every N steps
        with the program's other summaries; 0 means the model never waited).
      input_waits: whether reads time their waits on the input, for `compat-input run`'s
        report at exit and `input_wait_summaries` (default True). Under `install()`, one
        run every 5 ms of run time fetches the clocks of its reads, which no other run
        runs: no cost measured. With `input_wait_summaries` every read is timed in its
        step, about 5 microseconds a read.
      input_position_max_mb: a pipeline whose buffers can hold more than this many MB
        (default 64), estimated at build from its legacy capacity and its examples' shapes,
        is left out of checkpoints, as every legacy queue was: a shuffle buffer of 384,000
        records put 198 MB into each of skip_thoughts' checkpoints and about 16 s into
        each save. None saves every position, whatever its size.
    """
    if save_input_position is not None:
        options.save_input_position = bool(save_input_position)
    if bad_records is not None:
        if bad_records not in _BAD_RECORDS:
            raise ValueError(f"bad_records must be one of {_BAD_RECORDS}, got {bad_records!r}")
        options.bad_records = bad_records
    if service is not None:
        if not isinstance(service, str):
            raise TypeError(
                f"service must be a dispatcher address such as 'grpc://localhost:5050' (or '' "
                f"for none), got {service!r}"
            )
        options.service = service_address(service, "configure(service=...)") if service else ""
    if service_timeout is not None:
        if isinstance(service_timeout, bool) or not isinstance(service_timeout, (int, float)):
            raise TypeError(f"service_timeout must be a number of seconds, got {service_timeout!r}")
        if not service_timeout > 0:
            raise ValueError(
                f"service_timeout must be more than 0 seconds, got {service_timeout!r}"
            )
        options.service_timeout = float(service_timeout)
    if input_wait_summaries is not None:
        options.input_wait_summaries = bool(input_wait_summaries)
    if input_waits is not None:
        options.input_waits = bool(input_waits)
    if input_position_max_mb is not _UNSET:
        limit = input_position_max_mb
        if limit is not None and (
            isinstance(limit, bool) or not isinstance(limit, (int, float)) or not limit >= 0
        ):
            raise ValueError(
                "input_position_max_mb must be a number of megabytes (0 or more), or None for "
                f"no limit, got {limit!r}"
            )
        options.input_position_max_mb = None if limit is None else float(limit)
    if input_device is not _UNSET:
        if input_device is not None and not isinstance(input_device, str):
            raise TypeError(
                f"input_device must be 'auto', a device name such as '/gpu:0', or None, got "
                f"{input_device!r}"
            )
        options.input_device = input_device or None
    return options


_ADDRESS = re.compile(r"(?:grpc://)?(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):([0-9]{1,5})")


def service_address(value: str, where: str) -> str:
    """`value` as `grpc://host:port`, or a ValueError naming it, `where` it came from, and
    the form expected: an address that cannot be a dispatcher's (a comma copied with it, a
    missing port) would leave its trainers waiting on nothing."""
    match = _ADDRESS.fullmatch(value.strip())
    if match is None or not 0 < int(match.group(2)) < 65536:
        raise errors.ServiceAddressError(
            f"{where}: {value!r} is not a tf.data service dispatcher address: use "
            "'grpc://host:port' or 'host:port', as `compat-input serve` prints it (for "
            "example grpc://localhost:5050)."
        )
    return f"grpc://{match.group(1)}:{match.group(2)}"
