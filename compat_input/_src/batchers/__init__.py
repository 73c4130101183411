"""The legacy batchers: `batch`, `shuffle_batch`, their `_join` and `maybe_` variants.

Each call (batching) checks its arguments as legacy did (legacy_arguments), remembers how
its tensors were passed (structures) and makes one plan of a tf.data pipeline (batch_plan):
captured input lists, a join, keep_input, shuffle, batch, prefetch. Imports core, runtime,
bad_records and capture.
"""
