"""A TF1 program in two parts, as programs that ship graphs do: `export` builds a reader
input and a Saver and writes the meta-graph; `import` (a fresh process) imports it, starts
queue runners the stock way and reads the input to its end. `api` picks the side that
builds the graph (legacy or compat); `--install` installs compat_input in the importer;
`--supervisor` imports and runs under a Supervisor (as the PTB language model does).
Prints the records read, one per line."""

import argparse
import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf  # noqa: E402

tf1 = tf.compat.v1
tf1.disable_eager_execution()


def export(api: str, data: str, meta: str) -> None:
    if api == "compat":
        import compat_input as readers
        import compat_input as train
    else:
        train, readers = tf1.train, tf1
    with tf.Graph().as_default():
        queue = train.string_input_producer([data], num_epochs=1, shuffle=False)
        _, value = readers.TFRecordReader().read(queue)
        batch = train.batch([value], 5, allow_smaller_final_batch=True)
        tf1.add_to_collection("batch", batch)
        tf1.train.get_or_create_global_step()
        tf1.train.Saver()  # Its saver_def goes into the meta-graph.
        tf1.train.export_meta_graph(meta)


def run_imported(meta: str, install: bool, supervisor: bool, logdir: str) -> None:
    if install:
        import compat_input

        compat_input.install()
    with tf.Graph().as_default():
        tf1.train.import_meta_graph(meta)
        batch = tf1.get_collection("batch")[0]
        read = []
        if supervisor:
            sv = tf1.train.Supervisor(logdir=logdir, save_model_secs=0, save_summaries_secs=0)
            with sv.managed_session() as sess:
                while not sv.should_stop():
                    try:
                        read.extend(sess.run(batch).tolist())
                    except tf.errors.OutOfRangeError:
                        break
        else:
            with tf1.Session() as sess:
                sess.run([tf1.global_variables_initializer(), tf1.local_variables_initializer()])
                coord = tf1.train.Coordinator()
                threads = tf1.train.start_queue_runners(sess, coord=coord)
                try:
                    while True:
                        read.extend(sess.run(batch).tolist())
                except tf.errors.OutOfRangeError:
                    pass
                coord.request_stop()
                coord.join(threads)
    for record in read:
        print(record.decode())


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("part", choices=["export", "import"])
    parser.add_argument("--api", choices=["legacy", "compat"], default="compat")
    parser.add_argument("--data")
    parser.add_argument("--meta", required=True)
    parser.add_argument("--install", action="store_true")
    parser.add_argument("--supervisor", action="store_true")
    parser.add_argument("--logdir")
    args = parser.parse_args()
    if args.part == "export":
        export(args.api, args.data, args.meta)
    else:
        run_imported(args.meta, args.install, args.supervisor, args.logdir)
