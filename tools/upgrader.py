"""Pass 1 of the codemod: TensorFlow's own tf_upgrade_v2, as a library, and which of its
messages become findings."""

import contextlib
import functools
import io
import re

from . import rules
from .findings import Finding


class Unreadable(Exception):
    """TensorFlow's upgrader could not read a file that Python reads."""


def upgrade(code: str, filename: str) -> tuple:
    """Pass 1: TensorFlow's own tf_upgrade_v2, as a library, on the rest of the TF1 API.

    Returns the new text and the upgrader's errors as findings; raises Unreadable where
    its parser fails.
    """
    from tensorflow.tools.compatibility import ast_edits

    upgrader = ast_edits.ASTCodeUpgrader(_spec_class()())
    try:
        with contextlib.redirect_stdout(io.StringIO()):  # It prints every rename.
            parsed, new_code, report, errors = upgrader.update_string_pasta(code, filename)
    except Exception as error:  # noqa: BLE001 - pasta fails in its own ways on valid code.
        raise Unreadable(f"{type(error).__name__}: {error}".splitlines()[0]) from error
    if not parsed:
        raise Unreadable("it could not parse the file")
    del errors  # The report holds them too, with every INFO and WARNING.
    found = []
    lines = code.splitlines()
    savers = set(_SAVER.findall(code))
    for entry in report:
        match = re.match(r"(\d+):(\d+): (INFO|WARNING|ERROR): (.*)", str(entry), re.S)
        if not match:
            continue
        line, column, level = int(match[1]), int(match[2]) + 1, match[3]
        flag = _upgrader_flag(level, " ".join(match[4].split()))
        if flag is None:
            continue
        if _KERAS_SAVE in flag.message and line <= len(lines):
            if "keras" not in code:
                continue  # A file that never names Keras makes no Keras model to save.
            called = re.match(r"([\w.]+)\.save\(", lines[line - 1][column - 1 :])
            if called and called[1] in savers:
                continue  # A tf.train.Saver's save: the note is about Keras models.
        found.append(Finding(line, column, flag))
    return new_code, found


@functools.cache
def _spec_class():
    """TensorFlow's upgrade tables, less the rows keyed by Google's own aliases of
    tf.contrib modules (`slim.l2_regularizer`, `contrib_layers.xavier_initializer`), which
    the upgrader applies to any name spelled so: pass 0 has moved tf.contrib's names to
    their homes already, and `slim` is then tf_slim, whose functions are contrib's own
    (the upgrader's Keras stand-ins compute other values). Rows keyed `tf.` or `*.` (a
    method of any object) stay. A class, not an instance: the upgrader builds its tables
    again (`clear_preprocessing` calls `__init__`) after every file."""
    from tensorflow.tools.compatibility import tf_upgrade_v2

    class Spec(tf_upgrade_v2.TFAPIChangeSpec):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            for name, table in vars(self).items():
                if isinstance(table, dict):
                    # A copy: some tables are TensorFlow's module-level dicts.
                    setattr(self, name, {k: v for k, v in table.items() if _ours(k)})

    return Spec


def _ours(key) -> bool:
    return not isinstance(key, str) or key.startswith(("tf.", "*."))


# The upgrader's note on every `*.save(...)` call, which concerns Keras models only; and
# the names a program assigns a `Saver(...)` to, whose saves it is not about.
_KERAS_SAVE = "*.save requires manual check"
_SAVER = re.compile(r"^\s*([\w.]+)\s*=\s*[\w.]*\bSaver\(", re.M)


# Upgrader notes on what pass 2 rewrites itself, or what disable_v2_behavior() settles.
_SETTLED = (
    "The TF 1.x summary API cannot be automatically migrated",  # rules.KEEP_V1_NAMES
    "returns ResourceVariables by default in 2.0",  # disable_v2_behavior() keeps TF1's
    # tf.flags becomes tf.compat.v1.flags (rules.KEEP_V1_NAMES), tf.app.flags the
    # upgrader's tf.compat.v1.app.flags: both exist, which the static check proves.
    "tf.flags and tf.app.flags have been removed",
)


def _upgrader_flag(level: str, message: str):
    """Every upgrader message that asks for a check becomes a finding; its "converted"
    claims are checked on the result instead (resolve.py)."""
    if any(settled in message for settled in _SETTLED):
        return None
    member = re.search(r"Using member tf\.([\w.]+) in deprecated module", message)
    name = f"tensorflow.{member.group(1)}" if member else None
    if name and (rules.keep_v1(name) or rules.moved(name) or name in rules.SERVED_CONTRIB):
        return None  # Rewritten (tf.contrib.rnn cells, contrib.training), checked by resolve.py.
    if level == "ERROR":
        return rules.Flag("CI000", "error", f"tf_upgrade_v2: {message}", "known-limits")
    if level == "WARNING":
        return rules.Flag("CI009", "warning", f"tf_upgrade_v2: {message}", "upgrader-messages")
    if "manual check" in message:
        return rules.Flag("CI010", "note", f"tf_upgrade_v2: {message}", "upgrader-messages")
    return None  # A plain rename: the static check proves the new name exists.
