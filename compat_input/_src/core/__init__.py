"""TensorFlow plumbing: what compat_input needs from TensorFlow, knowing nothing of pipelines.

Every private TensorFlow API in one place (tf_internals), raw ops made straight into the
graph (graph_ops), state variables made from their ops alone (state_variables), our own
tf.data functions traced once per graph (tracing), process-wide options (`configure`),
the error types, and the record of what `install()` patched (patching). Imports nothing
of compat_input's.
"""
