"""An analyst's filters on an events table: strings and time functions, ANSI off and on.

Issue 57's pipeline as users run it: a session built with
``SparkSession.builder`` with ANSI mode off (Spark 3.5's default, which many
keep on 4.x) and the session zone ``America/New_York``, an events table of
``--rows`` rows over eight days around New York's DST change, clustered by
``zorder.write`` on ``(ts, user_id)`` into ``--files`` files. Every filter
is planned by ``zorder.explain`` in the session's meaning:

- written with strings (``ts >= '2026-11-02 10:00:00'``), as analysts write
  them, beside its typed twin (``ts >= TIMESTAMP '2026-11-02 10:00:00'``),
  with ANSI off and on: Spark casts the string to the column's type, so the
  two mean the same rows, and must keep the same files;
- written with time functions (``date_trunc``, ``to_date``, ``hour``)
  beside the range of ``ts`` it stands for, where one exists.

Each filter's rows are counted three times, and must agree: by Spark over
the whole table (plain Parquet, no skipping), by ``zorder.read`` (Spark over
the files kept) and by ``zorder.to_arrow`` (pyarrow over the files kept, in
the session's zone and ANSI meaning).

    .venv/bin/python -m benchmarks.analyst --write-markdown
"""

from __future__ import annotations

import argparse
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyspark
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

import zorder
from benchmarks.report import command_line, machine_facts, measured_on, replace_section, write_json
from benchmarks.session import user_session
from zorder.errors import BenchmarkError, UnsupportedFilterError

ZONE = "America/New_York"
START = "2026-10-29 00:00:00"  # New York's clocks go back at 02:00 on 2026-11-01
DAYS = 8
USERS = 100_000
BY = ("ts", "user_id")


@dataclass(frozen=True)
class Filter:
    """One filter as an analyst writes it, and the typed range it means (None: none)."""

    name: str
    written: str
    typed: str | None


FILTERS = (
    Filter(
        "an hour, as strings",
        "ts >= '2026-11-02 10:00:00' AND ts < '2026-11-02 11:00:00'",
        "ts >= TIMESTAMP'2026-11-02 10:00:00' AND ts < TIMESTAMP'2026-11-02 11:00:00'",
    ),
    Filter(
        "the hour New York lives twice",
        "ts >= '2026-11-01 01:00:00' AND ts < '2026-11-01 02:00:00'",
        "ts >= TIMESTAMP'2026-11-01 01:00:00' AND ts < TIMESTAMP'2026-11-01 02:00:00'",
    ),
    Filter(
        "a morning, date and timestamp strings",
        "ts BETWEEN '2026-11-03' AND '2026-11-03 06:00:00'",
        "ts BETWEEN TIMESTAMP'2026-11-03 00:00:00' AND TIMESTAMP'2026-11-03 06:00:00'",
    ),
    Filter(
        "ISO strings with offsets",
        "ts >= '2026-11-02T10:00:00-05:00' AND ts < '2026-11-02T11:00:00-05:00'",
        "ts >= TIMESTAMP'2026-11-02 15:00:00Z' AND ts < TIMESTAMP'2026-11-02 16:00:00Z'",
    ),
    Filter(
        "a user since a day, both as strings",
        "user_id = '4242' AND ts >= '2026-11-04'",
        "user_id = 4242 AND ts >= TIMESTAMP'2026-11-04 00:00:00'",
    ),
    Filter(
        "date_trunc to the hour",
        "date_trunc('HOUR', ts) = TIMESTAMP'2026-11-02 10:00:00'",
        "ts >= TIMESTAMP'2026-11-02 10:00:00' AND ts < TIMESTAMP'2026-11-02 11:00:00'",
    ),
    Filter(
        "to_date of a day",
        "to_date(ts) = DATE'2026-11-03'",
        "ts >= TIMESTAMP'2026-11-03 00:00:00' AND ts < TIMESTAMP'2026-11-04 00:00:00'",
    ),
    Filter(
        "CAST AS DATE between date strings",
        "CAST(ts AS DATE) BETWEEN '2026-11-03' AND '2026-11-04'",
        "ts >= TIMESTAMP'2026-11-03 00:00:00' AND ts < TIMESTAMP'2026-11-05 00:00:00'",
    ),
    Filter("hour of the day (bounded per file)", "hour(ts) = 10", None),
)


def events(spark: SparkSession, rows: int, seed: int) -> DataFrame:
    """``rows`` events spread uniformly over DAYS days from START (in the session's zone)."""
    start = F.unix_timestamp(F.lit(START))
    seconds = F.floor(F.rand(seed) * DAYS * 86_400)
    return spark.range(rows).select(
        F.timestamp_seconds(start + seconds).alias("ts"),
        F.floor(F.rand(seed + 1) * USERS).cast("int").alias("user_id"),
        F.round(F.rand(seed + 2) * 500, 2).cast("decimal(10,2)").alias("amount"),
        F.concat(F.lit("event-"), (F.col("id") % 17).cast("string")).alias("kind"),
    )


def measure(
    spark: SparkSession, path: str, plain: DataFrame, where: str, ansi: bool
) -> dict[str, Any]:
    """The files and rows ``where`` keeps, planned in the session's meaning, and its rows
    counted three ways (which must agree)."""
    spark.conf.set("spark.sql.ansi.enabled", str(ansi).lower())
    planned = time.perf_counter()
    report = zorder.explain(path, where, spark=spark)
    seconds = time.perf_counter() - planned
    matching = plain.where(where).count()
    read = zorder.read(spark, path, where).count()
    try:
        arrow: int | None = zorder.to_arrow(path, where, ansi=ansi, time_zone=ZONE).num_rows
    except UnsupportedFilterError:
        arrow = None  # to_arrow refuses what it cannot answer in this meaning; read() answers
    if matching != read or arrow not in (None, matching):
        raise BenchmarkError(
            f"{where} (ANSI {'on' if ansi else 'off'}): Spark counts {matching} rows over the "
            f"whole table, zorder.read {read}, zorder.to_arrow {arrow}"
        )
    return {
        "files_total": report.files_total,
        "files_scanned": report.files_scanned,
        "rows_total": report.rows_total,
        "rows_scanned": report.rows_scanned,
        "matching_rows": matching,
        "planning_seconds": seconds,
        "planned": report.planned,
        "to_arrow": "refused" if arrow is None else "answered",
    }


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--files", type=int, default=80)
    parser.add_argument("--seed", type=int, default=57)
    parser.add_argument("--write-markdown", action="store_true", help="update BENCHMARKS.md")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    spark = user_session(
        "zorder-bench-analyst",
        conf={"spark.sql.ansi.enabled": "false", "spark.sql.session.timeZone": ZONE},
    )
    results = []
    with tempfile.TemporaryDirectory(prefix="zorder-analyst-") as tmp:
        path = str(Path(tmp) / "events")
        written = zorder.write(
            events(spark, args.rows, args.seed), path, by=list(BY), num_files=args.files
        )
        plain = spark.read.parquet(*(f"{path}/{f.path}" for f in zorder.describe(path).files))
        for item in FILTERS:
            result: dict[str, Any] = {
                "name": item.name,
                "written": item.written,
                "typed": item.typed,
            }
            for ansi in (False, True):
                mode = "on" if ansi else "off"
                result[f"written {mode}"] = measure(spark, path, plain, item.written, ansi)
                if item.typed is not None:
                    typed = measure(spark, path, plain, item.typed, ansi)
                    result[f"typed {mode}"] = typed
                    if typed["matching_rows"] != result[f"written {mode}"]["matching_rows"]:
                        raise BenchmarkError(f"{item.written} and {item.typed} are no twins")
            results.append(result)
        spark.conf.set("spark.sql.ansi.enabled", "false")
    payload = {
        "command": command_line(__spec__.name, argv),
        "machine": machine_facts(),
        "pyspark": pyspark.__version__,
        "rows": args.rows,
        "files": written.files_added,
        "seed": args.seed,
        "write_seconds": written.seconds,
        "seconds": time.perf_counter() - started,
        "results": results,
    }
    text = markdown(payload)
    print(text)
    if args.write_markdown:
        write_json("analyst", payload)
        replace_section("analyst", text)
    spark.stop()
    return payload


def _kept(plan: dict[str, Any]) -> str:
    rows = plan["rows_scanned"] / plan["rows_total"]
    return f"{plan['files_scanned']}/{plan['files_total']} ({rows:.1%})"


def markdown(payload: dict[str, Any]) -> str:
    results = payload["results"]
    lines = [
        "## An analyst's filters: strings and time functions, ANSI off and on",
        "",
        f"`{payload['command']}`",
        "",
        f"{payload['rows']:,} events over {DAYS} days from {START} in {ZONE} (New York's "
        f"clocks go back on 2026-11-01), written by `zorder.write` clustered by "
        f"{', '.join(BY)} into {payload['files']} files ({payload['write_seconds']:.0f} s), "
        f"read by a session built with `SparkSession.builder` (pyspark {payload['pyspark']}) "
        f"with `spark.sql.ansi.enabled=false` and `spark.sql.session.timeZone={ZONE}`. Each "
        "filter planned by `zorder.explain` in the session's meaning, ANSI off and then on; "
        "each cell: files kept of the table's (rows in them). *Typed twin*: the same rows "
        "written with `TIMESTAMP`/`DATE` literals, or the range of `ts` a time function "
        "stands for.",
        "",
        "| filter | as written | matching rows | ANSI off: written | ANSI off: typed twin "
        "| ANSI on: written | ANSI on: typed twin |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in results:
        twin = ("typed off", "typed on")
        cells = [_kept(r["written off"]), *(_kept(r[t]) if t in r else "—" for t in twin[:1])]
        cells += [_kept(r["written on"]), *(_kept(r[t]) if t in r else "—" for t in twin[1:])]
        written = r["written"].replace("|", "\\|")
        lines.append(
            f"| {r['name']} | `{written}` | {r['written off']['matching_rows']:,} | "
            + " | ".join(cells)
            + " |"
        )
    twins = [r for r in results if r["typed"] is not None]
    same = sum(
        r[f"written {m}"]["files_scanned"] == r[f"typed {m}"]["files_scanned"]
        for r in twins
        for m in ("off", "on")
    )
    skipped = [
        1 - r["written off"]["files_scanned"] / r["written off"]["files_total"] for r in results
    ]
    planning = [r[f"written {m}"]["planning_seconds"] for r in results for m in ("off", "on")]
    refused = [
        f"`{r['written']}` (ANSI {m})"
        for r in results
        for m in ("off", "on")
        if r[f"written {m}"]["to_arrow"] == "refused"
    ]
    lines += [
        "",
        f"Of the {len(twins) * 2} plans with a twin, {same} keep exactly the twin's files. "
        f"With ANSI off, the filters as written skip {min(skipped):.0%} to {max(skipped):.0%} "
        "of the files. Every filter's "
        "rows were counted three times and agreed: Spark over the whole table, `zorder.read` "
        "over the files kept, and `zorder.to_arrow` in the session's zone and mode"
        + (
            f" (which refused {', '.join(refused)}: it names what it cannot answer)"
            if refused
            else ""
        )
        + ". Planning "
        f"took {min(planning) * 1000:.0f} to {max(planning) * 1000:.0f} ms a filter; "
        f"{payload['seconds']:.0f} s in all. " + measured_on(payload["machine"]),
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
