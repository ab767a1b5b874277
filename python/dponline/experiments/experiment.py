"""Sweeps of learners × parameter grid × seeds on one stream: definition, validation, seeds and execution."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import inspect
import itertools
import json
import math
import multiprocessing
import numbers
import os
import pickle
import platform
import re
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .. import __version__, _core, regret
from ..errors import InvalidInputError
from ._worker import PackedStream, RunTask, execute, failed_record, init_worker

__all__ = [
    "LearnerSpec",
    "Experiment",
    "Configuration",
    "SweepInterrupted",
    "RunCache",
    "stream_identity",
    "jsonable",
]

BACKENDS = ("inline", "process", "dask")
MAX_CHECKPOINTS = 10_000
"""Most ``checkpoints`` per run (the limit of :meth:`dponline.learners.Learner.run`)."""
MAX_SEEDS = 10**6
"""Most ``seeds`` per (learner, grid point): every run's seed is spawned when the experiment is built."""


class SweepInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped a sweep. ``results`` holds every run that finished (also kept in the cache, if any)."""

    def __init__(self, results: Any) -> None:
        super().__init__("sweep interrupted")
        self.results = results


@dataclass(frozen=True)
class LearnerSpec:
    """A learner of a sweep.

    Attributes:
        name: label of the learner in tables and plots (unique within an experiment).
        factory: a learner class (e.g. :class:`dponline.PrivateBandit`) or a module-level function returning
            a learner; called as ``factory(**params, **grid_point, seed=seed)``. It must pickle (by reference)
            for the process-pool and Dask backends.
        params: fixed keyword arguments (e.g. ``domain``, ``horizon``, ``lipschitz``, ``epsilon=None`` for a
            non-private baseline). Constants that set noise, clipping or step sizes must be declared, never
            computed from the stream.
        grid: per-learner grid, ``{parameter: [values]}``; its Cartesian product (in the order given) is
            swept. Merged with the experiment's grid, whose keys apply to every learner that neither fixes
            them in ``params`` nor sweeps them in its own ``grid``.
        key: prefix naming this learner's parameters in error messages (default ``learners[i].params``).
    """

    name: str
    factory: Callable[..., Any]
    params: Mapping[str, Any] = field(default_factory=dict)
    grid: Mapping[str, Sequence[Any]] = field(default_factory=dict)
    key: str | None = None


@dataclass(frozen=True)
class Configuration:
    """One (learner spec, grid point) of an experiment, validated by building its learner once.

    Attributes:
        spec, point: indices of the learner spec and of the grid point within that spec's grid.
        name: the learner's name.
        values: the grid point, ``{parameter: value}`` (empty without a grid).
        kwargs: every keyword argument of the learner except ``seed``.
        privacy: ``dataclasses.asdict(learner.privacy)`` (``None`` for a non-private learner).
        privacy_per_source_row: the learner's ``privacy_per_source_row(stream)`` when it has that method.
        learner_params: the learner's ``params`` (schedule, noise scale, ...) when it has that attribute.
    """

    spec: int
    point: int
    name: str
    values: dict[str, Any]
    kwargs: dict[str, Any]
    privacy: dict[str, Any] | None
    privacy_per_source_row: Any = None
    learner_params: dict[str, Any] | None = None

    @property
    def label(self) -> str:
        """``name (ε=1, δ=1e-06)``: the name and the grid point, for legends and tables."""
        if not self.values:
            return self.name
        return f"{self.name} ({', '.join(f'{_symbol(k)}={_fmt(v)}' for k, v in self.values.items())})"


def _symbol(name: str) -> str:
    return {"epsilon": "ε", "delta": "δ", "horizon": "T"}.get(name, name)


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


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

    Each entry holds the checkpoints and cumulative losses (exact binary float64) and a JSON string of the
    run's scalars and a human-readable description. Writes are atomic (temporary file + rename), so an
    interrupted sweep never leaves a half-written entry; an unreadable entry counts as missing. Failed runs
    are not cached: a rerun retries them.
    """

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        self.directory = Path(directory)

    def _path(self, key: str) -> Path:
        return self.directory / key[:2] / f"{key}.npz"

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored record of run ``key``, or ``None``."""
        try:
            with np.load(self._path(key), allow_pickle=False) as entry:
                record = json.loads(str(entry["record"]))
                record["checkpoints"] = np.asarray(entry["checkpoints"], dtype=np.int64)
                record["cumulative_loss"] = np.asarray(entry["cumulative_loss"], dtype=np.float64)
        except (OSError, ValueError, KeyError):
            return None
        if record.get("status") != "ok" or record.get("key") != key:
            return None
        return record

    def put(self, key: str, record: dict[str, Any], about: dict[str, Any] | None = None) -> None:
        """Store a finished run (``about``: human-readable context saved alongside)."""
        path = self._path(key)
        path.parent.mkdir(parents=True, exist_ok=True)
        arrays = ("checkpoints", "cumulative_loss")
        scalars = {k: v for k, v in record.items() if k not in (*arrays, "index", "cached", "regret")}
        scalars["about"] = about or {}
        tmp = path.with_name(f"{path.stem}.tmp{os.getpid()}.npz")
        np.savez(
            tmp,
            checkpoints=np.asarray(record["checkpoints"], dtype=np.int64),
            cumulative_loss=np.asarray(record["cumulative_loss"], dtype=np.float64),
            record=np.asarray(json.dumps(jsonable(scalars))),
        )
        os.replace(tmp, path)

    def __len__(self) -> int:
        return sum(1 for _ in self.directory.glob("*/*.npz")) if self.directory.exists() else 0


# ----------------------------------------------------------------------------------------------------------
# The experiment


def _grid_points(grid: Mapping[str, Sequence[Any]]) -> list[dict[str, Any]]:
    keys = list(grid)
    return [dict(zip(keys, values, strict=True)) for values in itertools.product(*(grid[k] for k in keys))]


def _check_spec(i: int, spec: LearnerSpec) -> None:
    """The types of a :class:`LearnerSpec`'s fields (a frozen dataclass does not check them)."""
    if not isinstance(spec.name, str) or not spec.name:
        raise InvalidInputError(f"learners[{i}].name: must be a non-empty string, got {spec.name!r}")
    if spec.key is not None and not isinstance(spec.key, str):
        raise InvalidInputError(f"learners[{i}].key: must be a string or None, got {spec.key!r}")
    where = spec.key or f"learners[{i}]"
    for field_name in ("params", "grid"):
        table = getattr(spec, field_name)
        if not isinstance(table, Mapping) or not all(isinstance(k, str) for k in table):
            raise InvalidInputError(f"{where}.{field_name}: must be a mapping with string keys, got {table!r}")


def _is_count(value: Any, minimum: int) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool) and int(value) >= minimum


class Experiment:
    """Learners × parameter grid × seeds on one stream.

    Each run is ``learner = factory(**params, **grid_point, seed=child_seed)`` then
    ``learner.run(stream, checkpoints=checkpoints)``; regret is measured against comparators in hindsight
    computed once for the stream.

    Seeds: run ``(i, j, k)`` (learner spec ``i``, grid point ``j`` of that spec, seed index ``k``) gets
    ``SeedSequence(root_seed).spawn(len(learners))[i].spawn(points_i)[j].spawn(seeds)[k]``, i.e.
    ``SeedSequence(root_seed, spawn_key=(i, j, k))``: it depends on nothing else — not on the backend, the
    worker or the order in which runs finish. A seeded run is private only while its seed is secret.

    The constructor validates everything before any run: every (learner, grid point) is built once with its
    real arguments; an unknown parameter, an invalid value (``epsilon <= 0`` …) or a factory that does not
    build a learner raises :class:`~dponline.InvalidInputError` naming the configuration key.

    Args:
        stream: a :mod:`dponline.losses` family, built once and shared by every run.
        learners: the learner specifications (:class:`LearnerSpec`).
        grid: ``{parameter: [values]}`` swept for every learner that does not fix the parameter itself
            (e.g. ``{"epsilon": [0.1, 1, 10]}`` with a non-private spec fixing ``epsilon=None``).
        seeds: runs per (learner, grid point), ``1`` to ``MAX_SEEDS`` (10⁶; the seed tree is built up front).
        root_seed: non-negative int, the root of the seed tree (recorded in the metadata: a seeded run is private
            only while its seed is secret), or ``None`` to key the tree from operating-system entropy that is never
            recorded.
        checkpoints: checkpoints per run (passed to ``learner.run``), 1 to 10⁴ (what every learner's ``run``
            accepts).
        comparators: ``{name: regret.Comparator}``; default ``{"best": regret.best_fixed(stream, domain)}``
            and, for portfolio losses, ``"uniform"`` (the uniform constant-rebalanced portfolio).
        domain: domain for the default comparator of linear losses (default: the first learner's ``domain``
            parameter).
        seed_fn: optional ``(i, j, k) -> seed`` replacing the seed layout above (for presets that must keep an
            older job's seeds); it must depend on ``(i, j, k)`` only.
        name: the experiment's name (metadata, plot titles).
        description: free text describing the stream (metadata, plot titles).

    Raises:
        InvalidInputError: bad configuration, naming the key (``grid.epsilon``, ``learners[1].params.foo``,
            ``seeds`` …).
    """

    def __init__(
        self,
        stream: Any,
        learners: Sequence[LearnerSpec],
        *,
        grid: Mapping[str, Sequence[Any]] | None = None,
        seeds: int = 1,
        root_seed: int | None = 0,
        checkpoints: int = 100,
        comparators: Mapping[str, regret.Comparator] | None = None,
        domain: Any = None,
        seed_fn: Callable[[int, int, int], Any] | None = None,
        name: str = "sweep",
        description: str = "",
    ) -> None:
        for attr in ("kind", "horizon", "dim", "cumulative_at", "data"):
            if not hasattr(stream, attr):
                raise InvalidInputError(f"stream: must be a dponline.losses family, got {type(stream).__name__}")
        if not _is_count(seeds, 1) or int(seeds) > MAX_SEEDS:
            raise InvalidInputError(f"seeds: must be an integer between 1 and {MAX_SEEDS:,}, got {seeds!r}")
        if root_seed is not None and not _is_count(root_seed, 0):
            raise InvalidInputError(f"root_seed: must be a non-negative integer or None, got {root_seed!r}")
        if not _is_count(checkpoints, 1) or int(checkpoints) > MAX_CHECKPOINTS:
            raise InvalidInputError(
                f"checkpoints: must be an integer between 1 and {MAX_CHECKPOINTS:,}, got {checkpoints!r}"
            )
        if isinstance(learners, (str, bytes, Mapping)) or not isinstance(learners, Iterable):
            raise InvalidInputError(f"learners: must be a list of LearnerSpec objects, got {learners!r}")
        specs = list(learners)
        if not specs:
            raise InvalidInputError("learners: must name at least one learner")
        names = [s.name for s in specs if isinstance(s, LearnerSpec)]
        if len(names) != len(specs):
            raise InvalidInputError("learners: must be LearnerSpec objects")
        for i, s in enumerate(specs):
            _check_spec(i, s)
        if len(set(names)) != len(names):
            raise InvalidInputError(f"learners: names must be unique, got {names}")
        self.stream = stream
        self.learners = specs
        self.grid = self._check_grid({} if grid is None else grid, "grid")
        self.seeds = int(seeds)
        self.root_seed = None if root_seed is None else int(root_seed)
        # root_seed=None: the seed tree is keyed from OS entropy that is never recorded (private runs stay private
        # even when the outputs are shared; such a sweep is not reproducible and its cache never hits).
        self._root = np.random.SeedSequence().entropy if root_seed is None else self.root_seed
        self.checkpoints = int(checkpoints)
        self.seed_fn = seed_fn
        self.name = name
        self.description = description
        self.stream_id = stream_identity(stream)
        self.configurations = self._validate()
        if comparators is not None and (
            not isinstance(comparators, Mapping)
            or not all(isinstance(k, str) and isinstance(v, regret.Comparator) for k, v in comparators.items())
        ):
            raise InvalidInputError(f"comparators: must map names to regret.Comparator objects, got {comparators!r}")
        self.comparators = dict(comparators) if comparators is not None else self._default_comparators(domain)
        self._seeds = self._seed_tree()

    # -- validation ----------------------------------------------------------------------------------------
    @staticmethod
    def _check_grid(grid: Mapping[str, Any], where: str) -> dict[str, list[Any]]:
        if not isinstance(grid, Mapping):
            raise InvalidInputError(f"{where} must be a mapping of parameter -> list of values, got {grid!r}")
        out: dict[str, list[Any]] = {}
        for key, values in grid.items():
            if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
                raise InvalidInputError(f"{where}.{key}: must be a list of values, got {values!r}")
            values = list(values)
            if not values:
                raise InvalidInputError(f"{where}.{key}: must be a non-empty list")
            if key == "seed":
                raise InvalidInputError(f"{where}.seed: seeds come from the experiment's seed tree; use seeds=")
            out[str(key)] = values
        return out

    def _spec_grid(self, i: int, spec: LearnerSpec) -> tuple[dict[str, list[Any]], dict[str, str]]:
        """The effective grid of spec ``i`` and the configuration key of each of its parameters."""
        own = self._check_grid(spec.grid, f"learners[{i}].grid")
        grid: dict[str, list[Any]] = {}
        keys: dict[str, str] = {}
        for k, v in self.grid.items():
            if k not in spec.params and k not in own:
                grid[k] = v
                keys[k] = f"grid.{k}"
        for k, v in own.items():
            if k in spec.params:
                raise InvalidInputError(f"learners[{i}].grid.{k}: also fixed in the learner's parameters")
            grid[k] = v
            keys[k] = f"learners[{i}].grid.{k}"
        prefix = spec.key or f"learners[{i}].params"
        for k in spec.params:
            keys[k] = f"{prefix}.{k}"
        return grid, keys

    def _validate(self) -> list[Configuration]:
        configs: list[Configuration] = []
        for i, spec in enumerate(self.learners):
            where = spec.key or f"learners[{i}]"
            if not callable(spec.factory):
                raise InvalidInputError(f"{where}: the learner factory must be callable, got {spec.factory!r}")
            if "seed" in spec.params:
                raise InvalidInputError(f"{where}: 'seed' comes from the experiment's seed tree; use seeds=")
            grid, keys = self._spec_grid(i, spec)
            self._check_signature(i, spec, list(spec.params) + list(grid), keys, where)
            for j, point in enumerate(_grid_points(grid)):
                kwargs = {**spec.params, **point}
                configs.append(self._build_once(i, j, spec, point, kwargs, keys, where))
        return configs

    @staticmethod
    def _check_signature(index: int, spec: LearnerSpec, names: list[str], keys: dict[str, str], where: str) -> None:
        try:
            sig = inspect.signature(spec.factory)
        except (TypeError, ValueError):  # no introspectable signature: the build below still checks
            return
        params = sig.parameters
        if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
            return
        accepted = [n for n, p in params.items() if p.kind is not inspect.Parameter.VAR_POSITIONAL]
        factory = getattr(spec.factory, "__name__", repr(spec.factory))
        if "seed" not in params:
            raise InvalidInputError(f"{where}: {factory} takes no 'seed' argument, so runs cannot be seeded")
        for n in names:
            if n not in params:
                raise InvalidInputError(
                    f"{keys.get(n, n)}: unknown parameter of {factory} (accepted: {', '.join(accepted)})"
                )
        prefix = spec.key or f"learners[{index}].params"
        for n, p in params.items():
            required = p.default is inspect.Parameter.empty and p.kind in (
                inspect.Parameter.POSITIONAL_OR_KEYWORD,
                inspect.Parameter.KEYWORD_ONLY,
            )
            if required and n != "seed" and n not in names:
                raise InvalidInputError(f"{prefix}.{n}: required parameter of {factory} is missing")

    def _build_once(
        self,
        i: int,
        j: int,
        spec: LearnerSpec,
        point: dict[str, Any],
        kwargs: dict[str, Any],
        keys: dict[str, str],
        where: str,
    ) -> Configuration:
        try:
            learner = spec.factory(**kwargs, seed=np.random.SeedSequence(self._root))
        except Exception as exc:
            message = str(exc)
            named = [k for k in kwargs if re.search(rf"\b{re.escape(k)}\b", message)]
            named.sort(key=lambda k: k not in point)  # grid values first: they are what varies
            key = keys[named[0]] if named else where
            at = f" at grid point {point}" if point else ""
            raise InvalidInputError(f"{key}: learner {spec.name!r}{at} is invalid: {message}") from exc
        if not callable(getattr(learner, "run", None)):
            raise InvalidInputError(f"{where}: {spec.factory!r} built {type(learner).__name__}, which has no run()")
        for key, value in kwargs.items():
            try:
                pickle.dumps(value, protocol=4)
            except Exception as exc:
                raise InvalidInputError(f"{keys[key]}: the value must pickle to reach worker processes") from exc
        guarantee = getattr(learner, "privacy", None)
        privacy = jsonable(guarantee)  # dataclasses.asdict for a PrivacyGuarantee: later fields flow through
        per_row = None
        method = getattr(learner, "privacy_per_source_row", None)
        if callable(method):
            try:
                per_row = jsonable(method(self.stream))
            except Exception as exc:
                per_row = {"error": f"{type(exc).__name__}: {exc}"}
        learner_params = getattr(learner, "params", None)
        return Configuration(
            spec=i,
            point=j,
            name=spec.name,
            values=dict(point),
            kwargs=dict(kwargs),
            privacy=privacy,
            privacy_per_source_row=per_row,
            learner_params=jsonable(learner_params) if isinstance(learner_params, Mapping) else None,
        )

    def _default_comparators(self, domain: Any) -> dict[str, regret.Comparator]:
        stream = self.stream
        if domain is None:
            domain = next((s.params["domain"] for s in self.learners if "domain" in s.params), None)
        try:
            best = regret.best_fixed(stream, domain)
        except Exception as exc:
            raise InvalidInputError(f"comparators: no default comparator for this stream: {exc}") from exc
        out = {"best": best}
        if stream.kind == "portfolio":
            n = int(stream.dim)
            x = np.full(n, 1.0 / n)
            total = float(stream.cumulative_at(x, [int(stream.horizon)])[0])
            out["uniform"] = regret.Comparator(x=x, total_loss=total, gap=float("nan"), method="uniform CRP")
        return out

    # -- seeds, keys, tasks --------------------------------------------------------------------------------
    def _seed_tree(self) -> dict[tuple[int, int, int], Any]:
        from .._seed import seed_words

        points: dict[int, int] = {}
        for c in self.configurations:
            points[c.spec] = max(points.get(c.spec, 0), c.point + 1)
        tree: dict[tuple[int, int, int], Any] = {}
        if self.seed_fn is not None:
            if not callable(self.seed_fn):
                raise InvalidInputError(f"seed_fn: must be a function (i, j, k) -> seed, got {self.seed_fn!r}")
            for c in self.configurations:
                for k in range(self.seeds):
                    try:
                        seed = self.seed_fn(c.spec, c.point, k)
                        if not isinstance(seed, np.random.Generator):
                            seed_words(seed)  # the seed must be one a learner accepts (and the cache key hashes)
                    except Exception as exc:
                        raise InvalidInputError(f"seed_fn: raised {type(exc).__name__}: {exc}") from exc
                    tree[(c.spec, c.point, k)] = seed
            return tree
        root = np.random.SeedSequence(self._root)
        for i, per_spec in enumerate(root.spawn(len(self.learners))):
            for j, per_point in enumerate(per_spec.spawn(points.get(i, 0))):
                for k, seq in enumerate(per_point.spawn(self.seeds)):
                    tree[(i, j, k)] = seq
        return tree

    def seed(self, spec: int, point: int, seed_index: int) -> Any:
        """The seed of run ``(spec, point, seed_index)``."""
        return self._seeds[(spec, point, seed_index)]

    def run_key(self, config: Configuration, seed_index: int) -> str:
        """Cache key of a run: SHA-256 over the stream's identity, the learner factory, its arguments, the
        run's seed material, the checkpoint count, the dponline version and the core's ``STATE_VERSION`` (which
        changes whenever a seed starts giving other noise)."""
        from .._seed import seed_words

        seed = self.seed(config.spec, config.point, seed_index)
        spec = self.learners[config.spec]
        payload = {
            "stream": self.stream_id,
            "factory": _qualname(spec.factory),
            "kwargs": _canonical(config.kwargs),
            "seed": seed_words(seed) if not isinstance(seed, np.random.Generator) else repr(seed),
            "checkpoints": self.checkpoints,
            "dponline": __version__,
            "state_version": _core.STATE_VERSION,
        }
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()

    def tasks(self) -> list[RunTask]:
        """Every run of the sweep, in sweep order (learner spec, grid point, seed index)."""
        out: list[RunTask] = []
        for c in self.configurations:
            factory = self.learners[c.spec].factory
            for k in range(self.seeds):
                out.append(
                    RunTask(
                        index=len(out),
                        key=self.run_key(c, k),
                        spec=c.spec,
                        point=c.point,
                        seed_index=k,
                        factory=factory,
                        kwargs=c.kwargs,
                        seed=self.seed(c.spec, c.point, k),
                        checkpoints=self.checkpoints,
                    )
                )
        return out

    @property
    def n_runs(self) -> int:
        """Number of runs in the sweep."""
        return len(self.configurations) * self.seeds

    # -- execution -----------------------------------------------------------------------------------------
    def run(
        self,
        *,
        backend: str = "process",
        workers: int | None = None,
        scheduler: Any = None,
        cache_dir: str | os.PathLike[str] | None = None,
        progress: bool = True,
        start_method: str | None = None,
    ) -> Any:
        """Run every run of the sweep not already in the cache and return the :class:`Results`.

        Args:
            backend: ``"process"`` (default: a local ``ProcessPoolExecutor``; the stream is sent once per
                worker), ``"inline"`` (this process, one run after another) or
                ``"dask"`` (needs ``scheduler``). Every backend gives the same per-run results, bit for bit.
            workers: process-pool size (default: the CPUs available to this process).
            scheduler: a ``distributed.Client`` or a scheduler address (``"tcp://host:8786"``); selects Dask.
            cache_dir: directory of finished runs (:class:`RunCache`); runs found there are not recomputed.
            progress: tqdm progress bar over runs.
            start_method: how the process pool starts its workers: ``"forkserver"`` (default where
                available) or ``"spawn"``. Both send workers only pickled data.

        Raises:
            SweepInterrupted: on Ctrl-C, with ``.results`` holding the finished runs (a ``KeyboardInterrupt``).
            InvalidInputError: an unknown backend or a bad ``workers``.

        A run that raises is recorded as failed with its error (see ``Results.failures``) and the sweep goes
        on. Scripts using the process pool must guard their entry point with ``if __name__ == "__main__":``
        (workers re-import the main module to unpickle what it defines).
        """
        from tqdm.auto import tqdm

        from .results import Results

        if scheduler is not None:
            backend = "dask"
        if not isinstance(backend, str) or backend not in BACKENDS:
            raise InvalidInputError(f"backend: must be one of {', '.join(BACKENDS)}; got {backend!r}")
        if backend == "dask" and scheduler is None:
            raise InvalidInputError("backend: 'dask' needs scheduler= (a distributed.Client or an address)")
        if workers is not None and not _is_count(workers, 1):
            raise InvalidInputError(f"workers: must be an integer >= 1, got {workers!r}")
        cache = RunCache(cache_dir) if cache_dir is not None else None
        began_wall, began = time.time(), time.perf_counter()
        tasks = self.tasks()
        records: dict[int, dict[str, Any]] = {}
        pending: list[RunTask] = []
        for task in tasks:
            hit = cache.get(task.key) if cache is not None else None
            if hit is not None:
                hit.update(index=task.index, cached=True)
                records[task.index] = hit
            else:
                pending.append(task)
        n_workers = workers or _cpu_count()
        interrupted = False
        bar = tqdm(total=len(tasks), initial=len(records), unit="run", desc=self.name, disable=not progress)
        stream = self._execute(pending, backend, n_workers, scheduler, start_method)
        try:
            for record in stream:
                record["cached"] = False
                records[record["index"]] = record
                if cache is not None and record["status"] == "ok":
                    cache.put(record["key"], record, about=self._about(tasks[record["index"]]))
                bar.update(1)
        except KeyboardInterrupt:
            interrupted = True
        finally:
            close = getattr(stream, "close", None)
            if callable(close):
                close()  # stops the pool or cancels the Dask futures if the loop did not finish
            bar.close()
        execution = {
            "backend": backend,
            "workers": n_workers if backend == "process" else (1 if backend == "inline" else None),
            "scheduler": _describe(scheduler),
            "cache_dir": None if cache_dir is None else str(cache_dir),
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(began_wall)),
            "wall_seconds": time.perf_counter() - began,
            "interrupted": interrupted,
        }
        results = Results._from_experiment(self, tasks, records, execution)
        if interrupted:
            raise SweepInterrupted(results)
        return results

    def _about(self, task: RunTask) -> dict[str, Any]:
        config = self._config(task.spec, task.point)
        return {"learner": config.name, "values": jsonable(config.values), "seed_index": task.seed_index}

    def _config(self, spec: int, point: int) -> Configuration:
        for c in self.configurations:
            if c.spec == spec and c.point == point:
                return c
        raise KeyError((spec, point))

    def _execute(
        self, tasks: list[RunTask], backend: str, workers: int, scheduler: Any, start_method: str | None
    ) -> Iterator[dict[str, Any]]:
        if not tasks:
            return iter(())
        if backend == "inline":
            return (execute(t, self.stream) for t in tasks)
        if backend == "process":
            return _process_pool(tasks, self.stream, min(workers, len(tasks)), _mp_context(start_method))
        return _dask(tasks, self.stream, scheduler)

    def metadata(self) -> dict[str, Any]:
        """The experiment's description as JSON-able data (versions, stream, comparators, learners, privacy)."""
        return {
            "name": self.name,
            "description": self.description,
            "versions": _versions(),
            "platform": platform.platform(),
            "argv": list(sys.argv),
            "stream": self.stream_id,
            "seeds": self.seeds,
            "root_seed": self.root_seed,
            "seed_layout": "custom seed_fn(i, j, k)"
            if self.seed_fn is not None
            else "SeedSequence(root_seed, spawn_key=(learner spec, grid point, seed index))",
            "checkpoints": self.checkpoints,
            "grid": jsonable(self.grid),
            "not_private": "the stream identity (a hash of the data), the comparators and every loss, wealth and "
            "regret are evaluations computed from the raw data: they are not differentially private releases",
            "comparators": {
                name: {"method": c.method, "total_loss": c.total_loss, "gap": jsonable(c.gap), "x": jsonable(c.x)}
                for name, c in self.comparators.items()
            },
            "learners": [
                {
                    "name": s.name,
                    "factory": _qualname(s.factory),
                    "params": jsonable(dict(s.params)),
                    "grid": jsonable(dict(s.grid)),
                }
                for s in self.learners
            ],
            "configurations": [
                {
                    "learner": c.name,
                    "values": jsonable(c.values),
                    "privacy": c.privacy,
                    "privacy_per_source_row": c.privacy_per_source_row,
                    "learner_params": c.learner_params,
                }
                for c in self.configurations
            ],
        }


@functools.cache
def _versions() -> dict[str, str | None]:
    import importlib.metadata as im

    versions: dict[str, str | None] = {"dponline": __version__, "python": platform.python_version()}
    for pkg in ("numpy", "scipy", "pandas", "pyarrow", "matplotlib", "tqdm", "distributed"):
        try:
            versions[pkg] = im.version(pkg)
        except im.PackageNotFoundError:
            versions[pkg] = None
    return versions


def _describe(scheduler: Any) -> str | None:
    if scheduler is None or isinstance(scheduler, str):
        return scheduler
    address = getattr(getattr(scheduler, "scheduler", None), "address", None)
    return str(address) if address else repr(scheduler)


def _cpu_count() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def _mp_context(start_method: str | None) -> Any:
    """``forkserver`` where available (workers fork from a server that imported dponline once, so a second
    sweep in the same session starts its workers at once), else ``spawn``; both pickle everything a worker
    gets, and neither forks a process that may be running threads."""
    methods = multiprocessing.get_all_start_methods()
    if start_method is None:
        start_method = "forkserver" if "forkserver" in methods else "spawn"
    if start_method not in ("spawn", "forkserver") or start_method not in methods:
        allowed = [m for m in ("spawn", "forkserver") if m in methods]
        raise InvalidInputError(f"start_method: must be one of {', '.join(allowed)}; got {start_method!r}")
    context = multiprocessing.get_context(start_method)
    if start_method == "forkserver":
        context.set_forkserver_preload(["dponline.experiments._worker"])
    return context


def _process_pool(tasks: list[RunTask], stream: Any, workers: int, context: Any) -> Iterator[dict[str, Any]]:
    pool = ProcessPoolExecutor(
        max_workers=workers,
        mp_context=context,
        initializer=init_worker,
        initargs=(stream,),
    )
    done = False
    try:
        futures: dict[Any, RunTask] = {}
        for n, task in enumerate(tasks):
            try:
                futures[pool.submit(execute, task)] = task
            except Exception as exc:  # no worker can start (a dead forkserver, a broken pool): record them all
                cause = RuntimeError(
                    f"the worker processes could not start ({type(exc).__name__}: {exc}); the error that stopped "
                    "them went to standard error. Run with backend='inline' to see it in this process."
                )
                cause.__cause__ = exc
                for unsent in tasks[n:]:
                    yield failed_record(unsent, cause)
                break
        for future in as_completed(futures):
            try:
                yield future.result()
            except Exception as exc:  # the worker died (BrokenProcessPool, ...): record, go on
                yield failed_record(futures[future], exc)
        done = True
    finally:
        if done:
            pool.shutdown(wait=False)  # every result is in: let the idle workers exit on their own
        else:  # Ctrl-C or the consumer stopped: drop queued runs and stop the running ones now
            pool.shutdown(wait=False, cancel_futures=True)
            terminate = getattr(pool, "terminate_workers", None)
            if callable(terminate):
                terminate()
            else:
                for proc in list((getattr(pool, "_processes", None) or {}).values()):
                    proc.terminate()


def _dask(tasks: list[RunTask], stream: Any, scheduler: Any) -> Iterator[dict[str, Any]]:
    try:
        from distributed import Client
        from distributed import as_completed as dask_completed
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise InvalidInputError("the Dask backend needs the 'dask' extra: pip install 'dponline[dask]'") from exc
    own = not isinstance(scheduler, Client)
    client = Client(scheduler) if own else scheduler
    futures: dict[Any, RunTask] = {}
    done = False
    try:
        [remote] = client.scatter([PackedStream(stream)], broadcast=True, hash=False)
        futures = {client.submit(execute, t, remote, pure=False): t for t in tasks}
        for future in dask_completed(list(futures)):
            try:
                yield future.result()
            except Exception as exc:  # a lost worker, ...: record, go on
                yield failed_record(futures[future], exc)
        done = True
    finally:
        if not done and futures:
            client.cancel(list(futures))
        if own:
            client.close()
