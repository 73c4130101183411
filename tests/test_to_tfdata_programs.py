"""`compat-input migrate --to-tfdata` on the pipelines public programs write: loops over an
example's parts (video prediction), `read_up_to` blocks into dicts batched with
`enqueue_many` under an `if` on a flag (census), preloaded slices under a Supervisor
(transformer), a function that returns one example unbatched (CS20). Each converted
program prints what the original printed on legacy queues; each pipeline left says why."""

import os
import subprocess
import sys
import textwrap

import pytest
from compat_input_tools import codemod

from helpers import write_tfrecords

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="2", PYTHONPATH=ROOT)

# How each program below reads its input to the end, one `step` a run.
_DRAIN = """\
with tf.Session() as sess:
    sess.run(tf.local_variables_initializer())
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(sess=sess, coord=coord)
    try:
        while True:
            {step}
    except tf.errors.OutOfRangeError:
        print("end")
    coord.request_stop()
    coord.join(threads)
"""

FRAMES = """\
import sys
import tensorflow as tf
USE_STATE = int(sys.argv[2])
FRAMES = 3


def build_input(files):
    queue = tf.train.string_input_producer(files, num_epochs=1, shuffle=False)
    reader = tf.TFRecordReader()
    _, serialized = reader.read(queue)

    image_seq, state_seq = [], []

    for i in range(FRAMES):
        name = 'frame/%d' % i
        features = {name: tf.FixedLenFeature([2], tf.float32)}
        if USE_STATE:
            features['state/%d' % i] = tf.FixedLenFeature([1], tf.float32)
        parsed = tf.parse_single_example(serialized, features=features)
        image_seq.append(tf.reshape(parsed[name], [1, 2]) * 10.0)
        if USE_STATE:
            state_seq.append(tf.reshape(parsed['state/%d' % i], [1, 1]))

    image_seq = tf.concat(image_seq, 0)

    if USE_STATE:
        state_seq = tf.concat(state_seq, 0)
        images, states = tf.train.batch([image_seq, state_seq], 2,
                                        allow_smaller_final_batch=True)
        return images, states
    else:
        images = tf.train.batch([image_seq], 2, allow_smaller_final_batch=True)
        return images, tf.zeros([1])


images, states = build_input([sys.argv[1]])
""" + _DRAIN.format(step="print(sess.run([images, states]))")

CENSUS = """\
import sys
import tensorflow as tf
COLUMNS = ['age', 'hours', 'label']


def parse_csv(rows):
    columns = tf.decode_csv(rows, record_defaults=[[0], [0.0], ['']])
    return dict(zip(COLUMNS, columns))


def input_fn(filenames, num_epochs=None, shuffle=True, batch_size=4):
    filename_queue = tf.train.string_input_producer(
        filenames, num_epochs=num_epochs, shuffle=shuffle)
    reader = tf.TextLineReader(skip_header_lines=1)
    _, rows = reader.read_up_to(filename_queue, num_records=batch_size)
    features = parse_csv(rows)
    if shuffle:
        features = tf.train.shuffle_batch(
            features, batch_size, min_after_dequeue=2 * batch_size + 1,
            capacity=batch_size * 10, num_threads=2, enqueue_many=True,
            allow_smaller_final_batch=True)
    else:
        features = tf.train.batch(
            features, batch_size, capacity=batch_size * 10, num_threads=1,
            enqueue_many=True, allow_smaller_final_batch=True)
    return features, features.pop('label')


features, labels = input_fn(sys.argv[1:], num_epochs=1, shuffle=False, batch_size=3)
""" + _DRAIN.format(
    step="f, l = sess.run([features, labels]); "
    "print(sorted((k, v.tolist()) for k, v in f.items()), l.tolist())"
)

SUPERVISED_SLICES = """\
import sys
import numpy as np
import tensorflow as tf


def get_batch_data():
    X = tf.convert_to_tensor(np.arange(14).reshape(7, 2), tf.int32)
    Y = tf.convert_to_tensor(np.arange(7) * 100, tf.int32)
    input_queues = tf.train.slice_input_producer([X, Y], num_epochs=1, shuffle=False)
    x, y = tf.train.batch(input_queues, batch_size=3, allow_smaller_final_batch=True)
    return x, y


x, y = get_batch_data()
total = tf.reduce_sum(x) + tf.reduce_sum(y)
step = tf.train.get_or_create_global_step()
sv = tf.train.Supervisor(logdir=sys.argv[1], save_model_secs=0, save_summaries_secs=0,
                         saver=tf.train.Saver())
with sv.managed_session() as sess:
    while not sv.should_stop():
        try:
            print(sess.run([x, y, total]))
        except tf.errors.OutOfRangeError:
            print("end")
            break
"""

UNBATCHED = """\
import sys
import tensorflow as tf


def read_from_tfrecord(filenames):
    tfrecord_file_queue = tf.train.string_input_producer(filenames, shuffle=False)
    reader = tf.TFRecordReader()
    _, serialized = reader.read(tfrecord_file_queue)
    features = tf.parse_single_example(
        serialized, features={'frame/0': tf.FixedLenFeature([2], tf.float32)})
    frame = features['frame/0']
    doubled = frame * 2
    return frame, doubled


frame, doubled = read_from_tfrecord([sys.argv[1]])
with tf.Session() as sess:
    coord = tf.train.Coordinator()
    threads = tf.train.start_queue_runners(coord=coord)
    for _ in range(7):
        print(sess.run([frame, doubled]))
    coord.request_stop()
    coord.join(threads)
"""


RETURNED = """\
import sys
import tensorflow as tf


def inputs(files, batch_size):
    queue = tf.train.string_input_producer(files, num_epochs=1, shuffle=False)
    reader = tf.TFRecordReader()
    _, serialized = reader.read(queue)
    frame = tf.parse_single_example(
        serialized, features={'frame/1': tf.FixedLenFeature([2], tf.float32)})['frame/1']
    return tf.train.batch([frame * 2, frame], batch_size, allow_smaller_final_batch=True)


doubled, frames = inputs([sys.argv[1]], 2)
""" + _DRAIN.format(step="print(sess.run([doubled, frames]))")


def _floats(**features) -> bytes:
    import tensorflow as tf

    feature = {
        k: tf.train.Feature(float_list=tf.train.FloatList(value=v)) for k, v in features.items()
    }
    return tf.train.Example(features=tf.train.Features(feature=feature)).SerializeToString()


def _frames_file(tmp_path) -> str:
    records = [
        _floats(
            **{f"frame/{i}": [float(n), float(n + i)] for i in range(3)},
            **{f"state/{i}": [float(n * 10 + i)] for i in range(3)},
        )
        for n in range(5)
    ]
    return write_tfrecords(str(tmp_path / "frames.tfrecord"), records)


def _census_files(tmp_path) -> list:
    paths = []
    for index, rows in enumerate([7, 4]):
        path = tmp_path / f"census{index}.csv"
        lines = ["age,hours,label"] + [
            f"{20 + index * 10 + n},{n * 1.5},{'yes' if n % 2 else 'no'}" for n in range(rows)
        ]
        path.write_text("\n".join(lines) + "\n")
        paths.append(str(path))
    return paths


def _both_ways(tmp_path, program: str, args: list) -> tuple:
    """(the original's output on legacy queues, the converted program's), and the outcome."""
    original = tmp_path / "original.py"
    original.write_text(program)
    outcome = codemod.migrate_source(program, "original.py", to_tfdata=True)
    converted = tmp_path / "converted.py"
    converted.write_text(outcome.code)
    legacy = subprocess.run(
        [sys.executable, "-m", "compat_input._src.commands.cli", "run", "--legacy"]
        + [str(original), *args],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=300,
    )
    after = subprocess.run(
        [sys.executable, str(converted), *args],
        capture_output=True,
        text=True,
        env=ENV,
        timeout=300,
    )
    assert legacy.returncode == 0, legacy.stderr[-3000:]
    assert after.returncode == 0, after.stderr[-3000:] + outcome.code
    return legacy.stdout, after.stdout, outcome


def _converted(outcome) -> list:
    return [f for f in outcome.findings if f.flag.code == "CI014"]


@pytest.mark.parametrize("use_state", ["1", "0"])
def test_a_loop_over_an_examples_parts_and_a_batch_in_each_branch_convert(tmp_path, use_state):
    legacy, after, outcome = _both_ways(tmp_path, FRAMES, [_frames_file(tmp_path), use_state])
    assert len(_converted(outcome)) == 2  # One pipeline in each branch of the `if`.
    assert "compat_input" not in outcome.code
    # The loop moved whole into the example's function, with the lists it fills.
    function = outcome.code[outcome.code.index("def _example_1") :]
    assert function.index("image_seq, state_seq = [], []") < function.index("for i in range")
    assert after == legacy and legacy.count("array(") >= 4 and legacy.endswith("end\n")


def test_read_up_to_blocks_of_a_dict_batched_with_enqueue_many_convert(tmp_path):
    legacy, after, outcome = _both_ways(tmp_path, CENSUS, _census_files(tmp_path))
    assert len(_converted(outcome)) == 2
    assert ".batch(batch_size)" in outcome.code and ".unbatch()" in outcome.code
    # The files are shuffled where the program's own `shuffle` says so, as legacy's were.
    assert "if shuffle else" in outcome.code
    assert after == legacy and legacy.count("'age'") == 4 and legacy.endswith("end\n")


def test_preloaded_slices_under_a_supervisor_convert(tmp_path):
    legacy, after, outcome = _both_ways(tmp_path, SUPERVISED_SLICES, [str(tmp_path / "logdir")])
    assert len(_converted(outcome)) == 1
    assert "'table_initializer'" in outcome.code  # The Supervisor's local init op runs it.
    assert "compat_input" not in outcome.code
    assert after == legacy and legacy.count("array(") == 6 and legacy.endswith("end\n")


def test_a_function_that_returns_one_example_converts_unbatched(tmp_path):
    legacy, after, outcome = _both_ways(tmp_path, UNBATCHED, [_frames_file(tmp_path)])
    assert [f.flag.message.split(" converted")[0] for f in _converted(outcome)] == [
        "string_input_producer + TFRecordReader + unbatched read"
    ]
    assert "return frame, doubled" in outcome.code
    assert after == legacy and legacy.count("array(") == 14


def _kept(source: str) -> list:
    outcome = codemod.migrate_source(textwrap.dedent(source), "prog.py", to_tfdata=True)
    return [f.flag.message for f in outcome.findings if f.flag.code == "CI015"]


def test_a_batcher_no_producer_starts_says_why_it_stays():
    # facenet: dequeues of a queue the program fills from Python, batched with a fed size.
    (message,) = _kept(
        """\
        import tensorflow as tf
        def create_input_pipeline(input_queue, batch_size_placeholder):
            images_and_labels = []
            for _ in range(2):
                filenames, label = input_queue.dequeue()
                images_and_labels.append([tf.zeros([3]), label])
            image_batch, label_batch = tf.train.batch_join(
                images_and_labels, batch_size=batch_size_placeholder)
            return image_batch, label_batch
        """
    )
    assert "the batch_join batches examples that no string_input_producer" in message


def test_a_read_the_converter_cannot_see_names_the_call_and_its_line():
    # youtube-8m: `reader` is an object whose class a flag chooses.
    (message,) = _kept(
        """\
        import tensorflow as tf
        def get_input_data_tensors(reader, files, batch_size):
            filename_queue = tf.train.string_input_producer(files, shuffle=True)
            training_data = [reader.prepare_reader(filename_queue) for _ in range(2)]
            return tf.train.shuffle_batch_join(training_data, batch_size=batch_size,
                                               capacity=50, min_after_dequeue=10,
                                               enqueue_many=True)
        """
    )
    assert "read inside reader.prepare_reader(...) at line 4" in message


def test_a_loop_that_returns_before_the_batcher_stays_with_its_line():
    (message,) = _kept(
        """\
        import tensorflow as tf
        def build(files):
            queue = tf.train.string_input_producer(files)
            _, value = tf.TextLineReader().read(queue)
            parts = []
            for i in range(3):
                if i == 2:
                    return value
                parts.append(value)
            return tf.train.batch(parts, 2)
        """
    )
    assert "the for statement at line 6 returns" in message


def test_a_function_that_returns_the_batch_converts(tmp_path):
    # youtube-8m's and im2txt's input functions end `return tf.train.batch_join(...)`.
    legacy, after, outcome = _both_ways(tmp_path, RETURNED, [_frames_file(tmp_path)])
    assert len(_converted(outcome)) == 1
    assert "return tf.compat.v1.data.make_one_shot_iterator(_dataset_1).get_next()" in (
        outcome.code
    )
    assert after == legacy and legacy.count("array(") == 6 and legacy.endswith("end\n")
