"""Joins: the examples of several input lists (`*_join`) in one stream.

Legacy ran one enqueue thread per list and interleaved them by thread timing. Here each
way the lists can share their input has a strategy of its own, with a fixed order, so the
result is reproducible:

- `one_list`: a single list, mapped over its source.
- `shared_stream`: lists reading one stream (one reader, or one producer) take its
  elements in turn, as each legacy thread took the next element.
- `files_side_by_side`: readers over one producer: each legacy reader thread took the next
  file, so files are read side by side, one per list.
- `take_turns`: independent inputs each make their own examples; the lists take turns.

`choose(lists)` picks the strategy; each returns a Dataset of examples and puts the example
logs it made into `logs`.
"""

from collections.abc import Callable

import tensorflow as tf

from compat_input._src.capture import vectorize
from compat_input._src.capture.example_lists import ExampleList
from compat_input._src.capture.example_lists import example_log
from compat_input._src.capture.example_lists import examples_of
from compat_input._src.capture.example_lists import map_examples
from compat_input._src.capture.example_lists import per_example_map
from compat_input._src.core import dataset_ops
from compat_input._src.core import errors


def _same_computation(lists: list) -> bool:
    """Whether every list computes the same from its element (one preprocessing function
    called once per reader): one function then serves them all."""
    keys = {item.key() for item in lists}
    return len(keys) == 1 and None not in keys


def _in_turn(lists: list, log):
    """A map function sending element `(ordinal, index, *element)` to list `index % len`."""

    def examples(ordinal, index, *element):
        if _same_computation(lists):
            # No case of identical branches: youtube-8m's four readers traced four copies
            # of their parse, 180 nodes more that every new set of fetches made the session
            # convert and optimize.
            return lists[0].examples(element, ordinal, log)
        return tf.switch_case(
            tf.cast(index % len(lists), tf.int32),
            [lambda item=item: item.examples(element, ordinal, log) for item in lists],
        )

    return examples


def _in_blocks(lists: list, parallel: dict, elements, branches: list, which):
    """The lists' examples from `elements`, a block at a time, each element made by
    `branches[which(element)]` (`branches[0]` where `which` is None); None where a list
    cannot go a block at a time or pfor does not convert it (the reason is noted)."""
    reasons = [item.not_vectorizable() if parallel else item.one_at_a_time() for item in lists]
    return vectorize.blocks_or_none(
        lists[0].what,
        next((r for r in reasons if r is not None), None),
        lists[0].block_size,
        lambda block: vectorize.map_blocks(
            elements, branches, parallel, which, block, example_size=lists[0].example_bytes()
        ),
    )


def one_list(lists: list, parallel: dict, skipping: bool, logs: list) -> tf.data.Dataset:
    (only,) = lists
    if only.passthrough():
        vectorize.note(only.what, "as read (no per-example graph)")
        return only.captured.source_dataset
    return examples_of(only, only.captured.source_dataset, parallel, skipping, logs)


def shared_stream(lists: list, parallel: dict, skipping: bool, logs: list) -> tf.data.Dataset:
    source = lists[0].captured.source_dataset
    if _same_computation(lists):
        # Copies of one computation (a preprocessing function called once per thread, as
        # inception's and im2txt's batch_join threads over one dequeue()): element i made by
        # list i % N is element i made by list 0, so they are one list run by N threads, a
        # block at a time where it converts (inception's: 1.19x legacy one at a time).
        return examples_of(lists[0], source, parallel, skipping, logs)
    count = len(lists)
    # Element i goes to list i % count, as each legacy thread took the next element.
    blocks = _in_blocks(
        lists,
        parallel,
        dataset_ops.enumerate_(source, flat=True),
        [lambda e, item=item: item.examples(e[1:], e[0]) for item in lists],
        lambda e: e[0] % count,
    )
    if blocks is not None:
        return blocks
    log = example_log(lists[0], skipping, logs)
    numbered = dataset_ops.enumerate_(source)
    turn = _in_turn(lists, log)
    return per_example_map(numbered, lambda i, *e: turn(i, i, *e), parallel)


def files_side_by_side(lists: list, parallel: dict, skipping: bool, logs: list) -> tf.data.Dataset:
    reader = lists[0].sources[0]
    count = len(lists)
    files = dataset_ops.enumerate_(reader.work_source.dataset)
    # Every list computes the same (one preprocessing function called per reader): one
    # branch over the whole block, where a branch per list vectorized a quarter of a block
    # each for four readers (TF1 behaviour: 1.44x legacy, now 2.4x).
    same = _same_computation(lists)
    # One record of each of `count` files in turn, in order, so deterministic. Elements are
    # `(key, value)`, read by the reader's own function (traced once, instantiated on its
    # device), or, where lists differ, `(file index, key, value)`: file k goes to list
    # k % count. The index took a function of ours more, called, and two of tf.data's,
    # their Grappler passes 28 ms of youtube-8m's shape's first batch.
    if same:
        interleaved = reader.interleave(files, count)
    else:
        interleaved = files.interleave(
            lambda k, item: reader.records(k, item).map(lambda *r: (k,) + tuple(r)),
            cycle_length=count,
            block_length=1,
        )
    # Draws by position (random_draws.py) take the stream's: elements `(i, [k,] key, value)`.
    positional = any(item.captured.positional for item in lists)
    blocks_of = dataset_ops.enumerate_(interleaved, flat=True) if positional else interleaved
    # Where the record starts in an element of `blocks_of`.
    at = (1 if positional else 0) + (0 if same else 1)

    def examples(item, e):
        return item.examples(e[at:], e[0] if positional else None)

    if same:
        branches, which = [lambda e: examples(lists[0], e)], None
    else:
        branches = [lambda e, item=item: examples(item, e) for item in lists]
        which = lambda e: e[at - 1] % count  # noqa: E731
    blocks = _in_blocks(lists, parallel, blocks_of, branches, which)
    if blocks is not None:
        return blocks
    log = example_log(lists[0], skipping, logs)
    turn = _in_turn(lists, log)

    def numbered(element, i):
        # Numbered for a log or for draws: nested one deeper. Lists computing the same
        # take no file index (list 0's branch, whichever file).
        flat = tf.nest.flatten(element)
        return turn(i, 0, *flat) if same else turn(i, *flat)

    return map_examples(interleaved, numbered, log is not None or positional, parallel)


def take_turns(lists: list, parallel: dict, skipping: bool, logs: list) -> tf.data.Dataset:
    datasets = [
        examples_of(item, item.captured.source_dataset, parallel, skipping, logs) for item in lists
    ]
    # One example of each in turn; an exhausted one drops out.
    return tf.data.Dataset.choose_from_datasets(
        datasets, tf.data.Dataset.range(len(datasets)).repeat(), stop_on_empty_dataset=False
    )


def _one_reader_each_over_one_producer(lists: list[ExampleList]) -> bool:
    singles = [item.sources for item in lists]
    return (
        all(len(s) == 1 and s[0].work_source is not None for s in singles)
        and len({id(s[0].work_source) for s in singles}) == 1
    )


def choose(lists: list[ExampleList], what: str) -> Callable:
    """The strategy for these lists; CaptureError where no strategy is the legacy one."""
    if len(lists) == 1:
        return one_list
    sources = [tuple(id(s) for s in item.sources) for item in lists]
    if sources[0] and all(s == sources[0] for s in sources):
        return shared_stream
    if _one_reader_each_over_one_producer(lists):
        return files_side_by_side
    seen: set = set()
    for item in lists:
        ids = {id(x) for x in item.sources}
        if ids & seen:
            raise errors.CaptureError(
                f"{what}: the input lists share some sources but not all; compat_input can "
                "join lists that read one shared stream, readers over one producer, or "
                "independent inputs."
            )
        seen |= ids
    return take_turns
