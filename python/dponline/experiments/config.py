"""Sweep configuration files (TOML): parse, validate, build an :class:`Experiment`.

The format (see the README, "Sweeps", and ``examples/sweeps/portfolio.toml``)::

    name = "portfolio"                 # optional
    [stream]                           # the loss family, built once
    dataset = "nyse"                   # or file = "rows.npy" / "rows.csv" (a numeric matrix, one row per round)
    loss = "portfolio"                 # "portfolio" (−ln⟨r_t, x⟩) or "linear" (⟨c_t, x⟩)
    horizon = 20000                    # default: the number of rows
    resample = "bootstrap"             # "none" (default; the first `horizon` rows in order), "cycle", "bootstrap"
    seed = 0                           # seed of the bootstrap
    [sweep]
    seeds = 3                          # runs per learner × grid point
    root_seed = 0
    checkpoints = 200
    [grid]                             # swept for every learner that does not fix the parameter
    epsilon = [0.3, 1.0, 3.0]
    [[learners]]
    name = "private"
    learner = "PrivateBandit"          # a class of dponline.learners, or "package.module:factory"
    domain = "simplex"                 # or {kind = "l2ball", radius = 1.0}; built with the stream's dimension
    delta = 1e-6                       # every other key is a keyword argument of the learner
    lipschitz = 10.0                   # declared constants, never computed from the data
    loss_bound = 0.7
    [[learners]]
    name = "non-private"
    learner = "PrivateBandit"
    domain = "simplex"
    epsilon = "none"                   # TOML has no null: the string "none" passes None
    lipschitz = 10.0
    loss_bound = 0.7
    [output]
    format = "parquet"                 # or "csv"
    svg = false                        # also write SVG plots

``horizon`` defaults to the stream's horizon for learners that take one. A learner table may hold its own
``[learners.grid]``.
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .. import _validate, domains, learners, losses
from ..datasets import load_nyse
from ..errors import InvalidInputError
from .experiment import Experiment, LearnerSpec

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib

__all__ = ["OutputOptions", "load_config", "experiment_from_config", "resolve_learner", "build_domain"]

_TOP = ("name", "description", "stream", "sweep", "grid", "learners", "output")
_STREAM = ("dataset", "file", "loss", "horizon", "resample", "seed")
_SWEEP = ("seeds", "root_seed", "checkpoints", "baseline", "unit")
_OUTPUT = ("format", "svg")
_DOMAINS: dict[str, Callable[..., Any]] = {
    "simplex": lambda n: domains.Simplex(n),
    "l1ball": lambda n, radius=1.0: domains.L1Ball(n, radius),
    "l2ball": lambda n, radius=1.0: domains.L2Ball(n, radius),
    "box": lambda n, lower=0.0, upper=1.0: domains.Box(
        np.array(np.broadcast_to(lower, n), dtype=np.float64), np.array(np.broadcast_to(upper, n), dtype=np.float64)
    ),
}


@dataclass(frozen=True)
class OutputOptions:
    """The ``[output]`` table: ``format`` of the tidy table (``"parquet"`` or ``"csv"``) and ``svg`` plots."""

    format: str = "parquet"
    svg: bool = False


def _unknown(table: Mapping[str, Any], allowed: tuple[str, ...], where: str) -> None:
    for key in table:
        if key not in allowed:
            prefix = f"{where}." if where else ""
            raise InvalidInputError(f"{prefix}{key}: unknown key (allowed: {', '.join(allowed)})")


def _table(config: Mapping[str, Any], key: str) -> dict[str, Any]:
    value = config.get(key, {})
    if not isinstance(value, Mapping):
        raise InvalidInputError(f"{key}: must be a table, got {value!r}")
    return dict(value)


def resolve_learner(name: Any, where: str) -> Callable[..., Any]:
    """A learner factory from its name: a class exported by :mod:`dponline.learners` (``"PrivateBandit"``)
    or ``"package.module:attribute"``."""
    if not isinstance(name, str) or not name:
        raise InvalidInputError(f"{where}: must name a learner, got {name!r}")
    known = sorted(n for n in learners.__all__ if isinstance(getattr(learners, n), type) and n != "RunResult")
    if ":" in name:
        module, _, attr = name.partition(":")
        try:
            factory = getattr(importlib.import_module(module), attr)
        except (ImportError, AttributeError, ValueError) as exc:  # ValueError: an empty module name
            raise InvalidInputError(f"{where}: cannot import {name!r}: {exc}") from exc
    elif name in known:
        factory = getattr(learners, name)
    else:
        raise InvalidInputError(f"{where}: unknown learner {name!r} (known: {', '.join(known)}, or 'module:factory')")
    if not callable(factory):
        raise InvalidInputError(f"{where}: {name!r} is not callable")
    return factory


def build_domain(spec: Any, dim: int, where: str) -> Any:
    """A domain from ``"simplex"`` or ``{kind = "l2ball", radius = 2.0}`` (kinds: simplex, l1ball, l2ball,
    box with scalar or per-coordinate ``lower``/``upper``), of dimension ``dim``."""
    if isinstance(spec, str):
        spec = {"kind": spec}
    if not isinstance(spec, Mapping) or not isinstance(spec.get("kind"), str):
        raise InvalidInputError(f"{where}: must be a domain name or a table with 'kind', got {spec!r}")
    args = {k: v for k, v in spec.items() if k != "kind"}
    kind = spec["kind"].lower()
    if kind not in _DOMAINS:
        raise InvalidInputError(f"{where}.kind: unknown domain {spec['kind']!r} (known: {', '.join(_DOMAINS)})")
    try:
        return _DOMAINS[kind](dim, **args)
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"{where}: cannot build the {kind} domain: {exc}") from exc


def _none(value: Any) -> Any:
    return None if value == "none" else value


def _stream(table: dict[str, Any], base: Path) -> tuple[Any, str]:
    _unknown(table, _STREAM, "stream")
    if ("dataset" in table) == ("file" in table):
        raise InvalidInputError("stream: give exactly one of stream.dataset and stream.file")
    if "dataset" in table:
        if table["dataset"] != "nyse":
            raise InvalidInputError(f"stream.dataset: unknown dataset {table['dataset']!r} (known: nyse)")
        data = np.asarray(load_nyse().relatives, dtype=np.float64)
        source = "NYSE daily price relatives"
    else:
        path = Path(str(table["file"]))
        path = path if path.is_absolute() else base / path
        try:
            data = np.load(path) if path.suffix == ".npy" else np.loadtxt(path, delimiter=",", ndmin=2)
        except (OSError, ValueError) as exc:
            raise InvalidInputError(f"stream.file: cannot read {str(path)!r}: {exc}") from exc
        # The same validation as the Python API: a finite real matrix, one row per round (strings, complex
        # values, 0-d or 3-d arrays are refused with the reason).
        if np.ndim(data) != 2:
            raise InvalidInputError(f"stream.file: must hold a matrix, one row per round; got shape {np.shape(data)}")
        data = _validate.real_array("stream.file", data, (None, None))
        source = path.name
    kind = table.get("loss", "portfolio")
    builders = {"portfolio": losses.PortfolioLogLoss, "linear": losses.Linear}
    if not isinstance(kind, str) or kind not in builders:
        raise InvalidInputError(f"stream.loss: must be 'portfolio' or 'linear', got {kind!r}")
    rows = data.shape[0]
    horizon = table.get("horizon", rows)
    if isinstance(horizon, bool) or not isinstance(horizon, int) or horizon < 1:
        raise InvalidInputError(f"stream.horizon: must be an integer >= 1, got {horizon!r}")
    resample = _none(table.get("resample", None))
    if resample is not None and (not isinstance(resample, str) or resample not in ("cycle", "bootstrap")):
        raise InvalidInputError(f"stream.resample: must be 'none', 'cycle' or 'bootstrap', got {resample!r}")
    seed = table.get("seed")
    try:
        if resample is None:
            if horizon > rows:
                raise InvalidInputError(
                    f"horizon {horizon} exceeds the {rows} rows; set stream.resample to 'cycle' or 'bootstrap'"
                )
            family = builders[kind](data[:horizon])
            about = f"{source}, the first {horizon} rows in order"
        else:
            family = builders[kind](data, horizon=horizon, resample=resample, seed=seed)
            about = f"{source}, {horizon} rounds ({resample} of {rows} rows, seed {seed})"
    except InvalidInputError as exc:
        raise InvalidInputError(f"stream: {exc}") from exc
    return family, about


def experiment_from_config(
    config: Mapping[str, Any], *, base: str | os.PathLike[str] = "."
) -> tuple[Experiment, OutputOptions]:
    """Build and validate an :class:`Experiment` from a parsed configuration (a TOML document as a dict).

    ``base`` resolves relative ``stream.file`` paths.

    Raises:
        InvalidInputError: naming the offending key (``stream.loss``, ``grid.epsilon``, ``learners[1].foo`` …).
    """
    if not isinstance(config, Mapping):
        raise InvalidInputError("the configuration must be a table")
    _unknown(config, _TOP, "")
    stream, about = _stream(_table(config, "stream"), Path(base))
    sweep = _table(config, "sweep")
    _unknown(sweep, _SWEEP, "sweep")
    output = _table(config, "output")
    _unknown(output, _OUTPUT, "output")
    options = OutputOptions(format=output.get("format", "parquet"), svg=output.get("svg", False))
    if options.format not in ("parquet", "csv"):
        raise InvalidInputError(f"output.format: must be 'parquet' or 'csv', got {options.format!r}")
    if not isinstance(options.svg, bool):
        raise InvalidInputError(f"output.svg: must be true or false, got {options.svg!r}")
    grid = {k: [_none(v) for v in vs] if isinstance(vs, list) else vs for k, vs in _table(config, "grid").items()}
    tables = config.get("learners")
    if not isinstance(tables, list) or not tables:
        raise InvalidInputError("learners: give at least one [[learners]] table")
    specs = []
    for i, table in enumerate(tables):
        where = f"learners[{i}]"
        if not isinstance(table, Mapping):
            raise InvalidInputError(f"{where}: must be a table")
        table = dict(table)
        factory = resolve_learner(table.pop("learner", None), f"{where}.learner")
        name = table.pop("name", None) or f"{getattr(factory, '__name__', 'learner')}-{i}"
        own_grid = table.pop("grid", {})
        if not isinstance(own_grid, Mapping):
            raise InvalidInputError(f"{where}.grid: must be a table of lists")
        own_grid = {k: [_none(v) for v in vs] if isinstance(vs, list) else vs for k, vs in own_grid.items()}
        params = {k: _none(v) for k, v in table.items()}
        if "domain" in params:
            params["domain"] = build_domain(params["domain"], stream.dim, f"{where}.domain")
        try:
            accepts_horizon = "horizon" in inspect.signature(factory).parameters
        except (TypeError, ValueError):
            accepts_horizon = False
        if accepts_horizon and "horizon" not in params and "horizon" not in own_grid and "horizon" not in grid:
            params["horizon"] = int(stream.horizon)
        specs.append(LearnerSpec(name=str(name), factory=factory, params=params, grid=own_grid, key=where))
    kwargs: dict[str, Any] = {}
    for key in _SWEEP:
        if key in sweep:
            kwargs[key] = sweep[key]
    try:
        experiment = Experiment(
            stream,
            specs,
            grid=grid,
            name=str(config.get("name", "sweep")),
            description=str(config.get("description", about)),
            **kwargs,
        )
    except InvalidInputError as exc:
        message = str(exc)
        for key in _SWEEP:  # the Experiment names its own arguments; point at the file's keys
            if message.startswith(f"{key}:"):
                message = f"sweep.{message}"
        raise InvalidInputError(message) from exc
    return experiment, options


def load_config(
    path: str | os.PathLike[str],
    *,
    seeds: int | None = None,
    root_seed: int | None = None,
    epsilon: list[float] | None = None,
) -> tuple[Experiment, OutputOptions]:
    """Read a sweep configuration file (TOML) and build its :class:`Experiment`; ``seeds``, ``root_seed`` and
    ``epsilon`` (when given) replace the file's ``sweep.seeds``, ``sweep.root_seed`` and ``grid.epsilon``
    (the ``dponline sweep`` flags ``--seeds``, ``--seed``, ``--epsilon``).

    Raises:
        InvalidInputError: an unreadable file, invalid TOML, or an invalid configuration (naming the key).
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise InvalidInputError(f"cannot read the configuration {str(path)!r}: {exc.strerror or exc}") from exc
    try:
        config = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InvalidInputError(f"{path.name}: not valid TOML: {exc}") from exc
    if seeds is not None or root_seed is not None:
        config["sweep"] = dict(config.get("sweep", {}))
        if seeds is not None:
            config["sweep"]["seeds"] = seeds
        if root_seed is not None:
            config["sweep"]["root_seed"] = root_seed
    if epsilon is not None:
        config["grid"] = {**config.get("grid", {}), "epsilon": list(epsilon)}
    return experiment_from_config(config, base=path.parent)
