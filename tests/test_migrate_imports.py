"""The codemod on the import forms TF1 programs use (tools/imports.py): each form migrated,
what it binds checked against what the original bound on TensorFlow 1's API, and a program
of every form run both ways."""

import os
import subprocess
import sys

import pytest
from compat_input_tools import codemod
from compat_input_tools import imports
from compat_input_tools import migrate

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", PYTHONPATH=ROOT)


def _tf1(path: str):
    """What `tensorflow.<path>` was on TensorFlow 1: tf.compat.v1's object, in TF1 behaviour."""
    import tensorflow as tf

    found = tf.compat.v1
    for part in path.split("."):
        found = getattr(found, part)
    return found


# (the import as a TF1 program writes it, the name it binds, what that was on TF1's API)
FORMS = [
    ("from tensorflow import flags", "flags", "flags"),
    ("from tensorflow import logging", "logging", "logging"),
    ("from tensorflow import gfile", "gfile", "gfile"),
    ("from tensorflow import app", "app", "app"),
    ("from tensorflow import train", "train", "train"),
    ("from tensorflow import image", "image", "image"),
    ("from tensorflow import flags, logging as tflog", "tflog", "logging"),
    ("from tensorflow import gfile, train, nn", "nn", "nn"),
    ("from tensorflow import Session", "Session", "Session"),
    ("from tensorflow.train import AdamOptimizer", "AdamOptimizer", "train.AdamOptimizer"),
    ("from tensorflow.app import flags", "flags", "app.flags"),
    ("from tensorflow.python.platform import gfile", "gfile", "gfile"),
    ("from tensorflow.python.platform import flags", "flags", "flags"),
    ("from tensorflow.python.platform import tf_logging as logging", "logging", "logging"),
    ("from tensorflow.python.platform import tf_logging", "tf_logging", "logging"),
    ("import tensorflow.python.platform.gfile as gfile", "gfile", "gfile"),
]


def _migrated_imports(statement: str) -> str:
    outcome = codemod.migrate_source(f"import tensorflow as tf\n{statement}\nprint(1)\n")
    assert not [f for f in outcome.findings if f.flag.severity != "note"], outcome.findings
    return "\n".join(
        line for line in outcome.code.splitlines() if line.startswith(("import", "from"))
    )


@pytest.mark.parametrize("statement, bound, tf1", FORMS)
def test_each_import_form_migrates_to_a_name_that_exists(statement, bound, tf1):
    migrated = _migrated_imports(statement)
    assert "tensorflow.python" not in migrated  # Private modules move to public homes.
    assert migrated != f"import tensorflow as tf\n{statement}" or statement.startswith(
        "import tensorflow.compat.v1."
    )


def test_every_import_form_binds_what_tensorflow_1_bound():
    """Each migrated import, run in a fresh interpreter, binds the very object TF1's API
    had under that name (what tf.compat.v1 holds, looked up before any import ran: an
    import of a module path can load a package afresh)."""
    cases = [(_migrated_imports(s), bound, tf1) for s, bound, tf1 in FORMS]
    script = f"""
import tensorflow as tf
cases = {cases!r}
def tf1(path):
    found = tf.compat.v1
    for part in path.split("."):
        found = getattr(found, part)
    return found
expected = [tf1(path) for _, _, path in cases]
for index, ((code, bound, path), want) in enumerate(zip(cases, expected)):
    namespace = {{}}
    exec(code, namespace)
    print(index, namespace[bound] is want)
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=ENV, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split() == [str(w) for i in range(len(FORMS)) for w in (i, True)], [
        (FORMS[int(i)], ok) for i, ok in (line.split() for line in done.stdout.splitlines())
    ]


def test_private_modules_public_homes_hold_the_same_functions():
    """Every name a public home exports is the private module's own object (or, for
    tf.compat.v1.logging, the module tf_logging's), so no use of the import changes."""
    import importlib

    for private, public in imports.PRIVATE_HOMES.items():
        old = importlib.import_module(private)
        new = _tf1(public.removeprefix("tensorflow.compat.v1."))
        shared = [n for n in dir(new) if not n.startswith("_")]
        assert shared, public
        for name in shared:
            assert getattr(old, name) is getattr(new, name), (private, name)


def test_a_module_passed_as_a_value_is_tensorflow_1s():
    """`find_class_by_name(name, [tf.train])` (youtube-8m) looks the optimizer up on the
    module it is given: TensorFlow 2's tf.train has no AdamOptimizer."""
    outcome = codemod.migrate_source(
        "import tensorflow as tf\nmodules = [tf.train, tf.nn]\nopt = tf.train.AdamOptimizer\n"
    )
    namespace: dict = {}
    exec(outcome.code.replace("tf.compat.v1.disable_v2_behavior()", ""), namespace)  # noqa: S102
    assert namespace["modules"] == [_tf1("train"), _tf1("nn")]
    assert namespace["modules"][0].AdamOptimizer is namespace["opt"]


def test_names_gflags_had_become_absls():
    outcome = codemod.migrate_source(
        "from tensorflow import flags\nimport tensorflow as tf\n"
        "a = flags.FlagsError\nb = tf.flags.FlagsError\nc = tf.app.flags.FlagsError\n"
    )
    assert not [f for f in outcome.findings if f.flag.severity != "note"], outcome.findings
    lines = outcome.code.splitlines()
    assert [line.rpartition(".")[2] for line in lines if line[:4] in ("a = ", "b = ", "c = ")] == [
        "Error"
    ] * 3
    from absl import flags

    assert _tf1("flags.Error") is _tf1("app.flags.Error") is flags.Error


def test_contrib_modules_imported_by_name_keep_their_own_functions():
    """The upgrader rewrites `slim.l2_regularizer(s)` by its spelling alone, to a Keras
    regularizer of another scale and another loss op; tf_slim's is contrib's own."""
    outcome = codemod.migrate_source(
        "import tensorflow as tf\nimport tensorflow.contrib.slim as slim\n"
        "from tensorflow.contrib import layers as contrib_layers\n"
        "from tensorflow import contrib\n"
        "r = slim.l2_regularizer(0.5)\ni = contrib_layers.xavier_initializer()\n"
        "s = contrib.slim.arg_scope\n"
    )
    assert "keras" not in outcome.code
    assert "import tf_slim as slim" in outcome.code
    assert "from tensorflow import contrib" not in outcome.code  # Its one use moved.
    assert not [f for f in outcome.findings if f.flag.severity != "note"], outcome.findings


# A program of every form; it prints what each bound name gives it.
PROGRAM = """\
from tensorflow import flags
from tensorflow import logging
from tensorflow import gfile
from tensorflow import app
from tensorflow import train
from tensorflow.python.platform import tf_logging
import tensorflow as tf
import tensorflow.contrib.slim as slim

flags.DEFINE_integer("steps", 2, "steps")
tf.app.flags.DEFINE_string("word", "hello", "a word")
FLAGS = flags.FLAGS


def main(_):
    logging.set_verbosity(logging.INFO)
    tf_logging.info("info goes to stderr")
    print("exists", gfile.Exists(__file__), FLAGS.word, tf.flags.FLAGS.steps)
    names = train.string_input_producer(["a", "b", "c"], shuffle=False)
    batch = train.batch([names.dequeue()], batch_size=2)
    weight = tf.get_variable("w", [3], initializer=tf.constant_initializer(2.0))
    loss = tf.reduce_sum(weight * weight) + tf.losses.get_regularization_loss()
    penalty = slim.l2_regularizer(0.5)(weight)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        coord = train.Coordinator()
        threads = train.start_queue_runners(sess, coord)
        for _ in range(FLAGS.steps):
            print(sess.run(batch), sess.run([loss, penalty]))
        coord.request_stop()
        coord.join(threads)
    try:
        raise flags.FlagsError("bad flag")
    except flags.FlagsError as error:
        print("caught", error)


if __name__ == "__main__":
    app.run(main)
"""


def test_a_program_of_every_form_migrates_and_prints_what_legacy_printed(tmp_path):
    original = tmp_path / "original.py"
    original.write_text(PROGRAM)
    migrated = tmp_path / "migrated.py"
    migrated.write_text(PROGRAM)
    assert migrate.main(["--check", str(migrated)]) == 1  # Work to do...
    migrate.main([str(migrated)])
    assert migrate.main(["--check", str(migrated)]) == 0  # ...and none left for a person.

    def run(*command):
        return subprocess.run(
            [sys.executable, *command], capture_output=True, text=True, env=ENV, timeout=300
        )

    legacy = run("-m", "compat_input._src.commands.cli", "run", "--legacy", str(original))
    after = run(str(migrated), "--word=bye")
    assert after.returncode == 0, after.stderr[-3000:]
    legacy_bye = run(
        "-m", "compat_input._src.commands.cli", "run", "--legacy", str(original), "--word=bye"
    )
    # absl's FlagsError is gone on TensorFlow 2: legacy fails there, after its batches.
    assert "caught" not in legacy_bye.stdout and "caught bad flag" in after.stdout
    assert after.stdout.replace("caught bad flag\n", "") == legacy_bye.stdout
    assert "exists True hello 2" in legacy.stdout
    assert "info goes to stderr" in after.stderr
    assert [line[:6] for line in after.stdout.splitlines()[1:3]] == ["[b'a' ", "[b'c' "]


# TensorFlow's upgrader (pasta) cannot read `x[(a):(b), :]`, which Python reads
# (facenet's random crop): the file must be migrated all the same.
UNREADABLE = """\
import numpy as np
import tensorflow as tf

image = np.arange(48, dtype=np.float32).reshape(4, 4, 3)
crop = image[(1):(3), :]
x = tf.placeholder(tf.float32, [None, 3])
total = tf.reduce_sum(x, 1, keep_dims=True)
scaled = tf.to_float(tf.shape(x)[0]) * total
with tf.Session() as sess:
    print(sess.run(scaled, {x: crop[0]}))
    print(tf.flags.FLAGS.is_parsed(), tf.app.run.__name__)
"""


def test_a_file_the_upgrader_cannot_read_is_migrated_on_tf_compat_v1(tmp_path):
    from compat_input_tools import upgrader

    with pytest.raises(upgrader.Unreadable):
        upgrader.upgrade(UNREADABLE, "prog.py")
    outcome = codemod.migrate_source(UNREADABLE, "prog.py")
    assert [f.flag.code for f in outcome.findings] == ["CI019"]
    assert outcome.findings[0].flag.severity == "note"
    for name in ("placeholder", "reduce_sum", "to_float", "Session", "flags", "app"):
        assert f"tf.compat.v1.{name}" in outcome.code, name
    assert "(tf.float32," in outcome.code  # The same object in TensorFlow 2: kept.
    original = tmp_path / "original.py"
    original.write_text(UNREADABLE)
    migrated = tmp_path / "migrated.py"
    migrated.write_text(outcome.code)
    legacy = subprocess.run(
        [sys.executable, "-m", "compat_input._src.commands.cli", "run", "--legacy", str(original)],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=300,
    )
    after = subprocess.run(
        [sys.executable, str(migrated)], capture_output=True, text=True, env=ENV, timeout=300
    )
    assert after.returncode == 0, after.stderr[-3000:]
    assert after.stdout == legacy.stdout and "[[" in after.stdout


def test_a_file_that_fails_counts_as_needing_a_person(tmp_path, capsys):
    bad = tmp_path / "bad.py"
    bad.write_text("import tensorflow as tf\nx = (\n")
    assert migrate.main(["--check", str(bad)]) == 2
    assert "1 failed; 1 findings need a person" in capsys.readouterr().err
