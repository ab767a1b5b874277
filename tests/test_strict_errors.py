"""With ``strict=True`` a value beyond the declared bound is an error — whose message names the bound and the round,
never the value: the value is private data, and an error message travels as far as any output (logs, tracebacks,
bug reports)."""

from __future__ import annotations

import pickle

import pytest

from dponline import (
    DPFTPL,
    DPFTRL,
    InvalidInputError,
    NoisyOCO,
    PrivateBandit,
    PrivateDRSubmodular,
    PrivateEXP3,
    PrivateSCRiBLe,
    PrivateSubmodular,
)
from dponline.domains import Box, L2Ball, Simplex, UniformMatroid

SECRET = 3.14159271  # a private value beyond every bound below, with digits no message would contain by chance

STRICT = {
    "PrivateBandit": (
        lambda: PrivateBandit(L2Ball(1), horizon=4, epsilon=1.0, lipschitz=1.0, strict=True, seed=0),
        0.5, SECRET, "loss_bound",
    ),
    "DPFTRL": (
        lambda: DPFTRL(Simplex(2), horizon=4, epsilon=1.0, loss_bound=1.0, strict=True, seed=0),
        [0.5, 0.0], [SECRET, 0.0], "loss_bound",
    ),
    "DPFTRL dual": (
        lambda: DPFTRL(L2Ball(2), horizon=4, epsilon=1.0, loss_bound=10.0, dual_bound=1.0, strict=True, seed=0),
        [0.5, 0.0], [SECRET, 0.0], "dual_bound",
    ),
    "DPFTPL": (
        lambda: DPFTPL(Box([-1.0], [1.0]), horizon=4, epsilon=1.0, delta=1e-5, loss_bound=1.0, strict=True, seed=0),
        [0.5], [-SECRET], "loss_bound",
    ),
    "NoisyOCO": (
        lambda: NoisyOCO(Simplex(2), horizon=4, epsilon=1.0, lipschitz=1.0, strict=True, seed=0),
        [0.5, 0.0], [SECRET, 0.0], "lipschitz",
    ),
    "PrivateEXP3": (
        lambda: PrivateEXP3(2, horizon=4, epsilon=1.0, strict=True, seed=0),
        0.5, SECRET, "loss_bound",
    ),
    "PrivateSCRiBLe": (
        lambda: PrivateSCRiBLe(L2Ball(1), horizon=4, epsilon=1.0, loss_bound=1.0, strict=True, seed=0),
        0.5, -SECRET, "loss_bound",
    ),
    "PrivateSubmodular full": (
        lambda: PrivateSubmodular(2, 1, horizon=4, epsilon=1.0, delta=1e-3, strict=True, seed=0),
        [0.5, 0.5], [SECRET, 0.0], "[0, 1]",
    ),
    "PrivateSubmodular bandit": (
        lambda: PrivateSubmodular(2, 1, horizon=1000, epsilon=1.0, delta=1e-3, feedback="bandit", strict=True, seed=0),
        0.5, SECRET, "[0, 1]",
    ),
    "PrivateDRSubmodular": (
        lambda: PrivateDRSubmodular(UniformMatroid(2, 1, base=False), horizon=4, epsilon=1.0, strict=True, seed=0),
        [0.5, 0.5], [0.0, -SECRET], "[0, 1]",
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", STRICT)
def test_strict_errors_name_the_bound_and_the_round_never_the_value(name):
    make, fine, bad, bound = STRICT[name]
    learner = make()
    learner.ask()
    learner.tell(fine)
    learner.ask()
    before = pickle.dumps(learner)
    with pytest.raises(InvalidInputError) as caught:
        learner.tell(bad)
    message = str(caught.value)
    assert "strict=True" in message and bound in message and "round 2" in message, message
    assert "3.14" not in message and "1415" not in message, message
    assert pickle.dumps(learner) == before  # refused with the learner unchanged
