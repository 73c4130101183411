"""tf.contrib at run time: install() stands in for it from the table the codemod uses.

Nothing of it exists before install() and nothing after uninstall(); in between each name
with a one-to-one home is that home, `import tensorflow.contrib.X` works, and a name
without one fails naming it. A TF1 trainer that reaches tf.contrib runs unchanged with
`compat-input run`, and prints what it prints on legacy queues.
"""

import importlib
import os
import subprocess
import sys

import pytest
import tensorflow as tf
import tf_slim

import compat_input
from compat_input._src.commands import contrib

tf1 = tf.compat.v1
HERE = os.path.dirname(os.path.abspath(__file__))


def _contrib_modules() -> list:
    return sorted(m for m in sys.modules if m.startswith("tensorflow.contrib"))


def test_nothing_of_it_exists_before_install_or_after_uninstall():
    assert not hasattr(tf1, "contrib") and _contrib_modules() == []
    compat_input.install()
    try:
        assert hasattr(tf1, "contrib") and "tensorflow.contrib.slim" in _contrib_modules()
    finally:
        compat_input.uninstall()
    assert not hasattr(tf1, "contrib") and _contrib_modules() == []
    with pytest.raises(ImportError):
        importlib.import_module("tensorflow.contrib.framework")


def test_common_names_are_their_homes(installed):
    assert tf1.contrib.framework.get_or_create_global_step is tf1.train.get_or_create_global_step
    assert tf1.contrib.rnn.static_rnn is tf1.nn.static_rnn
    assert tf1.contrib.slim is tf_slim
    assert tf1.contrib.framework.arg_scope is tf_slim.arg_scope
    assert tf1.contrib.layers.fully_connected is tf_slim.fully_connected
    assert tf1.contrib.tfprof.profile is tf1.profiler.profile
    assert tf1.contrib.tfprof.tfprof_logger.write_op_log is tf1.profiler.write_op_log
    assert tf1.contrib.data.parallel_interleave is tf.data.experimental.parallel_interleave
    import tensorflow.contrib.slim as slim
    from tensorflow.contrib import framework

    assert slim is tf_slim and framework.get_global_step is tf1.train.get_global_step


def test_contrib_keras_is_tf1s_keras(installed):
    # adversarial_text (tensorflow/models research): `K = tf.contrib.keras` for its layers
    # (the Keras API TensorFlow 1.4 shipped there); it stopped at import, on legacy alike.
    import tensorflow.contrib.keras as keras
    from tensorflow.contrib.keras import layers

    assert tf1.contrib.keras.layers.Dense is tf1.keras.layers.Dense
    assert keras.models.Sequential is tf1.keras.models.Sequential
    assert layers.Dropout is tf1.keras.layers.Dropout
    assert keras.initializers.glorot_uniform is tf1.keras.initializers.glorot_uniform


def test_contrib_linalg_operators_are_tf_linalgs_and_tril_is_lower_triangular(installed):
    # Kyubyong/transformer builds its decoder's causal mask with TensorFlow 1.4's
    # `tf.contrib.linalg.LinearOperatorTriL(diag_vals).to_dense()`: it stopped there both
    # ways. Its operator is tf.linalg's LinearOperatorLowerTriangular: the same lower
    # triangle, the upper one ignored (contrib's documented example).
    from tensorflow.contrib import linalg

    assert tf1.contrib.linalg.LinearOperatorDiag is tf1.linalg.LinearOperatorDiag
    assert linalg.LinearOperatorTriL is tf1.linalg.LinearOperatorLowerTriangular
    with tf.Graph().as_default(), tf1.Session() as sess:
        dense = tf1.contrib.linalg.LinearOperatorTriL([[1.0, 2.0], [3.0, 4.0]]).to_dense()
        assert sess.run(dense).tolist() == [[1.0, 0.0], [3.0, 4.0]]
    with pytest.raises(AttributeError, match="LinearOperatorUDVHUpdate is gone"):
        tf1.contrib.linalg.LinearOperatorUDVHUpdate  # noqa: B018 - other keywords now


def test_contrib_s_own_module_paths_reach_tf_slim_s_modules(installed):
    # Research code imports contrib's internal paths (video_prediction, slim's scripts).
    import tensorflow.contrib.framework.python.ops.variables as variables
    from tensorflow.contrib.layers.python import layers as tf_layers
    from tensorflow.contrib.layers.python.layers import utils
    from tensorflow.contrib.slim import add_arg_scope
    from tensorflow.contrib.slim.python.slim.data import parallel_reader

    assert tf_layers.layer_norm is tf_slim.layers.layer_norm
    assert utils.collect_named_outputs is tf_slim.layers.utils.collect_named_outputs
    assert add_arg_scope is tf_slim.add_arg_scope
    assert parallel_reader.parallel_read is tf_slim.data.parallel_reader.parallel_read
    assert variables.get_variables_to_restore is tf_slim.get_variables_to_restore
    with pytest.raises(AttributeError, match="tf_slim, which carries .* has no such name"):
        tf_layers.no_such_function  # noqa: B018


def test_contrib_s_package_names_and_re_exports_of_tensorflow_resolve(installed):
    # SSD-Tensorflow: `from tensorflow.contrib.framework.python.ops import add_arg_scope`
    # (contrib's package star-imported its modules; tf_slim's ops package does not), and
    # `from tensorflow.contrib.metrics.python.ops import set_ops` (TensorFlow's set ops,
    # re-exported): both stopped it at import, on legacy queues alike.
    from tensorflow.contrib.framework.python.ops import add_arg_scope
    from tensorflow.contrib.framework.python.ops import get_variables_to_restore
    from tensorflow.contrib.metrics.python.ops import set_ops

    assert add_arg_scope is tf_slim.add_arg_scope
    assert get_variables_to_restore is tf_slim.get_variables_to_restore
    assert set_ops.set_intersection is tf1.sets.set_intersection
    assert set_ops.set_size is tf1.sets.set_size
    import tensorflow.contrib.framework.python.ops as contrib_ops

    with pytest.raises(AttributeError, match="has no such name"):
        contrib_ops.no_such_function  # noqa: B018


def test_contrib_s_slim_nets_training_and_audio_module_paths_resolve(installed):
    # Public TF1 code, as a search of it imports them: fine-tuning tutorials' `from
    # tensorflow.contrib.slim.nets import resnet_v1`, evaluation scripts' contrib.training
    # module, the speech-commands tutorial's `audio_ops as contrib_audio`.
    import tensorflow.contrib.slim.nets as slim_nets
    from tensorflow.contrib.framework.python.ops import audio_ops as contrib_audio
    from tensorflow.contrib.slim import nets
    from tensorflow.contrib.slim.nets import resnet_v1
    from tensorflow.contrib.training.python.training import evaluation

    assert nets is slim_nets
    assert resnet_v1.resnet_v1_50 is tf_slim.nets.resnet_v1.resnet_v1_50
    assert nets.inception.inception_v3 is tf_slim.nets.inception_v3.inception_v3
    tf_slim_evaluation = importlib.import_module("tf_slim.training.evaluation")
    assert evaluation.evaluate_once is tf_slim_evaluation.evaluate_once
    with tf.Graph().as_default():
        wav = tf1.sin(tf1.range(4000, dtype=tf.float32) * 0.05)[:, None]
        # contrib's positional arguments: window_size, stride; sample_rate.
        spectrogram = contrib_audio.audio_spectrogram(wav, 256, 128, magnitude_squared=True)
        mfcc = contrib_audio.mfcc(spectrogram, 16000, dct_coefficient_count=10)
        kernel = tf.raw_ops.AudioSpectrogram(
            input=wav, window_size=256, stride=128, magnitude_squared=True
        )
        with tf1.Session() as sess:
            ours, theirs, coefficients = sess.run([spectrogram, kernel, mfcc])
    assert ours.shape == (1, 30, 129) and (ours == theirs).all()
    assert coefficients.shape == (1, 30, 10)


def test_contrib_s_module_paths_are_gone_after_uninstall():
    compat_input.install()
    importlib.import_module("tensorflow.contrib.slim.python.slim.data.prefetch_queue")
    compat_input.uninstall()
    assert _contrib_modules() == []
    with pytest.raises(ImportError):
        importlib.import_module("tensorflow.contrib.slim.python.slim.data.prefetch_queue")


def test_contrib_lookup_and_metrics_compute_as_tensorflow_s_own(installed):
    # The census trainer: labels through contrib.lookup's index table, its evaluation
    # metrics through contrib.metrics.aggregate_metric_map.
    with tf.Graph().as_default():
        table = tf1.contrib.lookup.index_table_from_tensor(tf.constant(["<=50K", ">50K"]))
        ids = table.lookup(tf.constant([">50K", "<=50K", "?"]))
        values, updates = tf1.contrib.metrics.aggregate_metric_map(
            {"accuracy": tf1.metrics.accuracy(tf.constant([1, 0, 1]), tf.constant([1, 1, 1]))}
        )
        with tf1.Session() as sess:
            sess.run([tf1.tables_initializer(), tf1.local_variables_initializer()])
            assert sess.run(ids).tolist() == [1, 0, -1]
            sess.run(updates)
            assert sess.run(values["accuracy"]) == pytest.approx(2 / 3)


def test_tfprof_model_analyzer_counts_parameters_and_flops(installed):
    """resnet's trainer: contrib's print_model_analysis with its option dicts."""
    analyzer = tf1.contrib.tfprof.model_analyzer
    with tf.Graph().as_default() as graph:
        w = tf1.Variable(tf.zeros([3, 4]), name="w")
        tf.matmul(w, tf.ones([4, 2]))
        params = analyzer.print_model_analysis(
            graph, tfprof_options=analyzer.TRAINABLE_VARS_PARAMS_STAT_OPTIONS
        )
        flops = analyzer.print_model_analysis(graph, tfprof_options=analyzer.FLOAT_OPS_OPTIONS)
    assert params.total_parameters == 3 * 4
    assert flops.total_float_ops == 2 * 3 * 4 * 2  # a [3, 4] x [4, 2] product


def test_every_name_of_the_table_resolves_or_says_what_it_needs(installed):
    for name in contrib.HOMES:
        package, attribute = name.split(".")
        try:
            value = getattr(getattr(tf1.contrib, package), attribute)
        except AttributeError as error:
            # tf.compat.v1's RNN cells need Keras 2, which this suite does not install.
            assert "Keras" in str(error) and f"tf.contrib.{name}" in str(error)
            continue
        assert value is not None and not isinstance(value, contrib.ContribModule), name


def test_contrib_nn_s_flipped_cross_entropies_take_logits_first(installed):
    # research/inception's loss (its slim/losses.py) stopped here, on legacy alike.
    import numpy as np

    rng = np.random.RandomState(3)
    logits = rng.randn(4, 5).astype(np.float32)
    dense = rng.dirichlet(np.ones(5), 4).astype(np.float32)
    sparse = rng.randint(0, 5, 4).astype(np.int64)
    targets = (rng.rand(4, 5) > 0.5).astype(np.float32)
    nn = tf1.contrib.nn
    with tf.Graph().as_default():
        x = tf.constant(logits)
        got = [
            nn.deprecated_flipped_softmax_cross_entropy_with_logits(x, tf.constant(dense)),
            nn.deprecated_flipped_softmax_cross_entropy_with_logits(
                tf.transpose(x), tf.constant(dense.T), dim=0
            ),
            nn.deprecated_flipped_sparse_softmax_cross_entropy_with_logits(x, sparse),
            nn.deprecated_flipped_sigmoid_cross_entropy_with_logits(x, tf.constant(targets)),
        ]
        with tf1.Session() as sess:
            got = sess.run(got)
    log_softmax = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    softmax_xent = -(dense * log_softmax).sum(-1)
    sigmoid_xent = np.maximum(logits, 0) - logits * targets + np.log1p(np.exp(-abs(logits)))
    np.testing.assert_allclose(got[0], softmax_xent, rtol=1e-5)
    np.testing.assert_allclose(got[1], softmax_xent, rtol=1e-5)
    np.testing.assert_allclose(got[2], -log_softmax[np.arange(4), sparse], rtol=1e-5)
    np.testing.assert_allclose(got[3], sigmoid_xent, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["learn.datasets", "copy_graph.copy_op_to_graph", "nope"])
def test_a_name_without_a_home_fails_naming_it(installed, name):
    with pytest.raises(AttributeError, match=f"tf.contrib.{name.split('.')[0]}.*compat-input"):
        value = tf1.contrib
        for part in name.split("."):
            value = getattr(value, part)


def _run(*args) -> str:
    command = [sys.executable, "-m", "compat_input._src.commands.cli", "run", *args]
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_a_trainer_that_reaches_contrib_runs_unchanged_as_on_legacy():
    program = os.path.join(HERE, "programs", "contrib_trainer.py")
    compat, legacy = _run(program), _run("--legacy", program)
    assert compat == legacy
    assert compat.splitlines()[-1] == "done" and len(compat.splitlines()) == 6


def _token_files(tmp_path) -> list:
    """Text lines of 1 to 9 token ids, two files."""
    rng = __import__("random").Random(3)
    paths = []
    for f in range(2):
        lines = [
            " ".join(str(rng.randint(1, 99)) for _ in range(rng.randint(1, 9))) for _ in range(40)
        ]
        path = tmp_path / f"tokens{f}.txt"
        path.write_text("\n".join(lines) + "\n")
        paths.append(str(path))
    return paths


def test_a_bucketing_trainer_runs_unchanged_as_on_legacy_queues(tmp_path):
    """tf.contrib.training.bucket_by_sequence_length served on tf.data, against the legacy
    queues' bucketing of tests/programs/legacy_contrib_training.py: every step's lengths
    and loss the same."""
    files = _token_files(tmp_path)
    program = os.path.join(HERE, "programs", "bucketing_trainer.py")
    compat = _run(program, *files)
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    legacy = subprocess.run(
        [sys.executable, os.path.join(HERE, "programs", "legacy_contrib_run.py"), program, *files],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert legacy.returncode == 0, legacy.stderr[-3000:]
    assert compat == legacy.stdout
    steps = compat.splitlines()
    # 160 lines in 3 buckets of 4: every batch of one bucket's lengths.
    assert steps[-1] == "done" and len(steps) > 30
    for step in steps[:-1]:
        lengths = eval(step.rsplit(" ", 1)[0])
        assert len(lengths) == 4 and len({(n >= 3) + (n >= 6) for n in lengths}) == 1


def test_contrib_training_batchers_are_not_given_to_a_legacy_run(tmp_path):
    program = os.path.join(HERE, "programs", "bucketing_trainer.py")
    command = [sys.executable, "-m", "compat_input._src.commands.cli", "run", "--legacy"]
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2")
    done = subprocess.run(
        [*command, program, *_token_files(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode != 0
    assert (
        "tf.contrib.training.bucket_by_sequence_length exists in TensorFlow 2 only as "
        "compat_input's" in done.stderr
    )


def test_the_multi_tower_trainer_runs_unchanged_as_on_legacy():
    """tf.contrib.slim.prefetch_queue (tf_slim's) in front of two towers, as the CIFAR-10
    multi-GPU trainer: the same losses both ways."""
    program = os.path.join(HERE, "programs", "multi_tower_trainer.py")
    compat, legacy = _run(program), _run("--legacy", program)
    assert compat == legacy
    assert compat.splitlines()[-1] == "done" and len(compat.splitlines()) == 7
