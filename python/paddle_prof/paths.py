"""Path arguments as the core takes them."""

from __future__ import annotations

import os
from typing import Union

PathArg = Union[str, "os.PathLike[str]", None]


def check_path(path: "Union[str, os.PathLike[str]]", name: str) -> str:
    """The path as a str. TypeError for anything but a str or an os.PathLike giving one;
    ValueError for a NUL byte in it, as open() says: the system reads a path only up to
    its first NUL, so the file would be another."""
    if isinstance(path, os.PathLike):
        path = os.fspath(path)
    if not isinstance(path, str):
        raise TypeError(f"{name} must be a str or an os.PathLike giving a str; "
                        f"got {type(path).__name__} {path!r}")
    refuse_nul(path, name)
    return path


def refuse_nul(path: str, name: str) -> None:
    if "\0" in path:
        raise ValueError(f"{name}: embedded null byte")
