"""Registries: the one place that maps a case-file name (a mesh part kind, a load kind, an
analysis) to what implements it. The schema takes its lists of valid names from here, so a
new kind is one entry, and an unknown name is refused with the valid ones listed."""

import difflib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Generic, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class Registry(Generic[T]):
    """what: the kind of thing named, for messages ("analysis"); entries: name -> T, in the
    order the docs list them."""

    what: str
    entries: Mapping[str, T]

    def names(self) -> tuple[str, ...]:
        return tuple(self.entries)

    def __iter__(self) -> Iterator[tuple[str, T]]:
        return iter(self.entries.items())

    def __getitem__(self, name: str) -> T:
        """The entry of a name; ValueError listing the valid names (with a close match)."""
        try:
            return self.entries[name]
        except (KeyError, TypeError):
            close = difflib.get_close_matches(str(name), self.names(), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise ValueError(
                f"unknown {self.what} {name!r}{hint}; expected one of {', '.join(self.names())}"
            ) from None
