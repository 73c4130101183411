"""The programs of the product's origin, unchanged, give the same output on compat_input.

Each example in examples/ is unmodified TF1 text. It runs three ways, each in its own
process: on TensorFlow's own queues (`compat-input run --legacy`, the oracle), through
`compat-input run`, and in its `tf_upgrade_v2` form under plain python with
`compat_input.install()`.
"""

import os
import subprocess
import sys

import pytest
from tensorflow.tools.compatibility import ast_edits
from tensorflow.tools.compatibility import tf_upgrade_v2

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = [
    "csv_batch",
    "ptb_producer",
    "tfrecord_join",
    "preloaded",
    "simple_shuffle_batch",
    "slim_train",
]
ENV = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")


def _run(args):
    done = subprocess.run(args, capture_output=True, text=True, env=ENV, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout, done.stderr


def _run_script(*args, **env) -> subprocess.CompletedProcess:
    """`compat-input run [--legacy] SCRIPT ARGS`, whatever its exit status; `env` is added
    to the environment."""
    command = [sys.executable, "-m", "compat_input._src.commands.cli", "run", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, env={**ENV, **env}, timeout=120)


def _ran(script, code: str, *mode) -> subprocess.CompletedProcess:
    """Writes `code` to `script` and runs it (`compat-input run [--legacy]`): it succeeds."""
    script.write_text(code)
    done = _run_script(*mode, script)
    assert done.returncode == 0, done.stderr[-2000:]
    return done


def _cli(*args):
    return _run([sys.executable, "-m", "compat_input._src.commands.cli", "run", *args])


@pytest.fixture(scope="module")
def legacy_outputs():
    return {name: _cli("--legacy", f"examples/{name}.py")[0] for name in EXAMPLES}


@pytest.mark.parametrize("name", EXAMPLES)
def test_compat_input_run_prints_what_legacy_queues_print(name, legacy_outputs):
    stdout, stderr = _cli(f"examples/{name}.py")
    assert stdout == legacy_outputs[name]
    assert stdout.strip()
    assert "compat-input: served the input with" in stderr
    assert "with 0 tf.data" not in stderr
    # No warning a user sees comes from compat_input's own calls (TensorFlow's deprecation
    # warnings name the file that called: ours once said hand_built_queues.py:47).
    assert os.path.join("compat_input", "_src") not in stderr, stderr[-3000:]


def _launch(script, install):
    setup = "import compat_input; compat_input.install(); " if install else ""
    launcher = (
        "import runpy, tensorflow as tf; tf.compat.v1.disable_eager_execution(); "
        f"{setup}from compat_input._src.runtime import pipeline; "
        f"runpy.run_path({str(script)!r}, run_name='__main__'); "
        "print('pipelines', bool(pipeline.built_pipelines))"
    )
    return subprocess.run(
        [sys.executable, "-c", launcher], capture_output=True, text=True, env=ENV, timeout=300
    )


@pytest.mark.parametrize("name", EXAMPLES)
def test_tf_upgrade_v2_form_behaves_on_install_as_on_legacy_queues(name, tmp_path):
    upgraded = tmp_path / f"{name}.py"
    upgrader = ast_edits.ASTCodeUpgrader(tf_upgrade_v2.TFAPIChangeSpec())
    upgrader.process_file(os.path.join(ROOT, "examples", f"{name}.py"), str(upgraded))
    assert "tf.compat.v1.train" in upgraded.read_text()
    legacy, ours = _launch(upgraded, install=False), _launch(upgraded, install=True)
    assert ours.returncode == legacy.returncode
    if legacy.returncode == 0:
        assert legacy.stdout.endswith("pipelines False\n")
        assert ours.stdout == legacy.stdout.replace("pipelines False", "pipelines True")
    else:
        # preloaded.py: tf_upgrade_v2 turns tf.Variable(..., collections=[]) into a TF2
        # variable that global_variables_initializer() must feed, so the upgraded program
        # fails before its input starts, on legacy queues and on ours alike.
        assert name == "preloaded"
        last = lambda p: p.stderr.strip().splitlines()[-1].split(":")[0]  # noqa: E731
        assert last(ours) == last(legacy)


def test_run_keeps_argv_main_and_exit_status(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(
        "import sys, tensorflow as tf\n"
        "print(__name__, sys.argv[1:], hasattr(tf, 'Session'))\n"
        "sys.exit(3)\n"
    )
    done = _run_script(script, "a", "--b")
    assert done.returncode == 3
    assert done.stdout.strip() == "__main__ ['a', '--b'] True"


@pytest.mark.parametrize("mode", [[], ["--legacy"]])
def test_run_gives_tf1_programs_the_log_flush_tensorflow_2_only_raises(tmp_path, mode):
    # tensorflow/models' video_prediction trainer ends with tf.logging.flush(), after its
    # last checkpoint: TensorFlow 2 raised NotImplementedError there, the exit status 1.
    code = (
        "import tensorflow as tf\n"
        "tf.logging.set_verbosity(tf.logging.INFO)\n"
        "tf.logging.info('Training complete')\n"
        "tf.logging.flush()\n"
        "print('flushed')\n"
    )
    done = _ran(tmp_path / "prog.py", code, *mode)
    assert done.stdout.strip() == "flushed"
    assert "Training complete" in done.stderr


@pytest.mark.parametrize("mode", [[], ["--legacy"]])
def test_run_keeps_a_flag_default_of_another_type_as_tensorflow_1_did(tmp_path, mode):
    # research/attention_ocr: `DEFINE_string('momentum', 0.9, ...)`, used as a float. absl
    # refused the default (IllegalFlagValueError) as the program imported its flags; its
    # argparse flags of TensorFlow 1.0-1.4 kept it, and converted only the command line's.
    code = (
        "import tensorflow as tf\n"
        "from tensorflow.python.platform import flags\n"
        "flags.DEFINE_string('momentum', 0.9, 'a float, as the program uses it')\n"
        "tf.app.flags.DEFINE_integer('steps', 1e3, 'a float default')\n"
        "tf.flags.DEFINE_float('rate', 0.5, 'as absl takes it', lower_bound=0.0)\n"
        "flags.DEFINE_string('name', 'x', 'as absl takes it')\n"
        "FLAGS = flags.FLAGS\n"
        "print(repr(FLAGS.momentum), repr(FLAGS.steps), repr(FLAGS.rate), repr(FLAGS.name))\n"
    )
    done = _ran(tmp_path / "prog.py", code, *mode)
    assert done.stdout.strip() == "0.9 1000.0 0.5 'x'", done.stderr[-2000:]
    given = _run_script(*mode, tmp_path / "prog.py", "--momentum=0.5", "--steps=7", "--rate=2")
    assert given.stdout.strip() == "'0.5' 7 2.0 'x'", given.stderr[-2000:]
    # A value absl refuses is still refused: a bound, given or as the default.
    refused = _run_script(*mode, tmp_path / "prog.py", "--rate=-1")
    assert refused.returncode != 0 and "rate" in refused.stderr
    (tmp_path / "bound.py").write_text(
        "import tensorflow as tf\n"
        "tf.flags.DEFINE_integer('steps', 5, 'out of its bounds', lower_bound=10)\n"
    )
    bound = _run_script(*mode, tmp_path / "bound.py")
    assert bound.returncode != 0 and "IllegalFlagValueError" in bound.stderr, bound.stderr[-2000:]


def test_without_install_a_flag_default_of_another_type_is_refused_as_absl_refuses_it():
    import absl.flags
    import tensorflow as tf

    with pytest.raises(absl.flags.IllegalFlagValueError):
        tf.compat.v1.flags.DEFINE_string(
            "compat_input_test_momentum", 0.9, "", flag_values=absl.flags.FlagValues()
        )


@pytest.mark.parametrize("mode", [[], ["--legacy"]])
def test_run_takes_integral_float_dimensions_as_tensorflow_1_did(tmp_path, mode):
    # lhzhong/TFCode's VGG16 (Python 3) sizes its weights `input_channels / groups`: 3.0,
    # which TensorFlow 2's Dimension refuses (TypeError) before the first step.
    code = (
        "import tensorflow as tf\n"
        "x = tf.placeholder(tf.float32, [None, 8, 8, 3])\n"
        "channels = int(x.get_shape()[-1])\n"
        "w = tf.get_variable('w', shape=[3, 3, channels / 1, 16])\n"
        "print(w.shape.as_list(), tf.TensorShape([None, 6 / 2]).as_list())\n"
        "try:\n"
        "    tf.TensorShape([2.5])\n"
        "except ValueError as error:\n"
        "    print(error)\n"
    )
    done = _ran(tmp_path / "prog.py", code, *mode)
    assert done.stdout.splitlines() == ["[3, 3, 3, 16] [None, 3]", "Ambiguous dimension: 2.5"]


@pytest.mark.parametrize("mode", [[], ["--legacy"]])
def test_run_leaves_tensorflows_modules_out_of_the_collectors_scans(tmp_path, mode):
    # What the program imports itself, and what it makes, are collected as ever.
    code = (
        "import gc, sys, tensorflow as tf\n"
        "frozen = gc.get_freeze_count()\n"
        "class Cycle: pass\n"
        "a, b = Cycle(), Cycle(); a.b, b.a = b, a; del a, b\n"
        "print(frozen > 100000, 'tensorflow' in sys.modules, gc.collect() >= 2)\n"
    )
    done = _ran(tmp_path / "prog.py", code, *mode)
    assert done.stdout.strip() == "True True True"


def test_run_serves_tf1_to_the_programs_own_modules_only(tmp_path):
    # The program's code: modules beside the script, and a package of its own reached
    # through PYTHONPATH or sys.path (im2txt's `from im2txt.ops import image_embedding`,
    # `tools/train.py` beside `lib/`), whose `tf.contrib.slim` failed on TensorFlow 2's
    # module. Installed libraries get TensorFlow 2's, even from a site directory inside
    # the program's own (a virtual environment kept in the project).
    probe = (
        "import tensorflow as tf\nHAS_TF1 = hasattr(tf, 'Session') and hasattr(tf.train, 'batch')\n"
    )
    (tmp_path / "helper_mod.py").write_text(probe)
    (tmp_path / "lib" / "ownpkg").mkdir(parents=True)
    (tmp_path / "lib" / "ownpkg" / "__init__.py").write_text(probe)
    site = tmp_path / "venv" / "lib" / "site-packages"
    site.mkdir(parents=True)
    (site / "installed_lib.py").write_text(probe)
    code = (
        "import os, sys\n"
        "sys.path.insert(0, os.path.join(os.path.dirname(__file__), 'lib'))\n"
        "import helper_mod, ownpkg, installed_lib, tensorflow as tf, tensorflow_datasets\n"
        "import compat_input._src.batchers.batching as b\n"
        "print(helper_mod.HAS_TF1, ownpkg.HAS_TF1, installed_lib.HAS_TF1)\n"
        "print(tf.train.batch is b.batch, b.tf is not tf)\n"
    )
    (tmp_path / "main.py").write_text(code)
    done = _run_script(tmp_path / "main.py", PYTHONPATH=str(site))
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == ["True True False", "True True"]


@pytest.mark.parametrize("mode", [[], ["--legacy"]])
def test_run_builds_tf_slim_batch_norm_contrib_layers_modules_and_rnn_cells(tmp_path, mode):
    # im2txt (tensorflow/models) on TensorFlow 2.21: tf_slim's batch_norm loads
    # TensorFlow's layer from a tf_keras path tf_keras 2.21 moved (ModuleNotFoundError),
    # `tf.contrib.layers.summaries` was no name of the stand-in, and tf.contrib.rnn's cells
    # need Keras 2, which `compat-input run` now chooses where tf_keras is installed.
    code = (
        "import tensorflow as tf\n"
        "slim = tf.contrib.slim\n"
        "y = slim.batch_norm(tf.ones([2, 4, 4, 3]), is_training=True)\n"
        "tf.contrib.layers.summaries.summarize_activation(y)\n"
        "cell = tf.contrib.rnn.BasicLSTMCell(4)\n"
        "out, _ = tf.nn.dynamic_rnn(cell, tf.ones([2, 3, 5]), dtype=tf.float32)\n"
        "mean = [v for v in tf.global_variables() if 'moving_mean' in v.name][0]\n"
        "with tf.Session() as sess:\n"
        "    sess.run(tf.global_variables_initializer())\n"
        "    sess.run(tf.get_collection(tf.GraphKeys.UPDATE_OPS))\n"
        "    print([round(float(m), 6) for m in sess.run(mean)], sess.run(out).shape)\n"
        "print(len(tf.get_collection(tf.GraphKeys.SUMMARIES)))\n"
    )
    done = _ran(tmp_path / "prog.py", code, *mode)
    assert done.stdout.splitlines() == ["[0.001, 0.001, 0.001] (2, 3, 4)", "1"]


def test_validation_every_k_steps_under_compat_input_run():
    stdout, _ = _cli("examples/validation_every_k.py")
    lines = stdout.splitlines()
    assert lines[0] == "supervisor is compat_input's: True"
    passes = [line for line in lines if line.startswith("step ")]
    assert [p.split(" mse")[0] for p in passes] == [
        f"step {k} validation batches [4, 4, 2]" for k in (20, 40, 60)
    ]


def test_install_serves_and_uninstall_restores_tensorflows_names():
    code = (
        "import tensorflow as tf, compat_input\n"
        "legacy = tf.compat.v1.train.batch\n"
        "compat_input.install()\n"
        "assert tf.compat.v1.train.batch is compat_input.batch\n"
        "assert tf.compat.v1.TFRecordReader is compat_input.TFRecordReader\n"
        "assert tf.compat.v1.train.Supervisor is compat_input.Supervisor\n"
        "assert tf.compat.v1.train.queue_runner.start_queue_runners is compat_input.start_queue_runners\n"
        "compat_input.uninstall()\n"
        "assert tf.compat.v1.train.batch is legacy\n"
        "print('ok')\n"
    )
    stdout, _ = _run([sys.executable, "-c", code])
    assert stdout.strip() == "ok"


def test_run_says_which_package_a_program_of_tf1_layers_needs(tmp_path):
    script = tmp_path / "model.py"
    script.write_text("import tensorflow as tf\nh = tf.layers.dense(tf.zeros([1, 2]), 3)\n")
    # Keras 3 chosen by the environment (`compat-input run` chooses Keras 2 where tf_keras
    # is installed, as it is here).
    done = _run_script(script, TF_USE_LEGACY_KERAS="0")
    assert done.returncode == 1
    last = done.stderr.strip().splitlines()
    assert "AttributeError: `dense` is not available with Keras 3." in last
    hint = next(line for line in last if line.startswith("compat-input run: this program"))
    assert "compat-input[keras2]" in hint and "TF_USE_LEGACY_KERAS=1" in hint


@pytest.mark.parametrize(
    "header",
    [
        "import tensorflow.compat.v1 as tf\n",
        # tf_upgrade_v2's spelling, `tf.compat.v1.TextLineReader`: where `compat-input run`
        # makes `import tensorflow` the v1 module, that is v1.compat.v1, a module of its own.
        "import tensorflow as tf2\ntf = tf2.compat.v1\n",
    ],
)
def test_run_serves_a_program_that_imports_tensorflow_compat_v1_itself(tmp_path, header):
    # Imported after install(), `tensorflow.compat.v1` was loaded again, unpatched: the
    # program got TensorFlow's reader and failed on compat_input's producer.
    rows = tmp_path / "rows.csv"
    rows.write_text("".join(f"{i},{i % 2}\n" for i in range(12)))
    script = tmp_path / "half_migrated.py"
    script.write_text(
        header + "tf.disable_v2_behavior()\n"
        f"queue = tf.train.string_input_producer([{str(rows)!r}], num_epochs=1, shuffle=False)\n"
        "_, line = tf.TextLineReader().read(queue)\n"
        "a, b = tf.decode_csv(line, [[0], [0]])\n"
        "batch = tf.train.batch([a, b], 4)\n"
        "with tf.Session() as sess:\n"
        "    sess.run(tf.local_variables_initializer())\n"
        "    coord = tf.train.Coordinator()\n"
        "    threads = tf.train.start_queue_runners(sess, coord)\n"
        "    for _ in range(3):\n"
        "        print(sess.run(batch)[0].tolist())\n"
        "    coord.request_stop()\n"
        # Joined: legacy's runner threads left running at exit can abort the process
        # ("FATAL: exception not rethrown", once in a suite run here).
        "    coord.join(threads)\n"
        "print(type(tf.TextLineReader()).__module__)\n"
    )
    legacy, _ = _cli("--legacy", str(script))
    stdout, stderr = _cli(str(script))
    assert (
        stdout.splitlines()[:3]
        == legacy.splitlines()[:3]
        == [
            "[0, 1, 2, 3]",
            "[4, 5, 6, 7]",
            "[8, 9, 10, 11]",
        ]
    )
    assert stdout.splitlines()[3] == "compat_input._src.inputs.readers"
    assert "with 0 tf.data" not in stderr
