"""Naming the bad record: an error from a pipeline, raised again with its file and record.

Readers log what they read (reader_logs); after an error, the failing example is found
by running the per-example graph again on the recent records (probes, rereading) and
named by where it came from (origins); the hooks on `Session.run` raise the error again
with that name (located_errors); under `bad_records="skip"`, what was dropped is counted
and named (skipped). Imports core and runtime.
"""
