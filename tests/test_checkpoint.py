"""The input position in checkpoints: Saver, Supervisor, MonitoredTrainingSession."""

import collections
import logging
import threading
import time

import pytest
import tensorflow as tf

import compat_input
from helpers import assert_pristine
from helpers import checkpoint_bytes
from helpers import compat_api
from helpers import drain
from helpers import legacy_api
from helpers import trained_and_saved

tf1 = tf.compat.v1


def _build():
    x = compat_input.range_input_producer(30, num_epochs=2, seed=5).dequeue()
    batch = compat_input.shuffle_batch(
        [x], 4, capacity=20, min_after_dequeue=6, seed=9, allow_smaller_final_batch=True
    )
    step = tf1.train.get_or_create_global_step()
    return batch, step.assign_add(1)


def _uninterrupted():
    with tf.Graph().as_default():
        batch, _ = _build()
        with tf1.Session() as sess:
            sess.run(tf1.global_variables_initializer())
            compat_input.start_queue_runners(sess)
            return drain(sess, batch)


def test_a_plain_saver_resumes_the_input_where_the_checkpoint_was_taken(tmp_path):
    full = _uninterrupted()
    path = str(tmp_path / "model.ckpt")
    with tf.Graph().as_default():
        batch, _ = _build()
        saver = tf1.train.Saver()
        with tf1.Session() as sess:
            sess.run(tf1.global_variables_initializer())
            compat_input.start_queue_runners(sess)
            before = [sess.run(batch).tolist() for _ in range(3)]
            saver.save(sess, path)
            lost = [sess.run(batch).tolist() for _ in range(2)]  # Then a crash: never saved.
    after = _restored_batches(path)
    assert before == full[:3] and lost == full[3:5]
    assert after[:2] == full[3:5]
    seen = collections.Counter(x for b in before + after for x in b)
    assert seen == collections.Counter({i: 2 for i in range(30)})


def test_supervisor_restart_after_a_crash_resumes_the_input(tmp_path):
    full = _uninterrupted()
    logdir = str(tmp_path)
    with tf.Graph().as_default():
        batch, step = _build()
        sv = compat_input.Supervisor(logdir=logdir, save_model_secs=0, save_summaries_secs=0)
        sess = sv.prepare_or_wait_for_session()
        first = [sess.run([batch, step])[0].tolist() for _ in range(4)]
        sv.saver.save(sess, sv.save_path, global_step=sv.global_step)
        sess.run(batch)  # Lost in the crash: no clean shutdown below.
        sess.close()
    with tf.Graph().as_default():
        batch, step = _build()
        sv = compat_input.Supervisor(logdir=logdir, save_model_secs=0, save_summaries_secs=0)
        rest = []
        with sv.managed_session() as sess:
            assert sess.run(sv.global_step) == 4
            while not sv.should_stop():
                rest.append(sess.run(batch).tolist())
    assert first == full[:4] and rest[0] == full[4]
    assert collections.Counter(x for b in first + rest for x in b) == collections.Counter(
        {i: 2 for i in range(30)}
    )


def test_supervisor_restores_a_checkpoint_written_without_positions(tmp_path, caplog):
    logdir = str(tmp_path)
    compat_input.configure(save_input_position=False)
    try:
        with tf.Graph().as_default():
            batch, step = _build()
            sv = compat_input.Supervisor(logdir=logdir, save_model_secs=0, save_summaries_secs=0)
            with sv.managed_session() as sess:
                sess.run([batch, step])
                sv.saver.save(sess, sv.save_path, global_step=sv.global_step)
    finally:
        compat_input.configure(save_input_position=True)
    with tf.Graph().as_default():
        batch, step = _build()
        sv = compat_input.Supervisor(logdir=logdir, save_model_secs=0, save_summaries_secs=0)
        with caplog.at_level(logging.WARNING), sv.managed_session() as sess:
            assert sess.run(sv.global_step) == 1
            assert sess.run(batch).tolist() == _uninterrupted()[0]
    assert "holds no input position for" in caplog.text


def test_stock_supervisor_checkpoints_positions_before_starting_queue_runners(tmp_path):
    with tf.Graph().as_default():
        batch, step = _build()
        sv = tf1.train.Supervisor(logdir=str(tmp_path), save_model_secs=1, save_summaries_secs=0)
        with sv.managed_session() as sess:
            got = sess.run(batch).tolist()
    assert got == _uninterrupted()[0]
    names = tf.train.load_checkpoint(str(tmp_path)).get_variable_to_shape_map()
    assert any(n.startswith("compat_input/shuffle_batch/position") for n in names)


def test_monitored_training_session_resumes_the_input(tmp_path):
    full = _uninterrupted()
    for expected in (full[:3], full[3:6]):
        with tf.Graph().as_default():
            batch, step = _build()
            hooks = [tf1.train.CheckpointSaverHook(str(tmp_path), save_steps=1)]
            with tf1.train.MonitoredTrainingSession(
                checkpoint_dir=str(tmp_path), save_checkpoint_secs=None, chief_only_hooks=hooks
            ) as sess:
                got = [sess.run([batch, step])[0].tolist() for _ in range(3)]
        assert got == expected


def test_a_py_func_pipeline_is_left_out_of_checkpoints_with_a_warning(caplog):
    with tf.Graph().as_default():
        x = compat_input.range_input_producer(4).dequeue()
        y = tf1.py_func(lambda v: v * 2, [x], tf.int32, stateful=False)
        y.set_shape([])
        with caplog.at_level(logging.WARNING):
            compat_input.batch([y], 2, name="pyfunc_batch")
        saveables = tf1.get_collection(tf1.GraphKeys.SAVEABLE_OBJECTS)
    assert "pyfunc_batch" in caplog.text and "left out of checkpoints" in caplog.text
    assert not any("pyfunc_batch" in s.name for s in saveables)


def _write_legacy_checkpoint(path):
    """A checkpoint written by the same program on TensorFlow's own queues."""
    assert_pristine()  # Installed, tf.compat.v1.train.* would be compat_input's.
    with tf.Graph().as_default():
        x = tf1.train.range_input_producer(30, num_epochs=2, seed=5).dequeue()
        batch = tf1.train.shuffle_batch([x], 4, capacity=20, min_after_dequeue=6, seed=9)
        step = tf1.train.get_or_create_global_step().assign_add(1)
        saver = tf1.train.Saver()
        with tf1.Session() as sess:
            sess.run([tf1.global_variables_initializer(), tf1.local_variables_initializer()])
            coord = tf1.train.Coordinator()
            threads = tf1.train.start_queue_runners(sess, coord)
            sess.run([batch, step])
            saver.save(sess, path)
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=5)


def _write_without_positions(path):
    compat_input.configure(save_input_position=False)
    try:
        with tf.Graph().as_default():
            batch, step = _build()
            saver = tf1.train.Saver()
            with tf1.Session() as sess:
                sess.run(tf1.global_variables_initializer())
                compat_input.start_queue_runners(sess)
                sess.run([batch, step])
                saver.save(sess, path)
    finally:
        compat_input.configure(save_input_position=True)


def test_a_plain_saver_restores_a_checkpoint_written_without_positions(tmp_path, caplog):
    path = str(tmp_path / "old.ckpt")
    _write_legacy_checkpoint(path)
    compat_input.install()  # After writing: installed, the writer would not be legacy.
    with tf.Graph().as_default():
        batch, step = _build()
        saver = tf1.train.Saver()
        with tf1.Session() as sess, caplog.at_level(logging.WARNING, logger="compat_input"):
            sess.run(tf1.global_variables_initializer())
            saver.restore(sess, path)
            compat_input.start_queue_runners(sess)
            assert sess.run(tf1.train.get_global_step()) == 1
            assert sess.run(batch).tolist() == _uninterrupted()[0]
    assert "holds no input position for" in caplog.text


def test_monitored_training_session_restores_a_checkpoint_written_without_positions(tmp_path):
    _write_legacy_checkpoint(str(tmp_path / "model.ckpt"))
    compat_input.install()  # After writing: installed, the writer would not be legacy.
    with open(tmp_path / "checkpoint", "w") as f:
        f.write('model_checkpoint_path: "model.ckpt"\n')
    with tf.Graph().as_default():
        batch, step = _build()
        with tf1.train.MonitoredTrainingSession(
            checkpoint_dir=str(tmp_path), save_checkpoint_secs=None
        ) as sess:
            assert sess.run(tf1.train.get_global_step()) == 1
            assert sess.run(batch).tolist() == _uninterrupted()[0]


def test_a_missing_variable_still_fails_the_restore(tmp_path):
    path = str(tmp_path / "old.ckpt")
    _write_without_positions(path)
    with tf.Graph().as_default():
        _build()
        tf1.Variable(3.0, name="new_weight")
        saver = tf1.train.Saver()
        with tf1.Session() as sess:
            import pytest

            with pytest.raises(tf.errors.NotFoundError):
                saver.restore(sess, path)


def test_without_install_a_plain_saver_refuses_a_checkpoint_written_without_positions(tmp_path):
    """Documented: only install() makes every Saver tolerant; TensorFlow is left as it is."""
    path = str(tmp_path / "old.ckpt")
    _write_legacy_checkpoint(path)
    with tf.Graph().as_default():
        _build()
        saver = tf1.train.Saver()
        with tf1.Session() as sess:
            import pytest

            with pytest.raises(tf.errors.NotFoundError, match="compat_input"):
                saver.restore(sess, path)


def test_a_save_before_the_start_leaves_the_input_unstarted_and_saves_a_fresh_position(tmp_path):
    # The stock Supervisor checkpoints in one thread while it starts queue runners in
    # another. A save that started the pipeline itself raced that start, which then rewound
    # the pipeline after a read (tf_slim's learning.train with a summary thread: one batch
    # twice, 87 training batches where legacy delivers 86).
    with tf.Graph().as_default():
        batch, _ = _build()
        saver = tf1.train.Saver()
        with tf1.Session() as sess:
            sess.run(tf1.global_variables_initializer())
            path = saver.save(sess, str(tmp_path / "early"))
            try:
                sess.run(batch)
                early = "read"
            except tf.errors.InvalidArgumentError as error:
                early = error.message
            compat_input.start_queue_runners(sess)
            started = drain(sess, batch)
        with tf1.Session() as sess:
            sess.run(tf1.global_variables_initializer())
            saver.restore(sess, path)
            compat_input.start_queue_runners(sess)
            restored = drain(sess, batch)
    assert "was never started in this session" in early  # Not started by the save.
    assert started == restored == _uninterrupted()  # The position saved is a fresh one.
    assert set(_positions_held(path).values()) == {b""}  # Nothing serialized for either.


def _train_then_evaluate(api, tmp_path, eval_name: str) -> tuple:
    """A trainer's checkpoint restored by a plain Saver into an evaluation graph with its own
    input (the census trainer's evaluation hook): what the evaluation reads, and its step."""
    train_file = tmp_path / "train.txt"
    eval_file = tmp_path / "eval.txt"
    train_file.write_text("".join(f"t{i}\n" for i in range(20)))
    eval_file.write_text("".join(f"e{i}\n" for i in range(7)))
    path = str(tmp_path / f"{api.name}.ckpt")
    with tf.Graph().as_default():
        files = api.string_input_producer([str(train_file)], num_epochs=2, shuffle=False)
        _, line = api.TextLineReader().read(files)
        batch = api.batch([line], 3, name="input")
        step = tf1.train.get_or_create_global_step()
        train = tf.group(batch, step.assign_add(1))
        with tf1.Session() as sess:
            sess.run([tf1.global_variables_initializer(), tf1.local_variables_initializer()])
            coord = tf1.train.Coordinator()
            threads = api.start_queue_runners(sess, coord=coord)
            for _ in range(4):
                sess.run(train)
            tf1.train.Saver().save(sess, path)
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=10)
    with tf.Graph().as_default():
        files = api.string_input_producer([str(eval_file)], num_epochs=1, shuffle=False)
        _, line = api.TextLineReader().read(files)
        batch = api.batch([line], 3, name=eval_name, allow_smaller_final_batch=True)
        step = tf1.train.get_or_create_global_step()
        saver = tf1.train.Saver()
        with tf1.Session() as sess:
            sess.run(tf1.local_variables_initializer())
            saver.restore(sess, path)
            coord = tf1.train.Coordinator()
            threads = api.start_queue_runners(sess, coord=coord)
            read = drain(sess, batch)
            restored_step = sess.run(step)
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=10)
    return read, restored_step


@pytest.mark.parametrize("eval_name", ["eval_input", "input"])
def test_a_training_checkpoint_restores_into_an_evaluation_graph_as_legacy_s_did(
    tmp_path, caplog, eval_name
):
    # "input": the evaluation's input is named like the training one, over other files; the
    # training position must not be applied to it.
    legacy = _train_then_evaluate(legacy_api(), tmp_path, eval_name)
    compat_input.install()
    with caplog.at_level(logging.WARNING, logger="compat_input"):
        compat = _train_then_evaluate(compat_api(), tmp_path, eval_name)
    assert legacy == compat
    assert compat[1] == 4 and [x for b in compat[0] for x in b][0] == b"e0"
    assert f"no input position for 'TextLineReader', '{eval_name}'" in caplog.text


def _evaluate_each_checkpoint(api, path: str, eval_file, passes: int) -> list:
    """im2txt's evaluator: a finalized graph with its own input, each checkpoint restored
    by one Saver in a session of its own, the input read to its end: per pass, what it read,
    the step restored and the ops the restore added to the graph."""
    seen = []
    with tf.Graph().as_default() as graph:
        files = api.string_input_producer([str(eval_file)], num_epochs=1, shuffle=False)
        _, line = api.TextLineReader().read(files)
        batch = api.batch([line], 3, name="eval_input", allow_smaller_final_batch=True)
        step = tf1.train.get_or_create_global_step()
        saver = tf1.train.Saver()
        init = tf1.local_variables_initializer()
        graph.finalize()
        for _ in range(passes):
            with tf1.Session() as sess:
                sess.run(init)
                before = len(graph.get_operations())
                saver.restore(sess, path)
                ops = len(graph.get_operations()) - before
                coord = tf1.train.Coordinator()
                threads = api.start_queue_runners(sess, coord=coord)
                seen.append((drain(sess, batch), sess.run(step), ops))
                coord.request_stop()
                coord.join(threads, stop_grace_period_secs=10)
    return seen


def _training_checkpoint_and_evaluation_file(tmp_path) -> tuple:
    """A checkpoint of `_build`'s training after one step (its input's position in it), and
    an evaluation input's file of 7 lines of its own."""
    path = str(tmp_path / "model.ckpt")
    with tf.Graph().as_default():
        batch, step = _build()
        with tf1.Session() as sess:
            sess.run(tf1.global_variables_initializer())
            compat_input.start_queue_runners(sess)
            sess.run([batch, step])
            tf1.train.Saver().save(sess, path)
    eval_file = tmp_path / "eval.txt"
    eval_file.write_text("".join(f"e{i}\n" for i in range(7)))
    return path, eval_file


def test_an_evaluator_restores_each_training_checkpoint_once_into_its_finalized_graph(
    tmp_path, caplog
):
    # The training checkpoint holds the training input's position, not the evaluation's: the
    # restore read the model's variables, failed on the missing position and read them all
    # again, "Restoring parameters from" said twice (im2txt's evaluator, Inception's 95 MB
    # read twice); and each restore added a Saver to the finalized graph.
    path, eval_file = _training_checkpoint_and_evaluation_file(tmp_path)
    said = {}
    for api in (legacy_api(), compat_api()):
        if api.name == "compat":
            compat_input.install()
        caplog.clear()
        with caplog.at_level(logging.INFO, logger="tensorflow"):
            said[api.name] = _evaluate_each_checkpoint(api, path, eval_file, passes=2)
        restores = [r for r in caplog.records if "Restoring parameters from" in r.getMessage()]
        assert len(restores) == 2, api.name
    legacy, compat = said["legacy"], said["compat"]
    assert [(read, step) for read, step, _ in compat] == [(r, s) for r, s, _ in legacy]
    assert compat[0][0][0] == [b"e0", b"e1", b"e2"] and compat[0][1] == 1
    # The Saver's own restore, fed: no second Saver (its ops were 0.46 s of pix2pix's test).
    assert compat[0][2] == compat[1][2] == 0


def test_a_checkpoint_too_big_to_feed_restores_through_one_saver_without_the_positions(
    tmp_path, monkeypatch
):
    # Fed, every variable is held in memory at once: past a size, a second Saver reads them.
    from compat_input._src.runtime import restoring

    path, eval_file = _training_checkpoint_and_evaluation_file(tmp_path)
    legacy = _evaluate_each_checkpoint(legacy_api(), path, eval_file, passes=2)
    compat_input.install()
    monkeypatch.setattr(restoring, "_MOST_FED_BYTES", 0)
    compat = _evaluate_each_checkpoint(compat_api(), path, eval_file, passes=2)
    assert [(read, step) for read, step, _ in compat] == [(r, s) for r, s, _ in legacy]
    assert compat[0][2] > 0 and compat[1][2] == 0  # One Saver, made at the first restore.


def test_a_checkpoint_without_positions_restored_mid_run_leaves_the_running_input_as_is(
    tmp_path,
):
    # Legacy's restore never touched its queues: a running input goes on where it was.
    path = str(tmp_path / "old.ckpt")
    _write_legacy_checkpoint(path)

    def run(api) -> tuple:
        with tf.Graph().as_default():
            x = api.range_input_producer(30, num_epochs=2, shuffle=False).dequeue()
            batch = api.batch([x], 4, capacity=20)
            step = tf1.train.get_or_create_global_step()
            saver = tf1.train.Saver()
            with tf1.Session() as sess:
                sess.run([tf1.global_variables_initializer(), tf1.local_variables_initializer()])
                coord = tf1.train.Coordinator()
                threads = api.start_queue_runners(sess, coord=coord)
                first = [sess.run(batch).tolist() for _ in range(2)]
                saver.restore(sess, path)
                after = [sess.run(batch).tolist() for _ in range(2)]
                restored = sess.run(step)
                coord.request_stop()
                coord.join(threads, stop_grace_period_secs=10)
        return first, after, restored

    legacy = run(legacy_api())
    compat_input.install()
    compat = run(compat_api())
    assert compat == legacy
    assert legacy[2] == 1 and sum(legacy[0] + legacy[1], []) == list(range(16))


def test_what_positions_add_to_a_checkpoint_is_said_from_its_files(tmp_path):
    # im2txt's checkpoint held 524 MB of positions in 673; legacy's saved none. The size
    # said is the checkpoint's data less its variables (their shapes and types, from its
    # index), whatever the positions hold.
    import re

    from compat_input._src.runtime import position_costs

    position_costs.last_written[:] = [None, 0.0, False]

    def train_and_save(api, path):
        with tf.Graph().as_default():
            x = api.range_input_producer(10000, shuffle=False).dequeue()
            example = tf1.fill([4096], tf1.cast(x, tf.float32))
            batch = api.shuffle_batch([example], 8, capacity=800, min_after_dequeue=600, seed=1)
            w = tf1.Variable(tf1.zeros([4096]))
            return trained_and_saved(api, tf1.assign_add(w, tf1.reduce_mean(batch, 0)), path)

    compat_input.install()
    with tf.Graph().as_default():  # A graph of no input: its Saver saves no position.
        tf1.Variable(tf1.zeros([4096]))
        with tf1.Session() as sess:
            sess.run(tf1.global_variables_initializer())
            tf1.train.Saver().save(sess, str(tmp_path / "model"))
    assert position_costs.positions_said(at_least_mb=0.0) is None
    written = train_and_save(compat_api(), str(tmp_path / "compat"))
    data, model = checkpoint_bytes(written)
    said = position_costs.positions_said(at_least_mb=0.1)
    assert model >= 4096 * 4 and data - model > 100_000
    assert f"holds about {(data - model) / 1e6:,.0f} MB of input positions" in said, said
    assert "shuffle_batch" in said and f"of its {data / 1e6:,.0f} MB" in said, said
    # How long it took, which a checkpoint of large buffers makes long (skip_thoughts'
    # 198 MB of positions: about 16 s a save).
    assert re.search(r"and its save took \d+\.\d s", said), said
    assert position_costs.positions_said(at_least_mb=1e6) is None


def test_a_position_is_restored_into_the_same_input_only(tmp_path):
    # The checkpoint holds a position under this very name, for a batch of 4; the input
    # restored into batches 5, so it is another input, and starts from the beginning.
    path = str(tmp_path / "model.ckpt")
    with tf.Graph().as_default():
        batch, _ = _build()
        saver = tf1.train.Saver()
        with tf1.Session() as sess:
            sess.run(tf1.global_variables_initializer())
            compat_input.start_queue_runners(sess)
            for _ in range(2):
                sess.run(batch)
            saver.save(sess, path)
    compat_input.install()
    with tf.Graph().as_default():
        x = compat_input.range_input_producer(30, num_epochs=2, seed=5).dequeue()
        # Same names, another batch size: another input.
        batch = compat_input.shuffle_batch(
            [x], 5, capacity=20, min_after_dequeue=6, seed=9, allow_smaller_final_batch=True
        )
        tf1.train.get_or_create_global_step()
        saver = tf1.train.Saver()
        with tf1.Session() as sess:
            sess.run(tf1.global_variables_initializer())
            saver.restore(sess, path)
            compat_input.start_queue_runners(sess)
            after = drain(sess, batch)
    assert len([x for b in after for x in b]) == 60  # From the beginning: both epochs.


def test_a_supervisor_s_first_checkpoint_holds_fresh_positions(tmp_path):
    # Its checkpoint service saves at once, racing the first steps while the buffers fill
    # (youtube-8m's shape: 30 MB, 0.4 s of a save). The model took no step, or the few run
    # while the save was set up: the input's start is its position, whichever won the race
    # (decided by the global step, a third of skip_thoughts' runs saved the real position).
    # After that first save, or after a restore, a checkpoint holds the real position. Each
    # save here is held until the reads (and steps) before it are done.
    full = _uninterrupted()

    def supervised(logdir, reads: int, stepped: bool) -> tuple:
        """Reads, then the service's first checkpoint and one saved after it: their paths."""
        held = threading.Event()

        class HeldSaver(compat_input.Saver):
            def save(self, *args, **kwargs):
                assert held.wait(60)
                return super().save(*args, **kwargs)

        with tf.Graph().as_default():
            batch, step = _build()
            sv = compat_input.Supervisor(
                logdir=logdir, saver=HeldSaver(), save_model_secs=3600, save_summaries_secs=0
            )
            with sv.managed_session() as sess:
                before = tf1.train.latest_checkpoint(logdir)
                fetches = [batch, step] if stepped else [batch]
                read = [sess.run(fetches)[0].tolist() for _ in range(reads)]
                held.set()
                for _ in range(600):
                    if tf1.train.latest_checkpoint(logdir) != before:
                        break
                    time.sleep(0.1)
                first = tf1.train.latest_checkpoint(logdir)
                later = sv.saver.save(sess, logdir + "/later")
        return read, first, later

    for stepped in (False, True):
        logdir = str(tmp_path / f"stepped_{stepped}")
        read, first, later = supervised(logdir, 2, stepped)
        assert read == full[:2]
        assert _restored_batches(first, 1) == [full[0]]
        assert _restored_batches(later, 1) == [full[2]]  # A later save: the real position.
        # The start is saved as nothing: no iterator serialized while the first steps run.
        assert _positions_held(first)["shuffle_batch"] == b""
    # Restarted from `later` (step 0, the position after 2 batches): its first checkpoint
    # keeps the restored position.
    logdir = str(tmp_path / "stepped_False")
    read, first, _ = supervised(logdir, 0, False)
    assert _restored_batches(first, 1) == [full[2]]


def _restored_batches(path: str, limit: int = 100) -> list:
    """The batches `_build`'s input gives once `path` is restored (at most `limit`)."""
    with tf.Graph().as_default():
        batch, _ = _build()
        saver = tf1.train.Saver()
        with tf1.Session() as sess:
            sess.run(tf1.global_variables_initializer())
            saver.restore(sess, path)
            compat_input.start_queue_runners(sess)  # Must not rewind the restored input.
            return drain(sess, batch, limit)


def _positions_held(path: str) -> dict:
    """What the checkpoint at `path` holds for each input position, by pipeline name."""
    reader = tf.train.load_checkpoint(path)
    return {
        key.split("/")[1]: reader.get_tensor(key)
        for key in reader.get_variable_to_shape_map()
        if key.startswith("compat_input/") and key.endswith("_POSITION")
    }


def test_readers_only_batchers_read_save_the_start_and_restore_nothing(tmp_path):
    # youtube-8m's shape: readers over one producer, joined by a batcher that read through
    # its own iterator. Their own pipelines start only if read directly; their positions in
    # a checkpoint are the start, with no iterator serialized or restored (the Supervisor's
    # Saver made 30 ops apiece for them). Read directly, such a reader restarts from the
    # start after a restore, as a legacy reader did; the batcher resumes.
    paths = []
    for i in range(2):
        paths.append(str(tmp_path / f"f{i}.tfr"))
        with tf.io.TFRecordWriter(paths[-1]) as writer:
            for j in range(6):
                writer.write(b"%d-%d" % (i, j))

    def build():
        queue = compat_input.string_input_producer(paths, shuffle=False)
        reads = [compat_input.TFRecordReader().read_up_to(queue, 2)[1] for _ in range(2)]
        batch = compat_input.batch_join([[v] for v in reads], 3, enqueue_many=True)
        return reads, batch, compat_input.Saver()

    with tf.Graph().as_default() as graph:
        reads, batch, saver = build()
        serialized = [op for op in graph.get_operations() if op.type == "SerializeIterator"]
        assert len(serialized) == 1  # The batcher's alone.
        with tf1.Session() as sess:
            compat_input.start_queue_runners(sess)
            first_batches = [sess.run(batch).tolist() for _ in range(2)]
            direct = sess.run(reads[0]).tolist()
            path = saver.save(sess, str(tmp_path / "ckpt"))
            following = sess.run(batch).tolist()
    held = _positions_held(path)
    assert held["TFRecordReader"] == held["TFRecordReader_1"] == held["input_producer"] == b""
    assert held["batch_join"] != b""
    with tf.Graph().as_default():
        reads, batch, saver = build()
        with tf1.Session() as sess:
            saver.restore(sess, path)
            compat_input.start_queue_runners(sess)
            assert sess.run(batch).tolist() == following
            assert sess.run(reads[0]).tolist() == direct  # Its first block again.
    assert first_batches[0] != following
