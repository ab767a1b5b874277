"""The on-disk cache of finished runs, and the canonical JSON-able descriptions its keys and the metadata use."""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import inspect
import json
import math
import os
import pickle
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["RunCache", "stream_identity", "jsonable"]

# ----------------------------------------------------------------------------------------------------------
# Canonical, JSON-able descriptions (for cache keys and metadata)


def jsonable(obj: Any) -> Any:
    """``obj`` as JSON-serialisable data: dataclasses through ``asdict``, numpy scalars and arrays as Python
    numbers and lists, non-finite floats as strings, other objects as their ``repr``."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return jsonable(dataclasses.asdict(obj))
    if isinstance(obj, Mapping):
        return {str(k): jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [jsonable(v) for v in obj]
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind in "iub" or (obj.dtype.kind == "f" and np.isfinite(obj).all()):
            return obj.tolist()
        return jsonable(obj.tolist())
    if isinstance(obj, np.generic):
        return jsonable(obj.item())
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else repr(obj)
    if obj is None or isinstance(obj, (bool, int, str)):
        return obj
    if isinstance(obj, type) or callable(obj) and hasattr(obj, "__qualname__"):
        return _qualname(obj)
    return repr(obj)


def _qualname(obj: Any) -> str:
    return f"{getattr(obj, '__module__', '?')}.{getattr(obj, '__qualname__', repr(obj))}"


def _canonical(obj: Any) -> Any:
    """A deterministic description of a parameter value for hashing: exact floats, arrays by content,
    classes and functions by qualified name, other objects by the digest of their pickle."""
    if obj is None or isinstance(obj, (bool, int, str)):
        return obj
    if isinstance(obj, float):
        return ["float", obj.hex()]
    if isinstance(obj, np.generic):
        return _canonical(obj.item())
    if isinstance(obj, np.ndarray):
        arr = np.ascontiguousarray(obj)
        return ["ndarray", str(arr.dtype), list(arr.shape), hashlib.sha256(arr.tobytes()).hexdigest()]
    if isinstance(obj, Mapping):
        return ["dict", sorted([str(k), _canonical(v)] for k, v in obj.items())]
    if isinstance(obj, (list, tuple)):
        return [type(obj).__name__, [_canonical(v) for v in obj]]
    if isinstance(obj, type) or inspect.isfunction(obj) or inspect.isbuiltin(obj):
        return ["callable", _qualname(obj)]
    return ["pickle", _qualname(type(obj)), hashlib.sha256(pickle.dumps(obj, protocol=4)).hexdigest()]


def stream_identity(stream: Any) -> dict[str, Any]:
    """What identifies a loss family's rounds: kind, horizon, order, resampling seed, shape and a SHA-256
    of its data (the rows in its row order follow from these)."""
    data = np.ascontiguousarray(np.asarray(stream.data, dtype=np.float64))
    seed = None
    reduce = getattr(stream, "__reduce__", None)
    if reduce is not None:
        try:
            ctor, _ = reduce()
            seed = getattr(ctor, "keywords", {}).get("seed")
        except Exception:  # a family without the usual reduce: the data digest still identifies it
            seed = None
    return {
        "kind": str(stream.kind),
        "horizon": int(stream.horizon),
        "order": str(stream.order),
        "resample_seed": seed,
        "rows": int(data.shape[0]),
        "dim": int(data.shape[1]) if data.ndim == 2 else 1,
        "data_sha256": hashlib.sha256(data.tobytes()).hexdigest(),
    }


# ----------------------------------------------------------------------------------------------------------
# On-disk cache of finished runs


class RunCache:
    """Finished runs stored as one ``.npz`` file each under ``directory``, keyed by the run's hash.

    Each entry holds the checkpoints and cumulative losses (exact binary float64), a JSON string of the run's
    scalars (total loss, rounds, the ``clipped`` count, timings) with a human-readable description, and a
    SHA-256 checksum over all three. None of it is a private release: the losses and the clipped count are exact
    functions of the raw data (see :meth:`dponline.experiments.Experiment.metadata`, ``not_private``), so keep a
    cache as confidential as the data.

    Writes are atomic and durable (temporary file, ``fsync``, rename), so an interrupted sweep never leaves a
    half-written entry. An entry that cannot be read (truncated, empty, not a zip file, a flipped bit) or whose
    checksum or key does not match is reported with a :class:`RuntimeWarning`, deleted, and counts as missing:
    the run is recomputed. Failed runs are not cached: a rerun retries them.
    """

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.npz"

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored record of run ``key``, or ``None`` (missing, or damaged: then warned about and deleted)."""
        path = self._path(key)
        if not path.exists():
            return None
        try:
            with open(path, "rb") as fh, np.load(fh, allow_pickle=False) as entry:
                text = str(entry["record"])
                checkpoints = np.asarray(entry["checkpoints"], dtype=np.int64)
                cumulative = np.asarray(entry["cumulative_loss"], dtype=np.float64)
                stored = str(entry["checksum"])
            if stored != _checksum(checkpoints, cumulative, text):
                raise ValueError("checksum mismatch")
            record = json.loads(text)
            if record.get("status") != "ok" or record.get("key") != key:
                raise ValueError("the entry is not this run's")
        except Exception as exc:  # BadZipFile, EOFError, zlib.error, KeyError, ValueError, OSError ...: damaged
            warnings.warn(
                f"cache entry {path} is unreadable ({type(exc).__name__}: {exc}); deleted, the run is recomputed",
                RuntimeWarning,
                stacklevel=2,
            )
            with contextlib.suppress(OSError):
                path.unlink()
            return None
        record["checkpoints"] = checkpoints
        record["cumulative_loss"] = cumulative
        return record

    def put(self, key: str, record: dict[str, Any], about: dict[str, Any] | None = None) -> None:
        """Store a finished run (``about``: human-readable context saved alongside), atomically.

        Raises:
            OSError: the entry could not be written (a full disk ...); no temporary file is left.
        """
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        arrays = ("checkpoints", "cumulative_loss")
        scalars = {k: v for k, v in record.items() if k not in (*arrays, "index", "cached", "regret")}
        scalars["about"] = about or {}
        checkpoints = np.asarray(record["checkpoints"], dtype=np.int64)
        cumulative = np.asarray(record["cumulative_loss"], dtype=np.float64)
        text = json.dumps(jsonable(scalars))
        tmp = path.with_name(f"{path.stem}{TEMPORARY}{os.getpid()}")
        try:
            with open(tmp, "wb") as fh:
                np.savez(
                    fh,
                    checkpoints=checkpoints,
                    cumulative_loss=cumulative,
                    record=np.asarray(text),
                    checksum=np.asarray(_checksum(checkpoints, cumulative, text)),
                )
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise

    def clean_temporary(self) -> int:
        """Delete the temporary files interrupted writes left (call it only while no one else writes to the
        cache: a job holds its output folder's lock); returns how many."""
        if not self.directory.exists():
            return 0
        stale = list(self.directory.glob(f"**/*{TEMPORARY}*"))
        for path in stale:
            with contextlib.suppress(OSError):
                path.unlink()
        return len(stale)

    def __len__(self) -> int:
        return sum(1 for _ in self.directory.glob("*/*.npz")) if self.directory.exists() else 0


TEMPORARY = ".tmp-"
"""Marks a cache entry still being written (``<key>.tmp-<pid>``)."""


def _checksum(checkpoints: np.ndarray, cumulative: np.ndarray, text: str) -> str:
    digest = hashlib.sha256()
    for part in (checkpoints.astype("<i8").tobytes(), cumulative.astype("<f8").tobytes(), text.encode()):
        digest.update(len(part).to_bytes(8, "little"))
        digest.update(part)
    return digest.hexdigest()
