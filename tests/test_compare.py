"""`compat-input compare`: a program run two ways, its output compared, for users' CI."""

import os
import subprocess
import sys

from compat_input._src.commands import compare

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
CORPUS = os.path.join(ROOT, "tests", "corpus", "train_with_summaries.py")


def _compare(*args) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "compat_input._src.commands.cli", "compare", *args]
    return subprocess.run(command, capture_output=True, text=True, env=ENV, timeout=600)


def test_a_program_on_legacy_and_through_compat_input_compares_equal_but_for_ignored_parts():
    # The program prints the summary tags it wrote: legacy's queue summaries are among them
    # both ways (tests/test_fill_levels.py), so nothing needs ignoring.
    same = _compare(CORPUS, "--steps", "3")
    assert same.returncode == 0, same.stdout + same.stderr[-2000:]
    assert "same output (4 lines)" in same.stderr
    # An ignored part is left out: the summary line without its queue summary still equal.
    ignored = _compare("--ignore", r"[\w/]*fraction_of_\d+_full, ", CORPUS, "--steps", "2")
    assert ignored.returncode == 0, ignored.stdout + ignored.stderr[-2000:]


def test_an_original_against_a_copy_that_drifts_or_fails(tmp_path):
    drifted = tmp_path / "drifted.py"
    drifted.write_text(
        open(CORPUS)
        .read()
        .replace("tf.app.run()", "tf.compat.v1.app.run()")
        .replace(
            "import tensorflow as tf", "import tensorflow.compat.v1 as tf\ntf.disable_v2_behavior()"
        )
        .replace(
            'print("step %d loss %.4f" % (i, value))',
            'print("step %d loss %.4f" % (i, value * 1.001))',
        )
    )
    args = ["--ignore", r"[\w/]*fraction_of_\d+_full, ", CORPUS, str(drifted), "--steps", "2"]
    assert _compare(*args).returncode == 1
    assert _compare("--tolerance", "0.01", *args).returncode == 0
    broken = tmp_path / "broken.py"
    broken.write_text("raise SystemExit(3)\n")
    failed = _compare(CORPUS, str(broken))
    assert failed.returncode == 2
    assert "exited with status 3" in failed.stderr


def test_numbers_within_tolerance_and_nothing_else_compare_equal():
    assert compare._same_line("loss 1.0000 at 3", "loss 1.0004 at 3", 1e-3)
    assert not compare._same_line("loss 1.0000 at 3", "loss 1.0004 at 3", 0.0)
    assert not compare._same_line("loss 1.0 at 3", "loss 1.0 at 30", 0.1)
    assert not compare._same_line("loss 1.0", "cost 1.0", 1.0)
    assert compare._same_line("x nan", "x nan", 1e-6)


_ORDER_FREE = """
import os, tempfile
import tensorflow.compat.v1 as tf
tf.disable_v2_behavior()
{imports}
path = os.path.join(tempfile.mkdtemp(), "rows.csv")
with open(path, "w") as f:
    f.write("".join("%d,%d\\n" % (i, i % 3) for i in range(100)))
queue = {train}.string_input_producer([path], num_epochs=1, shuffle=False)
_, line = {readers}.TextLineReader().read(queue)
a, b = tf.decode_csv(line, [[0], [0]])
batch = {train}.{batcher}
total = tf.reduce_sum(batch[0])  # The batch itself is never fetched.
with tf.Session() as sess:
    sess.run(tf.local_variables_initializer())
    coord = tf.train.Coordinator()
    threads = {train}.start_queue_runners(sess, coord)
    seen = 0
    try:
        while True:
            seen += int(sess.run(total))
    except tf.errors.OutOfRangeError:
        pass
    coord.request_stop()
    # Joined: legacy runner threads still in a run at interpreter exit can abort the
    # process ("FATAL: exception not rethrown"), seen once on a loaded machine.
    coord.join(threads)
print("sum", seen)  # The same in any order.
"""


def _order_free(path, migrated: bool, batcher: str = "batch([a, b], 10)"):
    imports, train, readers = ("import compat_input", "compat_input", "compat_input")
    if not migrated:
        imports, train, readers = ("", "tf.train", "tf")
    text = _ORDER_FREE.format(imports=imports, train=train, readers=readers, batcher=batcher)
    path.write_text(text)
    return str(path)


def test_batches_compare_where_the_output_cannot_tell(tmp_path):
    original = _order_free(tmp_path / "original.py", migrated=False)
    migrated = _order_free(tmp_path / "migrated.py", migrated=True)
    shuffled = _order_free(
        tmp_path / "shuffled.py", True, "shuffle_batch([a, b], 10, 50, 20, seed=3)"
    )
    same = _compare("--batches", "5", original, migrated)
    assert same.returncode == 0, same.stdout + same.stderr[-2000:]
    assert "same first 5 input batches" in same.stderr
    # Legacy queues against compat_input, one program: the batches are recorded on both.
    through = _compare("--batches", "20", original)
    assert through.returncode == 0, through.stdout + through.stderr[-2000:]
    assert "same first 10 input batches" in through.stderr  # 100 rows: 10 batches.
    # The shuffled copy prints the same sum: only the batches show that its input differs.
    assert _compare(original, shuffled).returncode == 0
    drifted = _compare("--batches", "5", original, shuffled)
    assert drifted.returncode == 1
    assert "the input differs: batch 0 differs (shapes [10] [10] and [10] [10])" in drifted.stderr


def test_a_migrated_copy_imports_its_own_neighbours_under_batches(tmp_path):
    # With --batches the migrated copy runs under a recorder (`python -c`), whose path
    # starts with the working folder; plain python puts the script's folder first. A
    # module of the same name in the working folder must not shadow the copy's own.
    for folder, value in (("original", 1), ("migrated", 1)):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "helper.py").write_text(f"VALUE = {value}\n")
        (tmp_path / folder / "prog.py").write_text("import helper\nprint(helper.VALUE)\n")
    (tmp_path / "helper.py").write_text("raise ImportError('the working folder’s helper')\n")
    command = [sys.executable, "-m", "compat_input._src.commands.cli", "compare", "--batches", "1"]
    result = subprocess.run(
        [*command, "original/prog.py", "migrated/prog.py"],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=600,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stdout + result.stderr[-2000:]
    assert "same output (1 lines, no batcher's batch read)" in result.stderr
