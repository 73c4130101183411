"""Migration tooling (the `compat-input migrate` codemod) lives here; see migration_guide.md."""
