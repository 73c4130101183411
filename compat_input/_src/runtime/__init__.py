"""Pipelines in a session: a tf.data Dataset served to legacy graph code as plain tensors.

The registry of a graph's pipelines and their initializable iterators (pipeline,
iterators); starting them wherever legacy code started queue runners (input_runner,
start_ops, runners, supervisor) and the guard that fails a read before the start
(started_guard); input positions in checkpoints (checkpoint); rewinding and holding
(iteration), bridges to plain tf.data (bridges), the tf.data service (data_service,
service_liveness), batches copied ahead to a GPU (device_prefetch), sessions released at
exit (session_release). Imports only core.
"""
