"""Small helpers shared by the bundled-data loaders (no dependency on ``dponline._core``)."""

from __future__ import annotations

import gzip
import math
import numbers
from importlib import resources

import numpy as np

__all__ = ["read_bundled_text", "read_only", "positive_finite"]


def read_bundled_text(filename: str) -> str:
    """The decompressed ASCII text of ``data/<filename>`` (a gzip file shipped in this package)."""
    package = __package__ or "dponline.datasets"
    blob = resources.files(package).joinpath("data").joinpath(filename).read_bytes()
    return gzip.decompress(blob).decode("ascii")


def read_only(array: np.ndarray) -> np.ndarray:
    """A read-only view of a read-only base array: the view's writeable flag cannot be switched back on."""
    owner = np.array(array, order="C", copy=True)  # a fresh owner nobody else holds
    owner.flags.writeable = False
    view = owner.view()
    view.flags.writeable = False
    return view


def positive_finite(name: str, value: float) -> float:
    """``value`` as a float if it is finite and > 0, else ``ValueError`` naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    x = float(value)
    if not (math.isfinite(x) and x > 0.0):
        raise ValueError(f"{name} must be finite and > 0, got {value!r}")
    return x
