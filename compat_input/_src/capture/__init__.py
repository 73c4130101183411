"""From a legacy graph to tf.data: the per-example graph between sources and a batcher.

A batcher walks back from its tensors to the sources and captures the ops in between as a
map function (capture, captured_graphs: rewritten as the session rewrites its graph),
keeping a program's own queues inside it (hand_built_queues). Which stateful ops allow
parallel or block maps (op_kinds); seeded random ops drawn by the example's position
(random_draws, philox); a block of examples at a time through pfor (vectorize,
block_converters, image_converters, v1_conds; text split into tokens, split_tokens); one input list
as a function from source elements to examples (example_lists), and several joined into
one stream (joins). Imports core, runtime and bad_records.
"""
