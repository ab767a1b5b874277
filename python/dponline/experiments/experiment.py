"""Sweeps of learners × parameter grid × seeds on one stream: definition, validation, seeds and execution."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import inspect
import itertools
import json
import numbers
import os
import pickle
import platform
import re
import sys
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from .. import __version__, _core, regret
from .._seed import seed_words
from ..errors import InvalidInputError
from ..privacy import PrivacyGuarantee
from ._worker import RunTask
from .backends import BACKENDS, _cpu_count, _describe, execute_tasks
from .cache import RunCache, _canonical, _qualname, jsonable, stream_identity
from .results import Results
from .spec import Configuration, LearnerSpec, Reference, _check_spec

__all__ = ["Experiment", "SweepInterrupted"]

MAX_CHECKPOINTS = 10_000
"""Most ``checkpoints`` per run (the limit of :meth:`dponline.learners.Learner.run`)."""
MAX_SEEDS = 10**6
"""Most ``seeds`` per (learner, grid point): every run's seed is spawned when the experiment is built."""
_PRIVACY_ARGUMENTS = ("epsilon", "delta", "calibration", "mechanism")
OS_ROOT = "os (not recorded)"
"""What the metadata says for ``root_seed`` when the seed tree was keyed from operating-system entropy."""


class SweepInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped a sweep. ``results`` holds every run that finished (also kept in the cache, if any)."""

    def __init__(self, results: Results) -> None:
        super().__init__("sweep interrupted")
        self.results = results


def _grid_points(grid: Mapping[str, Sequence[Any]]) -> list[dict[str, Any]]:
    keys = list(grid)
    return [dict(zip(keys, values, strict=True)) for values in itertools.product(*(grid[k] for k in keys))]


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
            recorded: the metadata then says ``"os (not recorded)"`` and the guarantees say ``randomness="os"``. With
            ``seed_fn``, ``None`` declares that ``seed_fn`` derives its seeds from such unrecorded entropy too (as
            the CLI presets do).
        checkpoints: checkpoints per run (passed to ``learner.run``), 1 to 10⁴ (what every learner's ``run``
            accepts).
        comparators: ``{name: regret.Comparator or Reference}`` (a :class:`Reference` brings its own cumulative
            loss curve, for references the stream cannot evaluate as a point); default
            ``{"best": regret.best_fixed(stream, domain)}`` and, for portfolio losses, ``"uniform"`` (the uniform
            constant-rebalanced portfolio).
        domain: domain for the default comparator of linear losses (default: the first learner's ``domain``
            parameter).
        seed_fn: optional ``(i, j, k) -> seed`` replacing the seed layout above (for presets that must keep an
            older job's seeds); it must depend on ``(i, j, k)`` only.
        name: the experiment's name (metadata, plot titles).
        description: free text describing the stream (metadata, plot titles).
        baseline: the name of the do-nothing comparator every private learner's verdict is measured against
            (default ``"uniform"`` when that comparator exists: the uniform portfolio, weights or arm).
        unit: the unit of the losses and regrets, for tables, verdicts and plot axes (default ``"nats"`` for
            portfolio log-losses, else ``"loss units"``).

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
        baseline: str | None = None,
        unit: str | None = None,
    ) -> None:
        for attr in ("kind", "horizon", "cumulative_at", "data"):
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
            or not all(
                isinstance(k, str) and isinstance(v, (regret.Comparator, Reference)) for k, v in comparators.items()
            )
        ):
            raise InvalidInputError(
                f"comparators: must map names to regret.Comparator or Reference objects, got {comparators!r}"
            )
        self.comparators: dict[str, regret.Comparator | Reference] = (
            dict(comparators) if comparators is not None else dict(self._default_comparators(domain))
        )
        if baseline is None and "uniform" in self.comparators:
            baseline = "uniform"
        if baseline is not None and baseline not in self.comparators:
            raise InvalidInputError(
                f"baseline: must name a comparator ({', '.join(self.comparators)}), got {baseline!r}"
            )
        if unit is None:
            unit = "nats" if stream.kind == "portfolio" else "loss units"
        if not isinstance(unit, str) or not unit:
            raise InvalidInputError(f"unit: must be a non-empty string, got {unit!r}")
        self.baseline = baseline
        self.unit = unit
        self.twins = self._twins()
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
        if self.root_seed is None and isinstance(guarantee, PrivacyGuarantee):
            # The runs are seeded from the unrecorded OS-drawn root: neither a published seed nor the CSPRNG.
            guarantee = dataclasses.replace(guarantee, randomness="os")
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
        if stream.kind == "portfolio" or type(domain).__name__ == "Simplex":
            n = int(stream.dim)
            x = np.full(n, 1.0 / n)
            total = float(stream.cumulative_at(x, [int(stream.horizon)])[0])
            method = "uniform CRP" if stream.kind == "portfolio" else "uniform weights (expected loss of a random pick)"
            out["uniform"] = regret.Comparator(x=x, total_loss=total, gap=float("nan"), method=method)
        return out

    def _twins(self) -> dict[int, int]:
        """``{private configuration index: its non-private twin's index}``: the first non-private configuration
        (no ``privacy``) of the spec that :attr:`LearnerSpec.twin` names, or else one of the same factory whose
        arguments equal the private one's once the privacy arguments (ε, δ, calibration, mechanism) are removed.

        Raises:
            InvalidInputError: a ``twin`` that names no learner, or one without a non-private configuration."""
        names = {s.name: i for i, s in enumerate(self.learners)}
        named: dict[int, int] = {}
        for i, spec in enumerate(self.learners):
            if spec.twin is None:
                continue
            where = f"{spec.key or f'learners[{i}]'}.twin"
            if spec.twin not in names:
                raise InvalidInputError(f"{where}: no learner named {spec.twin!r}")
            public_twin = next(
                (n for n, c in enumerate(self.configurations) if c.spec == names[spec.twin] and not c.privacy), None
            )
            if public_twin is None:
                raise InvalidInputError(f"{where}: {spec.twin!r} has no non-private configuration (epsilon=None)")
            named[i] = public_twin

        def signature(c: Configuration) -> str:
            kwargs = {k: v for k, v in c.kwargs.items() if k not in _PRIVACY_ARGUMENTS}
            factory = _qualname(self.learners[c.spec].factory)
            return json.dumps([factory, _canonical(kwargs)], sort_keys=True, default=str)

        public: dict[str, int] = {}
        for n, c in enumerate(self.configurations):
            if not c.privacy:
                public.setdefault(signature(c), n)
        twins = {}
        for n, c in enumerate(self.configurations):
            if not c.privacy:
                continue
            if c.spec in named:
                twins[n] = named[c.spec]
            elif signature(c) in public:
                twins[n] = public[signature(c)]
        return twins

    # -- seeds, keys, tasks --------------------------------------------------------------------------------
    def _seed_tree(self) -> dict[tuple[int, int, int], Any]:
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
        changes whenever a seed starts giving other noise).

        An unseeded sweep (``root_seed=None``) keys its runs by position instead of by seed material —
        ``("os", spec, point, seed_index)`` — so that an interrupted run resumes without its OS-drawn seeds ever
        being written anywhere: the missing runs get fresh seeds."""
        seed = self.seed(config.spec, config.point, seed_index)
        spec = self.learners[config.spec]
        if self.root_seed is None:
            material: Any = ["os", config.spec, config.point, seed_index]
        else:
            material = seed_words(seed) if not isinstance(seed, np.random.Generator) else repr(seed)
        payload = {
            "stream": self.stream_id,
            "factory": _qualname(spec.factory),
            "kwargs": _canonical(config.kwargs),
            "seed": material,
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

    def cache_directory(self, cache_dir: str | os.PathLike[str]) -> Path:
        """Where this sweep's runs are cached under ``cache_dir``: ``cache_dir`` itself for a seeded sweep,
        ``cache_dir/unseeded`` for an unseeded one (kept apart so a job can delete them once it completes)."""
        return Path(cache_dir) / "unseeded" if self.root_seed is None else Path(cache_dir)

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
    ) -> Results:
        """Run every run of the sweep not already in the cache and return the :class:`Results`.

        Args:
            backend: ``"process"`` (default: a local ``ProcessPoolExecutor``; the stream is sent once per
                worker), ``"inline"`` (this process, one run after another) or
                ``"dask"`` (needs ``scheduler``). Every backend gives the same per-run results, bit for bit.
            workers: process-pool size (default: the CPUs available to this process).
            scheduler: a ``distributed.Client`` or a scheduler address (``"tcp://host:8786"``); selects Dask.
            cache_dir: directory of finished runs (:class:`RunCache`); runs found there are not recomputed. An
                unseeded sweep keeps its runs under ``cache_dir/unseeded`` (keyed by position, see
                :meth:`run_key`): a resumed unseeded sweep reuses its finished runs and draws fresh seeds for
                the rest, so resumed and new runs do not share common random numbers.
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

        if scheduler is not None:
            backend = "dask"
        if not isinstance(backend, str) or backend not in BACKENDS:
            raise InvalidInputError(f"backend: must be one of {', '.join(BACKENDS)}; got {backend!r}")
        if backend == "dask" and scheduler is None:
            raise InvalidInputError("backend: 'dask' needs scheduler= (a distributed.Client or an address)")
        if workers is not None and not _is_count(workers, 1):
            raise InvalidInputError(f"workers: must be an integer >= 1, got {workers!r}")
        cache = RunCache(self.cache_directory(cache_dir)) if cache_dir is not None else None
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
        stream = execute_tasks(pending, self.stream, backend, n_workers, scheduler, start_method)
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
        results = self._results(tasks, records, execution)
        if interrupted:
            raise SweepInterrupted(results)
        return results

    def _results(self, tasks: list[RunTask], records: dict[int, dict[str, Any]], execution: dict[str, Any]) -> Results:
        """The :class:`Results` of the finished ``records`` among ``tasks``, with their regret against every
        comparator."""
        curves: dict[tuple[str, bytes], np.ndarray] = {}
        out: list[dict[str, Any]] = []
        for task in tasks:
            record = records.get(task.index)
            if record is None:
                continue  # not run (interrupted)
            record = dict(record)
            record.update(spec=task.spec, point=task.point, seed_index=task.seed_index)
            if record["status"] == "ok":
                marks = record["checkpoints"]
                record["regret"] = {}
                for name, comp in self.comparators.items():
                    at = (name, marks.tobytes())
                    if at not in curves:
                        if isinstance(comp, Reference):
                            curves[at] = np.asarray(comp.curve(marks), dtype=np.float64)
                        else:
                            curves[at] = np.asarray(self.stream.cumulative_at(comp.x, marks.tolist()))
                    record["regret"][name] = record["cumulative_loss"] - curves[at]
            out.append(record)
        parameters: list[str] = []
        for c in self.configurations:
            for k in c.values:
                if k not in parameters:
                    parameters.append(k)
        counts = {
            "runs": len(tasks),
            "finished": sum(r["status"] == "ok" for r in out),
            "failed": sum(r["status"] != "ok" for r in out),
            "cached": sum(bool(r.get("cached")) for r in out),
            "not_run": len(tasks) - len(out),
        }
        # Each comparator's own cumulative loss at the first finished run's checkpoints: drawn as reference lines.
        reference: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        first = next((r for r in out if r["status"] == "ok"), None)
        if first is not None:
            marks = first["checkpoints"]
            for name in self.comparators:
                reference[name] = (marks, curves[(name, marks.tobytes())])
        return Results(
            out, self.configurations, list(self.comparators), parameters, self.metadata(), execution | counts, reference
        )

    def _about(self, task: RunTask) -> dict[str, Any]:
        config = self._config(task.spec, task.point)
        return {"learner": config.name, "values": jsonable(config.values), "seed_index": task.seed_index}

    def _config(self, spec: int, point: int) -> Configuration:
        for c in self.configurations:
            if c.spec == spec and c.point == point:
                return c
        raise KeyError((spec, point))

    def metadata(self) -> dict[str, Any]:
        """The experiment's description as JSON-able data (versions, stream, comparators, learners, privacy).

        ``not_private`` lists what is computed from the raw data and is not a private release (losses, regrets,
        the clipped counts, timings); ``root_seed`` is the recorded root, or ``"os (not recorded)"``
        (:data:`OS_ROOT`) when the seed tree was keyed from operating-system entropy, which is never written."""
        return {
            "name": self.name,
            "description": self.description,
            "versions": _versions(),
            "platform": platform.platform(),
            "argv": list(sys.argv),
            "stream": self.stream_id,
            "seeds": self.seeds,
            "root_seed": OS_ROOT if self.root_seed is None else self.root_seed,
            "seed_layout": "custom seed_fn(i, j, k)"
            if self.seed_fn is not None
            else "SeedSequence(root_seed, spawn_key=(learner spec, grid point, seed index))",
            "checkpoints": self.checkpoints,
            "grid": jsonable(self.grid),
            "unit": self.unit,
            "baseline": self.baseline,
            "sign_convention": "regret = learner's loss − reference's loss: + = worse",
            "not_private": "the stream identity (a hash of the data), the comparators, every loss, wealth and regret, "
            "the clipped counts (rounds whose loss exceeded the declared bound) and the run times are computed from "
            "the raw data: they are not differentially private releases",
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
                    "twin": self.configurations[self.twins[n]].label if n in self.twins else None,
                }
                for n, c in enumerate(self.configurations)
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
