"""Micro-benchmark of the curve core: scalar loop vs vectorized NumPy.

Points per second for Z-order interleaving and the Hilbert index on random
points (4 dimensions x 16 bits by default). The scalar loop runs on a sample
of the points (it would take minutes on all of them); a rate is a rate. The
vectorized results are checked equal to the scalar ones on that sample.

Also keys per second of counting 1,023 rank boundaries below each key, the
first step of every rank key: ``np.searchsorted`` against
:class:`~zorder.curves.search.GuidedSearch`, on ports and on the 8-byte
prefixes of dotted IPv4 strings, in batches of the key UDFs' size.

    .venv/bin/python -m benchmarks.curves --write-markdown
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from benchmarks.report import command_line, machine_facts, replace_section, write_json
from zorder.curves import hilbert_index, hilbert_index_array, interleave_array, interleave_bits
from zorder.curves.search import GuidedSearch
from zorder.demo import best_seconds, network_connections

_BOUNDARIES = 1023  # rank buckets of 10 bits
_BATCH = 50_000  # rows in an Arrow batch of the key UDFs while writing


def as_ints(keys: np.ndarray) -> list[int]:
    if keys.dtype == np.uint64:
        return [int(k) for k in keys]
    return [int.from_bytes(bytes(row), "big") for row in keys]


def measure(points: int, scalar_points: int, dims: int, bits: int, repeat: int) -> dict[str, Any]:
    rng = np.random.default_rng(20261122)
    array = rng.integers(0, 1 << bits, size=(points, dims), dtype=np.uint64)
    sample = [[int(v) for v in row] for row in array[:scalar_points]]
    curves: dict[str, tuple[Callable[..., int], Callable[..., np.ndarray]]] = {
        "zorder": (interleave_bits, interleave_array),
        "hilbert": (hilbert_index, hilbert_index_array),
    }
    results: dict[str, Any] = {}
    for name, (scalar, vectorized) in curves.items():
        expected = [scalar(row, bits) for row in sample]
        if as_ints(vectorized(array[:scalar_points], bits)) != expected:
            raise AssertionError(f"{name}: vectorized keys differ from the scalar ones")
        scalar_s = best_seconds(partial(_scalar_keys, scalar, sample, bits), 1)
        vector_s = best_seconds(partial(vectorized, array, bits), repeat)
        scalar_rate = scalar_points / scalar_s
        vector_rate = points / vector_s
        results[name] = {
            "scalar_points_per_s": scalar_rate,
            "vectorized_points_per_s": vector_rate,
            "speedup": vector_rate / scalar_rate,
        }
    return results


def _scalar_keys(scalar: Callable[..., int], sample: list[list[int]], bits: int) -> list[int]:
    return [scalar(row, bits) for row in sample]


def _binary_counts(bounds: np.ndarray, batches: list[np.ndarray]) -> list[np.ndarray]:
    return [np.searchsorted(bounds, b, side="right") for b in batches]


def _guided_counts(guided: GuidedSearch, batches: list[np.ndarray]) -> list[np.ndarray]:
    return [guided.count(b, side="right") for b in batches]


def _ordered_words(column: Any) -> np.ndarray:
    """The uint64 words bucket ids search: order-preserving ints, or 8-byte string prefixes."""
    values = column.to_pylist()
    if isinstance(values[0], str):
        prefixes = b"".join(v.encode()[:8].ljust(8, b"\0") for v in values)
        return np.frombuffer(prefixes, dtype=">u8").astype(np.uint64)
    return np.asarray(values, dtype=np.int64).view(np.uint64) ^ np.uint64(1 << 63)


def measure_search(keys: int, repeat: int) -> dict[str, Any]:
    table = network_connections(keys + 100_000, seed=20261122)
    results: dict[str, Any] = {}
    for name in ("src_port", "src_ip"):
        words = _ordered_words(table.column(name))
        sample, queries = np.sort(words[:100_000]), words[100_000:]
        bounds = np.unique(sample[:: len(sample) // _BOUNDARIES])[:_BOUNDARIES]
        guided = GuidedSearch(bounds)
        batches = [queries[i : i + _BATCH] for i in range(0, len(queries), _BATCH)]
        if not all(
            (guided.count(b, side="right") == np.searchsorted(bounds, b, side="right")).all()
            for b in batches
        ):
            raise AssertionError(f"{name}: guided counts differ from np.searchsorted")
        binary_s = best_seconds(partial(_binary_counts, bounds, batches), repeat)
        guided_s = best_seconds(partial(_guided_counts, guided, batches), repeat)
        results[name] = {
            "binary_keys_per_s": len(queries) / binary_s,
            "guided_keys_per_s": len(queries) / guided_s,
            "speedup": binary_s / guided_s,
        }
    return results


def markdown(payload: dict[str, Any]) -> str:
    cfg, machine = payload["config"], payload["machine"]
    lines = [
        "## Curve core: scalar vs vectorized",
        "",
        f"`{payload['command']}`",
        "",
        f"{cfg['dims']} dimensions x {cfg['bits']} bits; vectorized on {cfg['points']:,} "
        f"random points (best of {cfg['repeat']}), the scalar loop on the first "
        f"{cfg['scalar_points']:,} of them. Target: vectorized >= 50x scalar.",
        "",
        "| curve | scalar (points/s) | vectorized (points/s) | speed-up |",
        "| --- | ---: | ---: | ---: |",
    ]
    for name, row in payload["results"].items():
        lines.append(
            f"| {name} | {row['scalar_points_per_s']:,.0f} | "
            f"{row['vectorized_points_per_s']:,.0f} | {row['speedup']:.0f}x |"
        )
    lines += [
        "",
        f"Counting {_BOUNDARIES:,} rank boundaries below each of {cfg['points']:,} keys "
        f"(batches of {_BATCH:,}, best of {cfg['repeat']}); equal results checked:",
        "",
        "| column | np.searchsorted (keys/s) | GuidedSearch (keys/s) | speed-up |",
        "| --- | ---: | ---: | ---: |",
    ]
    for name, row in payload["search"].items():
        lines.append(
            f"| {name} | {row['binary_keys_per_s']:,.0f} | "
            f"{row['guided_keys_per_s']:,.0f} | {row['speedup']:.1f}x |"
        )
    lines += [
        "",
        f"Measured {machine['date']} on {machine['cpus']} CPUs ({machine['processor']}), "
        f"Python {machine['python']}, NumPy {machine['numpy']}.",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=int, default=1_000_000)
    parser.add_argument("--scalar-points", type=int, default=100_000)
    parser.add_argument("--dims", type=int, default=4)
    parser.add_argument("--bits", type=int, default=16)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--write-markdown", action="store_true", help="update BENCHMARKS.md")
    args = parser.parse_args(argv)
    scalar_points = min(args.scalar_points, args.points)
    payload = {
        "command": command_line(__spec__.name, argv),
        "machine": machine_facts(),
        "config": {
            "points": args.points,
            "scalar_points": scalar_points,
            "dims": args.dims,
            "bits": args.bits,
            "repeat": args.repeat,
        },
        "results": measure(args.points, scalar_points, args.dims, args.bits, args.repeat),
        "search": measure_search(args.points, args.repeat),
    }
    text = markdown(payload)
    print(text)
    if args.write_markdown:
        write_json("curves", payload)
        replace_section("curves", text)
    return payload


if __name__ == "__main__":
    main()
