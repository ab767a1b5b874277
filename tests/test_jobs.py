"""The CLI jobs answer the user's question and fail cleanly: verdicts, one sign convention, a cache that survives
damage, atomic outputs, one writer per folder, Ctrl-C at any moment, clean usage errors (small horizons)."""

import errno
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from filelock import FileLock, Timeout

import dponline
import dponline.cli
import dponline.jobs.display
import dponline.jobs.local
import dponline.jobs.portfolio
from dponline.cli import main
from dponline.domains import Simplex
from dponline.experiments import Experiment, LearnerSpec, Results, RunCache, backends, outputs
from dponline.experiments.outputs import MANIFEST, FolderLock, OutputBusyError
from dponline.experiments.verdict import compare, format_interval, format_number, interval, vacuous, verdict

PORTFOLIO = ["portfolio", "--horizon", "300", "--seeds", "2", "--workers", "1", "--quiet"]
LOCAL = ["local", "--data", "trump", "--horizon", "300", "--seeds", "2", "--workers", "1", "--quiet"]
DISPLAY = ["display", "--horizon", "2000", "--seeds", "2", "--workers", "1", "--quiet"]


def _files(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


def _staging(folder: Path) -> list[Path]:
    return list(folder.parent.glob(f".{folder.name}.staging-*"))


# -- the verdict and the number format --------------------------------------------------------------------------


def test_intervals_are_rounded_to_their_precision_and_never_print_minus_zero():
    assert format_interval(382.41234, 1.7e-13) == "382.4 (exact)"  # float noise is a zero-width interval
    assert format_interval(-0.017512, 0.17) == "-0.02 ± 0.17"
    assert format_interval(1.2345, 0.0234) == "1.234 ± 0.023"
    assert format_interval(20.1, 40.0) == "20 ± 40"
    assert format_interval(-0.0004, 0.5, signed=True) == "0.00 ± 0.50"  # not -0.00
    assert format_interval(1.3, 0.42, signed=True) == "+1.30 ± 0.42"
    assert format_interval(7.0, float("nan")) == "7.000"  # one seed: no interval
    assert format_number(-0.0) == "0" and format_number(-1e-9, 2) == "0.00"
    iv = interval([1.0, 2.0, 3.0])
    assert iv.mean == 2.0 and iv.half == pytest.approx(4.302653 * 1.0 / np.sqrt(3), rel=1e-6)  # t_{0.975, 2}


def test_verdict_words_follow_the_interval_and_the_sign():
    assert compare([-2.0, -2.2, -1.9, -2.1], "uniform", "nats").startswith("beats uniform by 2.05 ± 0.")
    assert compare([2.0, 2.2, 1.9, 2.1], "uniform", "nats").startswith("worse than uniform by 2.05 ± 0.")
    wide = compare([1.0, -3.0, 2.5], "uniform", "nats")
    assert wide.startswith("within noise of uniform (+0.2 ± ") and "more seeds are needed, about" in wide
    assert compare([0.0, 0.0], "its twin", "nats") == "identical to its twin in every seed"
    assert compare([1.5, 1.5], "x", "clicks") == "worse than x by 1.500 clicks in every seed"
    assert "one seed: no interval, more seeds are needed" in compare([1.0], "x", "nats")
    # The advice scales as n (half / |mean|)^2.
    assert "about 300 " not in wide
    line = verdict("DP-FTRL (ε=1)", "nats", ("uniform weights", [-1.0, -1.1, -0.9]), ("FTRL", [0.5, 0.6, 0.4]))
    assert line.startswith("verdict — DP-FTRL (ε=1): beats uniform weights by 1.00 ± 0.25 nats; privacy: worse than")
    assert vacuous(1.0, 1e-6) == "" and "δ ≥ 1" in vacuous(26.0, 1.0) and "ε > 10" in vacuous(18.5, 1e-6)


# -- one sign convention: table, verdict and CSV agree ----------------------------------------------------------


def test_experts_job_prints_baseline_twin_and_verdicts_with_one_sign_convention(tmp_path, capsys):
    argv = ["experts", "--horizon", "400", "--seeds", "3", "--seed", "2", "--delta", "1e-6", "--epsilon", "1,30"]
    assert main([*argv, "--workers", "1", "--quiet", "--out", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    summary = pd.read_csv(tmp_path / "summary.csv")
    assert all(re.fullmatch(r"[a-z0-9_]+", c) for c in summary.columns), list(summary.columns)
    assert {"regret_best_mean", "regret_uniform_mean", "regret_uniform_ci_low"} <= set(summary.columns)
    assert "uniform weights" in printed and "FTRL, non-private" in printed and "FTPL, non-private" in printed
    assert "+ = worse" in printed and "95% t-interval" in printed
    verdicts = [line for line in printed.splitlines() if line.startswith("verdict — ")]
    assert len(verdicts) == 4  # DP-FTRL and DP-FTPL at two ε
    for line in verdicts:
        label = line[len("verdict — ") :].split(": ", 1)[0]
        name, eps = re.fullmatch(r"(.+) \(ε=(\S+)\)", label).groups()
        row = summary[(summary.learner == name) & (summary.epsilon == float(eps))].iloc[0]
        against = line.split(": ", 1)[1].split("; privacy:")[0]
        if against.startswith("beats"):
            assert row.regret_uniform_ci_high < 0
        elif against.startswith("worse than"):
            assert row.regret_uniform_ci_low > 0
        else:
            assert row.regret_uniform_ci_low <= 0 <= row.regret_uniform_ci_high
        # The CSV's mean, rounded as printed, appears with its sign in the verdict (+ = worse).
        half = (row.regret_uniform_ci_high - row.regret_uniform_ci_low) / 2
        shown = format_interval(abs(row.regret_uniform_mean), half).split(" ±")[0]
        assert shown in against


def test_experts_with_delta_zero_says_why_dp_ftpl_is_skipped(tmp_path, capsys):
    assert (
        main(["experts", "--horizon", "200", "--seeds", "2", "--workers", "1", "--quiet", "--out", str(tmp_path)]) == 0
    )
    assert (
        "DP-FTPL skipped: its Gaussian perturbation (Agarwal-Singh Algorithm 3) needs δ > 0" in capsys.readouterr().out
    )


def test_every_job_has_a_plain_description_and_the_common_flags(capsys):
    for job in ("portfolio", "experts", "bandit", "local", "display", "sweep"):
        with pytest.raises(SystemExit) as stop:
            main([job, "--help"])
        assert stop.value.code == 0
        text = capsys.readouterr().out
        assert "``" not in text and ":mod:" not in text and ":class:" not in text and ":func:" not in text, job
        for flag in ("--seed ", "--epsilon", "--workers", "--quiet", "--out", "--seeds"):
            assert flag in text, (job, flag)
        description = re.split(r"\n(?:options|positional arguments):", text.split("\n\n", 1)[1])[0].strip()
        assert len(description) > 250 and description.endswith((".", ")")), job


# -- the cache survives damage ----------------------------------------------------------------------------------


def _sweep(stream, root_seed=0):
    fixed = {"domain": Simplex(36), "horizon": 200, "lipschitz": 10.0, "loss_bound": 0.7}
    return Experiment(
        stream,
        [
            LearnerSpec("private", dponline.PrivateBandit, fixed),
            LearnerSpec("non-private", dponline.PrivateBandit, {**fixed, "epsilon": None}),
        ],
        grid={"epsilon": [1.0]},
        seeds=2,
        checkpoints=5,
        root_seed=root_seed,
    )


@pytest.fixture(scope="module")
def stream():
    return dponline.losses.PortfolioLogLoss(dponline.datasets.load_nyse().relatives[:200])


@pytest.mark.parametrize("damage", ["truncate", "empty", "flip", "garbage"])
def test_a_damaged_cache_entry_is_warned_about_deleted_and_recomputed(stream, tmp_path, damage):
    first = _sweep(stream).run(backend="inline", cache_dir=tmp_path, progress=False)
    entries = sorted(tmp_path.glob("*/*.npz"))
    assert len(entries) == 4 and not list(tmp_path.glob("**/*.tmp-*"))
    victim = entries[1]
    data = bytearray(victim.read_bytes())
    if damage == "truncate":
        victim.write_bytes(bytes(data[: len(data) // 2]))
    elif damage == "empty":
        victim.write_bytes(b"")
    elif damage == "garbage":
        victim.write_bytes(os.urandom(len(data)))
    else:  # one bit inside the stored losses: the zip still reads, the checksum does not match
        with np.load(victim) as entry:
            parts = {k: entry[k] for k in entry.files}
        parts["cumulative_loss"] = parts["cumulative_loss"].copy()
        parts["cumulative_loss"].view(np.uint64)[-1] ^= np.uint64(1)
        with open(victim, "wb") as fh:
            np.savez(fh, **parts)
    with pytest.warns(RuntimeWarning, match="unreadable .* deleted, the run is recomputed"):
        second = _sweep(stream).run(backend="inline", cache_dir=tmp_path, progress=False)
    assert second.execution["cached"] == 3 and second.execution["failed"] == 0
    pd.testing.assert_frame_equal(second.frame(), first.frame(), check_exact=True)
    third = _sweep(stream).run(backend="inline", cache_dir=tmp_path, progress=False)  # the entry was rewritten
    assert third.execution["cached"] == 4


def test_a_failed_cache_write_leaves_no_temporary_file(stream, tmp_path, monkeypatch):
    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(np, "savez", full)
    cache = RunCache(tmp_path)
    record = {"status": "ok", "key": "ab" * 32, "checkpoints": [1], "cumulative_loss": [0.5]}
    with pytest.raises(OSError):
        cache.put("ab" * 32, record)
    assert not list(tmp_path.glob("**/*.tmp-*")) and cache.get("ab" * 32) is None


# -- atomic outputs ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("failure", [KeyboardInterrupt, OSError(errno.ENOSPC, "No space left on device")])
def test_an_interrupted_save_leaves_the_previous_outputs(stream, tmp_path, monkeypatch, failure):
    out = tmp_path / "out"
    results = _sweep(stream).run(backend="inline", progress=False)
    results.save(out)
    before = _files(out)
    assert {"runs.parquet", "summary.csv", "metadata.json", "regret.png", MANIFEST} <= set(before)

    def broken(self, *args, **kwargs):
        raise failure

    monkeypatch.setattr(Results, "plot", broken)  # after runs.parquet and summary.csv are written
    with pytest.raises(type(failure) if isinstance(failure, BaseException) else failure):
        _sweep(stream, root_seed=5).run(backend="inline", progress=False).save(out)
    assert _files(out) == before and not _staging(out)


def test_a_save_replaces_every_output_and_drops_stale_ones(stream, tmp_path):
    out = tmp_path / "out"
    results = _sweep(stream).run(backend="inline", progress=False)
    results.save(out, svg=True)
    (out / "mine.txt").write_text("kept")
    results.save(out)
    assert not (out / "regret.svg").exists() and (out / "regret.png").exists() and (out / "mine.txt").exists()


# -- the CLI: one writer, usage errors, Ctrl-C, disk full, resume -----------------------------------------------


def test_a_second_job_on_a_held_folder_refuses(tmp_path, capsys):
    tmp_path.mkdir(exist_ok=True)
    with FileLock(tmp_path / ".lock"):
        assert main([*PORTFOLIO, "--seed", "1", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "another dponline job is writing to this folder" in err[0]
    assert not (tmp_path / "runs.parquet").exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["display", "--k", "1000"],
        ["local", "--out", "FILE/sub"],
        ["portfolio", "--out", "FILE"],
        ["display", "--out", "FILE/x"],
        ["sweep", "missing.toml", "--out", "FILE"],
    ],
)
def test_cli_errors_exit_2_with_one_line_before_computing(argv, tmp_path, capsys, monkeypatch):
    (tmp_path / "FILE").write_text("a file, not a folder")
    monkeypatch.chdir(tmp_path)

    def computing(*args, **kwargs):
        raise AssertionError("the job started computing before refusing its arguments")

    for module, name in [
        (dponline.jobs.portfolio, "build_experiment"),
        (dponline.jobs.local, "best_fixed"),
        (dponline.jobs.display, "greedy_in_hindsight"),
        (dponline.cli, "load_config"),
    ]:
        monkeypatch.setattr(module, name, computing)
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and ": error: " in err[0], err


def test_disk_full_gives_one_line_exit_2_and_keeps_the_previous_outputs(tmp_path, capsys, monkeypatch):
    assert main([*PORTFOLIO, "--seed", "1", "--out", str(tmp_path)]) == 0
    before = _files(tmp_path)
    capsys.readouterr()

    def full(self, path):
        Path(path).write_bytes(b"partial")
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(Results, "to_parquet", full)
    assert main([*PORTFOLIO, "--seed", "2", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no space left" in err[0] and "previous outputs are unchanged" in err[0]
    assert _files(tmp_path) == before and not _staging(tmp_path)


def _interrupt_execute_after(monkeypatch: Any, runs: int) -> Any:
    """Make the sweep's ``backends.execute`` finish ``runs`` runs, then raise ``KeyboardInterrupt`` (Ctrl-C);
    returns the real one."""
    real, calls = backends.execute, []

    def interrupting(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) > runs:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(backends, "execute", interrupting)
    return real


@pytest.mark.parametrize("moment", ["comparators", "runs", "plotting"])
def test_ctrl_c_at_any_moment_prints_one_line_exits_130_and_keeps_the_previous_outputs(
    moment, tmp_path, capsys, monkeypatch
):
    assert main([*PORTFOLIO, "--seed", "1", "--out", str(tmp_path)]) == 0
    before = _files(tmp_path)
    capsys.readouterr()

    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    if moment == "comparators":
        monkeypatch.setattr(dponline.regret, "best_constant_rebalanced_portfolio", interrupt)
    elif moment == "plotting":
        monkeypatch.setattr(Results, "plot", interrupt)
    else:
        _interrupt_execute_after(monkeypatch, 1)
    assert main([*PORTFOLIO, "--seed", "3", "--out", str(tmp_path)]) == 130
    err = [line for line in capsys.readouterr().err.splitlines() if line.strip()]
    assert len(err) == 1 and "interrupted" in err[0] and "Traceback" not in err[0]
    assert _files(tmp_path) == before and not _staging(tmp_path)


def test_ctrl_c_on_a_fresh_folder_leaves_no_output_folder(tmp_path, monkeypatch, capsys):
    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(dponline.regret, "best_constant_rebalanced_portfolio", interrupt)
    out = tmp_path / "fresh"
    assert main([*PORTFOLIO, "--out", str(out)]) == 130
    assert not out.exists() and not list(tmp_path.iterdir())


def test_an_interrupted_unseeded_run_resumes_without_recording_its_seeds(tmp_path, monkeypatch, capsys):
    real = _interrupt_execute_after(monkeypatch, 3)
    assert main([*PORTFOLIO, "--out", str(tmp_path)]) == 130
    assert "3 finished run(s) kept" in capsys.readouterr().err
    kept = list((tmp_path / "cache" / "unseeded").glob("*/*.npz"))
    assert len(kept) == 3 and not (tmp_path / "runs.parquet").exists()
    monkeypatch.setattr(backends, "execute", real)
    assert main([*PORTFOLIO, "--out", str(tmp_path)]) == 0
    runs = pd.read_csv(tmp_path / "runs_index.csv")
    assert runs.cached.sum() == 3 and len(runs) == 8
    assert not (tmp_path / "cache" / "unseeded").exists()  # deleted once the job completed
    meta = json.loads((tmp_path / "metadata.json").read_text())
    assert meta["root_seed"] == "os (not recorded)"
    # A completed unseeded run leaves nothing to resume: the next one draws fresh noise.
    assert main([*PORTFOLIO, "--out", str(tmp_path)]) == 0
    assert pd.read_csv(tmp_path / "runs_index.csv").cached.sum() == 0


@pytest.mark.parametrize(
    "job",
    [
        ["portfolio", "--horizon", "2000000", "--seeds", "2"],
        ["local", "--data", "shuttle", "--seeds", "40"],
        ["display", "--seeds", "6"],
    ],
    ids=["portfolio", "local", "display"],
)
def test_sigint_to_the_command_exits_130_with_one_line_and_no_half_written_folder(job, tmp_path):
    out = tmp_path / "out"
    cmd = [sys.executable, "-m", "dponline", *job, "--quiet"]
    proc = subprocess.Popen([*cmd, "--out", str(out)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    while not (out / ".lock").exists() and proc.poll() is None:  # the job has started (imports are done)
        time.sleep(0.05)
    time.sleep(1.5)  # building the experiment, starting the workers or running
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 130, stderr
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert "Traceback" not in stderr and len(lines) == 1 and "interrupted" in lines[0], stderr
    assert not (out / "runs.parquet").exists() and not _staging(out) and not (out / ".lock").exists()


# -- every job is a preset of the harness: same outputs, verdicts and resume --------------------------------------


@pytest.mark.parametrize(
    ("argv", "verdicts"),
    [(PORTFOLIO, 2), ([*LOCAL, "--epsilon", "1,4"], 20), ([*DISPLAY, "--epsilon", "1,4"], 6)],
    ids=["portfolio", "local", "display"],
)
def test_every_job_writes_the_harness_outputs_ends_with_verdicts_and_resumes(argv, verdicts, tmp_path, capsys):
    assert main([*argv, "--seed", "3", "--out", str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    names = {p.name for p in tmp_path.iterdir()}
    expected = {"runs.parquet", "summary.csv", "runs_index.csv", "metadata.json", "regret.png", "cache", MANIFEST}
    assert expected <= names and ".lock" not in names, names
    assert ("price_of_privacy.png" in names) == ("--epsilon" in argv)
    lines = [line for line in printed.splitlines() if line.startswith("verdict — ")]
    assert len(lines) == verdicts and all("privacy: " in line for line in lines)
    summary = pd.read_csv(tmp_path / "summary.csv")
    assert all(re.fullmatch(r"[a-z0-9_]+", c) for c in summary.columns) and (summary.failed == 0).all()
    meta = json.loads((tmp_path / "metadata.json").read_text())
    assert meta["sign_convention"].endswith("+ = worse") and meta["baseline"] in meta["comparators"]
    # A rerun with the same seed reuses every finished run, and leaves the same files.
    assert main([*argv, "--seed", "3", "--out", str(tmp_path)]) == 0
    assert pd.read_csv(tmp_path / "runs_index.csv").cached.all()
    assert {p.name for p in tmp_path.iterdir()} == names


@pytest.mark.parametrize(
    "argv",
    [
        ["local", "--data", "trump", "--horizon", "5000"],  # beyond the 1,001 rows of the polls
        ["local", "--epsilon", "0"],
        ["display", "--delta", "0"],
        ["display", "--domain", "cube"],
    ],
)
def test_local_and_display_refuse_bad_values_with_exit_2_before_writing(argv, tmp_path, capsys):
    with pytest.raises(SystemExit) as stop:
        main([*argv, "--quiet", "--out", str(tmp_path / "out")])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert ": error: " in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


# -- the output lock: removed when the job ends, still exclusive --------------------------------------------------


def test_the_lock_file_is_removed_after_success_error_and_ctrl_c(tmp_path, monkeypatch, capsys):
    assert main([*PORTFOLIO, "--seed", "1", "--out", str(tmp_path)]) == 0
    assert not (tmp_path / ".lock").exists()

    def full(self, path):
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    with monkeypatch.context() as patch:
        patch.setattr(Results, "to_parquet", full)
        assert main([*PORTFOLIO, "--seed", "2", "--out", str(tmp_path)]) == 2
    assert not (tmp_path / ".lock").exists()

    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(Results, "plot", interrupt)
    assert main([*PORTFOLIO, "--seed", "3", "--out", str(tmp_path)]) == 130
    assert not (tmp_path / ".lock").exists()


def test_the_folder_lock_never_admits_two_holders_when_its_file_is_removed(tmp_path, monkeypatch):
    """The race that makes removing a lock file unsafe: B opens the file, the holder A removes it and unlocks, B
    locks the orphaned file while C creates and locks a new one. B must notice and lock the current file."""
    path = tmp_path / ".lock"
    holder = FolderLock(path)
    holder.acquire("busy")
    real_open, opened = os.open, []

    def open_then_the_holder_releases(file, flags, mode=0o777):
        fd = real_open(file, flags, mode)
        if not opened:
            opened.append(fd)
            holder.release()  # between B's open and B's flock
            assert not path.exists()
        return fd

    monkeypatch.setattr(outputs.os, "open", open_then_the_holder_releases)
    b = FolderLock(path)
    b.acquire("busy")
    monkeypatch.undo()
    assert len(opened) == 1 and path.exists() and os.fstat(b._fd).st_ino == os.stat(path).st_ino
    with pytest.raises(OutputBusyError):
        FolderLock(path).acquire("busy")
    with pytest.raises(Timeout):  # the filelock package takes the same lock
        FileLock(path).acquire(timeout=0)
    b.release()
    assert not path.exists()
    with FileLock(path).acquire(timeout=0), pytest.raises(OutputBusyError):
        FolderLock(path).acquire("busy")


@pytest.mark.parametrize(
    ("values", "message"),
    [
        (np.array([["a", "b"], ["c", "d"]]), "real numbers"),
        (np.array(3.0), "one row per round"),
        (np.ones((10, 3)) * (1 + 1j), "complex"),
        (np.full((10, 3), np.nan), "finite"),
    ],
)
def test_sweep_validates_its_stream_file_like_the_python_api(tmp_path, values, message, capsys):
    """A stream.file of strings, a 0-d array, complex or NaN values: one line naming stream.file, exit 2."""
    np.save(tmp_path / "rows.npy", values)
    config = tmp_path / "sweep.toml"
    config.write_text('[stream]\nfile = "rows.npy"\nloss = "linear"\n[[learners]]\nname = "a"\nclass = "DPFTRL"\n')
    with pytest.raises(SystemExit) as stop:
        main(["sweep", str(config), "--out", str(tmp_path / "out"), "--quiet"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "stream.file" in err and message in err and "Traceback" not in err


def test_portfolio_mechanism_and_top_up(tmp_path, capsys):
    """``--mechanism blt --top-up`` runs DP-FTRL on BLT with its releases topped up (floating-point Gaussian
    noise, whose caveat the privacy lines print) and PrivateBandit on BLT; ``--top-up`` with ``--mechanism tree`` is
    a usage error before anything runs."""
    assert main([*PORTFOLIO, "--seed", "1", "--mechanism", "blt", "--top-up", "--out", str(tmp_path / "a")]) == 0
    out = capsys.readouterr().out
    assert "exact calibration of the blt mechanism" in out
    assert "floating-point noise: holds for the real-valued mechanism only (Mironov 2012)" in out
    runs = pd.read_csv(tmp_path / "a" / "runs_index.csv")
    assert len(runs) == 8
    with pytest.raises(SystemExit) as stop:  # a usage error of the flags (argparse's exit)
        main([*PORTFOLIO, "--mechanism", "tree", "--top-up", "--out", str(tmp_path / "b")])
    assert stop.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0].startswith("usage:") and "--top-up needs --mechanism honaker or blt" in err[-1]
    assert not (tmp_path / "b" / "runs.parquet").exists()
