"""Producers: the legacy work-item queues (`*_input_producer`), served as tf.data sources.

A legacy producer was a FIFOQueue filled by one thread that enqueued a whole epoch per run
(shuffled afresh each epoch) until `limit_epochs` ran out. Here the epochs are a Dataset:
one element per epoch, shuffled with the same op-level seed by the same kernel, then
unbatched. Because one kernel instance shuffles successive epochs in both, a seeded legacy
producer and ours yield the same order. The queue object the legacy function returned is an
`InputQueue`: readers read from it, and its `dequeue*` methods pull from its own stream.
"""

from typing import Optional

import tensorflow as tf

from compat_input._src.core import dataset_ops
from compat_input._src.core import devices
from compat_input._src.core import tracing
from compat_input._src.core.state_variables import initial
from compat_input._src.inputs import epochs
from compat_input._src.runtime import fill_levels
from compat_input._src.runtime import pipeline as pipeline_lib
from compat_input._src.runtime import runners

tf1 = tf.compat.v1

# The rows slice_input_producer gathers at once: a checkpoint holds at most this many.
_ROWS_AT_ONCE = 64


class InputQueue:
    """What a legacy producer returned: a FIFOQueue of work items, here a tf.data source.

    It has the queue surface legacy code uses (`dequeue`, `dequeue_many`, `dequeue_up_to`,
    `size`, `close`, `name`, `dtypes`, `shapes`, `names`, `queue_ref`) and readers accept it.
    `size()` reports what its legacy queue held: the items left to read, up to `capacity`.
    """

    def __init__(self, source: pipeline_lib.Source, dtype, shape, capacity: int, name: str):
        self._source = source
        self._dtype = dtype
        self._shape = tf.TensorShape(shape)
        self._capacity = capacity
        self._name = name
        self._queue = None
        self.fill = None  # How full it is, set by the producer (fill_levels.py).

    source = property(lambda self: self._source)
    name = property(lambda self: self._name)
    dtypes = property(lambda self: [self._dtype])
    shapes = property(lambda self: [self._shape])
    names = property(lambda self: None)
    # The work items when the program gave them as Python values, for build-time checks.
    items = property(lambda self: self._source.items)

    @property
    def queue_ref(self) -> tf.Tensor:
        """A TensorFlow queue's handle, for code that reads queue handles itself.

        Readers compat_input does not serve (LMDBReader, a program's own `ReaderBase`) and
        raw queue ops take `queue.queue_ref`. The first access makes a FIFOQueue that one
        QueueRunner fills from this producer's stream and closes at its end, as legacy's
        producer queue was filled and closed; `start_queue_runners` starts it.
        """
        if self._queue is None:
            with tf1.name_scope(None):
                queue = tf1.FIFOQueue(
                    self._capacity,
                    [self._dtype],
                    shapes=[self._shape],
                    name=f"{self._name}/queue",
                )
            enqueue = queue.enqueue(self.dequeue())
            runners.add_queue_runner(runners.QueueRunner(queue, [enqueue]))
            self._queue = queue
        return self._queue.queue_ref

    @devices.made_on_host
    def dequeue(self, name: Optional[str] = None) -> tf.Tensor:
        return self._source.element_tensors(name=name)[0]

    def dequeue_many(self, n, name: Optional[str] = None) -> tf.Tensor:
        """`n` elements in order; OutOfRangeError when fewer than `n` remain."""
        return self._pull(n, up_to=False, name=name)

    def dequeue_up_to(self, n, name: Optional[str] = None) -> tf.Tensor:
        """Up to `n` elements; fewer only at the end; OutOfRangeError when none remain."""
        return self._pull(n, up_to=True, name=name)

    @devices.made_on_host
    def _pull(self, n, up_to: bool, name: Optional[str]) -> tf.Tensor:
        pipeline = self._source.make_pipeline()
        iterator = pipeline.iterator
        # Every read in the loop waits for the started check.
        with tf1.name_scope(name, "dequeue_many"), tf.control_dependencies([pipeline.guard]):
            n = tf.convert_to_tensor(n, tf.int32)
            values = tf.TensorArray(
                self._dtype, size=0, dynamic_size=True, element_shape=self._shape
            )

            def cond(i, more, values):
                return tf.logical_and(i < n, more)

            def body(i, more, values):
                optional = iterator.get_next_as_optional()
                has = optional.has_value()
                value = tf.cond(has, optional.get_value, lambda: tf.zeros(self._shape, self._dtype))
                values = tf.cond(has, lambda: values.write(i, value), lambda: values)
                return i + tf.cast(has, tf.int32), has, values

            count, _, values = tf.while_loop(
                cond, body, [tf.constant(0), tf.constant(True), values]
            )
            needed = tf.constant(1) if up_to else n
            # The iterator is exhausted exactly when too few came back: one more get_next
            # raises the legacy OutOfRangeError from the tensor the user runs.
            result = tf.cond(
                count < needed,
                lambda: tf.stack([iterator.get_next()]),
                lambda: values.stack(),
            )
            static_n = tf.get_static_value(n)
            if not up_to and static_n is not None:
                result.set_shape(tf.TensorShape([int(static_n)]).concatenate(self._shape))
        return tf.identity(result, name=name)

    def size(self, name: Optional[str] = None) -> tf.Tensor:
        # What legacy's queue held: the items left to read, up to its capacity.
        if self.fill is None:
            return tf.constant(self._capacity, tf.int32, name=name)
        return tf.cast(tf.round(self.fill * self._capacity), tf.int32, name=name)

    def close(self, cancel_pending_enqueues: bool = False, name: Optional[str] = None):
        del cancel_pending_enqueues  # Nothing to cancel: tf.data has no pending enqueues.
        return tf.no_op(name=name or "close")

    def is_closed(self, name: Optional[str] = None) -> tf.Tensor:
        return tf.constant(False, name=name)


def _epoch_counter(num_epochs: Optional[int]) -> Optional[tf.Variable]:
    """The legacy `limit_epochs/epochs` local variable, kept for code that reads it.

    It counts epochs started, as legacy counted epochs enqueued. The pipeline's length comes
    from `num_epochs` itself, so forgetting `local_variables_initializer()` no longer ends
    the input at once: the counter just stays uninitialized.
    """
    if num_epochs is None:
        return None
    if num_epochs <= 0:
        raise ValueError(f"num_epochs must be > 0 not {num_epochs}.")
    with tf1.name_scope("limit_epochs"):
        counter = tf1.Variable(
            tf.constant(0, tf.int64),
            name="epochs",
            trainable=False,
            collections=[tf1.GraphKeys.LOCAL_VARIABLES],
            use_resource=True,
        )
    # Counted only where initialized: on a service worker it is not, and nothing breaks.
    pipeline_lib.graph_state(counter.graph).remote_safe.append(counter.handle.op.name)
    return counter


@devices.made_on_host
def _producer_queue(
    input_tensor,
    element_shape,
    num_epochs,
    shuffle,
    seed,
    capacity,
    summary_name,
    scope: str,
    empty=None,
    shared_name=None,
) -> InputQueue:
    shape = input_tensor.shape[1:].merge_with(tf.TensorShape(element_shape))
    if not shape.is_fully_defined():
        raise ValueError(
            "Either input_tensor must have a fully defined shape or element_shape must be "
            f"specified (input_tensor {input_tensor.name} has shape {input_tensor.shape})"
        )
    counter = _epoch_counter(num_epochs)
    # Read variables (ref or resource) once per pipeline start, as a plain tensor; a
    # constant is one already.
    value = input_tensor if input_tensor.op.type == "Const" else tf.identity(input_tensor)
    full_shape = tf.TensorShape([None]).concatenate(shape)
    # Rows of a shape known at build time need no check as they run.
    known = input_tensor.shape[1:] == shape and input_tensor.shape.is_fully_defined()
    dataset = epochs.epochs_dataset(
        value,
        num_epochs,
        shuffle,
        seed,
        counter,
        empty,
        rows=None if known else (lambda epoch: tf.ensure_shape(epoch, full_shape)),
        rows_key=f"shape{full_shape}",
    )
    queue_name = scope.rstrip("/")
    dataset, fill = fill_levels.producer_fill(
        queue_name, capacity, dataset, num_epochs, fill_levels.rows(value)
    )
    if summary_name is not None:  # Legacy's, with its meaning.
        fill_levels.write_producer_summary(summary_name, fill)
    source = pipeline_lib.Source(
        name=queue_name, dataset=dataset, finite=num_epochs is not None, shared_name=shared_name
    )
    # Legacy's queue runner was in QUEUE_RUNNERS from here on: a dequeue made after
    # start_queue_runners read a started queue. Ours is there now too, so that starting the
    # input registers the session, and a pipeline made later starts in it at once.
    pipeline_lib.ensure_runner(tf1.get_default_graph())
    queue = InputQueue(source, input_tensor.dtype.base_dtype, shape, capacity, queue_name)
    queue.fill = fill
    return queue


def limit_epochs(tensor, num_epochs=None, name=None):
    """Drop-in replacement for `tf.compat.v1.train.limit_epochs`.

    Unchanged semantics: this is a plain graph op with a local counter, not a queue.
    """
    pipeline_lib.check_graph_mode("limit_epochs")
    if num_epochs is None:
        return tensor
    if num_epochs <= 0:
        raise ValueError(f"num_epochs must be > 0 not {num_epochs}.")
    with tf1.name_scope(name, "limit_epochs", [tensor]) as scope:
        zero64 = tf.constant(0, tf.int64)
        epochs = tf1.Variable(
            zero64,
            name="epochs",
            trainable=False,
            collections=[tf1.GraphKeys.LOCAL_VARIABLES],
            # A resource variable even under disable_v2_behavior: a batcher runs the count
            # inside tf.data, where reference variables cannot go.
            use_resource=True,
        )
        counter = epochs.count_up_to(num_epochs)
        with tf.control_dependencies([counter]):
            return tf.identity(tensor, name=scope)


def input_producer(
    input_tensor,
    element_shape=None,
    num_epochs=None,
    shuffle=True,
    seed=None,
    capacity=32,
    shared_name=None,
    summary_name=None,
    name=None,
    cancel_op=None,
):
    """Drop-in replacement for `tf.compat.v1.train.input_producer`.

    Differences: returns a queue-like `InputQueue` served by tf.data; `cancel_op` is
    accepted and ignored (no queue to cancel); `shared_name` names a shared tf.data service
    job for the batchers reading it when a service is configured; the `epochs` local
    variable counts epochs but does not end the input, so a forgotten
    `local_variables_initializer()` no longer ends it at once.
    """
    del cancel_op
    pipeline_lib.check_graph_mode("input_producer")
    with tf1.name_scope(name, "input_producer", [input_tensor]) as scope:
        input_tensor = tf.convert_to_tensor(input_tensor, name="input_tensor")
        return _producer_queue(
            input_tensor,
            element_shape,
            num_epochs,
            shuffle,
            seed,
            capacity,
            summary_name,
            scope,
            shared_name=shared_name,
        )


def _file_name(value):
    # A file name that is not UTF-8 (legal on POSIX) stays bytes: TensorFlow reads it so.
    if not isinstance(value, bytes):
        return str(value)
    try:
        return value.decode()
    except UnicodeDecodeError:
        return value


def string_input_producer(
    string_tensor,
    num_epochs=None,
    shuffle=True,
    seed=None,
    capacity=32,
    shared_name=None,
    name=None,
    cancel_op=None,
):
    """Drop-in replacement for `tf.compat.v1.train.string_input_producer`.

    Differences: returns a queue-like `InputQueue` served by tf.data; accepts
    `match_filenames_once` results as resource variables too (legacy fails on them in TF 2);
    an empty string tensor at run time ends the input (OutOfRangeError, as legacy's closed
    queue) and prints why to stderr.
    """
    del cancel_op
    pipeline_lib.check_graph_mode("string_input_producer")
    not_null_err = "string_input_producer requires a non-null input tensor"
    if isinstance(string_tensor, (list, tuple)) and not string_tensor:
        raise ValueError(not_null_err)
    with tf1.name_scope(name, "input_producer", [string_tensor]) as scope:
        string_tensor = tf.convert_to_tensor(string_tensor, dtype=tf.string)
        constant = tf.get_static_value(string_tensor)
        empty = None
        if constant is None or constant.size == 0:  # Checked as the input runs.
            handle = pipeline_lib.state_variable(initial(0, tf.int64), "empty_input").handle
            message = (
                f"compat_input: {not_null_err}; '{scope.rstrip('/')}' got an empty tensor, so "
                "its input ends (legacy closed its queue: OutOfRangeError)."
            )
            empty = (handle, tf.constant(message))

        queue = _producer_queue(
            string_tensor,
            [],
            num_epochs,
            shuffle,
            seed,
            capacity,
            f"fraction_of_{capacity}_full",
            scope,
            empty=empty,
            shared_name=shared_name,
        )
        if constant is not None:
            queue.source.items = [_file_name(v) for v in constant.ravel()]
        return queue


def range_input_producer(
    limit, num_epochs=None, shuffle=True, seed=None, capacity=32, shared_name=None, name=None
):
    """Drop-in replacement for `tf.compat.v1.train.range_input_producer`.

    Differences: returns a queue-like `InputQueue` served by tf.data; `limit` may be a
    tensor (read when the pipeline starts).
    """
    pipeline_lib.check_graph_mode("range_input_producer")
    with tf1.name_scope(name, "input_producer", [limit]) as scope:
        range_tensor = tf.range(limit)
        return _producer_queue(
            range_tensor,
            [],
            num_epochs,
            shuffle,
            seed,
            capacity,
            f"fraction_of_{capacity}_full",
            scope,
            shared_name=shared_name,
        )


def slice_input_producer(
    tensor_list, num_epochs=None, shuffle=True, seed=None, capacity=32, shared_name=None, name=None
):
    """Drop-in replacement for `tf.compat.v1.train.slice_input_producer`.

    Differences: the rows come from tf.data; tensors and variables in `tensor_list` are read
    when the pipeline starts (initialize variables filled by feed_dict before that).
    """
    pipeline_lib.check_graph_mode("slice_input_producer")
    with tf1.name_scope(name, "input_producer", tensor_list) as scope:
        tensor_list = [tf.convert_to_tensor(t) for t in tensor_list]
        if not tensor_list:
            raise ValueError("Expected at least one tensor in slice_input_producer().")
        values = [tf.identity(t) for t in tensor_list]
        shapes = [tf.TensorShape([None]).concatenate(t.shape[1:]) for t in tensor_list]

        def gather_rows(indices, *values):
            return tuple(tf.ensure_shape(tf.gather(v, indices), s) for v, s in zip(values, shapes))

        with tf1.name_scope(None, "input_producer"):
            counter = _epoch_counter(num_epochs)
            indices = epochs.epochs_dataset(
                tf.range(tf.shape(values[0])[0]), num_epochs, shuffle, seed, counter
            )
            # Legacy dequeued one shuffled index at a time and gathered a row per run; here
            # a block of rows at a time (same rows, same order). Not a whole epoch at once:
            # a checkpoint holds what the pipeline holds, and an epoch of rows put the
            # whole data set into each one (5,000 MNIST-sized rows: 15.6 MB), and a copy
            # of it into memory.
            blocks = dataset_ops.batch(indices, _ROWS_AT_ONCE)
            rows = dataset_ops.unbatch(tracing.shared_map(blocks, None, gather_rows, values))
            rows, fill = fill_levels.producer_fill(
                scope.rstrip("/"), capacity, rows, num_epochs, fill_levels.rows(values[0])
            )
            fill_levels.write_producer_summary(f"fraction_of_{capacity}_full", fill)
        source = pipeline_lib.Source(
            name=scope.rstrip("/"),
            dataset=rows,
            finite=num_epochs is not None,
            shared_name=shared_name,
        )
        return source.element_tensors()
