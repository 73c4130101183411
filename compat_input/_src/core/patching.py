"""Patching: a table of replacements applied to TensorFlow, and undone exactly.

The mechanics behind `install()` (commands/install.py holds the one table, `PATCHES`).
Applying a row records what its owner held before, under one lock; `undo` puts every one
back in the reverse order, inherited attributes and absent dict entries included. The
record lives here, below every layer, so that what must construct TensorFlow's own class
while ours is served (`tensorflows_own`: a reader of ours reading a hand-built queue) asks
the record instead of the switch above it.
"""

import contextlib
import dataclasses
import sys
import threading
from collections.abc import Callable
from collections.abc import Iterable
from typing import Any
from typing import Optional


@dataclasses.dataclass(frozen=True)
class Patch:
    """One attribute `install()` replaces: `replacement(original)` is the new value."""

    owner: Callable[[], Any]  # The module or class, looked up when installing.
    name: str
    replacement: Callable[[Any], Any]
    why: str
    # Applied only when `install(<option>=value)` is given; `replacement(value)` then
    # makes the replacement factory.
    option: Optional[str] = None
    # `owner[name]` (a dict entry) rather than an attribute.
    item: bool = False


_MISSING = object()
# Row of the table -> (owner, name, what the owner's own __dict__ held before the row was
# applied, or _MISSING); two rows may wrap one attribute, undone in the reverse order.
_saved: dict = {}
_lock = threading.Lock()


def _own(owner: Any, name: str) -> Any:
    """What to put back: a class's own attribute (_MISSING if it inherits it), a module's
    attribute as it reads (TensorFlow's API modules load their names lazily), a dict's
    entry (_MISSING if none)."""
    if isinstance(owner, dict):
        return owner.get(name, _MISSING)
    if isinstance(owner, type):
        return vars(owner).get(name, _MISSING)
    return getattr(owner, name, _MISSING)  # A module may lack it (tf.compat.v1.contrib).


def apply(patches: Iterable[Patch], options: dict, serve: bool) -> None:
    """Applies every row not yet applied: the rows of an option given in `options`, and
    the others where `serve`."""
    with _lock:
        for row, patch in enumerate(patches):
            if patch.option is not None:
                if options[patch.option] is None:
                    continue
                replacement = patch.replacement(options[patch.option])
            elif not serve:
                continue
            else:
                replacement = patch.replacement
            if row in _saved:
                continue
            owner = patch.owner()
            _saved[row] = (owner, patch.name, _own(owner, patch.name))
            if patch.item:
                owner[patch.name] = replacement(owner.get(patch.name))
            else:
                setattr(owner, patch.name, replacement(getattr(owner, patch.name, None)))


def undo() -> None:
    """Restores every attribute `apply` replaced, exactly as it was."""
    with _lock:
        _put_back(list(_saved.values()))
        _saved.clear()


@contextlib.contextmanager
def tensorflows_own(cls: type):
    """While it lasts, `cls`'s module holds TensorFlow's `cls` under its name again, for
    constructing it: TensorFlow's readers call `super(TextLineReader, self).__init__`,
    which looks the class up in io_ops, where install() put ours (a reader of ours
    reading a hand-built queue makes TensorFlow's)."""
    module = sys.modules[cls.__module__]
    with _lock:
        served = getattr(module, cls.__name__, None)
        if served is cls or not _saved:
            yield
            return
        setattr(module, cls.__name__, cls)
        try:
            yield
        finally:
            setattr(module, cls.__name__, served)


@contextlib.contextmanager
def originals():
    """While it lasts, every attribute `apply` replaced holds what TensorFlow shipped again:
    an input compat_input cannot serve is built by TensorFlow's own input functions, whose
    queues and runners must be TensorFlow's classes (batchers/legacy_fallback.py)."""
    with _lock:
        served = [(owner, name, _own(owner, name)) for owner, name, _ in _saved.values()]
        _put_back(list(_saved.values()))
    try:
        yield
    finally:
        with _lock:
            _put_back(served)


def _put_back(records: list) -> None:
    for owner, name, value in reversed(records):
        if isinstance(owner, dict):
            if value is _MISSING:
                owner.pop(name, None)
            else:
                owner[name] = value
        elif value is _MISSING:
            if name in vars(owner):
                delattr(owner, name)
        else:
            setattr(owner, name, value)


def installed() -> bool:
    return bool(_saved)


def active_patches() -> list:
    """`owner.name` of every attribute that differs from what TensorFlow ships."""
    with _lock:
        return [
            f"sys.modules[{name!r}]" if owner is sys.modules else f"{owner.__name__}.{name}"
            for owner, name, _ in _saved.values()
        ]
