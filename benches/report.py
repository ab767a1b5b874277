"""Markdown tables from a pytest-benchmark JSON file: one table per benchmark group, the fastest first, with
each row's minimum time relative to the fastest of its group, and the machine the numbers were measured on.

    pytest benches --benchmark-enable --benchmark-json=docs/benchmarks/pytest-benchmark.json
    python benches/report.py --trim docs/benchmarks/pytest-benchmark.json   # drop the raw timings, print tables

The documentation's benchmarks page is built from the committed JSON by this module (``docs/hooks.py``), so its
tables are never typed by hand. Times on a shared machine are noisy: read the ratios within a group.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

_UNITS = ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns"))


def _time(seconds: float) -> str:
    for scale, unit in _UNITS:
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def _name(bench: dict[str, Any]) -> str:
    """The test's name without ``test_``, with its parameters."""
    name = bench["name"].removeprefix("test_")
    return f"`{name}`"


def machine(data: dict[str, Any]) -> str:
    """One paragraph: CPU, cores, Python, the date and the commit of the run."""
    info = data.get("machine_info", {})
    cpu = info.get("cpu", {})
    commit = data.get("commit_info", {})
    parts = [
        f"CPU: {cpu.get('brand_raw', 'unknown')} ({cpu.get('count', '?')} logical cores visible, shared)",
        f"{info.get('python_implementation', 'Python')} {info.get('python_version', '?')}",
        f"{info.get('system', '?')} {info.get('release', '')}".strip(),
    ]
    when = data.get("datetime", "")[:10]
    if when:
        parts.append(f"measured {when}")
    if commit.get("id"):
        parts.append(f"commit `{commit['id'][:10]}`")
    return "; ".join(parts) + "."


def markdown(path: str | Path) -> str:
    """The machine paragraph and one table per group, fastest first: the minimum time per call over the rounds
    (the least disturbed by other load on a shared machine), the median, and × = minimum relative to the fastest
    row's."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    groups: dict[str, list[dict[str, Any]]] = {}
    for bench in data["benchmarks"]:
        groups.setdefault(bench.get("group") or bench["fullname"].split("::")[0], []).append(bench)
    out = [machine(data), ""]
    for group in sorted(groups):
        rows = sorted(groups[group], key=lambda b: b["stats"]["min"])
        fastest = rows[0]["stats"]["min"]
        out += [f"#### {group}", "", "| benchmark | min | median | rounds | × fastest |", "|---|---:|---:|---:|---:|"]
        for bench in rows:
            stats = bench["stats"]
            out.append(
                f"| {_name(bench)} | {_time(stats['min'])} | {_time(stats['median'])} | {stats['rounds']} "
                f"| {stats['min'] / fastest:.2f}× |"
            )
        out.append("")
    return "\n".join(out)


def trim(path: str | Path) -> None:
    """Rewrite the JSON file without each benchmark's raw timings (``stats.data``), which the tables do not use."""
    path = Path(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    for bench in data["benchmarks"]:
        bench["stats"].pop("data", None)
    path.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("json", help="a pytest-benchmark JSON file (--benchmark-json)")
    parser.add_argument("--trim", action="store_true", help="first drop the raw timings from the file")
    args = parser.parse_args()
    if args.trim:
        trim(args.json)
    print(markdown(args.json))


if __name__ == "__main__":
    main()
