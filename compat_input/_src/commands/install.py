"""install(): the one switch that changes TensorFlow, from one table that uninstall() undoes.

Importing compat_input changes nothing in TensorFlow. `install()` (and `compat-input run`,
which calls it) applies every row of `PATCHES`, recording what each attribute was
(core/patching.py); `uninstall()` puts every one back exactly, inherited attributes
included. Two kinds of row:

- served names: a program converted by `tf_upgrade_v2` spells the queue API
  `tf.compat.v1.train.batch`, `tf.compat.v1.TextLineReader`, ...; installing serves those
  attributes of TensorFlow's `compat.v1` modules from compat_input;
- hooks, only where no design without one exists: naming the bad record in an error raised
  by `Session.run` (or a `make_callable` callable) needs the error after the fact, and a
  Saver built after the input must still restore a checkpoint written by legacy code,
  which holds no input position; a session's options can only be given as it is made,
  and in TF1 behaviour each session leaves out Grappler's TFG round trip, which changes
  no value there and costs in proportion to the function library that pipelines fill
  (runtime/session_options.py); and, only with `install(record_batches=PATH)`, the
  batches each `Session.run` reads (`compat-input compare --batches`), on legacy queues
  too (`serve=False`).

Code that calls `compat_input.batch` and friends directly gets the same results without
`install()`; only those two extras need it (README, "What needs install()").
"""

import sys
from collections.abc import Callable
from typing import Any
from typing import Optional

import tensorflow as tf
from absl import flags as absl_flags

from compat_input._src.bad_records import located_errors
from compat_input._src.commands import batch_records
from compat_input._src.commands import contrib
from compat_input._src.commands import tf1_gaps
from compat_input._src.commands.served_names import SERVED
from compat_input._src.commands.served_names import SERVED_IN_API
from compat_input._src.commands.served_names import SERVED_IN_MODULES
from compat_input._src.core import patching
from compat_input._src.core import tf_internals
from compat_input._src.core.patching import Patch
from compat_input._src.core.tf_internals import saver_lib
from compat_input._src.core.tf_internals import session_lib
from compat_input._src.runtime import checkpoint
from compat_input._src.runtime import graph_files
from compat_input._src.runtime import input_waits
from compat_input._src.runtime import restoring
from compat_input._src.runtime import session_close
from compat_input._src.runtime import session_options


def _tf_attribute(path: str) -> Any:
    """`tf.<path>`, looked up now (TensorFlow's API modules load their names lazily)."""
    value = tf
    for part in filter(None, path.split(".")):
        value = getattr(value, part)
    return value


def _tf1_module(path: str) -> Callable[[], Any]:
    return lambda: _tf_attribute(f"compat.v1.{path}")


def _module(path: str) -> Callable[[], Any]:
    return lambda: tf_internals.legacy_module(path)


def _served(name: str) -> Callable[[Any], Any]:
    import compat_input

    return lambda original: getattr(compat_input, name)


PATCHES = tuple(
    Patch(_tf1_module(path), name, _served(name), "serve the legacy name")
    for path, names in SERVED
    for name in names
) + (
    # `tf.compat.v1.compat.v1` is a module of its own (its submodules are shared): where
    # `compat-input run` gives a script's `import tensorflow` the v1 module, the reader it
    # spelled `tf.compat.v1.TFRecordReader` (tf_upgrade_v2's spelling) was TensorFlow's.
    *(
        Patch(_tf1_module("compat.v1"), name, _served(name), "serve the legacy name")
        for path, names in SERVED
        if path == ""
        for name in names
    ),
    *(
        Patch(_module(path), name, _served(name), "serve the name where libraries import it")
        for path, names in SERVED_IN_MODULES
        for name in names
    ),
    *(
        Patch(lambda path=path: _tf_attribute(path), name, _served(name), "serve the name")
        for path, names in SERVED_IN_API
        for name in names
    ),
    Patch(
        lambda: session_lib.BaseSession,
        "run",
        located_errors.locating_run,
        "errors from a pipeline name the bad record",
    ),
    Patch(
        lambda: session_lib.BaseSession,
        "run",
        input_waits.timed_run,
        "the time runs take, for the input waits `compat-input run` reports at exit",
    ),
    Patch(
        lambda: session_lib.BaseSession,
        "make_callable",
        input_waits.timed_make_callable,
        "the time callables' runs take too",
    ),
    Patch(
        lambda: session_lib.BaseSession,
        "make_callable",
        located_errors.locating_make_callable,
        "errors from Session.make_callable callables name the bad record too",
    ),
    Patch(
        lambda: session_lib.BaseSession,
        "close",
        session_close.closing_queues_first,
        "a session closes the queues its pipelines wait on first (TensorFlow crashed closing it)",
    ),
    Patch(
        lambda: session_lib.BaseSession,
        "__init__",
        session_options.without_tfg_round_trip,
        "sessions skip Grappler's TFG round trip, a cost in proportion to the function library",
    ),
    Patch(
        lambda: tf.compat.v1.train.CheckpointSaverHook,
        "after_create_session",
        graph_files.hook_writing_on_its_thread,
        "MonitoredTrainingSession's saver hook writes the graph files in a thread of their own",
    ),
    Patch(
        lambda: tf.compat.v1.train.CheckpointSaverHook,
        "end",
        graph_files.hook_end_waiting,
        "the saver hook's end waits for those files and raises their error",
    ),
    Patch(
        lambda: saver_lib.Saver,
        "restore",
        restoring.tolerant_restore,
        "a Saver built after the input restores checkpoints written without positions",
    ),
    Patch(
        lambda: saver_lib.Saver,
        "save",
        checkpoint.noting_save,
        "the last checkpoint with input positions is noted, for what they cost, said at exit",
    ),
    # `import tensorflow.compat.v1 as tf` (not yet imported so) loads that module a second
    # time, as a new object put in place of `tf.compat.v1`: a program importing it after
    # install() got TensorFlow's readers. Registered under their import names, the modules
    # install() patched are what every spelling reaches.
    *(
        Patch(
            lambda: sys.modules,
            f"tensorflow.{path}",
            lambda original, path=path: original or _tf_attribute(path),
            "`import tensorflow.compat.v1` reaches the patched module",
            item=True,
        )
        for path in ("compat", "compat.v1")
    ),
    # tf.contrib where TF1 programs reach it (contrib.py): `tf.contrib.X` on the v1 module
    # a TF1 program calls `tf`, and `import tensorflow.contrib.X`.
    # Applied with serve=False too (`compat-input run --legacy`): an option that is on.
    Patch(
        _tf1_module(""),
        "contrib",
        lambda on: lambda original: contrib.ContribModule("tensorflow.contrib", on == "served"),
        "tf.contrib's names with a one-to-one home",
        option="contrib",
    ),
    *(
        Patch(
            lambda: sys.modules,
            name,
            lambda on, name=name: lambda original: contrib.ContribModule(name, on == "served"),
            "`import tensorflow.contrib.X` reaches the stand-in",
            option="contrib",
            item=True,
        )
        for name in ["tensorflow.contrib"] + [f"tensorflow.contrib.{p}" for p in contrib.PACKAGES]
    ),
    *(
        Patch(
            lambda: sys.modules,
            f"tensorflow.contrib.{path}",
            lambda on, path=path, home=home: (
                lambda original: contrib.InternalModule(f"tensorflow.contrib.{path}", home)
            ),
            "contrib's own module paths reach tf_slim's modules of the same code",
            option="contrib",
            item=True,
        )
        for path, home in contrib.INTERNAL_MODULES.items()
    ),
    # TensorFlow internals that tf_slim 1.1.0 reaches where they were (tf1_gaps.MOVED):
    # given back only where missing, on legacy queues too (serve=False: an option that is
    # always on), as a program on them reaches tf_slim alike.
    *(
        Patch(
            _module(path),
            name,
            lambda on, home=home, home_name=home_name: (
                lambda original: (
                    original
                    if original is not None
                    else getattr(tf_internals.legacy_module(home), home_name)
                )
            ),
            "tf_slim 1.1.0 reaches it where TensorFlow had it before 2.16",
            option="moved_internals",
        )
        for path, name, home, home_name in tf1_gaps.MOVED
    ),
    # What TensorFlow 1 did that TensorFlow 2's compat.v1 refuses (tf1_gaps.py), given back
    # on legacy queues too (serve=False: an option that is always on).
    Patch(
        _tf1_module("logging"),
        "flush",
        lambda on: lambda original: tf1_gaps.flush,
        "tf.compat.v1.logging.flush flushes, as TensorFlow 1's did (TensorFlow 2's raises)",
        option="tf1_gaps",
    ),
    Patch(
        lambda: tf.compat.v1.Dimension,
        "__init__",
        lambda on: tf1_gaps.dimension_init,
        "a shape dimension may be an integral float (3.0), as TensorFlow 1's could",
        option="tf1_gaps",
    ),
    *(
        Patch(
            _tf1_module("flags"),
            f"DEFINE_{kind}",
            lambda on, parser=parser, types=types: tf1_gaps.flag_keeping_default(parser, types),
            f"a {kind} flag keeps a default of another type, as TensorFlow 1.0-1.4's did",
            option="tf1_gaps",
        )
        for kind, parser, types in (
            ("string", absl_flags.ArgumentParser, ()),
            ("integer", absl_flags.IntegerParser, (int,)),
            ("float", absl_flags.FloatParser, (int, float)),
        )
    ),
    Patch(
        _module("layers.normalization"),
        "normalization",
        lambda on: tf1_gaps.keras_2_normalization,
        "tf_slim's batch_norm finds tf_keras 2.21's layers (TensorFlow 2.21 looks elsewhere)",
        option="tf1_gaps",
    ),
    Patch(
        lambda: session_lib.BaseSession,
        "run",
        batch_records.recording_run,
        "compat-input compare --batches: fingerprints of the batches each run reads",
        option="record_batches",
    ),
)


def install(record_batches: Optional[str] = None, serve: bool = True) -> None:
    """Serves the `tf.compat.v1` queue-input names from compat_input and installs the
    hooks of `PATCHES` (idempotent); `uninstall()` undoes all of it.

    `record_batches=PATH` also writes a fingerprint of every input batch the program
    reads to PATH (batch_records.py); `serve=False` installs that and the tf.contrib
    stand-in alone, for a program on legacy queues (`compat-input run --legacy`,
    `compat-input compare --batches`).
    """
    # tf.contrib's stand-in either way; contrib.training's batchers only where served.
    stand_in = "served" if serve else "legacy"
    given = {
        "record_batches": record_batches,
        "contrib": stand_in,
        "moved_internals": True,
        "tf1_gaps": True,
    }
    patching.apply(PATCHES, given, serve)


def uninstall() -> None:
    """Restores every attribute `install()` replaced, exactly as it was."""
    patching.undo()
