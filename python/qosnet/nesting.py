"""Input nested too deeply, or with absurdly long numbers, refused before it is parsed.

Python's parsers recurse: a TOML array nested 500 deep, inline tables 1000 deep or a JSON
object 5000 deep end in `RecursionError` inside `tomllib` or `json` (a traceback from
`qosnet validate`, a 500 from the service), and a 100,000-digit integer in `ValueError` from
`int()`. No configuration, cluster or profile store needs more than a few levels, so text is
scanned first, without parsing, and refused with its line:

- `Scanner` follows brackets and braces outside strings and comments, in TOML and JSON
  alike (both quote with `"`; TOML also with `'` and comments with `#`, which JSON cannot
  have outside a string), fed in chunks, so the service checks a body as it streams in;
- `check_text` and `check_object` (a dict handed to the Python API) raise `TooDeep`.

`MAX_DEPTH` is far above any real input (a configuration nests 4 deep) and far below
Python's recursion limit; `MAX_DIGITS` is below Python's own integer-conversion limit, so
a long number gets this message rather than `int()`'s.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["MAX_DEPTH", "MAX_DIGITS", "Scanner", "TooDeep", "check_object", "check_text"]

#: Deepest nesting of arrays and tables (or JSON arrays and objects) accepted.
MAX_DEPTH = 64
#: Longest run of digits accepted outside a string.
MAX_DIGITS = 4000

# The bytes the scanner acts on; everything else is skipped by the regular expression.
_EVENT = re.compile(rb"[\"'#\[\]{}\n\\]|[0-9]{%d,}" % (MAX_DIGITS + 1))


class TooDeep(ValueError):
    """Input nested deeper than `MAX_DEPTH`, or with a number longer than `MAX_DIGITS`."""


class Scanner:
    """Follows the nesting of TOML or JSON text fed to it in chunks (bytes)."""

    def __init__(self) -> None:
        self.depth = 0
        self.line = 1
        self._quote = 0  # the byte that opened the string we are in (0: none)
        self._escaped = False
        self._comment = False
        self._digits = 0  # a run of digits reaching the end of the last chunk

    def feed(self, chunk: bytes) -> None:
        """Scan `chunk`; `TooDeep` as soon as the input goes too deep."""
        self._long_number(chunk)
        for m in _EVENT.finditer(chunk):
            b = m.group()
            if len(b) > 1:
                if not (self._quote or self._comment):
                    raise TooDeep(f"line {self.line}: a number of more than {MAX_DIGITS} digits")
                continue
            c = b[0]
            if c == 0x0A:  # \n
                self.line += 1
                self._comment = False
                self._escaped = False
                continue
            if self._comment:
                continue
            if self._quote:
                if self._escaped:
                    self._escaped = False
                elif c == 0x5C and self._quote == 0x22:  # a backslash in a "..." string
                    self._escaped = True
                elif c == self._quote:
                    self._quote = 0
                continue
            if c in (0x22, 0x27):  # " '
                self._quote = c
            elif c == 0x23:  # #
                self._comment = True
            elif c in (0x5B, 0x7B):  # [ {
                self.depth += 1
                if self.depth > MAX_DEPTH:
                    raise TooDeep(
                        f"line {self.line}: nested more than {MAX_DEPTH} levels deep "
                        "(arrays and tables within one another)"
                    )
            elif c in (0x5D, 0x7D):  # ] }
                self.depth = max(0, self.depth - 1)

    def _long_number(self, chunk: bytes) -> None:
        """A run of digits split between chunks counts as one (a run inside one chunk is
        the regular expression's). Called before the chunk's events, so the string and
        comment state is the one the run started in."""
        head = len(chunk) - len(chunk.lstrip(b"0123456789"))
        run = self._digits + head
        if run > MAX_DIGITS and self._digits and not (self._quote or self._comment):
            raise TooDeep(f"line {self.line}: a number of more than {MAX_DIGITS} digits")
        if head == len(chunk):
            self._digits = run
        else:
            self._digits = len(chunk) - len(chunk.rstrip(b"0123456789"))


def check_text(text: str) -> None:
    """`TooDeep` if TOML or JSON `text` nests deeper than `MAX_DEPTH` or holds a number of
    more than `MAX_DIGITS` digits outside its strings."""
    Scanner().feed(text.encode("utf-8", "surrogatepass"))


def check_object(value: Any) -> None:
    """`TooDeep` if a dict/list structure nests deeper than `MAX_DEPTH` (iteratively: the
    check itself must not recurse)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, Mapping):
            children = list(node.values())
        elif isinstance(node, list | tuple):
            children = list(node)
        else:
            continue
        if depth + 1 > MAX_DEPTH:
            raise TooDeep(f"nested more than {MAX_DEPTH} levels deep")
        stack.extend((c, depth + 1) for c in children)
