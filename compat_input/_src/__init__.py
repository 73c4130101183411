"""compat_input's implementation, in layers; each imports only from the layers below it.

From the bottom up:

- `core/`: TensorFlow plumbing that knows nothing of pipelines (private APIs, raw ops,
  state variables, tracing, options, errors, patching);
- `runtime/`: pipelines in a session (registry, iterators, starting, guards, checkpoints,
  rewinding, the tf.data service, device prefetch, runners, Supervisor);
- `bad_records/`: naming the record an error came from (origins, reader logs, probes,
  rereading, located errors, skipped records);
- `capture/`: from a legacy per-example graph to a tf.data map function (capture,
  vectorization, example lists, joins);
- `inputs/`: the legacy producers and readers, as tf.data sources;
- `batchers/`: the legacy batchers, each call one plan of a tf.data pipeline;
- `commands/`: the switch (`install()`) and the `compat-input` command.

`compat_input/__init__.py` re-exports the public names; tests/test_package.py checks that
imports only go down.
"""
