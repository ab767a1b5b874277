"""What a sweep is made of: a learner specification, one validated (learner, grid point) configuration, and a
comparator given by its cumulative loss (:class:`Reference`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import InvalidInputError

__all__ = ["LearnerSpec", "Configuration", "Reference"]


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
        twin: the name of another learner spec whose non-private configuration is this learner's non-private
            twin (the price of privacy is measured against it). Default: the twin is found by arguments — a
            non-private configuration of the same factory whose arguments equal this one's once the privacy
            arguments (ε, δ, calibration, mechanism) are removed. Name it when the twin differs in more than
            those (``dponline local``: the providers' budget layout).
    """

    name: str
    factory: Callable[..., Any]
    params: Mapping[str, Any] = field(default_factory=dict)
    grid: Mapping[str, Sequence[Any]] = field(default_factory=dict)
    key: str | None = None
    twin: str | None = None


@dataclass(frozen=True)
class Reference:
    """A comparator given by its cumulative loss at any checkpoints, for references that are not a point the
    stream can evaluate with ``cumulative_at``: ``(1 − 1/e)`` times a greedy set's value, the expected loss of a
    uniformly random choice. Accepted wherever an :class:`Experiment` takes a :class:`dponline.regret.Comparator`.

    Attributes:
        method: how it was computed (tables, metadata).
        total_loss: its cumulative loss over the whole horizon (in the stream's unit).
        curve: ``checkpoints -> cumulative loss``: int64 ``(m,)`` rounds ``1..T`` to float64 ``(m,)``. Called in
            the process that assembles the results (never pickled).
        x: the decision it stands for, for the metadata (a set of items ...), or ``None``.
        gap: an upper bound on how far ``total_loss`` is from the best (NaN when not known).
    """

    method: str
    total_loss: float
    curve: Callable[[Any], Any]
    x: Any = None
    gap: float = float("nan")


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


def _check_spec(i: int, spec: LearnerSpec) -> None:
    """The types of a :class:`LearnerSpec`'s fields (a frozen dataclass does not check them)."""
    if not isinstance(spec.name, str) or not spec.name:
        raise InvalidInputError(f"learners[{i}].name: must be a non-empty string, got {spec.name!r}")
    if spec.key is not None and not isinstance(spec.key, str):
        raise InvalidInputError(f"learners[{i}].key: must be a string or None, got {spec.key!r}")
    if spec.twin is not None and not isinstance(spec.twin, str):
        raise InvalidInputError(f"learners[{i}].twin: must be a learner's name or None, got {spec.twin!r}")
    where = spec.key or f"learners[{i}]"
    for field_name in ("params", "grid"):
        table = getattr(spec, field_name)
        if not isinstance(table, Mapping) or not all(isinstance(k, str) for k in table):
            raise InvalidInputError(f"{where}.{field_name}: must be a mapping with string keys, got {table!r}")
