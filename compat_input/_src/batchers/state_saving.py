"""tf.contrib.training's `batch_sequences_with_states` on tf.data: long sequences cut
into segments of `num_unroll` steps, batched so that each entry's state carries from one
segment of its sequence to the next (truncated back-propagation through time).

Legacy kept the segments in a barrier that released a segment once the program had saved
the state of the one before it, older sequences first. Here the order is worked out ahead
instead: each sequence takes the first of `batch_size` lanes to come free and keeps it
for all its segments, so segment k + 1 comes one batch after segment k, and a free lane
goes to the next sequence read, as the barrier gave it. The segments are grouped by the
step they are due. States live in hash tables keyed by segment: `state()` reads the
batch's (the initial state for a first segment), `save_state()` writes the next segment's.
"""

import numbers
import sys

import numpy as np
import tensorflow as tf

from compat_input._src.batchers import batch_plan
from compat_input._src.batchers.structures import Structure
from compat_input._src.core import tracing

tf1 = tf.compat.v1


def _padding(sequences: dict, num_unroll):
    """(length, sequences padded with 0 or b"" to a multiple of `num_unroll`): contrib's
    helper. The length is the first dense sequence's (by name), checked equal across them
    when run; with only SparseTensors, the longest dense shape."""
    if not isinstance(num_unroll, numbers.Integral):
        raise ValueError(f"Unsupported num_unroll expected int, got: {num_unroll!r}")
    if not isinstance(sequences, dict):
        raise TypeError(f"Unsupported sequences expected dict, got: {type(sequences).__name__}")
    for key in sequences:
        if not isinstance(key, str):
            raise TypeError(f"Unsupported sequences key expected string, got: {key!r}")
    if not sequences:
        return 0, {}
    ordered = {
        k: v if isinstance(v, tf.SparseTensor) else tf.convert_to_tensor(v)
        for k, v in sorted(sequences.items())
    }
    lengths = [tf.shape(v)[0] for v in ordered.values() if isinstance(v, tf.Tensor)]
    if lengths:
        message = ["All sequence lengths must match, but received lengths: "]
        checks = [
            tf1.Assert(tf.equal(n, lengths[0]), message + [tf.strings.as_string(lengths)])
            for n in lengths
        ]
        with tf.control_dependencies(checks):
            length = tf.identity(lengths[0])
    else:
        dense = [tf.cast(v.dense_shape[0], tf.int32) for v in ordered.values()]
        length = tf.reduce_max(dense)
    padded_length = length + (num_unroll - length % num_unroll) % num_unroll
    padded = {}
    for key, value in ordered.items():
        if isinstance(value, tf.SparseTensor):
            shape = tf.concat([[tf.cast(padded_length, tf.int64)], value.dense_shape[1:]], 0)
            padded[key] = tf.SparseTensor(value.indices, value.values, shape)
        else:
            filler = tf.constant("" if value.dtype == tf.string else 0, value.dtype)
            extra = tf.concat([[padded_length - tf.shape(value)[0]], tf.shape(value)[1:]], 0)
            padded[key] = tf.concat([value, tf.fill(extra, filler)], 0)
    return length, padded


def _multiple_of(sequences: dict, num_unroll: int) -> dict:
    """pad=False: each sequence's length, checked to be a positive multiple of num_unroll."""
    checked = {}
    for key, value in sequences.items():
        sparse = isinstance(value, tf.SparseTensor)
        value = value if sparse else tf.convert_to_tensor(value)
        n = value.dense_shape[0] if sparse else tf.shape(value)[0]
        kind = "SparseTensor" if sparse else "Tensor"
        check = tf1.Assert(
            tf.logical_and(tf.equal(n % num_unroll, 0), tf.not_equal(n, 0)),
            [
                tf.strings.join(
                    [
                        f"{kind} {key} first dimension should be a multiple of: {num_unroll}, "
                        "but saw value: ",
                        tf.strings.as_string(n),
                        ". Consider setting pad=True.",
                    ]
                )
            ],
        )
        with tf.control_dependencies([check]):
            if sparse:
                checked[key] = tf.SparseTensor(
                    tf.identity(value.indices), value.values, value.dense_shape
                )
            else:
                checked[key] = tf.identity(value)
    return checked


def _segment(value, k, num_unroll: int):
    """Steps [k * num_unroll, (k + 1) * num_unroll) of one sequence."""
    if isinstance(value, tf.SparseTensor):
        rest = value.dense_shape[1:]
        start = tf.concat([[k * num_unroll], tf.zeros_like(rest)], 0)
        taken = tf.sparse.slice(value, start, tf.concat([[num_unroll], rest], 0))
        return tf.SparseTensor(taken.indices, taken.values, tf.concat([[num_unroll], rest], 0))
    segment = value[k * num_unroll : (k + 1) * num_unroll]
    # Padded or checked to a multiple of num_unroll: every segment has num_unroll steps, the
    # static shape legacy's barrier gave (`tf.unstack` of a segment's steps needs it).
    segment.set_shape(tf.TensorShape([num_unroll]).concatenate(value.shape[1:]))
    return segment


def _padded_key(number) -> tf.Tensor:
    return tf.strings.as_string(number, width=5, fill="0")


class NextQueuedSequenceBatch:
    """Drop-in replacement for `tf.contrib.training.NextQueuedSequenceBatch`.

    Differences: a segment whose previous segment was read by a run that did not save its
    state (a Supervisor's summary thread fetching a loss of the batch) starts from the
    initial state, said on stderr; legacy never delivered the rest of that sequence.
    """

    def __init__(self, batch: dict, initial_states: dict):
        self._batch = batch
        self._initial = initial_states
        # One table per state: the values saved for the next segments, by segment key; and
        # one of the segment keys saved for, since any value (zeros too) is a state.
        self._tables = {
            # Values as vectors: the table holds no other shape.
            name: tf.lookup.experimental.MutableHashTable(
                tf.string,
                initial.dtype,
                tf.zeros([initial.shape.num_elements()], initial.dtype),
                name=f"state_{name}",
            )
            for name, initial in initial_states.items()
        }
        self._saved = tf.lookup.experimental.MutableHashTable(
            tf.string, tf.bool, False, name="state_saved"
        )
        self._read = {}

    total_length = property(lambda self: self._batch["total_length"])
    length = property(lambda self: self._batch["length"])
    batch_size = property(lambda self: tf.shape(self._batch["key"])[0])
    insertion_index = property(lambda self: self._batch["insertion_index"])
    key = property(lambda self: self._batch["key"])
    next_key = property(lambda self: self._batch["next_key"])
    sequence = property(lambda self: self._batch["sequence"])
    sequence_count = property(lambda self: self._batch["sequence_count"])
    context = property(lambda self: self._batch["context"])
    sequences = property(lambda self: self._batch["sequences"])

    def state(self, state_name):
        if state_name not in self._initial:
            raise KeyError(f"state was not declared: {state_name}")
        if state_name not in self._read:
            initial = self._initial[state_name]
            first = tf.equal(self.sequence, 0)
            # A segment whose previous one was read without save_state() (a summary thread's
            # run, an evaluation's) has no saved state: legacy's barrier never released it
            # (that sequence ended there, its capacity held for good); here it starts again
            # from the initial state, said once per batch on stderr.
            fresh = tf.logical_or(first, tf.logical_not(self._saved.lookup(self.key)))
            saved = self._tables[state_name].lookup(self.key)
            saved = tf.reshape(saved, tf.concat([[-1], tf.shape(initial)], 0))
            rank = initial.shape.ndims
            value = tf.where(tf.reshape(fresh, [-1] + [1] * rank), initial, saved)
            said = []
            if state_name == min(self._initial):  # Once per batch, not once per state.
                said = [self._say_restarted(tf.logical_and(fresh, tf.logical_not(first)))]
            # On the finished value: given to ops made inside the block, the control edge
            # lands on their shape constant alone (their other inputs already depend on
            # it), and there it did not hold the message.
            with tf.control_dependencies(said):
                self._read[state_name] = tf.identity(value, name=f"state_{state_name}")
        return self._read[state_name]

    def _say_restarted(self, restarted: tf.Tensor) -> tf.Operation:
        """Prints the segments of `restarted` (a bool per entry) where any is."""

        def say():
            message = tf.strings.format(
                "compat_input: batch_sequences_with_states: {} segment(s) ({}) started from "
                "their initial state: the run that read the segment before did not run "
                "save_state() (a Supervisor's summary thread, an evaluation fetching a tensor "
                "of the batch). Legacy never delivered the rest of such a sequence. Run "
                "save_state() in every run that reads the batch to carry the state.",
                (tf.reduce_sum(tf.cast(restarted, tf.int32)), tf.boolean_mask(self.key, restarted)),
                summarize=3,
            )
            with tf.control_dependencies([tf.print(message, output_stream=sys.stderr)]):
                return tf.constant(True)

        return tf.cond(tf.reduce_any(restarted), say, lambda: tf.constant(False)).op

    def save_state(self, state_name, value, name=None):
        if state_name not in self._initial:
            raise KeyError(f"state was not declared: {state_name}")
        with tf1.name_scope(name, "InputQueueingStateSaver_SaveState", [value]):
            current = self.state(state_name)  # Read before the segment's entry goes.
            value = tf.convert_to_tensor(value, current.dtype)
            check = tf1.assert_equal(
                tf.shape(value), tf.shape(current), message=f"save_state {state_name!r} shape"
            )
            going = tf.logical_not(tf.strings.regex_full_match(self.next_key, "STOP:.*"))
            keys = tf.boolean_mask(self.next_key, going)
            with tf.control_dependencies([check, current]):
                table = self._tables[state_name]
                rows = tf.reshape(tf.boolean_mask(value, going), [tf.shape(keys)[0], -1])
                saved = table.insert(keys, rows)
                flagged = self._saved.insert(keys, tf.ones_like(keys, tf.bool))
            # This segment's entries are read (every state's, for its flag); the next
            # segment's replace them, so the tables hold the sequences in flight only.
            reads = [self.state(n) for n in self._initial]
            with tf.control_dependencies([saved, flagged, *reads]):
                return tf.group(
                    table.remove(self.key), self._saved.remove(self.key), name="save_state"
                )


@tracing.without_autograph
def batch_sequences_with_states(
    input_key,
    input_sequences,
    input_context,
    input_length,
    initial_states,
    num_unroll,
    batch_size,
    num_threads=3,
    capacity=1000,
    allow_small_batch=True,
    pad=True,
    make_keys_unique=False,
    make_keys_unique_seed=None,
    name=None,
):
    """Drop-in replacement for `tf.contrib.training.batch_sequences_with_states`.

    Differences: served by tf.data; a sequence keeps one batch position (its lane) for
    all its segments, and a free position goes to the next sequence read, as legacy's
    barrier gave it (legacy's positions followed insertion order); `batch_size` is an
    int; `capacity` and `num_threads` are unused; `state()` fails, naming the segment,
    where a `save_state()` was never run (legacy hung); saved states are not in
    checkpoints, so this input is left out of them (said when built).
    """
    if not isinstance(batch_size, numbers.Integral):
        static = tf.get_static_value(batch_size)
        if static is None:
            raise ValueError(
                f"batch_sequences_with_states: batch_size {batch_size!r} is known only at run "
                "time; compat_input lays out its lanes when the graph is built: pass an int."
            )
        batch_size = int(static)
    values = [*input_sequences.values(), *input_context.values(), *initial_states.values()]
    dense = [v for v in values if isinstance(v, tf.Tensor)]
    with tf1.name_scope(name, "batch_sequences_with_states", dense) as scope:
        if pad:
            length, input_sequences = _padding(input_sequences, num_unroll)
            input_length = length if input_length is None else input_length
        else:
            if input_length is None:
                raise ValueError("input_length must be given when pad=False.")
            input_sequences = _multiple_of(input_sequences, num_unroll)
        if make_keys_unique:
            draw = tf1.random_uniform([], 0, 100000000, tf.int32, seed=make_keys_unique_seed)
            input_key = tf.strings.join([input_key, tf.strings.as_string(draw)])
        key = tf.convert_to_tensor(input_key)
        length = tf.convert_to_tensor(input_length)
        if key.dtype != tf.string or length.dtype != tf.int32:
            raise TypeError(
                f"key dtype must be string and length dtype int32, but received: {key.dtype} "
                f"and {length.dtype}"
            )
        states = {
            k: tf.convert_to_tensor(v, name=f"state_{k}") for k, v in sorted(initial_states.items())
        }
        for label, named in (("state", states), ("context", input_context)):
            for k, v in named.items():
                if isinstance(v, tf.Tensor) and not v.shape.is_fully_defined():
                    raise ValueError(f"Shape for {label} {k} is not fully defined: {v.shape}")
        sequences = dict(sorted(input_sequences.items()))
        context = {
            k: v if isinstance(v, tf.SparseTensor) else tf.convert_to_tensor(v)
            for k, v in sorted(input_context.items())
        }
        flat = [key, length, *sequences.values(), *context.values()]
        plan = batch_plan.plan(
            scope,
            Structure("list"),
            [flat],
            None,
            True,
            what="batch_sequences_with_states",
            capacity=capacity,
            enqueue_many=False,
            shapes=[None if isinstance(t, tf.SparseTensor) else t.shape for t in flat],
            dynamic_pad=False,
            allow_smaller_final_batch=allow_small_batch,
            shuffle=None,
            num_threads=1,
        )
        for item in plan.lists:
            item.one_by_one = (
                "each sequence of its own length, taken as it comes, as contrib's state saver "
                "took them (nothing to change in the program)"
            )
        names = (list(sequences), list(context))
        plan.regroup = lambda dataset: _in_lanes(
            dataset, names, num_unroll, batch_size, allow_small_batch
        )
        plan.unsaved_because = "its saved states live outside tf.data"
        batch = batch_plan.serve(plan)
        return NextQueuedSequenceBatch(batch, states)


def _in_lanes(dataset, names, num_unroll: int, lanes: int, allow_small_batch: bool):
    """Examples to batches of segments, each sequence in the first lane to come free."""
    sequence_names, context_names = names
    start = (tf.zeros([lanes], tf.int64), tf.constant(np.iinfo(np.int64).min, tf.int64))

    def assign(state, example):
        free_at, index = state
        sequences = example[2 : 2 + len(sequence_names)]  # After the key and the length.
        first = sequences[0] if sequences else None
        if first is None:
            steps = tf.constant(1, tf.int64)
        elif isinstance(first, tf.SparseTensor):
            steps = first.dense_shape[0] // num_unroll
        else:
            steps = tf.cast(tf.shape(first, out_type=tf.int64)[0] // num_unroll, tf.int64)
        lane = tf.argmin(free_at, output_type=tf.int32)
        begin = free_at[lane]
        free_at = tf.tensor_scatter_nd_update(free_at, [[lane]], [begin + steps])
        return (free_at, index + 1), (begin, steps, index, example)

    def segments(begin, steps, index, example):
        key, length, *rest = example
        sequences, context = rest[: len(sequence_names)], rest[len(sequence_names) :]
        count = tf.cast(steps, tf.int32)

        def one(k):
            k32 = tf.cast(k, tf.int32)
            prefix = tf.strings.join([_padded_key(k32), "_of_", _padded_key(count), ":"])
            after = tf.strings.join([_padded_key(k32 + 1), "_of_", _padded_key(count), ":"])
            next_key = tf.where(k32 + 1 < count, tf.strings.join([after, key]), "STOP:" + key)
            left = length - k32 * num_unroll
            return begin + k, {
                "key": tf.strings.join([prefix, key]),
                "next_key": next_key,
                "sequence": k32,
                "sequence_count": count,
                "total_length": length,
                "length": tf.clip_by_value(left, 0, num_unroll),
                "insertion_index": index,
                "sequences": dict(
                    zip(sequence_names, [_segment(s, k, num_unroll) for s in sequences])
                ),
                "context": dict(zip(context_names, context)),
            }

        return tf.data.Dataset.range(steps).map(one)

    due = dataset.scan(start, assign).flat_map(segments)
    # Without small batches a step's partial batch (the end of the input) is dropped, and
    # every part's batch dimension is `lanes`, statically, as legacy's barrier's take_many
    # gave it; with them, unknown.
    return due.group_by_window(
        lambda step, segment: step,
        lambda step, window: window.batch(lanes, drop_remainder=not allow_small_batch),
        window_size=lanes,
    ).map(lambda step, batch: batch)
