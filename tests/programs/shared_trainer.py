"""A TF1 trainer's input, as between-graph replicated programs wrote it: a filename queue
(with `--shared`, `shared_name="train_files"`, which legacy shared through a parameter
server), a TextLineReader, decode_csv and `shuffle_batch` with a final partial batch. `api`
picks legacy queues or compat_input (which reads through the tf.data service named by
COMPAT_INPUT_SERVICE, if set). `--delay` sleeps after each batch, `--started FILE` is
written after the first one; `--service-timeout` and `--install` configure compat_input. Prints one JSON line: the examples read, as [a, b] pairs, and
whether the graph reads a tf.data service."""

import argparse
import json
import os
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

import tensorflow as tf  # noqa: E402

tf1 = tf.compat.v1
tf1.disable_eager_execution()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("api", choices=["legacy", "compat"])
    parser.add_argument("files", nargs="+")
    parser.add_argument("--shared", action="store_true")
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--started")
    parser.add_argument("--service-timeout", type=float)
    parser.add_argument("--install", action="store_true")
    args = parser.parse_args()
    if args.api == "compat":
        import compat_input as readers
        import compat_input as train

        if args.service_timeout:
            train.configure(service_timeout=args.service_timeout)
        if args.install:
            train.install()
    else:
        train, readers = tf1.train, tf1
    queue = train.string_input_producer(
        args.files,
        num_epochs=args.epochs,
        shuffle=False,
        shared_name="train_files" if args.shared else None,
    )
    _, line = readers.TextLineReader().read(queue)
    a, b = tf1.decode_csv(line, [[0], [0]])
    batch = train.shuffle_batch([a, b], 10, 200, 50, allow_smaller_final_batch=True)
    served = any(
        op.type.startswith("DataServiceDataset") for op in tf1.get_default_graph().get_operations()
    )
    examples = []
    with tf1.Session() as sess:
        sess.run(tf1.local_variables_initializer())
        coord = tf1.train.Coordinator()
        threads = train.start_queue_runners(sess, coord)
        try:
            while True:
                values = sess.run(batch)
                examples.extend(zip(values[0].tolist(), values[1].tolist()))
                if args.started and not os.path.exists(args.started):
                    open(args.started, "w").close()
                time.sleep(args.delay)
        except tf.errors.OutOfRangeError:
            pass
        coord.request_stop()
        coord.join(threads)
    print(json.dumps({"examples": examples, "served": served}))


if __name__ == "__main__":
    main()
