"""Small helpers shared by the bundled-data loaders (no dependency on ``dponline._core``)."""

from __future__ import annotations

import gzip
import io
import math
import numbers
from importlib import resources

import numpy as np

__all__ = ["read_bundled_text", "read_bundled_table", "read_only", "positive_finite"]


def read_bundled_text(filename: str) -> str:
    """The decompressed ASCII text of ``data/<filename>`` (a gzip file shipped in this package)."""
    package = __package__ or "dponline.datasets"
    blob = resources.files(package).joinpath("data").joinpath(filename).read_bytes()
    return gzip.decompress(blob).decode("ascii")


def read_bundled_table(
    filename: str, header: tuple[str, ...] | None, rows: int, dtype: type = np.float64
) -> tuple[tuple[str, ...], np.ndarray]:
    """The header fields and the numeric body of ``data/<filename>``, a gzip CSV shipped in this package: a
    ``dtype`` array of shape ``(rows, number of fields)``, every value finite.

    Raises:
        RuntimeError: naming the file as corrupt, when the header is not ``header`` (any header when ``None``)
            or the body is not of that shape or holds a non-finite value.
    """
    first, _, body = read_bundled_text(filename).partition("\n")
    fields = tuple(first.strip().split(","))
    if header is not None and fields != header:
        raise RuntimeError(f"bundled {filename} is corrupt: header {first!r}")
    # numpy's text parser rounds correctly, so the values equal Python's float() of each field.
    table: np.ndarray = np.loadtxt(io.StringIO(body), delimiter=",", dtype=dtype, ndmin=2)
    if table.shape != (rows, len(fields)) or not np.all(np.isfinite(table)):
        raise RuntimeError(f"bundled {filename} is corrupt: table of shape {table.shape}")
    return fields, table


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
