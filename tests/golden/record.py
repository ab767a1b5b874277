"""Seeded outputs of every learner and mechanism, for the golden test (``tests/test_golden.py``).

Each case builds one seeded object at a small size and drives it the way a user does: a few rounds of
``ask``/``tell`` (or ``push``/``randomize``), the native state bytes and the pickle after them, and a native
``run`` of a second, identical object. Every output is reduced to the SHA-256 of its exact bytes (float64 bit
patterns, int64 values, state bytes), so the file is small and a single flipped bit shows.

Regenerate (only when a change of behaviour is intended, and say so in the commit)::

    python tests/golden/record.py            # writes tests/data/golden.json
    python tests/golden/record.py --check    # compares, prints the cases that differ
"""

from __future__ import annotations

import hashlib
import itertools
import json
import pickle
import struct
import sys
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

import dponline
from dponline import aggregation, domains, local_dp, losses, mwu, submodular
from dponline.errors import ExplorationCappedWarning

GOLDEN = Path(__file__).resolve().parent.parent / "data" / "golden.json"
SAMPLERS = ("exact", "floating-point")
ROUNDS = 6  # ask/tell rounds
HORIZON = 24


def _encode(value: Any) -> bytes:
    """The exact bytes of an output: arrays by dtype, shape and raw values; scalars by their bit pattern."""
    if isinstance(value, np.ndarray):
        arr = np.ascontiguousarray(value)
        return f"{arr.dtype.str}{arr.shape}".encode() + arr.tobytes()
    if isinstance(value, (bool, np.bool_)):
        return b"b1" if value else b"b0"
    if isinstance(value, (int, np.integer)):
        return b"i" + str(int(value)).encode()
    if isinstance(value, (float, np.floating)):
        return b"f" + struct.pack("<d", float(value))
    if isinstance(value, (bytes, bytearray)):
        return b"y" + bytes(value)
    if isinstance(value, str):
        return b"s" + value.encode()
    if value is None:
        return b"n"
    if isinstance(value, (list, tuple)):
        return b"[" + b",".join(_encode(v) for v in value) + b"]"
    if isinstance(value, dict):
        return b"{" + b",".join(_encode(k) + b":" + _encode(v) for k, v in sorted(value.items())) + b"}"
    raise TypeError(f"cannot encode {type(value).__name__}")


def digest(value: Any) -> str:
    return hashlib.sha256(_encode(value)).hexdigest()[:32]


def _run_result(result: Any) -> dict[str, Any]:
    return {
        "checkpoints": result.checkpoints,
        "cumulative_loss": result.cumulative_loss,
        "total_loss": result.total_loss,
        "rounds": result.rounds,
        "clipped": result.clipped,
        "final_point": result.final_point,
    }


def _rng(i: int) -> np.random.Generator:
    return np.random.default_rng(1000 + i)


# ---------------------------------------------------------------------------------------------------------------
# learners: (make, feedback for round t given the action, the family a run plays)


def _learner_case(make: Callable[[], Any], feed: Callable[[Any, int, Any], None], family: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    learner = make()
    actions = []
    for t in range(ROUNDS):
        action = learner.ask()
        actions.append(np.asarray(action))
        feed(learner, t, action)
    out["actions"] = actions
    out["t"] = learner.t
    out["params"] = {k: v for k, v in dict(learner.params).items()} if hasattr(learner, "params") else None
    out["core_bytes"] = learner._core.to_bytes()
    out["core_scalars"] = {
        name: getattr(learner._core, name)
        for name in ("t", "clipped", "noise", "scale", "mechanism")
        if _has(learner._core, name)
    }
    blob = pickle.dumps(learner, protocol=4)
    out["pickle"] = blob
    restored = pickle.loads(blob)
    out["after_restore"] = np.asarray(restored.ask())
    fresh = make()
    result = fresh.run(family, rounds=HORIZON // 2, checkpoints=4)
    out["run"] = _run_result(result)
    out["run_rest"] = _run_result(fresh.run(family, checkpoints=3))
    out["core_bytes_after_run"] = fresh._core.to_bytes()
    return out


def _has(obj: Any, name: str) -> bool:
    try:
        getattr(obj, name)
    except AttributeError:
        return False
    return True


def _linear_rows(n: int, i: int, low: float = 0.0) -> np.ndarray:
    return _rng(i).uniform(low, 1.0, size=(HORIZON, n))


def _case(
    cls: Callable[..., Any], first: Callable[[], Any], kwargs: dict[str, Any], tell: Callable[..., Any], family: Any
) -> Callable[[], dict[str, Any]]:
    """The recording of one learner case: :func:`_learner_case` of the learners ``cls(first(), horizon=HORIZON,
    **kwargs)`` (``first()`` builds a fresh domain, or gives a size), told through ``tell`` and run on ``family``."""
    return lambda: _learner_case(lambda: cls(first(), horizon=HORIZON, **kwargs), tell, family)


def learner_cases() -> Iterator[tuple[str, Callable[[], dict[str, Any]]]]:
    rows4 = _linear_rows(4, 1)
    lin4 = losses.Linear(rows4)
    scalar = lambda rows: lambda lrn, t, x: lrn.tell(float(rows[t] @ np.asarray(x)))  # noqa: E731
    vector = lambda rows: lambda lrn, t, x: lrn.tell(rows[t])  # noqa: E731
    portfolio_rows = _rng(2).uniform(0.8, 1.25, size=(HORIZON, 4))
    port4 = losses.PortfolioLogLoss(portfolio_rows, relative_range=(0.5, 2.0))
    simplex4 = lambda: domains.Simplex(4)  # noqa: E731
    box4 = lambda: domains.Box(-np.ones(4), np.ones(4))  # noqa: E731
    arm = lambda lrn, t, a: lrn.tell(float(rows4[t][int(a)]))  # noqa: E731
    portfolio = lambda lrn, t, x: lrn.tell(-portfolio_rows[t] / float(portfolio_rows[t] @ np.asarray(x)))  # noqa: E731
    # Recorded once per sampler: (name, learner class, its first argument (a domain, or EXP3's number of arms)
    # built afresh for every learner, keyword arguments besides horizon and sampler, feedback, loss family).
    per_sampler = [
        (
            "PrivateBandit/simplex",
            dponline.PrivateBandit,
            simplex4,
            {"epsilon": 1.0, "lipschitz": 2.0, "loss_bound": 1.0, "seed": 3},
            scalar(rows4),
            lin4,
        ),
        (
            "PrivateBandit/l2ball-gaussian",
            dponline.PrivateBandit,
            lambda: domains.L2Ball(4),
            {"epsilon": 1.0, "delta": 1e-6, "noise": "gaussian", "lipschitz": 2.0, "loss_bound": 2.0, "seed": 4},
            scalar(rows4),
            lin4,
        ),
        (
            "DPFTRL/entropy",
            dponline.DPFTRL,
            simplex4,
            {"epsilon": 1.0, "loss_bound": 1.0, "seed": 5},
            vector(rows4),
            lin4,
        ),
        (
            "DPFTRL/euclidean-gaussian",
            dponline.DPFTRL,
            lambda: domains.L2Ball(4),
            {"epsilon": 1.0, "delta": 1e-6, "loss_bound": 2.0, "regularizer": "euclidean", "seed": 6},
            vector(rows4),
            lin4,
        ),
        (
            "DPFTRL/portfolio",
            dponline.DPFTRL,
            simplex4,
            {"epsilon": 1.0, "loss_bound": port4.lipschitz, "seed": 7},
            portfolio,
            port4,
        ),
        (
            "DPFTPL/box",
            dponline.DPFTPL,
            box4,
            {"epsilon": 1.0, "delta": 1e-6, "loss_bound": 2.0, "seed": 8},
            vector(rows4),
            lin4,
        ),
        (
            "NoisyOCO/simplex",
            dponline.NoisyOCO,
            simplex4,
            {"epsilon": 1.0, "lipschitz": 2.0, "seed": 23},
            vector(rows4),
            lin4,
        ),
        (
            "NoisyOCO/l2ball-gaussian",
            dponline.NoisyOCO,
            lambda: domains.L2Ball(4),
            {"epsilon": 1.0, "delta": 1e-6, "lipschitz": 2.0, "seed": 24},
            vector(rows4),
            lin4,
        ),
        ("PrivateEXP3", dponline.PrivateEXP3, lambda: 4, {"epsilon": 1.0, "seed": 9}, arm, lin4),
        (
            "PrivateSCRiBLe/box",
            dponline.PrivateSCRiBLe,
            box4,
            {"epsilon": 1.0, "loss_bound": 2.0, "seed": 10},
            scalar(rows4),
            lin4,
        ),
        (
            "PrivateSCRiBLe/simplex",
            dponline.PrivateSCRiBLe,
            simplex4,
            {"epsilon": 1.0, "loss_bound": 1.0, "seed": 11},
            scalar(rows4),
            lin4,
        ),
    ]
    for sampler in SAMPLERS:
        for name, cls, first, kwargs, feedback, family in per_sampler:
            yield f"{name}/{sampler}", _case(cls, first, {**kwargs, "sampler": sampler}, feedback, family)
    yield (
        "PrivateEXP3/bernoulli",
        lambda: _learner_case(
            lambda: dponline.PrivateEXP3(4, horizon=HORIZON, epsilon=1.0, seed=12),
            arm,
            losses.BernoulliArms([0.2, 0.4, 0.6, 0.8], horizon=HORIZON, seed=13),
        ),
    )
    yield (
        "PrivateBandit/honaker",
        _case(
            dponline.PrivateBandit,
            simplex4,
            {
                "epsilon": 1.0,
                "lipschitz": 2.0,
                "loss_bound": 1.0,
                "mechanism": "honaker",
                "calibration": "analytic",
                "seed": 14,
            },
            scalar(rows4),
            lin4,
        ),
    )
    blt = {"epsilon": 1.0, "delta": 1e-6, "loss_bound": 1.0, "mechanism": "blt"}
    blt_float = {"calibration": "analytic", "sampler": "floating-point"}
    yield "DPFTRL/blt", _case(dponline.DPFTRL, simplex4, {**blt, **blt_float, "seed": 15}, vector(rows4), lin4)
    yield "DPFTRL/blt-exact", _case(dponline.DPFTRL, simplex4, {**blt, "seed": 25}, vector(rows4), lin4)
    P = _rng(3).uniform(0.0, 0.5, size=(HORIZON, 6))
    cov = submodular.ProbabilisticCoverage(P)
    # The float Hedge draws (the default before the exact sampler) under their first names; the exact default as
    # "<feedback>-exact".
    for feedback, sampler in itertools.product(("full", "bandit"), SAMPLERS):
        yield (
            f"PrivateSubmodular/{feedback}" + ("-exact" if sampler == "exact" else ""),
            lambda f=feedback, s=sampler: _learner_case(
                lambda: dponline.PrivateSubmodular(
                    6, 2, horizon=HORIZON, epsilon=1.0, delta=1e-6, feedback=f, sampler=s, seed=16
                ),
                (lambda lrn, t, S: lrn.tell(P[t]))
                if f == "full"
                else (lambda lrn, t, S: lrn.tell(float(1 - np.prod(1 - P[t][np.asarray(S, dtype=int)])))),
                cov,
            ),
        )
    for sampler in SAMPLERS:
        yield (
            f"PrivateDRSubmodular/{sampler}",
            _case(
                dponline.PrivateDRSubmodular,
                lambda: domains.UniformMatroid(6, 2, base=False),
                {"epsilon": 1.0, "delta": 1e-6, "sampler": sampler, "seed": 17},
                lambda lrn, t, S: lrn.tell(P[t]),
                cov,
            ),
        )
    for sampler in SAMPLERS:
        yield (
            f"PrivateSubmodularFTRL/{sampler}",
            lambda s=sampler: _learner_case(
                lambda: dponline.PrivateSubmodularFTRL(
                    6, 2, horizon=HORIZON, epsilon=1.0, delta=1e-6, sampler=s, seed=26
                ),
                lambda lrn, t, S: lrn.tell(P[t]),
                cov,
            ),
        )
    yield (
        "PrivateSubmodular/bandit-presampled",
        lambda: _learner_case(
            lambda: dponline.PrivateSubmodular(
                6,
                2,
                horizon=HORIZON,
                epsilon=1.0,
                delta=1e-6,
                feedback="bandit",
                exploration="presampled",
                sampler="floating-point",
                seed=18,
            ),
            lambda lrn, t, S: lrn.tell(float(1 - np.prod(1 - P[t][np.asarray(S, dtype=int)]))),
            cov,
        ),
    )
    X = _rng(4).normal(size=(HORIZON, 3))
    y = np.sign(_rng(5).normal(size=HORIZON))
    for mech, sampler in (("laplace", "exact"), ("laplace", "floating-point"), ("l2", "floating-point")):
        stream = local_dp.LocalStream(X, y, loss="logistic", budgets=1.0, mechanism=mech, sampler=sampler)
        grads = _rng(6).normal(size=(HORIZON, 3))
        for name, make in (
            ("CoordinatewiseLearner", lambda: dponline.CoordinatewiseLearner(3, 1.0, seed=19)),
            ("UnconstrainedLearner", lambda: dponline.UnconstrainedLearner(3, 1.0, seed=20)),
            ("OnlineGradientDescent", lambda: local_dp.OnlineGradientDescent(3, 0.1, seed=21)),
            ("AdaGrad", lambda: local_dp.AdaGrad(3, 1.0, seed=22)),
        ):
            yield (
                f"{name}/{mech}/{sampler}",
                lambda mk=make, st=stream, g=grads: _learner_case(mk, lambda lrn, t, w: lrn.tell(g[t]), st),
            )


# ---------------------------------------------------------------------------------------------------------------
# mechanisms and other stateful objects


def _mechanism_case(make: Callable[[], Any], dim: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    rows = _rng(7).uniform(-1.0, 1.0, size=(HORIZON, dim))
    mech = make()
    out["push"] = [np.asarray(mech.push(rows[t])) for t in range(ROUNDS)]
    out["state"] = mech.__getstate__()
    blob = pickle.dumps(mech, protocol=4)
    out["pickle"] = blob
    out["after_restore"] = np.asarray(pickle.loads(blob).push(rows[ROUNDS]))
    out["push_many"] = np.asarray(mech.push_many(rows[ROUNDS : ROUNDS + 8]))
    out["scalars"] = {name: getattr(mech, name) for name in ("t", "scale", "grid", "noise", "sampler")}
    out["variance"] = [mech.variance(t) for t in (1, 5, 9)]
    return out


def mechanism_cases() -> Iterator[tuple[str, Callable[[], dict[str, Any]]]]:
    for sampler in SAMPLERS:
        for noise in ("laplace", "gaussian"):
            yield (
                f"TreeAggregator/{noise}/{sampler}",
                lambda n=noise, s=sampler: _mechanism_case(
                    lambda: aggregation.TreeAggregator(3, HORIZON, scale=0.7, noise=n, sampler=s, seed=30), 3
                ),
            )
            yield (
                f"HonakerTree/{noise}/{sampler}",
                lambda n=noise, s=sampler: _mechanism_case(
                    lambda: aggregation.HonakerTree(3, HORIZON, scale=0.7, noise=n, sampler=s, seed=31), 3
                ),
            )
            yield (
                f"KaryTree/{noise}/{sampler}",
                lambda n=noise, s=sampler: _mechanism_case(
                    lambda: aggregation.KaryTree(3, HORIZON, k=3, scale=0.7, noise=n, sampler=s, seed=32), 3
                ),
            )
    yield (
        "TreeAggregator/unpadded",
        lambda: _mechanism_case(lambda: aggregation.TreeAggregator(2, HORIZON, scale=0.5, padded=False, seed=33), 2),
    )
    yield (
        "TreeAggregator/calibrated",
        lambda: _mechanism_case(
            lambda: aggregation.TreeAggregator.calibrated(2, HORIZON, epsilon=1.0, sensitivity=1.0, seed=34), 2
        ),
    )
    for sampler in SAMPLERS:
        yield (
            f"BLT/{sampler}",
            lambda s=sampler: _mechanism_case(lambda: aggregation.BLT(3, HORIZON, scale=0.7, sampler=s, seed=35), 3),
        )
    yield (
        "BLT/calibrated",
        lambda: _mechanism_case(
            lambda: aggregation.BLT.calibrated(3, HORIZON, epsilon=1.0, delta=1e-6, sensitivity=1.0, seed=36), 3
        ),
    )
    for mech, sampler in (("laplace", "exact"), ("laplace", "floating-point"), ("l2", "floating-point")):
        yield (f"LocalLaplaceRandomizer/{mech}/{sampler}", lambda m=mech, s=sampler: _randomizer_case(m, s))
    yield ("PotentialLearner1D", _potential_case)
    yield ("Hedge", _hedge_case)


def _randomizer_case(mechanism: str, sampler: str) -> dict[str, Any]:
    r = dponline.LocalLaplaceRandomizer(3, bound=1.0, mechanism=mechanism, sampler=sampler, seed=40)
    g = _rng(8).uniform(-2.0, 2.0, size=(ROUNDS, 3))
    out: dict[str, Any] = {"randomize": [np.asarray(r.randomize(g[t], 0.5)) for t in range(ROUNDS)]}
    blob = pickle.dumps(r, protocol=4)
    out["pickle"] = blob
    out["after_restore"] = np.asarray(pickle.loads(blob).randomize(g[0], 0.5))
    out["batch"] = np.asarray(r.randomize(g, 0.25))
    return out


def _potential_case() -> dict[str, Any]:
    p = dponline.PotentialLearner1D(1.0)
    out: dict[str, Any] = {"ask": []}
    for g in (0.3, -0.7, 1.0, 0.2, -0.1):
        out["ask"].append(p.ask())
        p.tell(g)
    blob = pickle.dumps(p, protocol=4)
    out["pickle"] = blob
    out["after_restore"] = pickle.loads(blob).ask()
    return out


def _hedge_case() -> dict[str, Any]:
    h = mwu.Hedge(5, 0.3, seed=41)
    out: dict[str, Any] = {"samples": []}
    pay = _rng(9).uniform(size=(ROUNDS, 5))
    for t in range(ROUNDS):
        out["samples"].append(np.asarray(h.sample(3)))
        h.update_full(pay[t])
        h.update_one(t % 5, float(pay[t][0]))
    out["probabilities"] = np.asarray(h.probabilities())
    blob = pickle.dumps(h, protocol=4)
    out["pickle"] = blob
    out["after_restore"] = np.asarray(pickle.loads(blob).sample(4))
    return out


def outputs(case: Callable[[], dict[str, Any]]) -> dict[str, str]:
    """One case's outputs, each reduced to its digest (the tiny horizons cap the bandit exploration rate: its
    warning is expected here)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ExplorationCappedWarning)
        return {key: digest(value) for key, value in case().items()}


def record() -> dict[str, dict[str, str]]:
    """Every case's outputs."""
    return {name: outputs(case) for name, case in [*learner_cases(), *mechanism_cases()]}


def main(argv: list[str]) -> int:
    table = record()
    if "--check" in argv:
        stored = json.loads(GOLDEN.read_text())["cases"]
        bad = [
            f"{case}: {key}"
            for case in sorted(set(stored) | set(table))
            for key in sorted(set(stored.get(case, {})) | set(table.get(case, {})))
            if stored.get(case, {}).get(key) != table.get(case, {}).get(key)
        ]
        print("\n".join(bad) or "all cases match")
        return 1 if bad else 0
    GOLDEN.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "about": "SHA-256 (first 128 bits) of the exact outputs of tests/golden/record.py; see its docstring",
        "state_version": dponline._core.STATE_VERSION,
        "cases": table,
    }
    GOLDEN.write_text(json.dumps(payload, indent=1, sort_keys=True) + "\n")
    print(f"wrote {len(table)} cases to {GOLDEN}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
