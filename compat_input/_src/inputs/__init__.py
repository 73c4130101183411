"""The legacy inputs: producers and readers, served as tf.data sources.

The `*_input_producer` work-item queues (producers) and the Dataset of their epochs
(epochs); readers from work items to `(key, value)` records (readers, reader_surface,
fixed_length_records, tfrecords), readers sharing one producer (shared_work), and input
files checked when a reader is built (input_files, `match_filenames_once`). Imports core,
runtime and bad_records.
"""
