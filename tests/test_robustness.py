"""Regression tests for issue 13 (robustness): each case runs in its own process with a time limit.

A case that aborts, panics or hangs must fail its test, never take the test runner down. Each child prints one
line of JSON describing what happened; the parent checks it.
"""

from __future__ import annotations

import json
import os
import pickle
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import dponline
from dponline.domains import Simplex

PRELUDE = """
import json, sys, copy, pickle
import numpy as np
import dponline
from dponline.domains import *

def outcome(fn):
    try:
        value = fn()
    except BaseException as e:  # report every exception class, including PanicException
        return {"raised": type(e).__name__, "message": str(e)[:300]}
    return {"value": value}

def feasible_plays(learner, rounds, loss):
    # Play `rounds` rounds telling `loss`: every action must be finite and in the domain; the actions as lists.
    xs = []
    for _ in range(rounds):
        x = learner.ask()
        assert np.all(np.isfinite(x)) and learner.domain.contains(x), x.tolist()
        learner.tell(loss)
        xs.append(x.tolist())
    return xs
"""


def child(body: str, timeout: float = 30.0) -> dict:
    """Run ``body`` (which must set ``result``) in a fresh interpreter; return the JSON it printed."""
    code = PRELUDE + textwrap.dedent(body) + "\nprint('RESULT ' + json.dumps(result))\n"
    try:
        proc = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"child did not answer within {timeout} s (hang)")
    assert proc.returncode == 0, f"child died with rc={proc.returncode} (abort?): {proc.stderr[-2000:]}"
    lines = [line for line in proc.stdout.splitlines() if line.startswith("RESULT ")]
    assert lines, proc.stdout + proc.stderr
    return json.loads(lines[-1][len("RESULT ") :])


# -- abort / panic: sizes that cannot be allocated ---------------------------------------------------------
@pytest.mark.parametrize("size", [10**11, 2**62, 2**64 - 1])
@pytest.mark.parametrize("sampler", ["laplace", "gaussian"])
def test_huge_noise_size_is_a_memory_error(sampler: str, size: int) -> None:
    r = child(f"result = outcome(lambda: dponline.noise.{sampler}(1.0, {size}, seed=0).shape)")
    assert r.get("raised") == "MemoryError", r
    assert "bytes" in r["message"], r


def test_huge_noise_sum_size_is_a_memory_error() -> None:
    r = child("result = outcome(lambda: dponline.noise.laplace_sum(1.0, 3, 2**62, seed=0).shape)")
    assert r.get("raised") == "MemoryError", r


@pytest.mark.parametrize(("dim", "size"), [(10**6, 10**8), (2**40, 2**40), (1, 2**62), (2**61, 0), (2**63 - 1, 0)])
def test_huge_sphere_samples_are_a_memory_error(dim: int, size: int) -> None:
    r = child(f"result = outcome(lambda: dponline.sample_sphere({dim}, {size}, seed=0).shape)")
    assert r.get("raised") == "MemoryError", r


@pytest.mark.parametrize(("dim", "horizon"), [(10**9, 2**20), (2**62, 2), (2**40, 2**63 - 1)])
def test_huge_tree_is_a_memory_error_quickly(dim: int, horizon: int) -> None:
    started = time.monotonic()
    r = child(f"result = outcome(lambda: dponline.TreeAggregator({dim}, {horizon}, scale=1.0, seed=0).t)", timeout=20)
    assert r.get("raised") == "MemoryError", r
    assert time.monotonic() - started < 15


HUGE_DOMAINS = [
    "Simplex(2**62)",
    "Simplex(2**40)",
    "L1Ball(2**40)",
    "L2Ball(2**62)",
    "UniformMatroid(2**40, 1)",
    "UniformMatroid(2**62, 1, base=False)",
    "PathPolytope(2**40, [(0, 1)], 0, 1)",
    "PathPolytope.from_undirected(2**62, [(0, 1)], 0, 1)",
    "GraphicMatroid(2**40, [(0, 1)], base=False)",
    "GraphicMatroid(2**62, [(0, 1)], base=False)",
]


@pytest.mark.parametrize("domain", HUGE_DOMAINS)
def test_huge_domains_are_a_memory_error(domain: str) -> None:
    r = child(f"result = outcome(lambda: repr({domain}))", timeout=20)
    assert r.get("raised") == "MemoryError", r


@pytest.mark.parametrize(
    "domain", ["L2Ball(3, radius=1e308)", "L1Ball(3, radius=1e308)", "Box([0.0] * 5, [1e308] * 5)"]
)
def test_domains_whose_constants_overflow_are_refused(domain: str) -> None:
    r = child(f"result = outcome(lambda: [{domain}.diameter, {domain}.inscribed_radius])")
    if "value" in r:
        assert all(v is not None and np.isfinite(v) for v in r["value"]), r
    else:
        assert r["raised"] == "InvalidInputError", r


def test_huge_loss_family_is_refused() -> None:
    r = child("""
        C = np.ones((1, 3))
        result = outcome(lambda: dponline.losses.Linear(C, horizon=2**63 - 1, resample='bootstrap', seed=1).horizon)
    """)
    # Either the family is lazy (a valid horizon) or it refuses with MemoryError/InvalidInputError; never a crash.
    assert "value" in r or r["raised"] in ("MemoryError", "InvalidInputError"), r


# -- panic: extreme but finite numbers ------------------------------------------------------------------
def test_loss_bound_1e308_does_not_panic() -> None:
    r = child("""
        def go():
            b = dponline.PrivateBandit(Simplex(3), horizon=100, epsilon=1.0, lipschitz=1.0, loss_bound=1e308, seed=0)
            return feasible_plays(b, 30, 1e308)
        result = outcome(go)
    """)
    # Either refused at construction with an error naming the argument, or every action finite and feasible.
    if "raised" in r:
        assert r["raised"] == "InvalidInputError", r
        assert "loss_bound" in r["message"], r
    else:
        assert np.isfinite(np.asarray(r["value"])).all()


@pytest.mark.parametrize("value", ["1e308", "5e-324", "2.2250738585072014e-308", "1e-300"])
def test_extreme_lipschitz_never_gives_nan(value: str) -> None:
    r = child(f"""
        def go():
            b = dponline.PrivateBandit(Simplex(3), horizon=50, epsilon=1.0, lipschitz={value}, seed=0)
            xs = feasible_plays(b, 20, 0.0)
            p = b.params
            assert all(np.isfinite(v) for v in p.values() if isinstance(v, float)), p
            return xs
        result = outcome(go)
    """)
    assert "value" in r or r["raised"] == "InvalidInputError", r


# -- hang / infeasible: degenerate domains ----------------------------------------------------------------
SINGLE_POINTS = [
    "PathPolytope(2, [(0, 1)], 0, 1)",
    "PathPolytope(3, [(0, 1), (1, 2)], 0, 2)",
    "Simplex(1)",
    "UniformMatroid(4, 4)",
    "GraphicMatroid(3, [(0, 1), (1, 2)])",
]


@pytest.mark.parametrize("domain", SINGLE_POINTS)
@pytest.mark.parametrize("epsilon", ["1.0", "None"])
def test_single_point_domains_are_refused_or_played_exactly(domain: str, epsilon: str) -> None:
    r = child(
        f"""
        def go():
            try:
                d = {domain}
            except dponline.InvalidInputError as e:
                return "domain refused"
            b = dponline.PrivateBandit(d, horizon=200, epsilon={epsilon}, lipschitz=1.0, seed=0)
            xs = feasible_plays(b, 40, 0.5)
            fam = dponline.losses.Linear(np.ones((200, d.dim)))
            b.run(fam, rounds=100)
            return xs
        result = outcome(go)
        """,
        timeout=30,
    )
    if "raised" in r:
        assert r["raised"] == "InvalidInputError", r
        assert "domain" in r["message"], r
    elif r["value"] != "domain refused":
        xs = np.asarray(r["value"])
        assert np.all(xs == xs[0]), "a single-point domain must be played exactly"


@pytest.mark.parametrize(
    "domain", ["Box([-5e-324], [0.0])", "L1Ball(4, radius=5e-324)", "L2Ball(2, radius=5e-324)", "Simplex(2)"]
)
def test_inscribed_radius_is_positive_or_none(domain: str) -> None:
    r = child(f"result = outcome(lambda: {domain}.inscribed_radius)")
    assert "value" in r, r
    assert r["value"] is None or r["value"] > 0, r


def test_contains_rejects_nan_and_inf() -> None:
    r = child("""
        doms = [Simplex(3), PathPolytope(3, [(0, 1), (1, 2), (0, 2)], 0, 2), L2Ball(3), L1Ball(3),
                UniformMatroid(4, 2), Box([0, 0], [1, 1])]
        bad = []
        for d in doms:
            for v in (np.nan, np.inf, -np.inf):
                x = np.asarray(d.interior_point, dtype=float).copy()
                x[0] = v
                if d.contains(x):
                    bad.append((repr(d), v))
        result = {"value": [str(b) for b in bad]}
    """)
    assert r == {"value": []}, r


# -- noise replay: copies of secure objects --------------------------------------------------------------
@pytest.mark.parametrize("how", ["copy.copy(t)", "copy.deepcopy(t)", "pickle.loads(pickle.dumps(t))"])
def test_copies_of_a_secure_tree_do_not_replay_noise(how: str) -> None:
    r = child(f"""
        t = dponline.TreeAggregator(4, 64, scale=1.0, secure=True)
        t.push(np.zeros(4))
        c = {how}
        a, b = t.push(np.zeros(4)), c.push(np.zeros(4))
        result = {{"value": [a.tolist(), b.tolist(), c.secure, c.t]}}
    """)
    a, b, secure, t = r["value"]
    assert secure and t == 2
    assert a != b, "a copy of a secure tree replayed the original's noise"


@pytest.mark.parametrize("how", ["copy.copy(l)", "copy.deepcopy(l)", "pickle.loads(pickle.dumps(l))"])
def test_copies_of_a_secure_learner_do_not_replay_noise(how: str) -> None:
    r = child(f"""
        l = dponline.PrivateBandit(Simplex(4), horizon=400, epsilon=1.0, lipschitz=1.0, secure=True)
        l.ask(); l.tell(0.2)
        c = {how}
        result = {{"value": [l.ask().tolist(), c.ask().tolist()]}}
    """)
    a, b = r["value"]
    assert a != b, "a copy of a secure learner replayed the original's randomness"


def test_copy_of_a_seeded_tree_continues_identically() -> None:
    import copy

    t = dponline.TreeAggregator(3, 16, scale=1.0, seed=5)
    t.push(np.ones(3))
    for c in (copy.copy(t), copy.deepcopy(t)):
        np.testing.assert_array_equal(copy.deepcopy(t).push(np.ones(3)), c.push(np.ones(3)))


# -- Ctrl-C ----------------------------------------------------------------------------------------------
INTERRUPTED = """
import os, pickle, sys, time
import dponline
from dponline.domains import Simplex
import numpy as np
T = 10**9
learner = dponline.PrivateBandit(Simplex(3), horizon=T, epsilon=None, lipschitz=1.0, seed=11)
fam = dponline.losses.Linear(np.array([[0.3, 0.1, 0.6], [0.5, 0.2, 0.1]]), horizon=T, resample="cycle")
print("READY", flush=True)
try:
    learner.run(fam, rounds=T)
except KeyboardInterrupt:
    with open(sys.argv[1], "wb") as f:
        pickle.dump(learner, f)
    print("INTERRUPTED", learner.t, flush=True)
    sys.exit(0)
print("FINISHED", flush=True)
"""


@pytest.mark.timeout(120)
def test_ctrl_c_stops_a_long_run_and_it_resumes_exactly(tmp_path) -> None:
    state = tmp_path / "learner.pkl"
    proc = subprocess.Popen(
        [sys.executable, "-c", INTERRUPTED, str(state)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "READY"
        time.sleep(1.0)  # let the native loop start
        sent = time.monotonic()
        os.kill(proc.pid, signal.SIGINT)
        out, err = proc.communicate(timeout=2.0)
        elapsed = time.monotonic() - sent
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        pytest.fail("SIGINT did not stop the native run within 2 s")
    assert proc.returncode == 0, err
    assert out.startswith("INTERRUPTED"), out + err
    assert elapsed < 2.0
    stopped_at = int(out.split()[1])
    assert 0 < stopped_at < 10**9

    # Resume the interrupted learner for a few more rounds and compare with an uninterrupted twin. The twin
    # has the same horizon (so the same schedule); it plays stopped_at + extra rounds in one call.
    with open(state, "rb") as f:
        resumed = pickle.load(f)
    fam = dponline.losses.Linear(np.array([[0.3, 0.1, 0.6], [0.5, 0.2, 0.1]]), horizon=10**9, resample="cycle")
    extra = 1000
    r_resumed = resumed.run(fam, rounds=extra, checkpoints=1)
    twin = dponline.PrivateBandit(Simplex(3), horizon=10**9, epsilon=None, lipschitz=1.0, seed=11)
    twin.run(fam, rounds=stopped_at, checkpoints=1)
    r_twin = twin.run(fam, rounds=extra, checkpoints=1)
    assert r_resumed.total_loss == r_twin.total_loss
    np.testing.assert_array_equal(resumed.ask(), twin.ask())
    assert pickle.dumps(resumed) == pickle.dumps(twin)


SCANS = """
import sys
import numpy as np
from dponline.losses import Linear
from dponline.submodular import ProbabilisticCoverage
family = ProbabilisticCoverage(np.full((5, 4), 0.1), horizon=2**50, resample="bootstrap", seed=1)
losses = Linear(np.full((5, 4), 0.1), horizon=2**50, resample="bootstrap", seed=1)
calls = [
    lambda: family.row_counts(),
    lambda: family.summed_gains([]),
    lambda: family.lazy_greedy(2),
    lambda: family.cumulative_at([0], [2**49]),
    lambda: losses.row_counts(),
    lambda: losses.cumulative_at(np.full(4, 0.25), [2**49]),
]
for i, call in enumerate(calls):
    print("READY", i, flush=True)
    try:
        call()
    except KeyboardInterrupt:
        print("INTERRUPTED", i, flush=True)
        continue
    print("FINISHED", i, flush=True)
"""


@pytest.mark.timeout(120)
def test_ctrl_c_stops_the_horizon_long_scans_of_a_bootstrap_family() -> None:
    # row_counts, summed_gains, lazy_greedy and cumulative_at walk every round of a bootstrap order
    # (O(horizon), here 2**50), for submodular and loss families: each must stop on SIGINT with
    # KeyboardInterrupt, not run for days.
    proc = subprocess.Popen([sys.executable, "-c", SCANS], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        for i in range(6):
            assert proc.stdout.readline().split() == ["READY", str(i)]
            time.sleep(0.3)  # let the native scan start
            sent = time.monotonic()
            os.kill(proc.pid, signal.SIGINT)
            line = proc.stdout.readline().split()
            assert line == ["INTERRUPTED", str(i)], line
            assert time.monotonic() - sent < 2.0
        proc.communicate(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0


def test_interrupted_run_equals_uninterrupted_at_small_horizon() -> None:
    """The in-process version: a KeyboardInterrupt raised from the progress callback (between native blocks)."""
    T = 300_000
    fam = dponline.losses.Linear(np.array([[0.3, 0.1, 0.6], [0.5, 0.2, 0.1]]), horizon=T, resample="cycle")
    whole = dponline.PrivateBandit(Simplex(3), horizon=T, epsilon=1.0, lipschitz=1.0, seed=3)
    expected = whole.run(fam, checkpoints=1).total_loss

    learner = dponline.PrivateBandit(Simplex(3), horizon=T, epsilon=1.0, lipschitz=1.0, seed=3)
    calls = []

    def interrupt(n: int) -> None:
        calls.append(n)
        if len(calls) == 2:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        learner._core.run(fam, T, [T], interrupt)
    played = learner.t
    assert 0 < played < T
    restored = pickle.loads(pickle.dumps(learner))
    rest = restored.run(fam, checkpoints=1)
    assert restored.t == T
    # Losses of the first part are those of the uninterrupted run's first `played` rounds.
    first = dponline.PrivateBandit(Simplex(3), horizon=T, epsilon=1.0, lipschitz=1.0, seed=3)
    head = first.run(fam, rounds=played, checkpoints=1).total_loss
    assert head + rest.total_loss == pytest.approx(expected, rel=1e-12)
    np.testing.assert_array_equal(restored._final_point(), whole._final_point())


# -- threads ---------------------------------------------------------------------------------------------
# (one learner used by two threads: tests/test_learner_protocol.py, over every learner)


def test_failed_calls_leave_state_byte_identical() -> None:
    learner = dponline.PrivateBandit(Simplex(3), horizon=20, epsilon=1.0, lipschitz=1.0, seed=1)
    learner.ask()
    before = pickle.dumps(learner)
    for bad in (float("nan"), float("inf"), "x", None):
        with pytest.raises(dponline.DPOnlineError):
            learner.tell(bad)  # type: ignore[arg-type]
        assert pickle.dumps(learner) == before
    tree = dponline.TreeAggregator(2, 2, scale=1.0, seed=1)
    tree.push([1.0, 2.0])
    before = pickle.dumps(tree)
    for bad in ([np.nan, 1.0], [1.0], [[1.0, 2.0]], "ab"):
        with pytest.raises(dponline.DPOnlineError):
            tree.push(bad)
        assert pickle.dumps(tree) == before
    with pytest.raises(dponline.DPOnlineError):
        tree.push_many(np.ones((2, 2)))
    assert pickle.dumps(tree) == before
