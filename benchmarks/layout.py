"""Layout quality: how much single-column equality filters can skip.

Databricks' measure: for each clustering column, equality filters on values
sampled from the data; a file is scanned when the value lies within its
[min, max] statistics; effectiveness is the mean fraction of rows not
scanned. The ceiling for F equal files and d independent columns is
1 - F^(-1/d). Tables (one Spark session, one run):

- network: src_ip, dst_ip (random dotted IPv4 strings), src_port, dst_port
- skewed: log-normal amounts, recent-heavy timestamps, Zipf customers, dates
- prefixes: strings whose first 20+ characters are shared by every row
- nulls: four numeric columns, 30% nulls each
- nans: four numeric columns, one double with NaN in 1% of rows (a file
  holding NaN has no bounds on that column)

    .venv/bin/python -m benchmarks.layout --write-markdown
"""

from __future__ import annotations

import argparse
import datetime as dt
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pyarrow as pa
from deltalake import DeltaTable, write_deltalake
from pyspark.sql import DataFrame, SparkSession

import zorder
from benchmarks.report import command_line, machine_facts, measured_on, replace_section, write_json
from benchmarks.session import user_session
from zorder.curves import Curve
from zorder.demo import (
    ceiling,
    equality_effectiveness,
    file_count,
    network_connections,
    write_as_written,
)

TARGETS = {"zorder": 0.85, "hilbert": 0.88}
PER_COLUMN_TARGET = 0.70


def network(rng: np.random.Generator, n: int) -> pa.Table:
    return network_connections(n, seed=int(rng.integers(2**31)))


def skewed(rng: np.random.Generator, n: int) -> pa.Table:
    now = dt.datetime(2026, 11, 1, tzinfo=dt.UTC)
    seconds_ago = rng.exponential(3 * 86_400, n)  # most events are recent
    return pa.table(
        {
            "amount": rng.lognormal(3, 2, n) - 1e3,  # heavy tail, far from zero, negatives
            "event_time": pa.array(
                [now - dt.timedelta(seconds=float(s)) for s in seconds_ago],
                pa.timestamp("us", tz="UTC"),
            ),
            "customer": (rng.zipf(1.3, n) % 1_000_000).astype(np.int64) + 10**12,
            "day": pa.array(
                [dt.date(2000, 1, 1) + dt.timedelta(days=int(d)) for d in rng.integers(0, 50, n)]
            ),
        }
    )


def prefixes(rng: np.random.Generator, n: int) -> pa.Table:
    # 24 and 20 shared characters, then the part that differs, all within the
    # 32 characters that Delta statistics keep (past them no file can be told
    # apart from another by any reader).
    return pa.table(
        {
            "url": [f"https://example.com/acct/{v:07d}" for v in rng.integers(0, 10**7, n)],
            "sku": [f"SKU-0000-WAREHOUSE-{v:06d}" for v in rng.integers(0, 10**6, n)],
            "qty": rng.integers(0, 1000, n).astype(np.int32),
        }
    )


def nulls(rng: np.random.Generator, n: int) -> pa.Table:
    def column(values: np.ndarray) -> pa.Array:
        return pa.array(values, mask=rng.random(n) < 0.3)

    return pa.table(
        {
            "a": column(rng.integers(-1000, 1000, n)),
            "b": column(rng.normal(0, 1, n)),
            "c": column(rng.integers(0, 10**9, n)),
            "d": column(rng.uniform(5, 6, n)),
        }
    )


def nans(rng: np.random.Generator, n: int) -> pa.Table:
    y = rng.normal(0, 1, n)
    y[rng.random(n) < 0.01] = np.nan
    return pa.table(
        {
            "a": rng.integers(-1000, 1000, n),
            "b": rng.uniform(0, 1, n),
            "c": rng.integers(0, 10**9, n),
            "y": y,
        }
    )


DATASETS: dict[str, Callable[[np.random.Generator, int], pa.Table]] = {
    "network": network,
    "skewed": skewed,
    "prefixes": prefixes,
    "nulls": nulls,
    "nans": nans,
}


@dataclass(frozen=True)
class Layout:
    name: str
    by: list[str]
    curve: Curve | Literal["random"]  # random: the rows as written, no clustering


def effectiveness(
    path: str, data: pa.Table, columns: list[str], filters: int, rng: np.random.Generator
) -> dict[str, float]:
    """Mean fraction of rows skipped by ``column = value`` for values sampled from the data."""
    values = {}
    for c in columns:
        present = data.column(c).drop_null()
        values[c] = [present[int(i)].as_py() for i in rng.integers(0, len(present), filters)]
    return equality_effectiveness(path, values)


def run_layouts(
    spark: SparkSession,
    workdir: Path,
    name: str,
    data: pa.Table,
    files: int,
    filters: int,
    seed: int,
    with_delta_rs: bool,
) -> list[dict[str, Any]]:
    columns = data.column_names
    df: DataFrame = spark.createDataFrame(data).cache()
    df.count()
    layouts = [
        Layout("as written", [], "random"),
        Layout("linear", columns, "linear"),
        Layout("zorder", columns, "zorder"),
        Layout("hilbert", columns, "hilbert"),
    ]
    if name == "network":
        layouts.insert(3, Layout("zorder (src_ip, dst_ip)", ["src_ip", "dst_ip"], "zorder"))
    rows = []
    for layout in layouts:
        path = str(workdir / f"{name}-{layout.name.replace(' ', '_')}")
        started = time.perf_counter()
        if layout.curve == "random":
            write_as_written(df, path, files)
        else:
            zorder.write(df, path, by=layout.by, curve=layout.curve, num_files=files)
        seconds = time.perf_counter() - started
        rows.append(_measure(layout.name, path, data, columns, filters, seed, seconds))
    if with_delta_rs:
        path = str(workdir / f"{name}-delta-rs")
        started = time.perf_counter()
        write_deltalake(path, data)
        target = max(1, data.nbytes // files)
        DeltaTable(path).optimize.z_order(columns, target_size=target)
        seconds = time.perf_counter() - started
        rows.append(
            _measure("delta-rs optimize.z_order", path, data, columns, filters, seed, seconds)
        )
    df.unpersist()
    return rows


def hottest_shares(data: pa.Table) -> dict[str, float]:
    """Share of rows that hold each column's most common non-null value.

    An equality filter on a value held by p of the rows must scan at least p
    of them, whatever the layout: heavy duplicates lower the reachable skipping
    below the ceiling 1 - F^(-1/d), which assumes distinct values.
    """
    shares = {}
    for name in data.column_names:
        counts = data.column(name).drop_null().value_counts()
        top = max((c.as_py() for c in counts.field("counts")), default=0)
        shares[name] = top / data.num_rows
    return shares


def _measure(
    layout: str,
    path: str,
    data: pa.Table,
    columns: list[str],
    filters: int,
    seed: int,
    seconds: float,
) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    per_column = effectiveness(path, data, columns, filters, rng)
    files = file_count(path)
    best = ceiling(files, len(columns))
    mean = float(np.mean(list(per_column.values())))
    return {
        "layout": layout,
        "files": files,
        "ceiling": best,
        "per_column": per_column,
        "mean": mean,
        "mean_of_ceiling": mean / best if best else 0.0,
        "min_column_of_ceiling": min(per_column.values()) / best if best else 0.0,
        "seconds": seconds,
    }


def verdict(row: dict[str, Any]) -> str:
    target = TARGETS.get(row["layout"])
    if target is None:
        return ""
    ok = row["mean_of_ceiling"] >= target and row["min_column_of_ceiling"] >= PER_COLUMN_TARGET
    return "pass" if ok else "FAIL"


def markdown(payload: dict[str, Any]) -> str:
    cfg, machine = payload["config"], payload["machine"]
    lines = [
        "## Layout quality: single-column equality filters",
        "",
        f"`{payload['command']}`",
        "",
        f"{cfg['rows']:,} rows into {cfg['files']} files per table; {cfg['filters']} equality "
        "filters per column on values sampled from the data. Each cell: fraction of rows "
        "skipped, and in brackets that as a fraction of the ceiling 1 - F^(-1/d) (F files "
        "actually written, d columns). Targets: zorder mean >= 85% of the ceiling, hilbert "
        f">= 88%, every column >= {PER_COLUMN_TARGET:.0%}.",
    ]
    for name, rows in payload["results"].items():
        columns = list(rows[0]["per_column"])
        lines += [
            "",
            f"### {name}",
            "",
            "Most common value's share of rows: "
            + ", ".join(
                f"{c} {share:.1%}" for c, share in payload["hottest_value_share"][name].items()
            )
            + ".",
            "",
            "| layout | files | " + " | ".join(columns) + " | mean | target |",
            "| --- | ---: | " + " | ".join("---:" for _ in columns) + " | ---: | --- |",
        ]
        for row in rows:
            cells = [
                f"{row['per_column'][c]:.3f} ({row['per_column'][c] / row['ceiling']:.0%})"
                for c in columns
            ]
            lines.append(
                f"| {row['layout']} | {row['files']} | "
                + " | ".join(cells)
                + f" | {row['mean']:.3f} ({row['mean_of_ceiling']:.0%}) | {verdict(row)} |"
            )
    lines += [
        "",
        measured_on(machine),
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--files", type=int, default=100)
    parser.add_argument("--filters", type=int, default=200)
    parser.add_argument("--seed", type=int, default=2018)
    parser.add_argument("--datasets", default=",".join(DATASETS))
    parser.add_argument("--no-delta-rs", action="store_true", help="skip delta-rs's z_order")
    parser.add_argument("--write-markdown", action="store_true", help="update BENCHMARKS.md")
    args = parser.parse_args(argv)
    spark = user_session("zorder-bench-layout")
    rng = np.random.default_rng(args.seed)
    results = {}
    shares = {}
    with tempfile.TemporaryDirectory(prefix="zorder-layout-") as tmp:
        for name in args.datasets.split(","):
            data = DATASETS[name](rng, args.rows)
            shares[name] = hottest_shares(data)
            results[name] = run_layouts(
                spark,
                Path(tmp),
                name,
                data,
                args.files,
                args.filters,
                args.seed,
                with_delta_rs=name == "network" and not args.no_delta_rs,
            )
    payload = {
        "command": command_line(__spec__.name, argv),
        "machine": machine_facts(),
        "config": {
            "rows": args.rows,
            "files": args.files,
            "filters": args.filters,
            "seed": args.seed,
        },
        "results": results,
        "hottest_value_share": shares,
    }
    text = markdown(payload)
    print(text)
    if args.write_markdown:
        write_json("layout", payload)
        replace_section("layout", text)
    return payload


if __name__ == "__main__":
    main()
