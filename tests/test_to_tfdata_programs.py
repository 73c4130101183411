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


# youtube-8m: the reads are in methods of reader classes of another module, and a flag
# chooses the class; the batch_join takes blocks of examples (enqueue_many).
READERS_MODULE = """\
import tensorflow as tf


class BaseReader(object):
    def prepare_reader(self, unused_filename_queue):
        raise NotImplementedError()


class BlockReader(BaseReader):
    def __init__(self, scale):
        self.scale = scale

    def prepare_reader(self, filename_queue, block=2):
        reader = tf.TFRecordReader()
        _, serialized = reader.read_up_to(filename_queue, block)
        features = tf.parse_example(
            serialized, features={'frame/0': tf.FixedLenFeature([2], tf.float32)})
        return {'frame': features['frame/0'] * self.scale}


class OneReader(BaseReader):
    def prepare_reader(self, filename_queue):
        reader = tf.TFRecordReader()
        _, serialized = reader.read(filename_queue)
        return self.parse(serialized)

    def parse(self, serialized):
        features = tf.parse_single_example(
            serialized, features={'state/1': tf.FixedLenFeature([1], tf.float32)})
        return {'frame': tf.expand_dims(tf.tile(features['state/1'], [2]), 0)}
"""

READER_CHOSEN = """\
import sys
import tensorflow as tf
import video_readers

reader = getattr(video_readers, sys.argv[2])(*[float(a) for a in sys.argv[3:]])


def get_input_data_tensors(reader, files, num_readers=1):
    filename_queue = tf.train.string_input_producer(files, num_epochs=1, shuffle=False)
    training_data = [reader.prepare_reader(filename_queue) for _ in range(num_readers)]
    return tf.train.batch_join(training_data, batch_size=3, allow_smaller_final_batch=True,
                               enqueue_many=True)


batch = get_input_data_tensors(reader, sys.argv[1].split(','))
""" + _DRAIN.format(step="print(sess.run(batch))")


@pytest.mark.parametrize("chosen", [["BlockReader", "10"], ["OneReader"]])
def test_reads_in_methods_of_reader_classes_of_another_module_convert(tmp_path, chosen):
    from compat_input_tools import migrate

    files = [_frames_file(tmp_path)]
    os.rename(files[0], str(tmp_path / "a.tfrecord"))
    files = [str(tmp_path / "a.tfrecord"), _frames_file(tmp_path)]
    outputs = {}
    for way in ("original", "converted"):
        program = tmp_path / way
        program.mkdir()
        (program / "video_readers.py").write_text(READERS_MODULE)
        (program / "train.py").write_text(READER_CHOSEN)
        if way == "converted":
            migrate.main(["--to-tfdata", str(program)])
        command = [sys.executable, "train.py", ",".join(files), *chosen]
        if way == "original":
            command[1:1] = ["-m", "compat_input._src.commands.cli", "run", "--legacy"]
        env = dict(ENV, PYTHONPATH=f"{ROOT}{os.pathsep}{program}")
        done = subprocess.run(
            command, capture_output=True, text=True, env=env, timeout=300, cwd=program
        )
        assert done.returncode == 0, done.stderr[-3000:]
        outputs[way] = done.stdout
    converted = tmp_path / "converted"
    readers = (converted / "video_readers.py").read_text()
    # Each class that reads has its tf.data twin, the abstract base none; nothing is left
    # on compat_input but the methods kept for other callers.
    assert readers.count("def prepare_reader_dataset(self, filename") == 2
    assert "def prepare_reader_dataset(self, filename, block=2):" in readers
    assert ".batch(block).map(_example)" in readers
    assert "compat_input" not in (converted / "train.py").read_text()
    assert outputs["converted"] == outputs["original"]
    assert outputs["original"].count("array(") == 4 and outputs["original"].endswith("end\n")


def test_a_reading_method_that_cannot_convert_stays_and_says_why(tmp_path):
    from compat_input_tools.tfdata import reading_methods

    other = READERS_MODULE + (
        "\n\nclass CsvReader(BaseReader):\n"
        "    def prepare_reader(self, filename_queue):\n"
        "        return tf.decode_csv(filename_queue.dequeue(), [[0]])\n"
    )
    taken = READERS_MODULE + (
        "\n\nclass Cached(BaseReader):\n"
        "    def prepare_reader_dataset(self, filename):\n"
        "        return filename\n"
    )
    for module, why in [
        (other, "a class of the program defines prepare_reader without the read"),
        (taken, "a class of the program defines prepare_reader_dataset already"),
    ]:
        project = reading_methods.Project.scan([module, READER_CHOSEN])
        outcome = codemod.migrate_source(READER_CHOSEN, "train.py", to_tfdata=project)
        (kept,) = [f.flag.message for f in outcome.findings if f.flag.code == "CI015"]
        assert why in kept
        assert not _converted(outcome)
