"""The codemod (tools/): before/after for every table row, no-op cases, reports, modes."""

import os
import re
import subprocess
import sys
import textwrap

import pytest
from compat_input_tools import codemod
from compat_input_tools import migrate
from compat_input_tools import rules

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")


def tf_record_writer(path: str):
    import tensorflow as tf

    return tf.io.TFRecordWriter(path)


def _migrate(source: str) -> codemod.Outcome:
    return codemod.migrate_source(textwrap.dedent(source), "prog.py")


@pytest.mark.parametrize("qualified, name", sorted(rules.RENAMES.items()))
def test_every_rename_row_rewrites_its_spelling(qualified, name):
    spelling = "tf." + qualified.removeprefix("tensorflow.")
    out = _migrate(f"import tensorflow as tf\nx = {spelling}\n").code
    assert f"x = compat_input.{name}\n" in out
    assert "import compat_input\n" in out


def test_import_compat_v1_as_tf_spelling_is_served():
    out = _migrate(
        """\
        import tensorflow.compat.v1 as tf
        q = tf.train.string_input_producer(["a"])
        r = tf.TextLineReader()
        """
    ).code
    assert "compat_input.string_input_producer(" in out and "compat_input.TextLineReader()" in out
    assert "tf.disable_v2_behavior()" in out


def test_from_imports_and_other_aliases_are_served():
    out = _migrate(
        """\
        import tensorflow as tensor_flow
        from tensorflow.train import shuffle_batch as sb, Saver, AdamOptimizer
        b = sb([1], 2, 10, 5)
        q = tensor_flow.train.range_input_producer(3)
        """
    ).code
    assert "from compat_input import Saver, shuffle_batch as sb" in out
    # TensorFlow 2's tf.train has no AdamOptimizer: the import takes TF1's, where it lives
    # on; a Saver becomes compat_input's, which restores checkpoints without positions.
    assert "from tensorflow.compat.v1.train import AdamOptimizer" in out
    assert "b = sb([1], 2, 10, 5)" in out
    assert "q = compat_input.range_input_producer(3)" in out
    assert "tensor_flow.compat.v1.disable_v2_behavior()" in out  # Under its own alias.


def test_formatting_and_comments_are_preserved():
    source = """\
    import tensorflow as tf

    # The input.
    q = tf.train.string_input_producer(  # files
        ["a", "b"],
        shuffle=False)
    """
    out = _migrate(source).code
    assert (
        '# The input.\nq = compat_input.string_input_producer(  # files\n    ["a", "b"],\n    shuffle=False)\n'
        in out
    )


def test_graph_mode_is_switched_on_once_after_the_imports():
    out = _migrate(
        """\
        import os
        import tensorflow as tf
        x = tf.train.batch([1], 2)
        with tf.Session() as s:
            pass
        """
    ).code
    lines = out.splitlines()
    assert out.count("disable_v2_behavior") == 1
    assert lines.index("tf.compat.v1.disable_v2_behavior()") > lines.index("import compat_input")
    assert "tf.compat.v1.Session()" in out  # The rest of the TF1 API: TensorFlow's upgrader.


def test_variables_keep_v1_semantics():
    out = _migrate(
        "import tensorflow as tf\nv = tf.Variable(p, trainable=False, collections=[])\n"
        "lr = tf.Variable(0.0, trainable=False)\n"
    ).code
    assert "v = tf.compat.v1.Variable(p, trainable=False, collections=[])" in out
    assert "lr = tf.compat.v1.Variable(0.0, trainable=False)" in out


def test_contrib_rnn_cells_flags_and_logging_stay_on_v1():
    result = _migrate(
        "import tensorflow as tf\nflags = tf.flags\nlog = tf.logging\n"
        "cell = tf.contrib.rnn.BasicLSTMCell(8)\n"
        "state = tf.contrib.rnn.LSTMStateTuple(c, h)\n"
        "block = tf.contrib.rnn.LSTMBlockCell(8)\n"
        "scope = tf.get_variable_scope().reuse_variables()\n"
    )
    out = result.code
    assert "flags = tf.compat.v1.flags" in out
    assert "log = tf.compat.v1.logging" in out
    assert "cell = tf.compat.v1.nn.rnn_cell.BasicLSTMCell(8)" in out
    assert "state = tf.compat.v1.nn.rnn_cell.LSTMStateTuple(c, h)" in out
    reported = {(f.line, f.flag.code) for f in result.findings}
    # The block cell's call becomes LSTMCell's (test_lstm_block_cell_calls_become_...).
    assert "block = tf.compat.v1.nn.rnn_cell.LSTMCell(8)" in out
    assert not {code for line, code in reported if line == 6} - {"CI007"}
    # Nothing said of the rewritten lines but, at most, that they need Keras 2 (CI007);
    # nothing of an attribute of a call's result (line 7).
    assert not {code for line, code in reported if line in (2, 3, 4, 5, 7)} - {"CI007"}


# -- no-op cases ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "source",
    [
        # A shadowed `tf` is not TensorFlow (in a module that does not import it).
        "def f(tf):\n    return tf.train.batch([1], 2)\n",
        # A local name shadowing the TensorFlow alias inside a function.
        "import tensorflow as tf\ndef f():\n    tf = object()\n    return tf.train\n",
        # Already migrated.
        "import compat_input\nimport tensorflow as tf\ntf.compat.v1.disable_v2_behavior()\nb = compat_input.batch([1], 2)\n",
        # Not TensorFlow at all.
        "import mylib as tf\nb = tf.train.batch([1], 2)\n",
    ],
    ids=["shadowed", "shadowed-local", "already-migrated", "other-module"],
)
def test_no_op_cases_are_left_alone(source):
    assert _migrate(source).code == source


def test_migration_is_idempotent():
    source = open(os.path.join(ROOT, "examples", "tfrecord_join.py")).read()
    once = codemod.migrate_source(source, "x.py").code
    assert once != source
    assert codemod.migrate_source(once, "x.py").code == once


# -- what needs a person -------------------------------------------------------------------


@pytest.mark.parametrize(
    "line, code",
    [
        ("q = tf.FIFOQueue(3, tf.int32)", "CI001"),
        ("q = tf.queue.RandomShuffleQueue(3, 1, tf.int32)", "CI001"),
        ("x = tf.contrib.training.SequenceQueueingStateSaver(1)", "CI016"),
        ("x = tf.contrib.copy_graph.copy_op_to_graph(1)", "CI004"),
        ("x = tf.contrib.slim.prefetch_queue.prefetch_queue(1)", "CI012"),
        ("bs = tf.placeholder(tf.int32, [])\nb = tf.train.batch([1], bs)", "CI005"),
        ("b = tf.train.maybe_batch([1], True, batch_size=tf.placeholder(tf.int32))", "CI005"),
        ("q = tf.train.string_input_producer(['a'])\nn = q.size()", "CI006"),
        ("tf.app.flags.DEFINE_string('momentum', 0.9, 'a float')", "CI020"),
        ("tf.flags.DEFINE_integer('steps', default=1e6, help='a float')", "CI020"),
    ],
)
def test_each_flag_row_is_reported_with_file_line_and_anchor(line, code):
    findings = _migrate("import tensorflow as tf\n" + line + "\n").findings
    rendered = [f.render("prog.py") for f in findings]
    assert any(f"[{code}]" in r for r in rendered), rendered
    assert all(r.startswith("prog.py:") and "migration_guide.md#" in r for r in rendered)


def test_every_flag_anchor_exists_in_the_migration_guide():
    headings = [
        line[3:].strip()
        for line in open(os.path.join(ROOT, "migration_guide.md"))
        if line.startswith("## ")
    ]
    # GitHub's anchors: lower case, spaces to hyphens, other punctuation dropped.
    anchors = {
        "".join(c for c in h.lower().replace(" ", "-") if c.isalnum() or c in "-_")
        for h in headings
    }
    flags = list(rules.FLAGS.values()) + [
        rules.PLACEHOLDER_BATCH_SIZE,
        rules.QUEUE_SIZE,
        rules.FLAG_DEFAULT,
    ]
    for flag in flags:
        assert flag.anchor in anchors, flag.anchor


def test_flags_whose_defaults_absl_takes_are_not_flagged():
    source = """\
        import tensorflow as tf
        from tensorflow.python.platform import flags
        flags.DEFINE_string('momentum', 0.9, 'a float')
        tf.app.flags.DEFINE_string('name', 'x', 'a string')
        tf.app.flags.DEFINE_float('rate', 1, 'an integer, as absl takes it')
        tf.app.flags.DEFINE_integer('steps', -3, 'an integer')
        """
    findings = _migrate(source).findings
    assert [(f.line, f.flag.code) for f in findings] == [(3, "CI020")]


def test_constant_batch_size_is_not_flagged():
    assert _migrate("import tensorflow as tf\nb = tf.train.batch([1], 32)\n").findings == []


# -- files, modes, exit status -------------------------------------------------------------


def test_check_mode_writes_nothing_and_exits_1_when_work_remains(tmp_path):
    path = tmp_path / "prog.py"
    path.write_text("import tensorflow as tf\nb = tf.train.batch([1], 2)\n")
    assert migrate.main(["--check", str(path)]) == 1
    assert "compat_input" not in path.read_text()
    assert migrate.main([str(path)]) == 1  # Changed in place.
    assert "compat_input.batch" in path.read_text()
    assert migrate.main(["--check", str(path)]) == 0


def test_diff_mode_prints_a_diff(tmp_path, capsys):
    path = tmp_path / "prog.py"
    path.write_text("import tensorflow as tf\nb = tf.train.batch([1], 2)\n")
    migrate.main(["--diff", str(path)])
    out = capsys.readouterr().out
    assert "-b = tf.train.batch([1], 2)" in out and "+b = compat_input.batch([1], 2)" in out


def test_a_syntax_error_is_reported_and_does_not_stop_the_run(tmp_path, capsys):
    (tmp_path / "a_bad.py").write_text("import tensorflow as tf\nx = (\n")
    (tmp_path / "b_good.py").write_text("import tensorflow as tf\nb = tf.train.batch([1], 2)\n")
    (tmp_path / "c_plain.py").write_text("print(1)\n")
    assert migrate.main([str(tmp_path)]) == 2
    captured = capsys.readouterr()
    assert (
        f"{tmp_path / 'a_bad.py'}:2:1: error: syntax error" in captured.out
    )  # The unclosed paren.
    assert "compat_input.batch" in (tmp_path / "b_good.py").read_text()
    assert "1 changed, 0 unchanged, 1 skipped, 1 failed" in captured.err


def test_python_2_code_is_named_as_such_with_the_fix(tmp_path, capsys):
    # CS20SI's 05_csv_reader.py as published: `print features`.
    source = "import tensorflow as tf\nwith tf.Session() as s:\n    print s.run(x)\nother()\n"
    (tmp_path / "course.py").write_text(source)
    assert migrate.main([str(tmp_path / "course.py")]) == 2
    out = capsys.readouterr().out
    assert "Python 2 syntax ('print s.run(x)')" in out and "2to3" in out
    assert (tmp_path / "course.py").read_text() == source  # Left as it was.


def test_names_removed_before_1_0_are_kept_working():
    out = _migrate("import tensorflow as tf\ny = tf.select(c, a, b)\nz = tf.pack([a, b])\n").code
    assert "y = tf.compat.v1.where(c, a, b)" in out and "z = tf.stack([a, b])" in out


@pytest.mark.parametrize(
    "name", ["csv_batch", "ptb_producer", "tfrecord_join", "preloaded", "simple_shuffle_batch"]
)
def test_migrated_examples_run_with_plain_python_and_print_what_legacy_printed(name, tmp_path):
    path = tmp_path / f"{name}.py"
    path.write_text(open(os.path.join(ROOT, "examples", f"{name}.py")).read())
    assert migrate.main([str(path)]) == 1
    legacy, migrated = _legacy_and_migrated(name, path)
    assert migrated.stdout == legacy.stdout and migrated.stdout.strip()


def _legacy_and_migrated(example: str, migrated_path) -> tuple:
    """The outputs of `examples/<example>.py` on legacy queues (`compat-input run
    --legacy`) and of its migrated copy run with plain python, which must succeed."""
    legacy = subprocess.run(
        [
            sys.executable,
            "-m",
            "compat_input._src.commands.cli",
            "run",
            "--legacy",
            f"examples/{example}.py",
        ],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=300,
        cwd=ROOT,
    )
    migrated = subprocess.run(
        [sys.executable, str(migrated_path)], capture_output=True, text=True, env=ENV, timeout=300
    )
    assert migrated.returncode == 0, migrated.stderr[-2000:]
    return legacy, migrated


@pytest.mark.parametrize("qualified, name", sorted(rules.RENAMES.items()))
def test_every_rename_row_has_its_no_op_cases(qualified, name):
    spelling = "tf." + qualified.removeprefix("tensorflow.")
    shadowed = f"def f(tf):\n    return {spelling}\n"
    migrated = f"import compat_input\nimport tensorflow as tf\ntf.compat.v1.disable_v2_behavior()\nx = compat_input.{name}\n"
    assert _migrate(shadowed).code == shadowed
    assert _migrate(migrated).code == migrated


# -- issue 15: what the upgrader leaves, read from the syntax and checked on the result ----


def test_a_comment_naming_disable_eager_execution_does_not_stop_graph_mode():
    commented = """\
        import tensorflow as tf
        # Older versions called tf.compat.v1.disable_eager_execution() here.
        x = tf.train.batch([1], 2)
        """
    called = commented.replace("# Older versions called tf", "tf").replace(" here.", "")
    assert _migrate(commented).code.count("disable_v2_behavior()") == 1
    assert "disable_v2_behavior" not in _migrate(called).code


def test_v1_summaries_stay_v1_and_names_tensorflow_lacks_are_errors():
    outcome = _migrate(
        """\
        import tensorflow as tf
        loss = tf.constant(1.0)
        tf.summary.scalar("loss", loss)
        tf.summary.image("im", tf.zeros([1, 2, 2, 1]))
        merged = tf.summary.merge_all()
        h = tf.layers.dense(tf.zeros([1, 2]), 3)
        c = tf.compat.v1.nn.rnn_cell.BasicLSTMCell(4)
        ok = tf.compat.v1.train.AdamOptimizer(0.1)
        config = tf.estimator.RunConfig()
        """
    )
    assert 'tf.compat.v1.summary.scalar("loss", loss)' in outcome.code
    assert "tf.compat.v1.summary.image(" in outcome.code
    assert "tf.compat.v1.summary.merge_all()" in outcome.code
    errors = {(f.line, f.flag.code) for f in outcome.findings if f.flag.severity == "error"}
    assert "tf.compat.v1.layers.dense(" in outcome.code
    # Original line numbers, although the result has two lines more.
    assert errors == {(6, "CI007"), (7, "CI007"), (9, "CI008")}
    assert "Keras 2" in next(f for f in outcome.findings if f.line == 7).flag.message
    assert "estimator" in next(f for f in outcome.findings if f.line == 9).flag.message


def test_names_removed_in_1_0_run_on_tensorflow_2(tmp_path):
    """2016 programs spell tf.mul, tf.scalar_summary, tf.train.SummaryWriter, ...: the
    upgrader passes them through and they fail; the migrated file runs."""
    source = tmp_path / "old.py"
    source.write_text(
        textwrap.dedent(
            f"""\
            import tensorflow as tf
            x = tf.constant([1.0, 2.0])
            y = tf.mul(tf.sub(x, 1.0), tf.neg(x))
            a, b = tf.unpack(tf.pack([x, y]))
            tf.scalar_summary("y", tf.reduce_sum(y))
            tf.histogram_summary("x", x)
            merged = tf.merge_all_summaries()
            v = tf.Variable(3.0)
            with tf.Session() as sess:
                sess.run(tf.initialize_all_variables())
                writer = tf.train.SummaryWriter({str(tmp_path / "logs")!r}, sess.graph)
                writer.add_summary(sess.run(merged), 0)
                print(sess.run(b).tolist(), len(tf.all_variables()), sess.run(v))
            """
        )
    )
    outcome = codemod.migrate_source(source.read_text(), str(source))
    assert outcome.findings == []
    source.write_text(outcome.code)
    done = subprocess.run(
        [sys.executable, str(source)], capture_output=True, text=True, env=ENV, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    # y = (x - 1) * -x for x = [1, 2]; one variable; its value.
    assert done.stdout.split("\n")[0] == "[-0.0, -2.0] 1 3.0"
    assert list((tmp_path / "logs").iterdir())  # The summaries were written.


def test_every_upgrader_warning_is_a_finding():
    outcome = _migrate(
        """\
        import tensorflow as tf
        e = tf.nn.embedding_lookup(tf.zeros([4, 2]), [1], partition_strategy="div")
        """
    )
    (finding,) = [f for f in outcome.findings if f.flag.code == "CI009"]
    assert finding.line == 2 and finding.flag.severity == "warning"
    assert "partition_strategy" in finding.flag.message


def test_the_keras_save_note_is_kept_for_models_and_dropped_for_savers():
    outcome = _migrate(
        """\
        import tensorflow as tf
        saver = tf.train.Saver()
        self_saver = tf.compat.v1.train.Saver(max_to_keep=3)
        saver.save(None, "/tmp/ckpt")
        self_saver.save(None, "/tmp/ckpt")
        model = tf.keras.Sequential()
        model.save("/tmp/model")
        """
    )
    notes = [f.line for f in outcome.findings if "*.save requires manual check" in f.flag.message]
    assert notes == [7]
    # A file that never names Keras makes no Keras model (youtube-8m's `saver` parameter,
    # a SavedModelBuilder's save).
    outcome = _migrate(
        """\
        import tensorflow as tf
        def export(saver, builder):
            saver.save(None, "/tmp/ckpt")
            builder.save()
        """
    )
    assert not [f for f in outcome.findings if "*.save requires" in f.flag.message]


def test_every_finding_code_has_a_guide_row():
    guide = open(os.path.join(ROOT, "migration_guide.md")).read()
    for code in ("CI007", "CI008", "CI009", "CI010"):
        assert f"| {code} |" in guide, code
    for anchor in ("names-tensorflow-2-lacks", "upgrader-messages"):
        assert f"## {anchor.replace('-', ' ')}".lower() in guide.lower(), anchor


def _lines(output: str) -> list:
    # compat_input writes no fraction_of_N_full summaries (migration_guide.md, Summaries).
    return re.sub(r"[\w/]*fraction_of_\d+_full(, )?", "", output).splitlines()


@pytest.mark.parametrize(
    "name",
    [
        "train_with_summaries",
        "eval_with_saver",
        "gan_two_optimizers",
        "flags_driven",
        "layers_classifier",
        "supervisor_queue",
    ],
)
def test_corpus_programs_migrate_and_print_what_they_printed_on_legacy(name, tmp_path):
    source = os.path.join(ROOT, "tests", "corpus", f"{name}.py")
    path = tmp_path / f"{name}.py"
    path.write_text(open(source).read())
    assert migrate.main(["--check", str(path)]) == 1  # It would change.
    assert migrate.main([str(path)]) == 1
    errors = {
        f.flag.code
        for f in codemod.migrate_source(open(source).read()).findings
        if f.flag.severity == "error"
    }
    env = ENV
    if name == "layers_classifier":
        # tf.layers: TensorFlow 2 has it with Keras 2 only, which this process (Keras 3)
        # lacks, and says so; both sides then run with tf_keras (compat-input[keras2]).
        assert errors == {"CI007"}
        env = dict(ENV, TF_USE_LEGACY_KERAS="1")
    else:
        assert not errors
    run = [sys.executable, "-m", "compat_input._src.commands.cli", "run", "--legacy", source]
    legacy = subprocess.run(run, capture_output=True, text=True, env=env, timeout=300, cwd=ROOT)
    migrated = subprocess.run(
        [sys.executable, str(path)], capture_output=True, text=True, env=env, timeout=300
    )
    assert legacy.returncode == 0, legacy.stderr[-2000:]
    assert migrated.returncode == 0, migrated.stderr[-2000:]
    assert _lines(migrated.stdout) == _lines(legacy.stdout)
    assert len(_lines(legacy.stdout)) >= 4  # The program ran its loop.
    if name == "train_with_summaries":  # Summaries written and read back.
        assert "summaries: loss, w_1" in _lines(legacy.stdout)


def test_verify_runs_the_migrated_program_and_fails_the_run_when_it_does_not(tmp_path, capsys):
    good = tmp_path / "train.py"
    good.write_text(open(os.path.join(ROOT, "tests", "corpus", "train_with_summaries.py")).read())
    before = good.read_text()
    status = migrate.main(["--check", "--verify", "--verify-run", "--steps 1", str(good)])
    assert status == 1  # It would change; it runs.
    assert good.read_text() == before and not list(tmp_path.glob(".compat_input_verify_*"))
    said = capsys.readouterr().out
    assert "verified: the migrated file, run with plain python, prints what the original " in said
    assert "same first 1 input batches" in said
    bad = tmp_path / "model.py"
    bad.write_text("import tensorflow as tf\nh = tf.layers.dense(tf.zeros([1, 2]), 3)\n")
    assert migrate.main(["--verify", str(bad)]) == 2
    out = capsys.readouterr().out
    assert f"{bad}:1:1: error: the migrated file does not import (exit status 1)" in out
    assert "Keras 3" in out  # TensorFlow's own reason, from the run.


def test_tfprof_migrates_to_the_profiler_and_counts_what_contrib_counted(capsys):
    """resnet's trainer: tf.contrib.tfprof's analysis becomes tf.compat.v1.profiler.profile
    with ProfileOptionBuilder's options, and the program switches graph mode on (it reads
    its default graph back; eager, that graph is empty)."""
    outcome = _migrate(
        """\
        import tensorflow as tf
        w = tf.Variable(tf.zeros([3, 4]), name="w")
        y = tf.matmul(w, tf.ones([4, 2]))
        params = tf.contrib.tfprof.model_analyzer.print_model_analysis(
            tf.get_default_graph(),
            tfprof_options=tf.contrib.tfprof.model_analyzer.TRAINABLE_VARS_PARAMS_STAT_OPTIONS)
        flops = tf.contrib.tfprof.model_analyzer.print_model_analysis(
            tf.get_default_graph(), None, None, 'scope',
            tf.contrib.tfprof.model_analyzer.FLOAT_OPS_OPTIONS)
        print("counted", params.total_parameters, flops.total_float_ops)
        """
    )
    assert "tf.compat.v1.profiler.profile(" in outcome.code and "contrib" not in outcome.code
    assert "cmd='scope'," in outcome.code
    assert "options=tf.compat.v1.profiler.ProfileOptionBuilder.float_operation())" in outcome.code
    assert "tf.compat.v1.disable_v2_behavior()" in outcome.code
    assert not [f for f in outcome.findings if f.flag.severity != "note"], outcome.findings
    import tensorflow as tf

    with tf.Graph().as_default():
        exec(outcome.code, {})  # noqa: S102
    assert "counted 12 48" in capsys.readouterr().out  # 3 x 4 weights; 2 * 3 * 4 * 2 flops


_RESIZING = """\
import numpy as np
import tensorflow as tf

images = np.arange(4 * 6 * 6 * 3, dtype=np.float32).reshape(4, 6, 6, 3) / 100.0
image, label = tf.train.slice_input_producer([images, np.arange(4)], shuffle=False)
image = tf.image.resize_images(image, [4, 4])
batch = tf.train.batch([image, tf.reduce_sum(image, keep_dims=True), label], batch_size=2)
with tf.Session() as sess:
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess, coord)
    for _ in range(2):
        print(sess.run(batch)[2].tolist())
    coord.request_stop()
    coord.join(threads)
"""


def test_verify_finds_the_upgraded_call_that_changes_the_numbers(tmp_path, capsys, monkeypatch):
    """A rename wrongly taken for exact (planted: resize_images upgraded to TensorFlow 2's
    tf.image.resize, other pixel centers) prints the same labels; the batches differ, and
    verify names the line, and writes the file with that line kept on tf.compat.v1."""
    from compat_input_tools import exact

    monkeypatch.setattr(exact, "PROVEN", exact.PROVEN | {"image.resize_images"})
    path = tmp_path / "resizing.py"
    path.write_text(_RESIZING)
    assert migrate.main(["--verify", "--verify-run", "", str(path)]) == 1
    said = capsys.readouterr().out
    assert f"{path}:6:1: error: the upgraded call here changes what the program computes" in said
    assert "batch 0 differs" in said
    migrated = path.read_text()
    assert "tf.compat.v1.image.resize_images(image, [4, 4])" in migrated
    assert "tf.reduce_sum(image, keepdims=True)" in migrated  # Line 7's stays upgraded.


def test_verify_says_when_the_original_does_not_repeat_itself(tmp_path, capsys):
    """An unseeded random op: legacy prints other numbers each run, so a difference is no
    finding against the migration, and verify says which it is."""
    path = tmp_path / "unseeded.py"
    path.write_text(
        "import tensorflow as tf\n"
        "x = tf.random_uniform([3])\n"
        "with tf.Session() as sess:\n"
        "    print(sess.run(x).tolist())\n"
    )
    assert migrate.main(["--verify", "--verify-run", "", str(path)]) == 1
    said = capsys.readouterr().out
    assert "but so does the original from one run to the next on legacy queues" in said
    assert "tf.random.uniform([3])" in path.read_text()  # Written all the same.


@pytest.mark.parametrize(
    "line, fix",
    [
        ("i = tf.contrib.layers.feature_column.make_place_examples(1)", "tf.keras.initializers"),
        ("d = tf.contrib.data.shuffle_and_repeat(10)", "tf.data.experimental"),
        ("x = tf.contrib.learn.datasets.mnist.read_data_sets('d')", "tensorflow_datasets"),
        ("s = tf.contrib.framework.nest.flatten([])", "tf_slim"),
        ("w = tf.contrib.copy_graph.copy_op_to_graph", "port it by hand"),
        ("c = tf.contrib.rnn.LSTMBlockCell", "LSTMCell(num_units"),  # Uncalled: kept.
    ],
)
def test_common_contrib_pieces_are_flagged_with_their_fix(line, fix):
    outcome = _migrate(f"import tensorflow as tf\n{line}\n")
    messages = [f.flag.message for f in outcome.findings if f.flag.code == "CI004"]
    assert len(messages) == 1 and fix in messages[0], messages


def test_contrib_keras_moves_to_tf1s_keras():
    outcome = _migrate("import tensorflow as tf\nd = tf.contrib.keras.layers.Dense(3)\n")
    assert "d = tf.compat.v1.keras.layers.Dense(3)" in outcome.code
    assert "contrib" not in outcome.code


def test_contrib_linalgs_tril_moves_to_tf_linalgs_lower_triangular():
    outcome = _migrate(
        "import tensorflow as tf\nm = tf.contrib.linalg.LinearOperatorTriL(x).to_dense()\n"
    )
    assert "m = tf.compat.v1.linalg.LinearOperatorLowerTriangular(x).to_dense()" in outcome.code
    assert "contrib" not in outcome.code


@pytest.mark.parametrize(
    "name", ["get_or_create_global_step", "get_global_step", "create_global_step"]
)
def test_contrib_frameworks_global_step_functions_move_to_their_tf_train_homes(name):
    # The CIFAR-10 tutorial's trainer failed after migration: the report named the fix,
    # the codemod did not make it.
    outcome = _migrate(f"import tensorflow as tf\nstep = tf.contrib.framework.{name}()\n")
    assert f"step = tf.compat.v1.train.{name}()" in outcome.code
    assert "contrib" not in outcome.code
    assert not [f for f in outcome.findings if f.flag.severity == "error"]
    assert callable(getattr(__import__("tensorflow").compat.v1.train, name))


def test_contrib_training_batchers_become_compat_inputs_in_every_spelling():
    outcome = _migrate(
        """\
        import tensorflow as tf
        from tensorflow.contrib.training import stratified_sample
        from tensorflow.contrib import training
        n, [b] = tf.contrib.training.bucket_by_sequence_length(n, [x], 8, [3, 5])
        d, l = stratified_sample([x], label, [0.5, 0.5], 4)
        k, [c] = training.bucket([x], w, 2, 3)
        r = tf.compat.v1.contrib.training.rejection_sample([x], f, 4)
        """
    )
    code = outcome.code
    for line in (
        "from compat_input import stratified_sample",
        "n, [b] = compat_input.bucket_by_sequence_length(n, [x], 8, [3, 5])",
        "r = compat_input.rejection_sample([x], f, 4)",
    ):
        assert line in code, code
    assert "k, [c] = compat_input.bucket([x], w, 2, 3)" in code
    # Every use of the module moved: its import goes, and nothing needs a person.
    assert "from tensorflow.contrib import training" not in code
    assert outcome.findings == []
    compile(code, "prog.py", "exec")
    # Where a use is left (HParams has no home), the import stays and the use is reported.
    outcome = _migrate(
        """\
        import tensorflow as tf
        from tensorflow.contrib import training
        k, [c] = training.bucket([x], w, 2, 3)
        h = training.HParams(a=1)
        """
    )
    assert "from tensorflow.contrib import training" in outcome.code
    assert [(f.line, f.flag.code) for f in outcome.findings] == [(4, "CI004")]


def test_contrib_slim_becomes_the_tf_slim_package_in_every_spelling():
    outcome = _migrate(
        """\
        import tensorflow as tf
        from tensorflow.contrib import slim
        import tensorflow.contrib.slim as slim2
        from tensorflow.contrib.slim import nets
        q = tf.contrib.slim.prefetch_queue.prefetch_queue([tf.constant(1)])
        h = slim.fully_connected(tf.zeros([1, 2]), 3)
        f = slim2.flatten(h)
        """
    )
    code = outcome.code
    assert "contrib" not in code
    for line in (
        "import tf_slim as slim",
        "import tf_slim as slim2",
        "from tf_slim import nets",
        "q = tf_slim.prefetch_queue.prefetch_queue([tf.constant(1)])",
        "h = slim.fully_connected(tf.zeros([1, 2]), 3)",
    ):
        assert line in code, code
    assert [f.flag.code for f in outcome.findings] == ["CI012"]  # The dependency, once.
    compile(code, "prog.py", "exec")
    assert _missing_in_tf_slim(["prefetch_queue"]) == []


def test_the_names_check_leaves_tensorflow_as_it_was():
    import tensorflow as tf

    compat, v1, modules = tf.compat, tf.compat.v1, set(sys.modules)
    outcome = _migrate(
        """\
        import tensorflow as tf
        h = tf.compat.v1.layers.dense(tf.zeros([1, 2]), 3)
        c = tf.compat.v1.nn.rnn_cell.LSTMCell(2)
        from tensorflow.python.ops import io_ops
        """
    )
    assert {f.flag.code for f in outcome.findings} == {"CI007"}
    # Importing tensorflow.compat.v1.layers to resolve it would have put new module
    # objects at tf.compat: install() then patched those, not the program's tf.compat.v1.
    assert tf.compat is compat and tf.compat.v1 is v1
    assert not {m for m in set(sys.modules) - modules if m.startswith("tensorflow")}


def test_imported_names_get_their_table_row_once_and_no_second_finding():
    outcome = _migrate(
        """\
        import tensorflow as tf
        from tensorflow.examples.tutorials.mnist import input_data
        from tensorflow.contrib import slim
        x = tf.train.batch([1], 2)
        """
    )
    found = sorted((f.line, f.flag.code) for f in outcome.findings)
    assert found == [(2, "CI011"), (3, "CI012")]  # slim: rewritten to tf_slim, noted once.
    assert "tf_slim" in outcome.findings[1].flag.message


def test_a_contrib_slim_trainer_migrates_and_prints_what_legacy_printed(tmp_path):
    # examples/slim_train.py as a TF 1.x program spelled it: `slim = tf.contrib.slim`.
    source = open(os.path.join(ROOT, "examples", "slim_train.py")).read()
    assert "import tf_slim as slim\n" in source
    path = tmp_path / "slim_contrib.py"
    path.write_text(source.replace("import tf_slim as slim\n", "slim = tf.contrib.slim\n"))
    assert migrate.main([str(path)]) == 1
    assert "contrib" not in path.read_text()
    legacy, migrated = _legacy_and_migrated("slim_train", path)
    assert migrated.stdout == legacy.stdout and "final loss" in migrated.stdout


@pytest.mark.parametrize(
    "spelling", ["import tensorflow as tf", "import tensorflow.compat.v1 as tf"]
)
def test_contrib_layers_and_framework_functions_become_tf_slims(spelling):
    # tf_slim carries contrib.layers and contrib.framework's code: the same values, where
    # tf_upgrade_v2's Keras stand-ins draw others (test_contrib_initializers_keep_...).
    outcome = _migrate(
        f"""\
        {spelling}
        i = tf.contrib.layers.xavier_initializer(uniform=False)
        r = tf.contrib.layers.l2_regularizer(0.1)
        h = tf.contrib.layers.fully_connected(tf.zeros([1, 2]), 3)
        with tf.contrib.framework.arg_scope([tf.contrib.layers.conv2d], padding="SAME"):
            v = tf.contrib.framework.get_variables()
        """
    )
    code = outcome.code
    assert "contrib" not in code and "import tf_slim\n" in code
    for line in (
        "i = tf_slim.xavier_initializer(uniform=False)",
        "r = tf_slim.l2_regularizer(0.1)",
        "h = tf_slim.fully_connected(tf.zeros([1, 2]), 3)",
        'with tf_slim.arg_scope([tf_slim.conv2d], padding="SAME"):',
        "v = tf_slim.get_variables()",
    ):
        assert line in code, code
    assert [f.flag.code for f in outcome.findings] == ["CI012"]  # The dependency, once.


def _missing_in_tf_slim(names: list) -> list:
    # In a process of its own: importing tf_slim loads tensorflow.compat.v1 again, as a new
    # module object, and test modules holding the old one then miss what install() patches.
    code = (
        "import importlib, sys, tf_slim\n"
        "def found(name):\n"
        "    try:\n"
        "        return bool(importlib.import_module('tf_slim.' + name))\n"
        "    except ImportError:\n"
        "        return hasattr(tf_slim, name)\n"
        "print([n for n in sys.argv[1:] if not found(n)])"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, *names], capture_output=True, text=True, env=ENV, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return eval(done.stdout.strip().splitlines()[-1])


def test_every_name_moved_to_tf_slim_exists_there():
    targets = {t for t in rules.MOVED_MODULES.values() if t.startswith("tf_slim.")}
    assert len(targets) > 80
    assert _missing_in_tf_slim(sorted(t.split(".", 1)[1] for t in targets)) == []


def _initial_values(code: str, tmp_path) -> list:
    """The migrated `code` run as a program that prints its variable's initial values."""
    prog = tmp_path / "init.py"
    prog.write_text(codemod.migrate_source(textwrap.dedent(code), str(prog)).code)
    done = subprocess.run(
        [sys.executable, str(prog)], capture_output=True, text=True, env=ENV, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return [float(x) for x in done.stdout.split()]


def test_contrib_initializers_keep_tensorflow_1s_values(tmp_path):
    # contrib's variance scaling draws a truncated normal with stddev sqrt(1.3 * factor / n)
    # (its documentation); n = (fan_in + fan_out) / 2 for xavier. The oracle draws that
    # with the same seed; tf_upgrade_v2's VarianceScaling stand-in divides by 0.8796.
    got = _initial_values(
        """\
        import tensorflow as tf
        w = tf.get_variable("w", [40, 60], initializer=tf.contrib.layers.xavier_initializer(
            uniform=False, seed=7))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            print(" ".join(str(x) for x in sess.run(w).ravel()[:20]))
        """,
        tmp_path,
    )
    import tensorflow as tf

    with tf.Graph().as_default():
        stddev = (1.3 * 1.0 / ((40 + 60) / 2.0)) ** 0.5
        oracle = tf.random.truncated_normal([40, 60], 0.0, stddev, seed=7)
        keras = tf.compat.v1.keras.initializers.VarianceScaling(
            scale=1.0, mode="fan_avg", distribution="truncated_normal", seed=7
        )([40, 60])
        with tf.compat.v1.Session() as sess:
            expected, stand_in = sess.run([oracle, keras])
    assert got == pytest.approx(expected.ravel()[:20].tolist(), rel=1e-6)
    assert got != pytest.approx(stand_in.ravel()[:20].tolist(), rel=1e-3)


def test_lstm_block_cell_calls_become_lstm_cell_calls_with_its_argument_names():
    outcome = _migrate(
        """\
        import tensorflow as tf
        a = tf.contrib.rnn.LSTMBlockCell(200, 0.0)
        b = tf.contrib.rnn.LSTMBlockCell(num_units=8, use_peephole=True, cell_clip=3.0)
        c = tf.contrib.rnn.LSTMBlockCell(8, 1.0, None, True, tf.float32, True, "x")
        """
    )
    code = outcome.code
    assert "a = tf.compat.v1.nn.rnn_cell.LSTMCell(200, forget_bias=0.0)" in code
    assert (
        "b = tf.compat.v1.nn.rnn_cell.LSTMCell(num_units=8, use_peepholes=True, cell_clip=3.0)"
        in code
    )
    assert (
        "c = tf.compat.v1.nn.rnn_cell.LSTMCell(8, forget_bias=1.0, cell_clip=None, "
        'use_peepholes=True, dtype=tf.float32, reuse=True, name="x")' in code
    )
    # Only that LSTMCell needs Keras 2 (CI007), once a line.
    assert {(f.line, f.flag.code) for f in outcome.findings} == {
        (2, "CI007"),
        (3, "CI007"),
        (4, "CI007"),
    }


_BLOCK_VERSUS_CELL = """\
import numpy as np
import tensorflow as tf
tf.compat.v1.disable_v2_behavior()
rng = np.random.RandomState(0)
x, h, c = (rng.randn(3, n).astype(np.float32) for n in (5, 4, 4))
with tf.compat.v1.variable_scope("s"):
    cell = tf.compat.v1.nn.rnn_cell.LSTMCell(4, forget_bias=0.5, use_peepholes=PEEP)
    out, state = cell(tf.constant(x), tf.compat.v1.nn.rnn_cell.LSTMStateTuple(c, h))
names = {v.name.split("/")[-1].split(":")[0]: v for v in cell.variables}
# TensorFlow's fused kernel, which LSTMBlockCell ran, on LSTMCell's own variables.
zeros = tf.zeros([4])
diag = [names.get(k, zeros) for k in ("w_i_diag", "w_f_diag", "w_o_diag")]
block = tf.raw_ops.LSTMBlockCell(
    x=x, cs_prev=c, h_prev=h, w=names["kernel"], wci=diag[0], wcf=diag[1], wco=diag[2],
    b=names["bias"], forget_bias=0.5, cell_clip=-1.0, use_peephole=PEEP)
with tf.compat.v1.Session() as sess:
    sess.run(tf.compat.v1.global_variables_initializer())
    got, want = sess.run([(state.c, state.h), (block.cs, block.h)])
print(float(np.abs(np.array(got) - np.array(want)).max()), sorted(names))
"""


@pytest.mark.parametrize("peephole", [False, True])
def test_lstm_cell_computes_what_the_block_cells_fused_kernel_computes(peephole):
    # The oracle is TensorFlow's own LSTMBlockCell kernel (still a raw op), run on the
    # variables LSTMCell made: same gates, same forget bias, same peepholes.
    done = subprocess.run(
        [sys.executable, "-c", _BLOCK_VERSUS_CELL.replace("PEEP", str(peephole))],
        capture_output=True,
        text=True,
        env=dict(ENV, TF_USE_LEGACY_KERAS="1"),
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    difference, names = done.stdout.split(" ", 1)
    assert float(difference) < 1e-6
    assert ("w_i_diag" in names) == peephole


def test_sequence_loss_is_written_into_the_file_once_after_the_imports():
    outcome = _migrate(
        """\
        import tensorflow as tf
        import numpy as np
        a = tf.contrib.seq2seq.sequence_loss(l, t, w)
        b = tf.contrib.seq2seq.sequence_loss(l, t, w, average_across_batch=False)
        """
    )
    code = outcome.code
    assert code.count("def _contrib_sequence_loss(") == 1
    assert "a = _contrib_sequence_loss(l, t, w)" in code and "contrib." not in code.replace(
        "tf.contrib.seq2seq.sequence_loss of", ""
    )
    lines = code.splitlines()
    assert lines.index("def _contrib_sequence_loss(") > lines.index("import numpy as np")
    assert (
        lines.index("def _contrib_sequence_loss(")
        < [i for i, line in enumerate(lines) if line.startswith("a = ")][0]
    )
    assert [(f.line, f.flag.code) for f in outcome.findings] == [(3, "CI013")]


def test_contrib_nn_s_flipped_cross_entropy_is_written_in_and_named_in_its_note():
    # research/inception's slim/losses.py.
    outcome = _migrate(
        """\
        import tensorflow as tf
        x = tf.contrib.nn.deprecated_flipped_softmax_cross_entropy_with_logits(l, y, name="xe")
        """
    )
    code = outcome.code
    assert code.count("def _contrib_flipped_softmax_xent(") == 1
    assert 'x = _contrib_flipped_softmax_xent(l, y, name="xe")' in code
    (finding,) = outcome.findings
    assert finding.flag.code == "CI013" and "_contrib_flipped_softmax_xent" in finding.flag.message
    assert "tf.contrib.nn.deprecated_flipped_softmax" in finding.flag.message


def _numpy_sequence_loss(logits, targets, weights, avg_t, avg_b, sum_t, sum_b):
    """contrib's documented sequence_loss, in numpy: weighted softmax cross-entropy, then
    averaged (by summed weights) or summed (by nonzero weight count) over the named axes."""
    import numpy as np

    shifted = logits - logits.max(-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
    loss = -np.take_along_axis(log_probs, targets[..., None], -1)[..., 0] * weights
    axes = tuple(a for a, on in ((0, avg_b or sum_b), (1, avg_t or sum_t)) if on)
    if not axes:
        return loss
    total = loss.sum(axis=axes)
    divisor = weights.sum(axis=axes) if (avg_t or avg_b) else (weights != 0).sum(axis=axes)
    return total / divisor


@pytest.mark.parametrize(
    "avg_t, avg_b, sum_t, sum_b",
    [
        (True, True, False, False),
        (False, True, False, False),
        (True, False, False, False),
        (False, False, False, False),
        (False, False, True, True),
        (False, False, True, False),
        (False, False, False, True),
    ],
)
def test_the_written_sequence_loss_computes_contribs(avg_t, avg_b, sum_t, sum_b):
    import numpy as np
    import tensorflow as tf

    from compat_input._src.commands.contrib_helpers import _contrib_sequence_loss

    rng = np.random.RandomState(1)
    logits = rng.randn(3, 4, 5).astype(np.float32)
    targets = rng.randint(0, 5, (3, 4)).astype(np.int32)
    weights = (rng.rand(3, 4) > 0.3).astype(np.float32)
    with tf.Graph().as_default():
        loss = _contrib_sequence_loss(
            tf.constant(logits),
            tf.constant(targets),
            tf.constant(weights),
            average_across_timesteps=avg_t,
            average_across_batch=avg_b,
            sum_over_timesteps=sum_t,
            sum_over_batch=sum_b,
        )
        with tf.compat.v1.Session() as sess:
            got = sess.run(loss)
    want = _numpy_sequence_loss(logits, targets, weights, avg_t, avg_b, sum_t, sum_b)
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_image_summary_removed_in_1_0_becomes_summary_image_with_its_argument_names():
    outcome = _migrate(
        """\
        import tensorflow as tf
        a = tf.image_summary('images', x, max_images=5)
        b = tf.image_summary('images', x, 2)
        """
    )
    assert "a = tf.compat.v1.summary.image('images', tensor=x, max_outputs=5)" in outcome.code
    assert "b = tf.compat.v1.summary.image('images', tensor=x, max_outputs=2)" in outcome.code
    assert outcome.findings == []


# -- --to-tfdata ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["csv_batch", "ptb_producer", "preloaded", "tfrecord_join", "cifar_queue"]
)
def test_to_tfdata_converts_examples_to_plain_tf_data_that_print_what_legacy_printed(
    name, tmp_path
):
    path = tmp_path / f"{name}.py"
    path.write_text(open(os.path.join(ROOT, "examples", f"{name}.py")).read())
    outcome = codemod.migrate_source(path.read_text(), str(path), to_tfdata=True)
    assert "compat_input" not in outcome.code and "tf.data." in outcome.code
    assert "CI014" in {f.flag.code for f in outcome.findings}
    # Notes only, and no hand-built queue note (CI001) for a queue that became tf.data.
    assert {f.flag.severity for f in outcome.findings} == {"note"}
    assert "CI001" not in {f.flag.code for f in outcome.findings}
    path.write_text(outcome.code)
    legacy, migrated = _legacy_and_migrated(name, path)
    assert migrated.stdout == legacy.stdout and migrated.stdout.strip()


_SHUFFLED = """\
import sys
import tensorflow as tf
files = sys.argv[1:]
queue = tf.train.string_input_producer(files, num_epochs=2, seed=3)
_, record = tf.TFRecordReader().read(queue)
number = tf.strings.to_number(record, tf.int32)
batch = tf.train.shuffle_batch([number * 2], batch_size=4, capacity=20, min_after_dequeue=5,
                               allow_smaller_final_batch=True)
with tf.Session() as sess:
    sess.run(tf.local_variables_initializer())
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess=sess, coord=coord)
    seen = []
    try:
        while True:
            seen.extend(sess.run(batch).tolist())
    except tf.errors.OutOfRangeError:
        pass
    coord.request_stop()
    coord.join(threads)
print(sorted(seen))
print(seen[:12])
"""


def test_to_tfdata_shuffle_batch_reads_legacys_multiset_and_says_the_order_differs(tmp_path):
    files = _number_files(tmp_path)
    original = tmp_path / "shuffled.py"
    original.write_text(_SHUFFLED)
    outcome = codemod.migrate_source(_SHUFFLED, str(original), to_tfdata=True)
    notes = [f.flag.message for f in outcome.findings if f.flag.code == "CI014"]
    assert len(notes) == 1 and "shuffle order is tf.data's" in notes[0]
    assert "compat_input" not in outcome.code
    converted = tmp_path / "converted.py"
    converted.write_text(outcome.code)
    run = lambda *command: subprocess.run(  # noqa: E731
        [*command, *files], capture_output=True, text=True, env=ENV, timeout=300
    )
    legacy = run(
        sys.executable, "-m", "compat_input._src.commands.cli", "run", "--legacy", str(original)
    )
    ours = run(sys.executable, str(converted))
    assert ours.returncode == 0, ours.stderr[-2000:]
    legacy_lines, our_lines = legacy.stdout.splitlines(), ours.stdout.splitlines()
    # Both epochs of all 21 records, each twice: the same multiset.
    assert legacy_lines[0] == our_lines[0] and len(eval(our_lines[0])) == 42
    assert legacy_lines[1] != our_lines[1]  # ... in another order, as the note says.


_BUCKETED = """\
import sys
import tensorflow as tf
queue = tf.train.string_input_producer(sys.argv[1:], num_epochs=2, shuffle=False)
_, line = tf.TextLineReader().read(queue)
ids = tf.string_to_number(tf.string_split([line]).values, tf.int32)
lengths, (batch,) = tf.contrib.training.bucket_by_sequence_length(
    tf.size(ids), [ids], batch_size=4, bucket_boundaries=[3, 6], dynamic_pad=True)
with tf.Session() as sess:
    sess.run(tf.local_variables_initializer())
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess=sess, coord=coord)
    try:
        while True:
            n, b = sess.run([lengths, batch])
            print(n.tolist(), b.tolist())
    except tf.errors.OutOfRangeError:
        pass
    coord.request_stop()
    coord.join(threads)
"""


def test_to_tfdata_bucket_by_sequence_length_reads_the_batches_compat_input_serves(tmp_path):
    """Dataset.bucket_by_sequence_length: contrib's buckets, each batch padded, batches
    leaving as their buckets fill: every batch the same as compat_input's bucketing, which
    tests/test_contrib.py holds to legacy's."""
    rng = __import__("random").Random(5)
    files = []
    for f in range(2):
        path = tmp_path / f"tokens{f}.txt"
        path.write_text(
            "".join(
                " ".join(str(rng.randint(1, 99)) for _ in range(rng.randint(1, 9))) + "\n"
                for _ in range(30)
            )
        )
        files.append(str(path))
    original = tmp_path / "bucketed.py"
    original.write_text(_BUCKETED)
    outcome = codemod.migrate_source(_BUCKETED, str(original), to_tfdata=True)
    assert "contrib" not in outcome.code and ".bucket_by_sequence_length(" in outcome.code
    notes = [f.flag.message for f in outcome.findings if f.flag.code == "CI014"]
    assert len(notes) == 1 and "bucket_by_sequence_length converted" in notes[0]
    converted = tmp_path / "converted.py"
    converted.write_text(outcome.code)
    run = lambda *command: subprocess.run(  # noqa: E731
        [*command, *files], capture_output=True, text=True, env=ENV, timeout=300
    )
    served = run(sys.executable, "-m", "compat_input._src.commands.cli", "run", str(original))
    ours = run(sys.executable, str(converted))
    assert ours.returncode == 0, ours.stderr[-2000:]
    assert ours.stdout == served.stdout and len(served.stdout.splitlines()) > 20


@pytest.mark.parametrize(
    "body, reason",
    [
        # A hand-built queue between the read and the batch (examples/simple_shuffle_batch.py).
        (
            "def build():\n    q = tf.train.string_input_producer(['a'])\n"
            "    _, v = tf.TextLineReader().read(q)\n    for i in range(2):\n"
            "        if i:\n            return v\n    b = tf.train.batch([v], 2)\n"
            "    return b\n",
            "the for statement at line 5 returns or binds another scope's names",
        ),
        # The reader's key is used.
        (
            "q = tf.train.string_input_producer(['a'])\nk, v = tf.TextLineReader().read(q)\n"
            "b = tf.train.batch([k, v], 2)\n",
            "the reader's key k is used",
        ),
        # Several readers over one queue (batch_join).
        (
            "q = tf.train.string_input_producer(['a'])\nr = [tf.TextLineReader().read(q) for _ in "
            "range(2)]\nb = tf.train.batch_join(r, 2)\n",
            "the reader's read at line 3 is not assigned on a line of its own",
        ),
        (
            "q = tf.train.string_input_producer(['a'], shared_name='s')\n"
            "_, v = tf.TextLineReader().read(q)\nb = tf.train.batch([v], 2)\n",
            "shared_name",
        ),
        # contrib's bucketing with a filter: tf.data's bucketing has none built in.
        (
            "q = tf.train.string_input_producer(['a'])\n_, v = tf.TextLineReader().read(q)\n"
            "n, [b] = tf.contrib.training.bucket_by_sequence_length(tf.size(v), [v], 2, [3], "
            "keep_input=tf.size(v) > 1)\n",
            "the batcher's keep_input",
        ),
        # contrib's stratified sampling: tf.data's resampler draws other numbers.
        (
            "q = tf.train.string_input_producer(['a'])\n_, v = tf.TextLineReader().read(q)\n"
            "[b], l = tf.contrib.training.stratified_sample([v], tf.size(v) % 2, [0.5, 0.5], 4)\n",
            "rejection_resample mixes the initial",
        ),
    ],
    ids=["compound", "key-used", "join", "shared", "bucket-keep", "stratified"],
)
def test_to_tfdata_leaves_other_pipelines_on_compat_input_with_the_reason(body, reason):
    outcome = codemod.migrate_source("import tensorflow as tf\n" + body, "p.py", to_tfdata=True)
    kept = [f.flag.message for f in outcome.findings if f.flag.code == "CI015"]
    assert len(kept) == 1 and reason in kept[0], kept
    assert "compat_input.string_input_producer(" in outcome.code


def test_to_tfdata_a_slice_input_producer_a_supervisor_starts_joins_the_table_initializers():
    # Its iterator is initialized where the program starts its queue runners; a program
    # whose runners a Supervisor starts has no such place: its local init op runs the
    # table initializers (tests/test_to_tfdata_programs.py runs such a program).
    outcome = codemod.migrate_source(
        "import tensorflow as tf\nx, = tf.train.slice_input_producer([v])\nb = tf.train.batch([x], 2)\n"
        "sv = tf.train.Supervisor()\n",
        "p.py",
        to_tfdata=True,
    )
    (converted,) = [f for f in outcome.findings if f.flag.code == "CI014"]
    assert "Supervisor's or MonitoredSession's local init op" in converted.flag.message
    assert "add_to_collection('table_initializer', _iterator_1.initializer)" in outcome.code
    assert "compat_input" not in outcome.code


def _compare(*argv, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "compat_input._src.commands.cli", "compare", *argv],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=600,
        cwd=cwd,
    )


def test_to_tfdata_preloaded_example_reads_legacys_batches_exactly(tmp_path):
    # Both slice pipelines of examples/preloaded.py (a constant, and a variable the program
    # fills after its initializers), batch by batch: compare --batches sees tf.data's
    # batches as it sees legacy's dequeues.
    converted = tmp_path / "preloaded.py"
    source = open(os.path.join(ROOT, "examples", "preloaded.py")).read()
    converted.write_text(codemod.migrate_source(source, str(converted), to_tfdata=True).code)
    result = _compare("--batches", "100", "examples/preloaded.py", str(converted), cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    assert "same first 7 input batches" in result.stderr


_READ_IN_A_FUNCTION = """import sys
import tensorflow as tf
files = sys.argv[1:]


def read_record(filename_queue):
    \"\"\"One example from the queue's files.\"\"\"
    reader = tf.TFRecordReader()
    _, serialized = reader.read(filename_queue)
    number = tf.strings.to_number(serialized, tf.int32)
    return number * 2, tf.strings.join([serialized, "!"])


def inputs():
    with tf.name_scope("input"):
        queue = tf.train.string_input_producer(files, num_epochs=2, shuffle=SHUFFLE)
        READ
        capacity = 30
        BATCH
    return doubled, tagged


doubled, tagged = inputs()
with tf.Session() as sess:
    sess.run(tf.local_variables_initializer())
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess=sess, coord=coord)
    seen = []
    try:
        while True:
            d, t = sess.run([doubled, tagged])
            seen.extend(zip(d.tolist(), t.tolist()))
    except tf.errors.OutOfRangeError:
        pass
    coord.request_stop()
    coord.join(threads)
print(len(seen), sorted(seen)[:3])
"""


def _number_files(tmp_path) -> list:
    """Three TFRecord files of 7 numbers each (as text): 0-6, 100-106, 200-206."""
    files = []
    for part in range(3):
        path = tmp_path / f"part{part}.tfr"
        with tf_record_writer(str(path)) as writer:
            for i in range(7):
                writer.write(str(part * 100 + i).encode())
        files.append(str(path))
    return files


@pytest.mark.parametrize(
    "shuffle, read, batch, compared",
    [
        # The reading-data tutorial's shape, in order: the same batches.
        (
            "False",
            "image, tag = read_record(queue)",
            "doubled, tagged = tf.train.batch([image, tag], batch_size=4, capacity=capacity, "
            "allow_smaller_final_batch=True)",
            ["--batches", "100"],
        ),
        # Several reads of one queue, joined and shuffled: the same examples.
        (
            "True",
            "examples = [read_record(queue) for _ in range(3)]",
            "doubled, tagged = tf.train.shuffle_batch_join(examples, batch_size=4, "
            "capacity=capacity, min_after_dequeue=5, allow_smaller_final_batch=True)",
            ["--unordered", "--batches", "100"],
        ),
    ],
    ids=["read-function-batch", "read-function-shuffle-batch-join"],
)
def test_to_tfdata_converts_a_read_in_a_function_and_joins(
    tmp_path, shuffle, read, batch, compared
):
    files = _number_files(tmp_path)
    program = (
        _READ_IN_A_FUNCTION.replace("SHUFFLE", shuffle)
        .replace("READ", read)
        .replace("BATCH", batch)
    )
    original = tmp_path / "original.py"
    original.write_text(program)
    outcome = codemod.migrate_source(program, str(original), to_tfdata=True)
    assert "compat_input" not in outcome.code
    notes = [f.flag.message for f in outcome.findings if f.flag.code == "CI014"]
    assert len(notes) == 1, outcome.findings
    # The batch's capacity is no per-example value: it stays outside the example function.
    assert "        capacity = 30\n" in outcome.code
    converted = tmp_path / "converted.py"
    converted.write_text(outcome.code)
    result = _compare(*compared, str(original), str(converted), *files)
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    # Both epochs of the 21 records, in 11 batches (the last one short), on both sides.
    assert "same output (1 lines" in result.stderr
    assert "first 11 input batches" in result.stderr


def test_compare_unordered_tells_a_missing_epoch(tmp_path):
    # The check above must be able to fail: one epoch where legacy reads two.
    files = _number_files(tmp_path)
    program = (
        _READ_IN_A_FUNCTION.replace("SHUFFLE", "True")
        .replace("READ", "examples = [read_record(queue) for _ in range(3)]")
        .replace(
            "BATCH",
            "doubled, tagged = tf.train.shuffle_batch_join(examples, batch_size=4, "
            "capacity=capacity, min_after_dequeue=5, allow_smaller_final_batch=True)",
        )
    )
    original = tmp_path / "original.py"
    original.write_text(program)
    converted = tmp_path / "converted.py"
    outcome = codemod.migrate_source(program, str(original), to_tfdata=True)
    converted.write_text(outcome.code.replace(".repeat(2)", ".repeat(1)"))
    result = _compare("--unordered", "--batches", "100", str(original), str(converted), *files)
    assert result.returncode == 1
    assert "the first side read 11 batches, the second 6" in result.stderr


# A file queue read into a hand-built FIFOQueue; `after` goes after the dequeue's inputs.
_QUEUED = (
    "q = tf.train.string_input_producer(['a'])\n"
    "_, v = tf.TextLineReader().read(q)\n"
    "eq = tf.FIFOQueue(10, [tf.string])\n"
    "e = eq.enqueue([v])\n"
    "{after}"
    "tf.train.add_queue_runner(tf.train.QueueRunner(eq, [e] * 2))\n"
    "b = eq.dequeue_many(2)\n"
)


def test_to_tfdata_follows_an_if_on_the_mode_through_each_branch():
    """resnet's cifar_input: the queue (and some steps) chosen by `if mode == 'train':`;
    each branch becomes its own tf.data pipeline, and the if chooses between them (the
    eval branch's batches: examples/cifar_queue.py, run both ways)."""
    body = (
        "q = tf.train.string_input_producer(['a'], shuffle=False)\n"
        "_, v = tf.TextLineReader().read(q)\n"
        "x = tf.strings.length(v)\n"
        "if mode == 'train':\n"
        "    x = x * 2\n"
        "    eq = tf.RandomShuffleQueue(10, 4, [tf.int32], shapes=[[]])\n"
        "    n = 2\n"
        "else:\n"
        "    eq = tf.FIFOQueue(10, [tf.int32], shapes=[[]])\n"
        "    n = 1\n"
        "e = eq.enqueue([x])\n"
        "tf.train.add_queue_runner(tf.train.QueueRunner(eq, [e] * n))\n"
        "b = eq.dequeue_many(2)\n"
        "c = b + 1\n"
    )
    outcome = codemod.migrate_source("import tensorflow as tf\n" + body, "p.py", to_tfdata=True)
    notes = [f.flag.message for f in outcome.findings if f.flag.code == "CI014"]
    assert len(notes) == 2 and "RandomShuffleQueue.dequeue_many" in notes[0]
    assert "FIFOQueue.dequeue_many" in notes[1]
    code = outcome.code
    assert "if mode == 'train':" in code and "else:" in code and "Queue(" not in code
    train, evaluate = code.split("else:")
    assert "x = x * 2" in train and "x = x * 2" not in evaluate
    assert ".shuffle(10, seed=None)" in train and ".shuffle(10" not in evaluate
    assert code.rstrip().endswith("c = b + 1")  # After the if, once.
    # A branch that ends the pipeline on its own leaves the rest using its queue: it stays.
    apart = body.replace(
        "    n = 1\n",
        "    n = 1\n    e = eq.enqueue([x])\n"
        "    tf.train.add_queue_runner(tf.train.QueueRunner(eq, [e]))\n"
        "    b = eq.dequeue_many(2)\n",
    )
    kept = codemod.migrate_source("import tensorflow as tf\n" + apart, "p.py", to_tfdata=True)
    reasons = [f.flag.message for f in kept.findings if f.flag.code == "CI015"]
    assert (
        len(reasons) == 1 and "e, eq, x, of the example or its queue, is used after" in reasons[0]
    )
    # ... and what its first branch would have been is not said: both queues are kept.
    codes = [f.flag.code for f in kept.findings]
    assert "CI014" not in codes and codes.count("CI001") == 2


def test_to_tfdata_converts_a_random_shuffle_queue_to_a_shuffle_buffer():
    body = _QUEUED.format(after="").replace(
        "tf.FIFOQueue(10, [tf.string])", "tf.RandomShuffleQueue(10, 4, [tf.string], seed=5)"
    )
    outcome = codemod.migrate_source("import tensorflow as tf\n" + body, "p.py", to_tfdata=True)
    notes = [f.flag.message for f in outcome.findings]
    assert len(notes) == 1 and "RandomShuffleQueue.dequeue_many converted" in notes[0]
    assert "shuffle order is tf.data's" in notes[0] and "one reading thread" in notes[0]
    assert "_dataset_1 = _dataset_1.shuffle(10, seed=5)" in outcome.code
    assert "_dataset_1.batch(2, drop_remainder=True)" in outcome.code
    assert "tf.RandomShuffleQueue" not in outcome.code and "compat_input" not in outcome.code


@pytest.mark.parametrize(
    "body, reason",
    [
        (
            "q = tf.train.string_input_producer(['a'])\n_, v = tf.TextLineReader().read(q)\n"
            "w = tf.strings.length(v)\nb = tf.train.batch([v], 2)\nprint(w)\n",
            "w, computed per example, is used after the batcher",
        ),
        (
            "def read(q):\n    return tf.TextLineReader().read(q)\n"
            "q = tf.train.string_input_producer(['a'])\nr = [read(q) for _ in range(2)]\n"
            "b = tf.train.batch_join(r, 2)\n",
            "read does not start with a reader's read",
        ),
        (
            "def read(q):\n    _, v = tf.TextLineReader().read(q)\n    return v\n"
            "q = tf.train.string_input_producer(['a'])\nr = [read(q) for _ in range(2)]\n"
            "n = len(r)\nb = tf.train.batch_join(r, 2)\n",
            "the readers' list is used before the _join",
        ),
        (
            "q = tf.train.string_input_producer(['a'])\nex = []\nfor i in range(2):\n"
            "    _, v = tf.TextLineReader().read(q)\n    ex.append([v, i])\n"
            "b = tf.train.batch_join(ex, 2)\n",
            "the loop's example depends on its counter",
        ),
        # Readers it does not convert, inline and in a reading function.
        (
            "q = tf.train.string_input_producer(['a'])\n"
            "_, v = tf.WholeFileReader().read(q)\nb = tf.train.batch([v], 2)\n",
            "WholeFileReader is not converted yet",
        ),
        (
            "def read(q):\n    r = tf.FixedLengthRecordReader(record_bytes=4, hop_bytes=2)\n"
            "    _, v = r.read(q)\n    return v\n"
            "q = tf.train.string_input_producer(['a'])\nv = read(q)\nb = tf.train.batch([v], 2)\n",
            "the reader has options",
        ),
        # Hand-built queues that do more than batch.
        (
            _QUEUED.format(after="n = eq.size()\n"),
            "eq or its enqueue op serves something else",
        ),
        (
            _QUEUED.format(after="").replace(
                "tf.train.add_queue_runner(tf.train.QueueRunner(eq, [e] * 2))\n", ""
            ),
            "no QueueRunner runs an enqueue op of eq",
        ),
        (
            _QUEUED.format(after="").replace("eq.dequeue_many(2)", "eq.dequeue()"),
            "eq.dequeue() reads one example a run, not a batch",
        ),
        (
            _QUEUED.format(after="").replace("[e] * 2", "[e, other]"),
            "the QueueRunner runs other ops",
        ),
    ],
    ids=[
        "per-example-used-after",
        "function-not-a-read",
        "join-list-used",
        "loop-counter",
        "whole-file-reader",
        "reader-options",
        "queue-size-read",
        "queue-without-runner",
        "queue-dequeue-one",
        "queue-runner-other-ops",
    ],
)
def test_to_tfdata_keeps_what_it_cannot_move_with_the_reason(body, reason):
    """Each reason a pipeline stays on compat_input (CI015), one program each."""
    outcome = codemod.migrate_source("import tensorflow as tf\n" + body, "p.py", to_tfdata=True)
    kept = [f.flag.message for f in outcome.findings if f.flag.code == "CI015"]
    assert len(kept) == 1 and reason in kept[0], kept


def test_legacy_seq2seq_sequence_loss_is_written_in_with_the_helper_it_calls():
    # The PTB tutorial of TensorFlow 1.0-1.2: `tf.contrib.legacy_seq2seq.sequence_loss_by_example`.
    outcome = _migrate(
        """\
        import tensorflow as tf
        a = tf.contrib.legacy_seq2seq.sequence_loss([l], [t], [w])
        b = tf.contrib.legacy_seq2seq.sequence_loss_by_example([l], [t], [w])
        """
    )
    code = outcome.code
    assert code.count("def _contrib_legacy_sequence_loss(") == 1
    assert code.count("def _contrib_legacy_sequence_loss_by_example(") == 1
    assert "a = _contrib_legacy_sequence_loss([l], [t], [w])" in code
    assert "b = _contrib_legacy_sequence_loss_by_example([l], [t], [w])" in code
    alone = _migrate(
        """\
        import tensorflow as tf
        a = tf.contrib.legacy_seq2seq.sequence_loss([l], [t], [w])
        """
    ).code
    # sequence_loss calls the per-example helper: the file defines it too.
    assert alone.count("def _contrib_legacy_sequence_loss_by_example(") == 1


@pytest.mark.parametrize(
    "over_time, over_batch, own_loss",
    [
        (True, True, False),
        (False, True, False),
        (True, False, False),
        (False, False, True),
    ],
)
def test_the_written_legacy_seq2seq_losses_compute_contribs(over_time, over_batch, own_loss):
    import numpy as np
    import tensorflow as tf

    from compat_input._src.commands import contrib_helpers

    rng = np.random.RandomState(2)
    logits = [rng.randn(4, 5).astype(np.float32) for _ in range(3)]
    targets = [rng.randint(0, 5, 4).astype(np.int32) for _ in range(3)]
    weights = [(rng.rand(4) > 0.3).astype(np.float32) for _ in range(3)]
    weights[0][:] = 0.0  # A step that counts for nothing.
    own = (
        (
            lambda labels, logits: (
                2.0 * tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
            )
        )
        if own_loss
        else None
    )
    with tf.Graph().as_default():
        args = (
            [tf.constant(x) for x in logits],
            [tf.constant(t) for t in targets],
            [tf.constant(w) for w in weights],
        )
        per_example = contrib_helpers._contrib_legacy_sequence_loss_by_example(
            *args, average_across_timesteps=over_time, softmax_loss_function=own
        )
        total = contrib_helpers._contrib_legacy_sequence_loss(
            *args,
            average_across_timesteps=over_time,
            average_across_batch=over_batch,
            softmax_loss_function=own,
        )
        with tf.compat.v1.Session() as sess:
            got_per_example, got_total = sess.run([per_example, total])
    # contrib's documented computation, in numpy.
    steps = []
    for x, t, w in zip(logits, targets, weights):
        shifted = x - x.max(-1, keepdims=True)
        log_probs = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
        steps.append(-log_probs[np.arange(4), t] * (2.0 if own_loss else 1.0) * w)
    want = np.sum(steps, axis=0)
    if over_time:
        want = want / (np.sum(weights, axis=0) + 1e-12)
    np.testing.assert_allclose(got_per_example, want, rtol=1e-5)
    np.testing.assert_allclose(got_total, want.sum() / (4 if over_batch else 1), rtol=1e-5)


def test_the_written_legacy_seq2seq_loss_refuses_lists_of_other_lengths():
    import tensorflow as tf

    from compat_input._src.commands import contrib_helpers

    with tf.Graph().as_default():
        step = tf.zeros([2, 3])
        with pytest.raises(ValueError, match="must be the same 2, 1, 2"):
            contrib_helpers._contrib_legacy_sequence_loss_by_example(
                [step, step], [tf.zeros([2], tf.int32)] * 2, [tf.ones([2])]
            )


class _TanhCell:
    """A cell of no variables for the decoders' tests: state' = tanh(x W + state U)."""

    def __init__(self, w, u):
        self.w, self.u, self.output_size = w, u, u.shape[1]

    def __call__(self, x, state):
        import tensorflow as tf

        new = tf.tanh(tf.matmul(x, tf.constant(self.w)) + tf.matmul(state, tf.constant(self.u)))
        return new, new


@pytest.mark.parametrize("looped", [False, True])
def test_the_written_legacy_rnn_decoder_runs_the_cell_over_the_steps(looped):
    import numpy as np
    import tensorflow as tf

    from compat_input._src.commands import contrib_helpers

    rng = np.random.RandomState(3)
    w, u = rng.randn(3, 3).astype(np.float32), rng.randn(3, 3).astype(np.float32)
    steps = [rng.randn(2, 3).astype(np.float32) for _ in range(3)]
    start = rng.randn(2, 3).astype(np.float32)
    with tf.Graph().as_default():
        made = []

        def loop(previous, i):
            made.append(tf.compat.v1.get_variable_scope().name)
            return previous * float(i)

        outputs, state = contrib_helpers._contrib_legacy_rnn_decoder(
            [tf.constant(s) for s in steps],
            tf.constant(start),
            _TanhCell(w, u),
            loop_function=loop if looped else None,
        )
        with tf.compat.v1.Session() as sess:
            got, got_state = sess.run([outputs, state])
    want, h = [], start
    for i, x in enumerate(steps):
        if looped and i > 0:
            x = want[-1] * float(i)
        h = np.tanh(x @ w + h @ u)
        want.append(h)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_state, want[-1], rtol=1e-5, atol=1e-6)
    assert made == (["rnn_decoder/loop_function"] * 2 if looped else [])


@pytest.mark.parametrize("heads, initial_attention, looped", [(1, False, False), (2, True, True)])
def test_the_written_legacy_attention_decoder_computes_contribs(heads, initial_attention, looped):
    # Bahdanau attention as TensorFlow 1's legacy_seq2seq wrote it, in numpy, with the
    # variables it made; their names as TensorFlow 1 made them (old checkpoints restore).
    import numpy as np
    import tensorflow as tf

    from compat_input._src.commands import contrib_helpers

    tf1 = tf.compat.v1
    rng = np.random.RandomState(4)
    batch, length, size, width = 2, 3, 4, 5
    w, u = rng.randn(width, width).astype(np.float32), rng.randn(width, width).astype(np.float32)
    memory = rng.randn(batch, length, size).astype(np.float32)
    steps = [rng.randn(batch, width).astype(np.float32) for _ in range(3)]
    start = rng.randn(batch, width).astype(np.float32)
    with tf.Graph().as_default():
        outputs, state = contrib_helpers._contrib_legacy_attention_decoder(
            [tf.constant(s) for s in steps],
            tf.constant(start),
            tf.constant(memory),
            _TanhCell(w, u),
            output_size=width,
            num_heads=heads,
            loop_function=(lambda previous, i: previous + 1.0) if looped else None,
            initial_state_attention=initial_attention,
        )
        variables = tf1.global_variables()
        with tf1.Session() as sess:
            sess.run(tf1.global_variables_initializer())
            got, got_state, values = sess.run([outputs, state, {v.op.name: v for v in variables}])
    names = {"attention_decoder/kernel", "attention_decoder/bias"}
    for k in range(heads):
        names |= {f"attention_decoder/AttnW_{k}", f"attention_decoder/AttnV_{k}"}
        names |= {
            f"attention_decoder/Attention_{k}/kernel",
            f"attention_decoder/Attention_{k}/bias",
        }
    names |= {"attention_decoder/AttnOutputProjection/kernel"}
    names |= {"attention_decoder/AttnOutputProjection/bias"}
    assert set(values) == names

    def linear(parts, scope):
        return np.concatenate(parts, 1) @ values[f"{scope}kernel"] + values[f"{scope}bias"]

    def attention(query):
        reads = []
        for k in range(heads):
            features = memory @ values[f"attention_decoder/AttnW_{k}"][0, 0]
            y = linear([query], f"attention_decoder/Attention_{k}/")
            scores = (values[f"attention_decoder/AttnV_{k}"] * np.tanh(features + y[:, None])).sum(
                -1
            )
            weights = np.exp(scores - scores.max(1, keepdims=True))
            weights /= weights.sum(1, keepdims=True)
            reads.append((weights[:, :, None] * memory).sum(1))
        return reads

    h, want = start, []
    reads = attention(h) if initial_attention else [np.zeros((batch, size))] * heads
    for i, x in enumerate(steps):
        if looped and i > 0:
            x = want[-1] + 1.0
        h = np.tanh(linear([x, *reads], "attention_decoder/") @ w + h @ u)
        reads = attention(h)
        want.append(linear([h, *reads], "attention_decoder/AttnOutputProjection/"))
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(got_state, h, rtol=1e-4, atol=1e-5)


def test_legacy_seq2seq_decoders_are_written_in_with_the_linear_map_they_share():
    outcome = _migrate(
        """\
        import tensorflow as tf
        a = tf.contrib.legacy_seq2seq.attention_decoder(inputs, state, memory, cell)
        b = tf.contrib.legacy_seq2seq.rnn_decoder(inputs, state, cell)
        """
    )
    code = outcome.code
    assert "a = _contrib_legacy_attention_decoder(inputs, state, memory, cell)" in code
    assert "b = _contrib_legacy_rnn_decoder(inputs, state, cell)" in code
    assert code.count("def _contrib_legacy_linear(") == 1
    assert code.count("def _contrib_legacy_attention_decoder(") == 1
    assert code.count("def _contrib_legacy_rnn_decoder(") == 1
