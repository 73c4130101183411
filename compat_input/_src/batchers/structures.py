"""How a legacy batcher call passed its tensors (a list, a dict, one tensor), to hand
batches back the same way."""

import dataclasses
from typing import Any
from typing import Optional


@dataclasses.dataclass
class Structure:
    """How the legacy call passed its tensors, to return batches the same way."""

    kind: str  # "dict" | "list" | "single"
    keys: Optional[list] = None

    @classmethod
    def of(cls, tensors, what: str) -> "Structure":
        if isinstance(tensors, dict):
            return cls("dict", sorted(tensors, key=str))
        if isinstance(tensors, (list, tuple)):
            return cls("single" if len(tensors) == 1 else "list")
        raise TypeError(
            f"{what} expects a list, tuple or dict of tensors, got {type(tensors).__name__} "
            f"{getattr(tensors, 'name', tensors)!r}: wrap a single tensor in a list, [tensor]."
        )

    def flatten(self, tensors) -> list:
        if self.kind == "dict":
            return [tensors[k] for k in self.keys]
        return list(tensors)

    def restore(self, flat: list) -> Any:
        if self.kind == "dict":
            return dict(zip(self.keys, flat))
        if self.kind == "single":
            return flat[0]
        return list(flat)
