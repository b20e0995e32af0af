"""TPC-H lineitem filters: files kept for the spec's own text against its constants computed.

TPC-H's queries write their constants as expressions: Q1's
``date '1998-12-01' - interval '[DELTA]' day``, Q6's
``date '[DATE]' + interval '1' year`` and ``[DISCOUNT] - 0.01``, Q19's
``[QUANTITY] + 10``. A planner that cannot evaluate them keeps every file
for those terms. This benchmark measures that gap on the ``lineitem`` table:

- ``lineitem`` is generated offline by DuckDB's tpch extension (the
  ``duckdb-extension-tpch`` wheel) at ``--scale`` and exported to Parquet;
- Spark writes it twice into ``--files`` files: Z-ordered by
  ``zorder.write`` on the columns the filters use (``--by``), and ordered by
  ``l_orderkey`` as dbgen generates it (``curve="linear"``), the reference;
- every TPC-H query with a constant lineitem predicate is drawn ``--draws``
  times with its substitution parameters chosen as the spec's clause 2.4
  prescribes (seeded by ``--seed``), and planned by ``zorder.scan`` twice:
  in the spec's own text, and with the constants computed here in Python;
- the spellings are checked to mean the same rows: DuckDB counts both over
  the Parquet file, and ``zorder.to_arrow`` (which reads only the files the
  plan keeps) must count the same on both tables wherever it answers.

    .venv/bin/python -m benchmarks.tpch_filters --write-markdown
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import duckdb
from pyspark.sql import SparkSession

import zorder
from benchmarks.report import command_line, machine_facts, measured_on, replace_section, write_json
from benchmarks.session import user_session
from zorder.errors import BenchmarkError, UnsupportedFilterError

# Q6 filters all three; l_shipdate is in seven of the ten queries. l_receiptdate (Q12) is
# l_shipdate plus 1 to 30 days, so files cut by l_shipdate bound it too, and a fourth
# dimension would only coarsen the other three.
BY = ("l_shipdate", "l_discount", "l_quantity")
# Clause 4.2.2.13's Modes, from which Q12 draws two.
SHIP_MODES = ("REG AIR", "AIR", "RAIL", "SHIP", "TRUCK", "MAIL", "FOB")
# Queries whose lineitem predicate holds no constant (column against column, a subquery, a
# HAVING) or that filter other tables only: nothing here for file statistics to decide.
LEFT_OUT = (
    "Q4 and Q21 (`l_commitdate < l_receiptdate`: column against column), Q17 (`l_quantity` "
    "against a subquery), Q18 (a HAVING on a sum); Q2, Q5, Q8, Q9, Q11, Q13, Q16, Q22 filter "
    "other tables only"
)
LAYOUTS = ("zorder", "plain")


@dataclass(frozen=True)
class Draw:
    """One query's lineitem predicate for one draw of its parameters, spelled both ways."""

    query: str
    parameters: str  # the substitution parameters drawn, as shown in the table
    spec: str  # the spec's own text with the parameters substituted
    computed: str  # the same predicate with every constant expression evaluated


def _add_months(day: date, months: int) -> date:
    index = day.year * 12 + day.month - 1 + months
    return date(index // 12, index % 12 + 1, day.day)


def _first_of_january(rng: random.Random) -> date:
    return date(rng.randint(1993, 1997), 1, 1)


def _cents(hundredths: int) -> str:
    return f"{hundredths // 100}.{hundredths % 100:02d}"


def q1(rng: random.Random) -> Draw:
    delta = rng.randint(60, 120)
    # The spec's "day (3)" is SQL-92's interval precision, which Spark SQL does not parse.
    return Draw(
        "Q1",
        str(delta),
        f"l_shipdate <= date '1998-12-01' - interval '{delta}' day",
        f"l_shipdate <= date '{date(1998, 12, 1) - timedelta(days=delta)}'",
    )


def q3(rng: random.Random) -> Draw:
    day = date(1995, 3, rng.randint(1, 31))
    text = f"l_shipdate > date '{day}'"
    return Draw("Q3", str(day), text, text)


def q6(rng: random.Random) -> Draw:
    day = _first_of_january(rng)
    discount = rng.randint(2, 9)  # hundredths
    quantity = rng.randint(24, 25)
    return Draw(
        "Q6",
        f"{day.year}, {_cents(discount)}, {quantity}",
        f"l_shipdate >= date '{day}' and l_shipdate < date '{day}' + interval '1' year "
        f"and l_discount between {_cents(discount)} - 0.01 and {_cents(discount)} + 0.01 "
        f"and l_quantity < {quantity}",
        f"l_shipdate >= date '{day}' and l_shipdate < date '{date(day.year + 1, 1, 1)}' "
        f"and l_discount between {_cents(discount - 1)} and {_cents(discount + 1)} "
        f"and l_quantity < {quantity}",
    )


def q7(rng: random.Random) -> Draw:
    text = "l_shipdate between date '1995-01-01' and date '1996-12-31'"
    return Draw("Q7", "fixed", text, text)


def q10(rng: random.Random) -> Draw:
    text = "l_returnflag = 'R'"  # its DATE filters orders only
    return Draw("Q10", "fixed", text, text)


def q12(rng: random.Random) -> Draw:
    first, second = rng.sample(SHIP_MODES, 2)
    day = _first_of_january(rng)
    common = (
        f"l_shipmode in ('{first}', '{second}') and l_commitdate < l_receiptdate "
        f"and l_shipdate < l_commitdate and l_receiptdate >= date '{day}' and l_receiptdate < "
    )
    return Draw(
        "Q12",
        f"{first}, {second}, {day.year}",
        f"{common}date '{day}' + interval '1' year",
        f"{common}date '{date(day.year + 1, 1, 1)}'",
    )


def _month_window(query: str, months: int, day: date) -> Draw:
    return Draw(
        query,
        f"{day:%Y-%m}",
        f"l_shipdate >= date '{day}' and l_shipdate < date '{day}' + interval '{months}' month",
        f"l_shipdate >= date '{day}' and l_shipdate < date '{_add_months(day, months)}'",
    )


def q14(rng: random.Random) -> Draw:
    return _month_window("Q14", 1, date(rng.randint(1993, 1997), rng.randint(1, 12), 1))


def q15(rng: random.Random) -> Draw:
    return _month_window("Q15", 3, _add_months(date(1993, 1, 1), rng.randint(0, 57)))


def q19(rng: random.Random) -> Draw:
    quantities = (rng.randint(1, 10), rng.randint(10, 20), rng.randint(20, 30))
    # The lineitem half of each of the three disjuncts; 'AIR REG' is the spec's (no row has it).
    rest = "l_shipmode in ('AIR', 'AIR REG') and l_shipinstruct = 'DELIVER IN PERSON'"

    def spelled(upper: Callable[[int], str]) -> str:
        return " or ".join(
            f"(l_quantity >= {q} and l_quantity <= {upper(q)} and {rest})" for q in quantities
        )

    return Draw(
        "Q19",
        ", ".join(map(str, quantities)),
        spelled(lambda q: f"{q} + 10"),
        spelled(lambda q: str(q + 10)),
    )


def q20(rng: random.Random) -> Draw:
    day = _first_of_january(rng)
    return Draw(
        "Q20",
        str(day.year),
        f"l_shipdate >= date '{day}' and l_shipdate < date '{day}' + interval '1' year",
        f"l_shipdate >= date '{day}' and l_shipdate < date '{date(day.year + 1, 1, 1)}'",
    )


QUERIES: dict[str, Callable[[random.Random], Draw]] = {
    "Q1": q1,
    "Q3": q3,
    "Q6": q6,
    "Q7": q7,
    "Q10": q10,
    "Q12": q12,
    "Q14": q14,
    "Q15": q15,
    "Q19": q19,
    "Q20": q20,
}


def draws(seed: int, count: int) -> list[Draw]:
    """``count`` draws of each query's parameters (one of a query without any), seeded."""
    drawn: list[Draw] = []
    for number, (name, make) in enumerate(QUERIES.items()):
        rng = random.Random(seed * 1000 + number)  # a query's draws do not shift with others'
        seen: list[Draw] = []
        for _ in range(count):
            draw = make(rng)
            if draw.parameters == "fixed" and seen:
                break
            seen.append(draw)
        drawn += seen
        assert all(d.query == name for d in seen)
    return drawn


def generate_lineitem(scale: float, out: Path) -> int:
    """dbgen's lineitem at ``scale`` into one Parquet file; its row count."""
    import duckdb_extension_tpch

    package = Path(duckdb_extension_tpch.__file__).parent
    con = duckdb.connect()
    con.load_extension(str(next(package.glob("extensions/*/tpch.duckdb_extension"))))
    con.execute(f"CALL dbgen(sf={scale})")
    con.execute(f"COPY lineitem TO '{out}' (FORMAT parquet)")
    rows = con.execute("SELECT count(*) FROM lineitem").fetchone()
    con.close()
    return int(rows[0]) if rows else 0


def duckdb_count(con: duckdb.DuckDBPyConnection, parquet: Path, where: str) -> int:
    found = con.execute(f"SELECT count(*) FROM read_parquet('{parquet}') WHERE {where}").fetchone()
    return int(found[0]) if found else 0


def measure(spark: SparkSession, path: str, where: str) -> dict[str, Any]:
    """What zorder's plan keeps for ``where``, and the rows read from the files it keeps.

    The rows come from ``to_arrow``, or where it refuses the filter before reading
    (arithmetic, a column against a column) from Spark over the same kept files.
    """
    planned = zorder.scan(path, where, columns=["l_orderkey"])
    report = planned.report
    try:
        matched, reader = planned.to_arrow().num_rows, "to_arrow"
    except UnsupportedFilterError:
        matched, reader = planned.to_spark(spark).count(), "spark"
    return {
        "files_scanned": report.files_scanned,
        "files_total": report.files_total,
        "rows_scanned": report.rows_scanned,
        "rows_total": report.rows_total,
        "rows_read": matched,
        "reader": reader,
    }


def check(draw: Draw, counts: dict[str, int], plans: dict[str, dict[str, dict[str, Any]]]) -> None:
    if counts["spec"] != counts["computed"]:
        raise BenchmarkError(
            f"{draw.query} ({draw.parameters}): DuckDB counts {counts['spec']} rows for the "
            f"spec's text and {counts['computed']} for the computed one"
        )
    for layout, spellings in plans.items():
        for spelling, plan in spellings.items():
            if plan["rows_read"] != counts[spelling]:
                raise BenchmarkError(
                    f"{draw.query} ({draw.parameters}), {layout} table, {spelling} text: "
                    f"{plan['reader']} read {plan['rows_read']} matching rows from the files "
                    f"kept, DuckDB counts {counts[spelling]} in all"
                )


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=1.0, help="TPC-H scale factor")
    parser.add_argument("--files", type=int, default=128)
    parser.add_argument("--by", nargs="+", default=list(BY), help="Z-order columns")
    parser.add_argument("--draws", type=int, default=5, help="parameter draws per query")
    parser.add_argument("--seed", type=int, default=2024)
    parser.add_argument("--write-markdown", action="store_true", help="update BENCHMARKS.md")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    seconds: dict[str, float] = {}
    queries = draws(args.seed, args.draws)
    with tempfile.TemporaryDirectory(prefix="zorder-tpch-") as tmp:
        parquet = Path(tmp) / "lineitem.parquet"
        rows = generate_lineitem(args.scale, parquet)
        seconds["generate"] = time.perf_counter() - started
        spark = user_session("zorder-bench-tpch")
        paths = {layout: str(Path(tmp) / layout) for layout in LAYOUTS}
        frame = spark.read.parquet(str(parquet))
        clustered = zorder.write(frame, paths["zorder"], by=args.by, num_files=args.files)
        seconds["write zorder"] = clustered.seconds
        plain = zorder.write(
            frame, paths["plain"], by=["l_orderkey"], curve="linear", num_files=args.files
        )
        seconds["write plain"] = plain.seconds
        measured = time.perf_counter()
        con = duckdb.connect()
        results = []
        for draw in queries:
            counts = {
                "spec": duckdb_count(con, parquet, draw.spec),
                "computed": duckdb_count(con, parquet, draw.computed),
            }
            plans = {
                layout: {
                    "spec": measure(spark, path, draw.spec),
                    "computed": measure(spark, path, draw.computed),
                }
                for layout, path in paths.items()
            }
            check(draw, counts, plans)
            results.append({**draw.__dict__, "matching_rows": counts["computed"], "plans": plans})
        con.close()
        seconds["measure"] = time.perf_counter() - measured
    seconds["total"] = time.perf_counter() - started
    payload = {
        "command": command_line(__spec__.name, argv),
        "machine": machine_facts(),
        "scale": args.scale,
        "rows": rows,
        "files": args.files,
        "by": args.by,
        "draws": args.draws,
        "seed": args.seed,
        "seconds": seconds,
        "results": results,
        "summary": summary(results),
    }
    text = markdown(payload)
    print(text)
    if args.write_markdown:
        write_json("tpch_filters", payload)
        replace_section("tpch-filters", text)
    return payload


def _fraction(plan: dict[str, Any], kind: str) -> float:
    total = plan[f"{kind}_total"]
    return plan[f"{kind}_scanned"] / total if total else 0.0


def summary(results: list[dict[str, Any]]) -> dict[str, Any]:
    """Per query and layout, the mean fraction of files and rows kept for each spelling.

    The overall mean weighs every query alike, whatever its number of draws.
    """
    by_query: dict[str, dict[str, float]] = {}
    for query in dict.fromkeys(r["query"] for r in results):
        mine = [r for r in results if r["query"] == query]
        by_query[query] = {
            "matching_fraction": statistics.fmean(
                r["matching_rows"] / r["plans"]["zorder"]["computed"]["rows_total"] for r in mine
            ),
            **{
                f"{layout} {spelling} {kind}": statistics.fmean(
                    _fraction(r["plans"][layout][spelling], kind) for r in mine
                )
                for layout in LAYOUTS
                for spelling in ("spec", "computed")
                for kind in ("files", "rows")
            },
        }
    keys = next(iter(by_query.values())).keys() if by_query else []
    mean = {key: statistics.fmean(q[key] for q in by_query.values()) for key in keys}
    return {"queries": by_query, "mean": mean}


def markdown(payload: dict[str, Any]) -> str:
    machine, seconds, results = payload["machine"], payload["seconds"], payload["results"]
    queries, mean = payload["summary"]["queries"], payload["summary"]["mean"]
    lines = [
        "## TPC-H lineitem filters: the spec's text against its constants computed",
        "",
        f"`{payload['command']}`",
        "",
        f"TPC-H `lineitem` at scale factor {payload['scale']:g} ({payload['rows']:,} rows, "
        "generated by DuckDB's tpch extension), written by Spark into "
        f"{payload['files']} files twice: Z-ordered by {', '.join(payload['by'])} "
        f"(`zorder.write`, {seconds['write zorder']:.0f} s), and in dbgen's `l_orderkey` order "
        f"(the plain table, {seconds['write plain']:.0f} s). Each query's lineitem predicate, "
        f"its parameters drawn {payload['draws']} times (seed {payload['seed']}) as the spec's "
        "clause 2.4 prescribes, planned by `zorder.scan` in the spec's own text "
        "(`date '1998-12-01' - interval '90' day`, `0.06 - 0.01`, `24 + 10`) and with the "
        "constants computed (`date '1998-09-02'`, `0.05`, `34`). Each cell: the mean fraction "
        "of files, and of rows, the plan keeps; *matching* is the fraction of rows the "
        "predicate selects (the floor for rows).",
        "",
        "| query | parameters drawn | matching | Z-ordered files: spec / computed "
        "| Z-ordered rows: spec / computed | plain files: spec / computed "
        "| plain rows: spec / computed |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
    ]

    def cells(values: dict[str, float]) -> str:
        return " | ".join(
            f"{values[f'{layout} spec {kind}']:.3f} / {values[f'{layout} computed {kind}']:.3f}"
            for layout in LAYOUTS
            for kind in ("files", "rows")
        )

    for query, values in queries.items():
        drawn = "; ".join(r["parameters"] for r in results if r["query"] == query)
        lines.append(f"| {query} | {drawn} | {values['matching_fraction']:.3f} | {cells(values)} |")
    lines.append(f"| **mean** | | {mean['matching_fraction']:.3f} | {cells(mean)} |")
    readers = [
        plan["reader"]
        for r in results
        for spellings in r["plans"].values()
        for plan in spellings.values()
    ]
    gap = {
        layout: mean[f"{layout} spec rows"] - mean[f"{layout} computed rows"] for layout in LAYOUTS
    }
    lines += [
        "",
        f"On the Z-ordered table the spec's text keeps {mean['zorder spec files']:.1%} of the "
        f"files ({mean['zorder spec rows']:.1%} of the rows) on average, the computed "
        f"constants {mean['zorder computed files']:.1%} ({mean['zorder computed rows']:.1%}): "
        f"a gap of {gap['zorder']:.1%} of the table's rows. The plain table keeps "
        f"{mean['plain spec files']:.1%} and {mean['plain computed files']:.1%} of its files: "
        "dbgen gives each order a random date, so `l_orderkey` order spreads every date, "
        "discount and quantity over every file.",
        "",
        f"Both spellings select the same rows: DuckDB counts the same rows for both over the "
        f"Parquet file in each of the {len(results)} draws, and the files each plan keeps hold "
        f"all of them: reading only those files found DuckDB's count in all {len(readers)} "
        f"plans ({readers.count('to_arrow')} read by `Scan.to_arrow`, "
        f"{readers.count('spark')} by `Scan.to_spark` where to_arrow refuses the filter). "
        "Left out: " + LEFT_OUT + ".",
        "",
        f"Generating took {seconds['generate']:.0f} s, planning and checking the draws "
        f"{seconds['measure']:.0f} s; {seconds['total']:.0f} s in all. " + measured_on(machine),
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
