"""Configuration errors raised on the Python side, shaped like the engine's: one
`path: message` line per problem and `.errors` as `[(path, message)]`. Used by the
configuration loader (`qosnet.config`) and the BookSim2 reader (`qosnet.booksim_cfg`),
which the loader calls, so it depends on neither."""

from __future__ import annotations

from qosnet._core import ConfigError

__all__ = ["CLIP_CHARS", "clip", "config_error"]


#: The most of a user's value an error repeats, in characters (as the engine's errors).
CLIP_CHARS = 200


def clip(text: str) -> str:
    """`text` cut to CLIP_CHARS characters, saying how long it was: an error must not echo a
    10 MB value back."""
    if len(text) <= CLIP_CHARS:
        return text
    return f"{text[:CLIP_CHARS]}…({len(text)} chars)"


def config_error(
    errors: list[tuple[str, str]], cls: type[ConfigError] = ConfigError
) -> ConfigError:
    """A ConfigError shaped like the engine's: message `path: message` per line, `.errors`
    (a path made of a user's text, an override, cut to a readable length; messages cut
    what they quote themselves)."""
    errors = [(clip(p), m) for p, m in errors]
    err = cls("\n".join(f"{p}: {m}" for p, m in errors))
    err.errors = errors
    return err
