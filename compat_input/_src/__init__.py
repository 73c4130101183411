"""compat_input's implementation: one module per thing it models (see compat_input/__init__.py)."""
