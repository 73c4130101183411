"""The switch and the commands: what a user runs.

`install()` and `uninstall()`: the one table of patches to TensorFlow (install, from the
names served, served_names); the `compat-input` command (cli) and its `compare`
subcommand (compare), with the fingerprints of the batches a run reads (batch_records).
Imports every layer below, and the public names.
"""
