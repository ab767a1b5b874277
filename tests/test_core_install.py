"""The core install (``pip install dponline``: NumPy and SciPy) is enough for the library: with the optional
packages made unimportable, every learner, mechanism, domain, noise sampler, privacy function and audit works
(their docstring examples pass, and a learner runs natively), and what needs an extra says which one."""

import subprocess
import sys
import textwrap

OPTIONAL = ("pandas", "pyarrow", "matplotlib", "tqdm", "filelock", "dask", "distributed")

# ``sys.modules[name] = None`` makes ``import name`` raise ModuleNotFoundError and ``find_spec(name)`` return
# None, exactly as when the package is not installed.
_BLOCK = f"import sys\nfor _name in {OPTIONAL!r}:\n    sys.modules[_name] = None\n"


def _run(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _BLOCK + textwrap.dedent(code), *args], capture_output=True, text=True, timeout=600
    )


def test_the_core_works_without_the_optional_packages():
    run = _run(
        """
        import doctest
        import numpy as np
        import dponline
        from dponline import aggregation, audit, datasets, domains, learners, local_dp, losses, regret, submodular

        modules = [
            aggregation, audit, domains, learners.private_bandit, learners.dp_ftrl, learners.private_exp3,
            learners.private_scrible, learners.private_submodular, learners.private_dr_submodular,
            local_dp.randomizer, local_dp.potential, local_dp.learners, submodular,
        ]
        for module in modules:
            result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
            assert result.attempted > 0 and result.failed == 0, module.__name__

        assert all(getattr(datasets, name)() is not None for name in datasets.__all__ if name.startswith("load_"))
        learner = dponline.PrivateBandit(domains.Simplex(3), horizon=200, epsilon=1.0, lipschitz=1.0, seed=0)
        result = learner.run(losses.Linear(np.full((200, 3), 0.5)))
        assert result.rounds == 200 and learner.privacy.epsilon == 1.0
        assert regret.best_fixed(losses.Linear(np.full((200, 3), 0.5)), domains.Simplex(3)).total_loss == 100.0
        try:
            learner.run(losses.Linear(np.full((10, 3), 0.5)), progress=True)
        except ImportError as exc:
            assert "dponline[experiments]" in str(exc), exc
        else:
            raise AssertionError("progress=True without tqdm")
        try:
            import dponline.experiments
        except ImportError as exc:
            assert "dponline[experiments]" in str(exc), exc
        else:
            raise AssertionError("dponline.experiments without pandas")
        assert not any(m.partition(".")[0] in """
        + repr(OPTIONAL)
        + """ for m in sys.modules if sys.modules[m] is not None)
        print("ok")
        """
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "ok"


def test_the_command_names_the_extra_it_needs():
    run = _run("import runpy; runpy.run_module('dponline', run_name='__main__')", "portfolio")
    assert run.returncode == 2
    assert run.stderr.startswith("dponline: error: dponline.experiments needs pandas")
    assert "pip install 'dponline[experiments]'" in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1
