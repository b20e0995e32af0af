"""Lookups by an id the curve does not cluster by: Parquet bloom filters (issue 49).

2M network events clustered by (ts, src_ip, dst_port) into 50 files, with bloom
filters on a random ``session_id`` (about four events a session, spread over the
table by the curve), against the same table without them:

- the write with filters is timed against the write without, alternated, the
  best of ``--repeat`` each (goal: at most 1.2x);
- lookups of sessions sampled from the table: ``session_id = X``,
  ``session_id IN (three values)`` and ``dst_port = P AND session_id = X``; and
  lookups of ids no event has. For each, the files ``zorder.explain`` keeps
  (statistics, then the bloom filters), against the files that hold a match
  (DuckDB counts the filter's rows in every file). Goal: the files kept are at
  most 3 percentage points of the table's files more than those holding a match;
- ``zorder.read(spark, path, where)`` and ``zorder.to_arrow`` return Spark's own
  count of the filter over every file of the table, for every lookup;
- an append of a tenth more events and a full optimize keep writing the filters, and
  the lookups keep their figures afterwards.

    .venv/bin/python -m benchmarks.blooms --write-markdown
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import pyarrow.parquet as pq
from deltalake import DeltaTable
from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F

import zorder
from benchmarks.report import command_line, machine_facts, measured_on, replace_section, write_json
from benchmarks.session import SESSION, user_session

BY = ["ts", "src_ip", "dst_port"]
BLOOM = "session_id"
EXTRA_FILES_GOAL = 0.03  # files kept beyond those with a match, as a share of all files
WRITE_RATIO_GOAL = 1.2


def events(spark: SparkSession, rows: int, *, start: int = 0, seed: int = 49) -> DataFrame:
    """Network events: a timestamp over a week, addresses, ports, and a session id shared by
    about four events that fall anywhere in the table."""

    def uniform(offset: int) -> Column:
        return F.rand(seed + offset)

    sessions = max(1, rows // 4)
    return spark.range(start, start + rows, numPartitions=16).select(
        (F.lit(1_764_000_000) + (uniform(1) * 7 * 86_400).cast("long"))
        .cast("timestamp")
        .alias("ts"),
        F.concat_ws(".", *[(uniform(10 + i) * 256).cast("int") for i in range(4)]).alias("src_ip"),
        (uniform(2) * 65_536).cast("int").alias("dst_port"),
        F.md5((uniform(3) * sessions).cast("long").cast("string")).alias(BLOOM),
        (uniform(4) * 1_000_000).cast("long").alias("bytes"),
    )


def best(run: Callable[[], Any], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        times.append(time.perf_counter() - started)
    return min(times)


def timed_writes(
    spark: SparkSession, source: str, tmp: Path, files: int, repeat: int
) -> dict[str, float]:
    """The write of ``source`` with and without filters, alternated; best of ``repeat``."""
    df = spark.read.parquet(source)
    seconds: dict[str, list[float]] = {"without": [], "with": []}
    for attempt in range(repeat):
        for name, blooms in (("without", []), ("with", [BLOOM])):
            path = tmp / f"timed-{name}-{attempt}"
            started = time.perf_counter()
            zorder.write(df, str(path), by=BY, num_files=files, bloom_filters=blooms)
            seconds[name].append(time.perf_counter() - started)
    return {name: min(values) for name, values in seconds.items()}


def lookups(spark: SparkSession, path: str, count: int, seed: int) -> list[tuple[str, str]]:
    """(kind, filter) pairs: sessions of the table, looked up three ways, and absent ids."""
    sample = zorder.to_arrow(path, limit=200_000).to_pylist()
    rng = random.Random(seed)
    picked = rng.sample(sample, 5 * count)
    wheres = []
    for i in range(count):
        one, others = picked[i], picked[count + 3 * i : count + 3 * i + 3]
        wheres.append(("session_id = X", f"session_id = '{one[BLOOM]}'"))
        listed = ", ".join(f"'{r[BLOOM]}'" for r in others)
        wheres.append(("session_id IN (3 values)", f"session_id IN ({listed})"))
        wheres.append(
            (
                "dst_port = P AND session_id = X",
                f"dst_port = {one['dst_port']} AND session_id = '{one[BLOOM]}'",
            )
        )
        absent = f"{rng.getrandbits(128):032x}"
        wheres.append(("absent id", f"session_id = '{absent}'"))
    return wheres


def judged(spark: SparkSession, path: str, wheres: list[tuple[str, str]]) -> list[dict[str, Any]]:
    """Each lookup's files kept, files with a match, and rows: zorder's against Spark's."""
    table = DeltaTable(path)
    uris = table.file_uris()
    con = duckdb.connect()
    everything = spark.read.parquet(*uris)
    results = []
    for kind, where in wheres:
        started = time.perf_counter()
        report = zorder.explain(path, where)
        plan_s = time.perf_counter() - started
        holding = con.execute(
            f"SELECT count(DISTINCT filename), count(*) FROM read_parquet(?, filename=true) "
            f"WHERE {where}",
            [uris],
        ).fetchone()
        assert holding is not None
        spark_rows = everything.where(where).count()
        zorder_rows = zorder.read(spark, path, where).count()
        arrow_rows = zorder.to_arrow(path, where).num_rows
        if not zorder_rows == arrow_rows == holding[1] == spark_rows:
            raise AssertionError(
                f"{where}: zorder.read returned {zorder_rows} rows, to_arrow {arrow_rows}, "
                f"Spark {spark_rows}, DuckDB {holding[1]}"
            )
        results.append(
            {
                "kind": kind,
                "where": where,
                "rows": spark_rows,
                "files_total": report.files_total,
                "files_holding": holding[0],
                "files_after_stats": report.files_scanned + report.files_bloom_skipped,
                "files_kept": report.files_scanned,
                "plan_s": plan_s,
                "requests": report.bloom.requests if report.bloom else 0,
                "bytes_read": report.bloom.bytes_read if report.bloom else 0,
            }
        )
    return results


def files_with_filters(path: str) -> tuple[int, int]:
    """(files whose every row group has a filter on the bloom column, files)."""
    uris = DeltaTable(path).file_uris()
    carrying = 0
    for uri in uris:
        metadata = pq.ParquetFile(uri).metadata
        carrying += all(
            any(
                metadata.row_group(g).column(c).path_in_schema == BLOOM
                and metadata.row_group(g).column(c).bloom_filter_offset is not None
                for c in range(metadata.num_columns)
            )
            for g in range(metadata.num_row_groups)
        )
    return carrying, len(uris)


def summarized(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per kind of lookup: means of files holding a match, after statistics, kept."""
    kinds = list(dict.fromkeys(r["kind"] for r in results))
    rows = []
    for kind in kinds:
        of_kind = [r for r in results if r["kind"] == kind]
        total = of_kind[0]["files_total"]
        extra = statistics.mean((r["files_kept"] - r["files_holding"]) / total for r in of_kind)
        rows.append(
            {
                "kind": kind,
                "lookups": len(of_kind),
                "files_total": total,
                "holding": statistics.mean(r["files_holding"] for r in of_kind),
                "after_stats": statistics.mean(r["files_after_stats"] for r in of_kind),
                "kept": statistics.mean(r["files_kept"] for r in of_kind),
                "extra_share": extra,
                "plan_ms": 1000 * statistics.median(r["plan_s"] for r in of_kind),
                "requests": statistics.mean(r["requests"] for r in of_kind),
                "pass": kind == "absent id" or extra <= EXTRA_FILES_GOAL,
            }
        )
    return rows


def markdown(payload: dict[str, Any]) -> str:
    writes = payload["write_s"]
    ratio = writes["with"] / writes["without"]
    lines = [
        "## Lookups by an id: Parquet bloom filters",
        "",
        f"`{payload['command']}`",
        "",
        f"{payload['rows']:,} network events clustered by zorder by ({', '.join(BY)}) into "
        f"{payload['files']} files, with bloom filters on `{BLOOM}` (a random id shared by "
        f"about four events; false-positive rate 1%); {SESSION}. Each row: the mean over "
        f"{payload['per_kind']} lookups of sessions drawn from the table (and of ids no event "
        "has) of the files holding a match (DuckDB counts the rows of every file), the "
        "files min/max statistics keep, and the files `zorder.explain` keeps after probing "
        "the bloom filters; *extra* is the files kept beyond those holding a match, as a "
        "share of the table's files (goal: at most 3 points). `zorder.read` and "
        "`zorder.to_arrow` returned Spark's own count over every file for every lookup.",
        "",
    ]
    for stage in ("written", "after an append and a full optimize"):
        table = payload["stages"][stage]
        lines += [
            f"**{stage.capitalize()}** ({table['files']} files, {table['carrying']} of them "
            f"carrying filters on `{BLOOM}`):",
            "",
            "| lookup | files with a match | kept by min/max | kept | extra | plan (median) | "
            "requests | goal |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
        ]
        for r in table["summary"]:
            goal = "" if r["kind"] == "absent id" else ("pass" if r["pass"] else "FAIL")
            lines.append(
                f"| `{r['kind']}` | {r['holding']:.1f} | {r['after_stats']:.1f} | "
                f"{r['kept']:.1f} | {100 * r['extra_share']:.1f} pt | {r['plan_ms']:.0f} ms | "
                f"{r['requests']:.0f} | {goal} |"
            )
        lines.append("")
    lines += [
        f"The write of the same {payload['rows']:,} rows into {payload['files']} files, best of "
        f"{payload['repeat']} each, alternated: {writes['without']:.1f} s without filters, "
        f"{writes['with']:.1f} s with: **{ratio:.2f}x** (goal at most {WRITE_RATIO_GOAL}x: "
        f"**{'pass' if ratio <= WRITE_RATIO_GOAL else 'FAIL'}**).",
        "",
        measured_on(payload["machine"]),
    ]
    return "\n".join(lines)


def stage(spark: SparkSession, path: str, wheres: list[tuple[str, str]]) -> dict[str, Any]:
    carrying, files = files_with_filters(path)
    results = judged(spark, path, wheres)
    summary = summarized(results)
    return {"files": files, "carrying": carrying, "lookups": results, "summary": summary}


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--files", type=int, default=50)
    parser.add_argument("--per-kind", type=int, default=10)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--write-markdown", action="store_true", help="update BENCHMARKS.md")
    args = parser.parse_args(argv)
    spark = user_session("zorder-bench-blooms")
    with tempfile.TemporaryDirectory(prefix="zorder-blooms-") as tmp:
        source = str(Path(tmp) / "events.parquet")
        events(spark, args.rows).write.parquet(source)  # the same rows for every write
        write_s = timed_writes(spark, source, Path(tmp), args.files, args.repeat)
        path = str(Path(tmp) / "events")
        zorder.write(
            spark.read.parquet(source), path, by=BY, num_files=args.files, bloom_filters=[BLOOM]
        )
        wheres = lookups(spark, path, args.per_kind, seed=1)
        stages = {"written": stage(spark, path, wheres)}
        more = events(spark, args.rows // 10, start=args.rows, seed=50)
        zorder.write(more, path, mode="append")
        zorder.optimize(spark, path, full=True, num_files=args.files)
        stages["after an append and a full optimize"] = stage(spark, path, wheres)
    payload = {
        "command": command_line(__spec__.name, argv),
        "machine": machine_facts(),
        "rows": args.rows,
        "files": args.files,
        "per_kind": args.per_kind,
        "repeat": args.repeat,
        "write_s": write_s,
        "stages": stages,
    }
    text = markdown(payload)
    print(text)
    if args.write_markdown:
        write_json("blooms", payload)
        replace_section("blooms", text)
    return payload


if __name__ == "__main__":
    main()
