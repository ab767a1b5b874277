"""Results of a sweep: tidy tables (pandas), summaries with confidence intervals, files and plots."""

from __future__ import annotations

import json
import math
import numbers
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InvalidInputError
from .cache import jsonable
from .outputs import publish
from .plots import plot as _plot
from .spec import Configuration
from .verdict import interval, verdict

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["Results"]


def _column(values: list[Any]) -> list[Any] | np.ndarray:
    """A parameter column that pandas and Parquet store cleanly: numbers (``None`` → NaN) as float64 (int64
    when all are integers), anything else as strings (``None`` kept)."""
    present = [v for v in values if v is not None]
    if all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in present) and len(present) == len(
        values
    ):
        return np.asarray(values, dtype=np.int64)
    if all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in present):
        return np.asarray([np.nan if v is None else float(v) for v in values], dtype=np.float64)
    return [None if v is None else (v if isinstance(v, str) else repr(v)) for v in values]


def _interval(x: np.ndarray) -> tuple[float, float, float, float]:
    """Mean, standard error and the 95% Student-t interval of ``x`` (:func:`.verdict.interval`)."""
    iv = interval(x)
    return iv.mean, iv.se, iv.low, iv.high


def column_name(name: str) -> str:
    """A comparator's name as a snake_case column suffix (``"best stock"`` → ``best_stock``)."""
    return re.sub(r"[^0-9a-zA-Z]+", "_", name).strip("_").lower() or "comparator"


class Results:
    """What :meth:`Experiment.run` returns: every run's record, with tables, files and plots.

    Attributes:
        configurations: the experiment's (learner, grid point) configurations with their privacy guarantees.
        comparators: names of the comparators in hindsight; ``regret_<name>`` columns measure against them.
        parameters: names of the grid parameters (columns of the tables).
        execution: backend, workers, wall time, whether Ctrl-C interrupted the sweep.
    """

    def __init__(
        self,
        records: list[dict[str, Any]],
        configurations: list[Configuration],
        comparators: list[str],
        parameters: list[str],
        metadata: dict[str, Any],
        execution: dict[str, Any],
        comparator_curves: dict[str, tuple[np.ndarray, np.ndarray]] | None = None,
    ) -> None:
        self._records = records
        self._comparator_curves = comparator_curves or {}
        self.configurations = configurations
        self.comparators = comparators
        self.parameters = parameters
        self._metadata = metadata
        self.execution = execution

    # -- tables --------------------------------------------------------------------------------------------
    def _config(self, spec: int, point: int) -> Configuration:
        for c in self.configurations:
            if c.spec == spec and c.point == point:
                return c
        raise KeyError((spec, point))

    def _params_columns(self, configs: Sequence[Configuration]) -> dict[str, Any]:
        return {p: _column([self.param_value(c, p) for c in configs]) for p in self.parameters}

    def frame(self) -> pd.DataFrame:
        """The tidy table: one row per (learner, parameters, seed, checkpoint) of every finished run.

        Columns: ``learner``, one per grid parameter (``None``/NaN where a learner fixes it to ``None`` or
        lacks it), ``seed`` (the seed index), ``t`` (round), ``cumulative_loss`` and ``regret_<comparator>``
        for each comparator. Timing lives in :meth:`runs`, so two sweeps' frames compare equal.
        """
        import pandas as pd

        ok = [r for r in self._records if r["status"] == "ok"]
        sizes = [len(r["checkpoints"]) for r in ok]
        configs = [self._config(r["spec"], r["point"]) for r in ok]
        rows: dict[str, Any] = {"learner": np.repeat(np.asarray([c.name for c in configs], dtype=object), sizes)}
        for p, col in self._params_columns(configs).items():
            rows[p] = np.repeat(np.asarray(col, dtype=None if isinstance(col, np.ndarray) else object), sizes)
        rows["seed"] = np.repeat(np.asarray([r["seed_index"] for r in ok], dtype=np.int64), sizes)

        def cat(arrays: list[np.ndarray], dtype: Any) -> np.ndarray:
            return np.concatenate(arrays).astype(dtype) if arrays else np.zeros(0, dtype)

        rows["t"] = cat([r["checkpoints"] for r in ok], np.int64)
        rows["cumulative_loss"] = cat([r["cumulative_loss"] for r in ok], np.float64)
        for name in self.comparators:
            rows[f"regret_{column_name(name)}"] = cat([r["regret"][name] for r in ok], np.float64)
        return pd.DataFrame(rows)

    def runs(self) -> pd.DataFrame:
        """One row per run (finished or failed): learner, parameters, seed (the seed index), status, error, final
        loss and regrets, rounds, clipped losses, seconds (of the native run and of the whole task, wall-clock), CPU
        seconds of the task (the stable measure on a shared machine), cached, key.

        Not private: the losses, regrets and ``clipped`` (how many rounds exceeded the declared bound) are exact
        functions of the raw data, and the timings may depend on it; ``runs_index.csv`` (:meth:`save`) holds
        this table. Only the learners' actions are covered by their guarantees."""
        import pandas as pd

        configs = [self._config(r["spec"], r["point"]) for r in self._records]
        rows: dict[str, Any] = {"learner": [c.name for c in configs]}
        rows.update(self._params_columns(configs))
        rows["seed"] = [r["seed_index"] for r in self._records]
        rows["status"] = [r["status"] for r in self._records]
        rows["error"] = [r.get("error") for r in self._records]
        ok = [r["status"] == "ok" for r in self._records]
        rows["final_t"] = [
            int(r["checkpoints"][-1]) if good else None for r, good in zip(self._records, ok, strict=True)
        ]
        rows["loss"] = [
            float(r["cumulative_loss"][-1]) if good else math.nan for r, good in zip(self._records, ok, strict=True)
        ]
        for name in self.comparators:
            rows[f"regret_{column_name(name)}"] = [
                float(r["regret"][name][-1]) if good else math.nan for r, good in zip(self._records, ok, strict=True)
            ]
        rows["rounds"] = [r.get("rounds") for r in self._records]
        rows["clipped"] = [r.get("clipped") for r in self._records]
        rows["run_seconds"] = [r.get("run_seconds", math.nan) for r in self._records]
        rows["seconds"] = [r.get("seconds", math.nan) for r in self._records]
        rows["cpu_seconds"] = [r.get("cpu_seconds", math.nan) for r in self._records]
        rows["cached"] = [bool(r.get("cached")) for r in self._records]
        rows["key"] = [r["key"] for r in self._records]
        return pd.DataFrame(rows)

    @property
    def failures(self) -> list[dict[str, Any]]:
        """The failed runs: learner, grid point, seed index, error and traceback."""
        out = []
        for r in self._records:
            if r["status"] != "ok":
                c = self._config(r["spec"], r["point"])
                out.append(
                    {
                        "learner": c.name,
                        "values": c.values,
                        "seed": r["seed_index"],
                        "error": r.get("error"),
                        "traceback": r.get("traceback"),
                    }
                )
        return out

    def summary(self) -> pd.DataFrame:
        """Aggregates over seeds, one row per learner × parameters.

        Columns: ``learner``, the grid parameters, ``runs`` (finished), ``failed``, ``t`` (final round), then
        for the final cumulative loss (``loss``) and each ``regret_<comparator>``: ``_mean``, ``_se``
        (standard error) and the 95% Student-t interval ``_ci_low``/``_ci_high`` (NaN with fewer than 2 runs).
        """
        import pandas as pd

        rows: dict[str, list[Any]] = {"learner": []}
        metrics = ["loss", *(f"regret_{column_name(n)}" for n in self.comparators)]
        by_column = {f"regret_{column_name(n)}": n for n in self.comparators}
        stats: dict[str, list[float]] = {f"{m}_{s}": [] for m in metrics for s in ("mean", "se", "ci_low", "ci_high")}
        runs: list[int] = []
        failed: list[int] = []
        final_t: list[Any] = []
        for c in self.configurations:
            mine = [r for r in self._records if r["spec"] == c.spec and r["point"] == c.point]
            ok = [r for r in mine if r["status"] == "ok"]
            rows["learner"].append(c.name)
            runs.append(len(ok))
            failed.append(len(mine) - len(ok))
            final_t.append(int(ok[0]["checkpoints"][-1]) if ok else None)
            for m in metrics:
                if m == "loss":
                    x = np.asarray([r["cumulative_loss"][-1] for r in ok], dtype=np.float64)
                else:
                    x = np.asarray([r["regret"][by_column[m]][-1] for r in ok], dtype=np.float64)
                for s, v in zip(("mean", "se", "ci_low", "ci_high"), _interval(x), strict=True):
                    stats[f"{m}_{s}"].append(v)
        table: dict[str, Any] = {"learner": rows["learner"]}
        table.update(self._params_columns(self.configurations))
        table.update(runs=runs, failed=failed, t=final_t)
        table.update(stats)
        return pd.DataFrame(table)

    def final_losses(self, config: Configuration) -> dict[int, float]:
        """``{seed index: final cumulative loss}`` of the finished runs of ``config``."""
        return {r["seed_index"]: float(r["cumulative_loss"][-1]) for r in self.finished(config)}

    def twin(self, config: Configuration) -> Configuration | None:
        """The non-private twin of a private ``config`` (same learner and arguments without the privacy ones),
        or ``None``."""
        entry = self._metadata["configurations"][self.configurations.index(config)]
        label = entry.get("twin")
        return next((c for c in self.configurations if c.label == label), None)

    def verdicts(self, baseline_text: str | None = None) -> list[str]:
        """One ``verdict —`` line per private configuration (:func:`.verdict.verdict`): its final regret against
        the experiment's do-nothing baseline comparator, per seed, and its paired per-seed difference from its
        non-private twin. ``baseline_text`` names the baseline in the text (default: the comparator's name)."""
        unit = self._metadata.get("unit", "loss units")
        base = self._metadata.get("baseline")
        lines = []
        for c in self.configurations:
            if not c.privacy:
                continue
            mine = self.finished(c)
            against = None
            if base is not None:
                against = (baseline_text or base, [float(r["regret"][base][-1]) for r in mine])
            twin = self.twin(c)
            paired = None
            if twin is not None:
                a, b = self.final_losses(c), self.final_losses(twin)
                paired = (twin.label, [a[k] - b[k] for k in sorted(a.keys() & b.keys())])
            lines.append(verdict(c.label, unit, against, paired))
        return lines

    def metadata(self) -> dict[str, Any]:
        """Versions, stream identity, comparators, learners, each configuration's privacy guarantee
        (``dataclasses.asdict`` of ``learner.privacy``, and ``privacy_per_source_row`` when the learner has it),
        execution (backend, wall time, counts of finished/cached/failed runs) and the failures."""
        return jsonable(
            self._metadata
            | {"execution": self.execution}
            | {"failures": [{k: v for k, v in f.items() if k != "traceback"} for f in self.failures]}
        )

    # -- files ---------------------------------------------------------------------------------------------
    def to_parquet(self, path: str | Path) -> Path:
        """Write :meth:`frame` as Parquet (pyarrow)."""
        path = Path(path)
        self.frame().to_parquet(path, engine="pyarrow", index=False)
        return path

    def to_csv(self, path: str | Path) -> Path:
        """Write :meth:`frame` as CSV (floats with 17 significant digits: they read back exactly)."""
        path = Path(path)
        self.frame().to_csv(path, index=False, float_format="%.17g")
        return path

    def write_metadata(self, path: str | Path) -> Path:
        """Write :meth:`metadata` as JSON."""
        path = Path(path)
        path.write_text(json.dumps(self.metadata(), indent=2, ensure_ascii=False))
        return path

    def save(
        self,
        directory: str | Path,
        *,
        format: str = "parquet",  # noqa: A002 - the natural name of the option
        plots: Sequence[str] | None = None,
        svg: bool = False,
    ) -> list[Path]:
        """Write everything to ``directory``: ``runs.parquet`` (or ``runs.csv``), ``summary.csv``,
        ``runs_index.csv`` (:meth:`runs`), ``metadata.json`` and the plots (default: ``regret`` and, when the
        sweep varies ``epsilon``, ``price_of_privacy``) as PNG, and SVG when ``svg``. Returns the paths.

        Atomic (:func:`.outputs.publish`): the files are written to a temporary folder beside ``directory`` and
        moved in together at the end, so a failure (a full disk: ``OSError``) or Ctrl-C leaves the previous
        complete outputs, never a mixture, and no temporary files; files of the previous save that this one
        does not write (a plot no longer drawn) are removed."""
        if format not in ("parquet", "csv"):
            raise InvalidInputError(f"format must be 'parquet' or 'csv', got {format!r}")
        return publish(directory, lambda stage: self._write(stage, format, plots, svg))

    def _write(self, out: Path, format: str, plots: Sequence[str] | None, svg: bool) -> list[Path]:  # noqa: A002
        written = [self.to_parquet(out / "runs.parquet") if format == "parquet" else self.to_csv(out / "runs.csv")]
        self.summary().to_csv(out / "summary.csv", index=False)
        self.runs().drop(columns=["key"]).to_csv(out / "runs_index.csv", index=False)
        written += [out / "summary.csv", out / "runs_index.csv", self.write_metadata(out / "metadata.json")]
        defaults = plots is None
        if plots is None:
            plots = ["regret"] + (["price_of_privacy"] if self._varies("epsilon") else [])
        formats = ("png", "svg") if svg else ("png",)
        for kind in plots:
            if any(r["status"] == "ok" for r in self._records):
                try:
                    written += self.plot(kind, out / kind, formats=formats)[1]
                except InvalidInputError:
                    if not defaults:  # e.g. an interrupted sweep whose finished runs have no ε to plot
                        raise
        return written

    def _varies(self, name: str) -> bool:
        values = {
            self.param_value(c, name)
            for c in self.configurations
            if isinstance(self.param_value(c, name), numbers.Real)
        }
        return len(values) > 1

    # -- plots ---------------------------------------------------------------------------------------------
    plot = _plot
    """Draw a plot (matplotlib, Agg backend) and save it when ``path`` is given: :func:`dponline.experiments.plots.plot`
    of this sweep, the one plotting module of every job (its docstring gives the arguments, the return value
    ``(figure, written paths)`` and the errors)."""

    def finished(self, config: Configuration) -> list[dict[str, Any]]:
        """The records of the finished runs of ``config`` (checkpoints, cumulative loss, regret per comparator)."""
        return [
            r for r in self._records if r["spec"] == config.spec and r["point"] == config.point and r["status"] == "ok"
        ]

    @property
    def comparator_curves(self) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """``{comparator: (checkpoints, its cumulative loss there)}`` at the first finished run's checkpoints."""
        return self._comparator_curves

    def param_value(self, config: Configuration, name: str) -> Any:
        """The value of parameter ``name`` in ``config``: its grid value, else its fixed argument, else None."""
        if name in config.values:
            return config.values[name]
        return config.kwargs.get(name)  # fixed in the learner (e.g. epsilon=None), or absent → None
