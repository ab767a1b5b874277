"""dponline.experiments: seeds, backends (inline, process pool, Dask), cache/resume, failures, tables, plots,
configuration files and the ``dponline sweep`` command."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import dponline
from dponline import InvalidInputError, losses, regret
from dponline.cli import main
from dponline.datasets import load_nyse
from dponline.domains import Simplex
from dponline.experiments import (
    Experiment,
    LearnerSpec,
    SweepInterrupted,
    experiment_from_config,
    load_config,
    stream_identity,
)

ROOT = Path(__file__).resolve().parents[1]
T = 400
# Declared a priori (never computed from the data): see the privacy conventions.
FIXED = {"horizon": T, "lipschitz": 10.0, "loss_bound": 0.7}


@pytest.fixture(scope="module")
def stream():
    return losses.PortfolioLogLoss(load_nyse().relatives[:T])


def specs(domain=None):
    domain = domain or Simplex(36)
    return [
        LearnerSpec("private", dponline.PrivateBandit, {"domain": domain, **FIXED, "delta": 1e-6}),
        LearnerSpec("non-private", dponline.PrivateBandit, {"domain": domain, **FIXED, "epsilon": None}),
    ]


def experiment(stream, seeds=3, **kw):
    return Experiment(stream, specs(), grid={"epsilon": [0.5, 5.0]}, seeds=seeds, checkpoints=16, **kw)


@pytest.fixture(scope="module")
def reference(stream):
    return experiment(stream).run(backend="inline", progress=False)


# ------------------------------------------------------------------------------------------------------
# A learner wrapper for failure, interruption and "was it recomputed?" tests. Module level so it pickles.

CALLS: list[tuple[float | None, int]] = []
FAIL: dict[str, object] = {}


class Tracked:
    """PrivateBandit that logs each run, can raise in chosen runs and can sleep (for interrupt tests)."""

    def __init__(self, *, sleep: float = 0.0, **kwargs):
        self.inner = dponline.PrivateBandit(**kwargs)
        self.epsilon = kwargs.get("epsilon")
        self.sleep = sleep

    @property
    def privacy(self):
        return self.inner.privacy

    def privacy_per_source_row(self, stream):
        return None if self.inner.privacy is None else dataclasses.replace(self.inner.privacy, notes="per row")

    def run(self, stream, *, checkpoints):
        CALLS.append((self.epsilon, len(CALLS)))
        if "epsilon" in FAIL and FAIL["epsilon"] == self.epsilon:
            raise RuntimeError(f"boom at epsilon={self.epsilon}")
        if "interrupt_after" in FAIL and len(CALLS) > FAIL["interrupt_after"]:
            raise KeyboardInterrupt
        time.sleep(self.sleep)
        return self.inner.run(stream, checkpoints=checkpoints)


def tracked_experiment(stream, seeds=3, sleep=0.0):
    d = Simplex(36)
    return Experiment(
        stream,
        [
            LearnerSpec("private", Tracked, {"domain": d, **FIXED, "delta": 1e-6, "sleep": sleep}),
            LearnerSpec("non-private", Tracked, {"domain": d, **FIXED, "epsilon": None, "sleep": sleep}),
        ],
        grid={"epsilon": [0.5, 5.0]},
        seeds=seeds,
        checkpoints=16,
    )


@pytest.fixture(autouse=True)
def _reset_tracking():
    CALLS.clear()
    FAIL.clear()
    yield
    CALLS.clear()
    FAIL.clear()


# ------------------------------------------------------------------------------------------------------
# Seeds and per-run results


def test_a_run_is_the_learner_built_with_its_spawned_seed(stream, reference):
    exp = experiment(stream)
    frame = reference.frame()
    best = regret.best_fixed(stream)
    for (i, j, k), eps in [((0, 0, 0), 0.5), ((0, 1, 2), 5.0), ((1, 0, 1), None)]:
        seed = exp.seed(i, j, k)
        assert seed.spawn_key == (i, j, k) and seed.entropy == 0
        learner = dponline.PrivateBandit(
            Simplex(36), **FIXED, epsilon=eps, **({"delta": 1e-6} if eps else {}), seed=seed
        )
        direct = learner.run(stream, checkpoints=16)
        name = "private" if i == 0 else "non-private"
        rows = frame[(frame.learner == name) & (frame.seed == k)]
        rows = rows[rows.epsilon == eps] if eps is not None else rows
        np.testing.assert_array_equal(rows.t.to_numpy(), direct.checkpoints)
        np.testing.assert_array_equal(rows.cumulative_loss.to_numpy(), direct.cumulative_loss)
        # regret against the BCRP computed independently: at the end it is total loss minus the BCRP's loss
        assert rows.regret_best.iloc[-1] == pytest.approx(direct.total_loss - best.total_loss, abs=1e-9)


def test_seeds_do_not_depend_on_the_number_of_seeds_or_other_learners(stream, reference):
    fewer = experiment(stream, seeds=2).run(backend="inline", progress=False).frame()
    ref = reference.frame()
    pd.testing.assert_frame_equal(fewer, ref[ref.seed < 2].reset_index(drop=True), check_exact=True)
    different_runs = ref.groupby(["learner", "epsilon", "seed"], dropna=False).cumulative_loss.last()
    assert different_runs.nunique() == len(different_runs)  # every run has its own seed


def test_seed_fn_replaces_the_seed_layout(stream):
    exp = Experiment(stream, specs()[1:], seeds=2, checkpoints=16, seed_fn=lambda i, j, k: 100 + k)
    frame = exp.run(backend="inline", progress=False).frame()
    for k in range(2):
        direct = dponline.PrivateBandit(Simplex(36), **FIXED, epsilon=None, seed=100 + k).run(stream, checkpoints=16)
        np.testing.assert_array_equal(frame[frame.seed == k].cumulative_loss.to_numpy(), direct.cumulative_loss)
    assert exp.metadata()["seed_layout"].startswith("custom")


@pytest.mark.parametrize("start_method", ["forkserver", "spawn"])
def test_process_pool_gives_identical_results(stream, reference, start_method):
    pooled = experiment(stream).run(backend="process", workers=2, progress=False, start_method=start_method)
    assert pooled.execution["backend"] == "process" and pooled.execution["finished"] == 9
    pd.testing.assert_frame_equal(pooled.frame(), reference.frame(), check_exact=True)


WORKERS_CANNOT_START = """
import os
os.environ["DPONLINE_TEST_PARENT"] = str(os.getpid())
import dponline
from dponline import losses
from dponline.domains import Simplex
from dponline.experiments import Experiment, LearnerSpec, backends as module

original = module._mp_context
def broken_context(start_method):
    context = original(start_method)
    context.set_forkserver_preload(["dponline.experiments._worker", "broken_in_workers"])
    return context
module._mp_context = broken_context

stream = losses.Linear(__import__("numpy").full((20, 3), 0.5))
spec = LearnerSpec("ftrl", dponline.DPFTRL, {"domain": Simplex(3), "horizon": 20, "loss_bound": 1.0})
results = Experiment(stream, [spec], grid={"epsilon": [1.0]}, seeds=3).run(
    backend="process", workers=2, progress=False, start_method="forkserver"
)
print(results.execution["failed"], results.execution["finished"])
print(results.failures[0]["error"])
"""


def test_workers_that_cannot_start_fail_every_run_with_a_clear_error(tmp_path):
    """A forkserver that dies importing the worker module (e.g. an inconsistent installation) makes every run
    a failed record naming the cause; the sweep returns instead of raising EOFError or hanging."""
    (tmp_path / "broken_in_workers.py").write_text(
        "import os\n"
        "if os.getpid() != int(os.environ['DPONLINE_TEST_PARENT']):\n"
        "    raise RuntimeError('this module cannot be imported in a worker')\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, "-c", WORKERS_CANNOT_START], capture_output=True, text=True, timeout=120, env=env
    )
    assert done.returncode == 0, done.stderr
    counts, error = done.stdout.strip().splitlines()
    assert counts == "3 0"
    assert error.startswith("RuntimeError: the worker processes could not start (EOFError")
    assert "this module cannot be imported in a worker" in done.stderr


@pytest.mark.filterwarnings("ignore:Port .* is already in use:UserWarning")
def test_dask_local_cluster_gives_identical_results(stream, reference):
    distributed = pytest.importorskip("distributed")
    # random ports: another cluster on this machine may hold the defaults
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, scheduler_port=0, dashboard_address=":0"
    ) as cluster:
        with distributed.Client(cluster) as client:
            assert len(client.scheduler_info()["workers"]) == 2
            on_client = experiment(stream).run(scheduler=client, progress=False)
        on_address = experiment(stream).run(scheduler=cluster.scheduler_address, progress=False)
    for res in (on_client, on_address):
        assert res.execution["backend"] == "dask"
        pd.testing.assert_frame_equal(res.frame(), reference.frame(), check_exact=True)


# ------------------------------------------------------------------------------------------------------
# Failures, cache and resume


def test_a_failing_run_is_recorded_and_a_rerun_resumes(stream, reference, tmp_path):
    FAIL["epsilon"] = 5.0
    first = tracked_experiment(stream).run(backend="inline", cache_dir=tmp_path, progress=False)
    assert first.execution["failed"] == 3 and first.execution["finished"] == 6
    assert len(CALLS) == 9
    summary = first.summary()
    assert summary.loc[summary.epsilon == 5.0, "failed"].tolist() == [3]
    assert summary.loc[summary.epsilon == 5.0, "runs"].tolist() == [0]
    assert all("boom at epsilon=5.0" in f["error"] for f in first.failures)
    assert first.metadata()["execution"]["failed"] == 3

    FAIL.clear()
    CALLS.clear()
    second = tracked_experiment(stream).run(backend="inline", cache_dir=tmp_path, progress=False)
    assert sorted(c[0] for c in CALLS) == [5.0, 5.0, 5.0]  # only the failed runs were recomputed
    assert second.execution["cached"] == 6 and second.execution["failed"] == 0
    pd.testing.assert_frame_equal(second.frame(), reference.frame(), check_exact=True)

    CALLS.clear()
    third = tracked_experiment(stream).run(backend="process", workers=2, cache_dir=tmp_path, progress=False)
    assert CALLS == [] and third.execution["cached"] == 9
    pd.testing.assert_frame_equal(third.frame(), reference.frame(), check_exact=True)


def test_interrupted_inline_sweep_keeps_finished_runs_and_resumes(stream, reference, tmp_path):
    FAIL["interrupt_after"] = 5
    with pytest.raises(SweepInterrupted) as stop:
        tracked_experiment(stream).run(backend="inline", cache_dir=tmp_path, progress=False)
    partial = stop.value.results
    assert isinstance(stop.value, KeyboardInterrupt)
    assert partial.execution["interrupted"] and partial.execution["finished"] == 5
    assert partial.execution["not_run"] == 4
    pd.testing.assert_frame_equal(
        partial.frame(), reference.frame().iloc[: 5 * 16].reset_index(drop=True), check_exact=True
    )
    FAIL.clear()
    CALLS.clear()
    resumed = tracked_experiment(stream).run(backend="inline", cache_dir=tmp_path, progress=False)
    assert len(CALLS) == 4 and resumed.execution["cached"] == 5
    pd.testing.assert_frame_equal(resumed.frame(), reference.frame(), check_exact=True)


def test_ctrl_c_stops_the_process_pool_promptly_and_resume_completes(stream, reference, tmp_path):
    exp = tracked_experiment(stream, sleep=1.5)  # 9 runs of >= 1.5 s on 2 workers: >= 7.5 s uninterrupted
    timer = threading.Timer(2.5, os.kill, (os.getpid(), signal.SIGINT))
    began = time.perf_counter()
    timer.start()
    try:
        with pytest.raises(SweepInterrupted) as stop:
            exp.run(backend="process", workers=2, cache_dir=tmp_path, progress=False)
    finally:
        timer.cancel()
    assert time.perf_counter() - began < 15.0  # did not wait for the remaining runs (loose: shared machines)
    done = stop.value.results.execution["finished"]
    assert done < 9
    # Same configuration (the sleep is part of the learner's arguments, hence of the cache key).
    resumed = tracked_experiment(stream, sleep=1.5).run(backend="inline", cache_dir=tmp_path, progress=False)
    assert resumed.execution["cached"] == done and len(CALLS) == 9 - done
    pd.testing.assert_frame_equal(resumed.frame(), reference.frame(), check_exact=True)


def test_cache_key_identifies_stream_learner_parameters_and_seed(stream):
    exp = experiment(stream)
    keys = [t.key for t in exp.tasks()]
    assert len(set(keys)) == len(keys)
    assert keys == [t.key for t in experiment(stream).tasks()]  # stable across builds
    other_stream = losses.PortfolioLogLoss(load_nyse().relatives, horizon=T, resample="bootstrap", seed=1)
    boot0 = losses.PortfolioLogLoss(load_nyse().relatives, horizon=T, resample="bootstrap", seed=0)
    assert stream_identity(other_stream) != stream_identity(boot0)
    assert not set(keys) & {t.key for t in experiment(other_stream).tasks()}
    assert not set(keys) & {t.key for t in experiment(stream, root_seed=1).tasks()}
    changed = Experiment(stream, specs(), grid={"epsilon": [0.5, 5.0]}, seeds=3, checkpoints=17)
    assert not set(keys) & {t.key for t in changed.tasks()}


# ------------------------------------------------------------------------------------------------------
# Tables, files, plots, metadata


def test_summary_matches_an_independent_t_interval(reference):
    summary = reference.summary()
    runs = reference.runs()
    assert len(summary) == 3 and summary.runs.tolist() == [3, 3, 3] and summary.failed.tolist() == [0, 0, 0]
    for _, row in summary.iterrows():
        mine = runs[(runs.learner == row.learner)]
        mine = mine[mine.epsilon == row.epsilon] if not math.isnan(row.epsilon) else mine
        x = mine.regret_best.to_numpy()
        se = x.std(ddof=1) / math.sqrt(len(x))
        half = stats.t.ppf(0.975, len(x) - 1) * se
        assert row.regret_best_mean == pytest.approx(x.mean(), rel=1e-12)
        assert row.regret_best_se == pytest.approx(se, rel=1e-12)
        assert row.regret_best_ci_low == pytest.approx(x.mean() - half, rel=1e-12)
        assert row.regret_best_ci_low < row.regret_best_mean < row.regret_best_ci_high
        assert row.loss_ci_low < row.loss_mean < row.loss_ci_high
        assert row.t == T


def test_frame_is_tidy_and_round_trips_parquet_and_csv(reference, tmp_path):
    frame = reference.frame()
    assert list(frame.columns) == [
        "learner",
        "epsilon",
        "seed",
        "t",
        "cumulative_loss",
        "regret_best",
        "regret_uniform",
    ]
    assert len(frame) == 9 * 16 and frame.epsilon.isna().sum() == 3 * 16  # non-private: epsilon=None
    pd.testing.assert_frame_equal(pd.read_parquet(reference.to_parquet(tmp_path / "r.parquet")), frame)
    back = pd.read_csv(reference.to_csv(tmp_path / "r.csv"))
    pd.testing.assert_frame_equal(back, frame, check_exact=True, check_dtype=False)


def test_save_writes_plots_metadata_and_tables(reference, tmp_path):
    written = reference.save(tmp_path, svg=True)
    names = {p.name for p in written}
    for name in ("runs.parquet", "summary.csv", "metadata.json", "regret.png", "regret.svg"):
        assert name in names and (tmp_path / name).stat().st_size > 0
    assert (tmp_path / "price_of_privacy.png").stat().st_size > 10_000
    assert (tmp_path / "price_of_privacy.svg").read_text().lstrip().startswith("<?xml")
    meta = json.loads((tmp_path / "metadata.json").read_text())
    assert meta["versions"]["dponline"] == dponline.__version__ and meta["versions"]["pandas"]
    assert meta["execution"]["wall_seconds"] > 0 and meta["execution"]["finished"] == 9
    configs = meta["configurations"]
    assert [c["values"] for c in configs] == [{"epsilon": 0.5}, {"epsilon": 5.0}, {}]
    fields = {f.name for f in dataclasses.fields(dponline.PrivacyGuarantee)}
    assert set(configs[0]["privacy"]) == fields and "Lemma 5.4" in configs[0]["privacy"]["source"]
    assert configs[1]["privacy"]["epsilon"] == 5.0 and configs[2]["privacy"] is None
    assert meta["stream"]["horizon"] == T and len(meta["stream"]["data_sha256"]) == 64


def test_an_os_keyed_sweep_never_writes_its_root(stream, tmp_path):
    """root_seed=None keys the seed tree from OS entropy: the metadata says "os (not recorded)", the guarantees
    say randomness "os" (not "seed"), and the entropy appears in none of the files written; a seeded sweep
    records its root and says "seed". The outputs list the clipped counts among what is not private."""
    exp = Experiment(stream, specs(), grid={"epsilon": [1.0]}, seeds=1, checkpoints=4, root_seed=None)
    written = exp.run(backend="inline", progress=False, cache_dir=tmp_path / "cache").save(tmp_path / "out")
    meta = json.loads((tmp_path / "out" / "metadata.json").read_text())
    assert meta["root_seed"] == "os (not recorded)"
    assert [c["privacy"]["randomness"] for c in meta["configurations"] if c["privacy"]] == ["os"]
    assert "clipped counts" in meta["not_private"]
    root = str(exp._root)
    files = [*written, *(tmp_path / "cache").glob("*/*.npz")]
    assert len(root) > 20 and all(root.encode() not in Path(f).read_bytes() for f in files)
    seeded = Experiment(stream, specs(), grid={"epsilon": [1.0]}, seeds=1, checkpoints=4, root_seed=5).metadata()
    assert seeded["root_seed"] == 5
    assert [c["privacy"]["randomness"] for c in seeded["configurations"] if c["privacy"]] == ["seed"]


def test_price_of_privacy_plot_has_the_non_private_reference_line(reference):
    fig, written = reference.plot("price_of_privacy")
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and written == []
    summary = reference.summary()
    nonprivate = summary.loc[summary.learner == "non-private", "regret_best_mean"].item()
    flat = [line for line in ax.get_lines() if np.ptp(line.get_ydata()) == 0 and len(line.get_ydata())]
    assert any(line.get_ydata()[0] == pytest.approx(nonprivate) for line in flat)
    with pytest.raises(InvalidInputError, match="kind"):
        reference.plot("histogram")


def test_privacy_per_source_row_is_recorded_when_the_learner_has_it(stream):
    meta = tracked_experiment(stream, seeds=1).metadata()
    per_row = meta["configurations"][0]["privacy_per_source_row"]
    assert per_row["notes"] == "per row" and per_row["epsilon"] == 0.5
    assert meta["configurations"][2]["privacy_per_source_row"] is None


# ------------------------------------------------------------------------------------------------------
# Bad configuration: a clear error naming the key, before any run


@pytest.mark.parametrize(
    "grid,params,key",
    [
        ({"epsilon": [1.0, -1.0]}, {}, "grid.epsilon"),
        ({"epsilon": [1.0, 0.0]}, {}, "grid.epsilon"),
        ({"epsilon": []}, {}, "grid.epsilon"),
        ({"epsilon": [1.0]}, {"bogus": 3}, "learners[0].params.bogus"),
        ({"epsilon": [1.0]}, {"lipschitz": -2.0}, "learners[0].params.lipschitz"),
    ],
)
def test_bad_configuration_names_the_key_before_any_run(stream, grid, params, key):
    spec = LearnerSpec("tracked", Tracked, {"domain": Simplex(36), **FIXED, **params})
    with pytest.raises(InvalidInputError) as err:
        Experiment(stream, [spec], grid=grid)
    assert str(err.value).startswith(key)
    assert CALLS == []


def test_bad_experiment_arguments(stream):
    with pytest.raises(InvalidInputError, match=r"^learners\[0\]\.params\.bogus: unknown parameter"):
        Experiment(stream, [LearnerSpec("p", dponline.PrivateBandit, {"bogus": 1})])
    with pytest.raises(InvalidInputError, match=r"^learners\[1\]\.grid\.epsilon: also fixed"):
        Experiment(stream, [specs()[1], LearnerSpec("q", dponline.PrivateBandit, {"epsilon": 1}, {"epsilon": [2]})])
    with pytest.raises(InvalidInputError, match=r"^learners\[0\]\.params\.epsilon: required parameter"):
        Experiment(stream, [LearnerSpec("p", dponline.PrivateBandit, {**FIXED, "domain": Simplex(36)})])
    with pytest.raises(InvalidInputError, match="^seeds"):
        Experiment(stream, specs(), seeds=0)
    with pytest.raises(InvalidInputError, match="^learners: names must be unique"):
        Experiment(stream, specs() + specs())
    with pytest.raises(InvalidInputError, match="^backend"):
        experiment(stream).run(backend="threads", progress=False)
    with pytest.raises(InvalidInputError, match="^start_method"):
        experiment(stream).run(backend="process", start_method="fork", progress=False)


@pytest.mark.parametrize(
    "learners,key",
    [
        (None, "learners"),
        ([LearnerSpec(["p"], dponline.PrivateBandit, {})], "learners[0].name"),
        ([LearnerSpec("p", dponline.PrivateBandit, None)], "learners[0].params"),
        ([LearnerSpec("p", dponline.PrivateBandit, {}, grid=[1.0])], "learners[0].grid"),
        ([LearnerSpec("p", dponline.PrivateBandit, {}, key=3)], "learners[0].key"),
    ],
)
def test_malformed_learner_specs_name_the_key(stream, learners, key):
    # Regressions found by tests/test_fuzz_local_and_mechanisms.py (before: TypeError from set() / `in`).
    with pytest.raises(InvalidInputError) as err:
        Experiment(stream, learners)
    assert str(err.value).startswith(key), str(err.value)


def test_seeds_and_backend_must_be_sane(stream):
    # Before: seeds=10**6 + 1 built a million seed sequences per configuration (2**62: memory exhausted), and an
    # array backend raised ValueError (truth value of an array).
    with pytest.raises(InvalidInputError, match="^seeds"):
        Experiment(stream, specs(), seeds=10**6 + 1)
    with pytest.raises(InvalidInputError, match="^checkpoints"):  # before: accepted, and then every run failed
        Experiment(stream, specs(), checkpoints=10**4 + 1)
    with pytest.raises(InvalidInputError, match="^seed_fn"):  # before: TypeError ('int' is not callable)
        experiment(stream, seed_fn=3)
    with pytest.raises(InvalidInputError, match="^comparators"):  # before: AttributeError in run()
        experiment(stream, comparators={"best": 3})
    with pytest.raises(InvalidInputError, match="^backend"):
        experiment(stream, seeds=1).run(backend=np.array([1.0, 2.0]), progress=False)


CONFIG = """
name = "tiny"
[stream]
dataset = "nyse"
loss = "portfolio"
horizon = 300
[sweep]
seeds = 2
checkpoints = 10
[grid]
epsilon = [1.0, 10.0]
[[learners]]
name = "private"
learner = "PrivateBandit"
domain = "simplex"
lipschitz = 10.0
loss_bound = 0.7
[[learners]]
name = "non-private"
learner = "PrivateBandit"
domain = "simplex"
epsilon = "none"
lipschitz = 10.0
loss_bound = 0.7
[output]
format = "csv"
svg = true
"""


def test_config_builds_the_experiment(tmp_path):
    path = tmp_path / "tiny.toml"
    path.write_text(CONFIG)
    exp, options = load_config(path)
    assert options.format == "csv" and options.svg
    assert exp.stream.horizon == 300 and exp.seeds == 2 and exp.n_runs == 6
    assert exp.configurations[0].kwargs["horizon"] == 300  # the stream's horizon by default
    assert exp.configurations[2].kwargs["epsilon"] is None


@pytest.mark.parametrize(
    "edit,key",
    [
        (('learner = "PrivateBandit"\ndomain', 'learner = "Nope"\ndomain'), "learners[0].learner"),
        (("epsilon = [1.0, 10.0]", "epsilon = [1.0, -3.0]"), "grid.epsilon"),
        (
            ("lipschitz = 10.0\nloss_bound = 0.7\n[[", "lipschitz = 10.0\nloss_bound = 0.7\nfoo = 1\n[["),
            "learners[0].foo",
        ),
        (('loss = "portfolio"', 'loss = "hinge"'), "stream.loss"),
        (("seeds = 2", "seeds = 0"), "sweep.seeds"),
        (("seeds = 2", "seedz = 2"), "sweep.seedz"),
        (('domain = "simplex"', 'domain = "sphere"'), "learners[0].domain.kind"),
        (('dataset = "nyse"', 'dataset = "mnist"'), "stream.dataset"),
        # Regressions found by tests/test_fuzz_local_and_mechanisms.py (before: TypeError, ValueError leaked):
        (('loss = "portfolio"', 'loss = ["portfolio"]'), "stream.loss"),
        (("horizon = 300", 'horizon = 300\nresample = ["cycle"]'), "stream.resample"),
        (('learner = "PrivateBandit"\ndomain', 'learner = ":"\ndomain'), "learners[0].learner"),
        (("seeds = 2", "seeds = 2000000"), "sweep.seeds"),
    ],
)
def test_config_errors_name_the_key(edit, key):
    import tomllib

    text = CONFIG.replace(*edit, 1)
    assert text != CONFIG
    with pytest.raises(InvalidInputError) as err:
        experiment_from_config(tomllib.loads(text))
    assert str(err.value).startswith(key), str(err.value)


def test_unreadable_config_is_an_invalid_input_error(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[stream\nhorizon = ")
    with pytest.raises(InvalidInputError, match="not valid TOML"):
        load_config(bad)
    with pytest.raises(InvalidInputError, match="cannot read"):
        load_config(tmp_path / "missing.toml")


# ------------------------------------------------------------------------------------------------------
# The command


def test_sweep_command_runs_the_shipped_example(tmp_path, capsys):
    out = tmp_path / "out"
    assert (
        main(["sweep", str(ROOT / "examples/sweeps/portfolio.toml"), "--out", str(out), "--workers", "1", "--quiet"])
        == 0
    )
    printed = capsys.readouterr().out
    assert "non-private" in printed and "regret vs best" in printed and "ε=0.3" in printed
    frame = pd.read_parquet(out / "runs.parquet")
    assert set(frame.learner) == {"private", "non-private"} and frame.epsilon.nunique() == 4
    assert (out / "price_of_privacy.png").stat().st_size > 10_000
    meta = json.loads((out / "metadata.json").read_text())
    assert meta["learners"][0]["params"]["lipschitz"] == 10.0  # the declared constant, not the data's
    # rerun: every run comes from the cache, same table
    assert (
        main(["sweep", str(ROOT / "examples/sweeps/portfolio.toml"), "--out", str(out), "--workers", "1", "--quiet"])
        == 0
    )
    again = json.loads((out / "metadata.json").read_text())
    assert again["execution"]["cached"] == again["execution"]["runs"] == 15
    pd.testing.assert_frame_equal(pd.read_parquet(out / "runs.parquet"), frame, check_exact=True)


@pytest.mark.parametrize(
    "argv,message",
    [
        (["sweep"], "required: config"),
        (["sweep", "CONFIG", "--workers", "0"], "--workers: must be an integer >= 1"),
        (["sweep", "CONFIG", "--workers", "two"], "--workers: must be an integer >= 1"),
        (["sweep", "MISSING"], "cannot read the configuration"),
        (["sweep", "BAD"], "grid.epsilon"),
    ],
)
def test_sweep_command_usage_errors_exit_2(tmp_path, capsys, argv, message):
    good = tmp_path / "good.toml"
    good.write_text(CONFIG)
    bad = tmp_path / "bad.toml"
    bad.write_text(CONFIG.replace("epsilon = [1.0, 10.0]", "epsilon = [0.0]"))
    mapping = {"CONFIG": str(good), "MISSING": str(tmp_path / "nope.toml"), "BAD": str(bad)}
    with pytest.raises(SystemExit) as exit_:
        main([mapping.get(a, a) for a in argv])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "usage: dponline" in err and message in err and "Traceback" not in err


def test_float_list_flag_type():
    import argparse

    from dponline.experiments import float_list

    assert float_list("0.1,0.3, 1,3") == [0.1, 0.3, 1.0, 3.0]
    for bad in ("", "1,,2", "a", "1,nan", "inf"):
        with pytest.raises(argparse.ArgumentTypeError):
            float_list(bad)


@pytest.mark.parametrize(
    "spec,point",
    [
        ("simplex", [0.25] * 4),
        ({"kind": "l1ball", "radius": 2.0}, [0.5, -0.5, 0.5, -0.5]),
        ({"kind": "L2Ball", "radius": 2.0}, [1.0, 1.0, 1.0, -0.9]),
        ({"kind": "box", "lower": -1.0, "upper": [1.0, 2.0, 3.0, 4.0]}, [-1.0, 2.0, 0.0, 4.0]),
    ],
)
def test_config_domains(spec, point):
    from dponline.experiments import build_domain

    domain = build_domain(spec, 4, "learners[0].domain")
    assert domain.dim == 4 and domain.contains(np.asarray(point))
    assert not domain.contains(np.asarray(point) * 3 + 1)


def test_config_linear_stream_from_a_file(tmp_path):
    import tomllib

    rng = np.random.default_rng(7)
    np.save(tmp_path / "costs.npy", rng.uniform(-1.0, 1.0, size=(50, 3)))
    text = """
[stream]
file = "costs.npy"
loss = "linear"
horizon = 120
resample = "cycle"
[sweep]
checkpoints = 6
[[learners]]
learner = "PrivateBandit"
domain = {kind = "l2ball", radius = 1.0}
epsilon = 2.0
lipschitz = 2.0
loss_bound = 2.0
"""
    exp, _ = experiment_from_config(tomllib.loads(text), base=tmp_path)
    assert exp.stream.kind == "linear" and exp.stream.horizon == 120 and exp.stream.order == "cycle"
    assert exp.comparators["best"].method == "LMO on the cumulative loss" and "uniform" not in exp.comparators
    frame = exp.run(backend="inline", progress=False).frame()
    assert frame.learner.unique().tolist() == ["PrivateBandit-0"] and frame.t.iloc[-1] == 120
    # regret against the exact LMO comparator: final cumulative loss minus the comparator's
    best = regret.best_fixed(exp.stream, exp.configurations[0].kwargs["domain"])
    assert frame.regret_best.iloc[-1] == pytest.approx(frame.cumulative_loss.iloc[-1] - best.total_loss, abs=1e-9)
    with pytest.raises(InvalidInputError, match="^stream.file: cannot read"):
        experiment_from_config(tomllib.loads(text.replace("costs.npy", "missing.npy")), base=tmp_path)
