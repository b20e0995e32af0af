"""The benchmarks run at tiny scale in the suite, so that they cannot rot."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest
from benchmarks import curves, report


def test_curves_benchmark_smoke() -> None:
    payload = curves.main(["--points", "3000", "--scalar-points", "300", "--repeat", "1"])
    for name in ("zorder", "hilbert"):
        row = payload["results"][name]
        assert row["scalar_points_per_s"] > 0
        assert row["speedup"] == row["vectorized_points_per_s"] / row["scalar_points_per_s"]
    assert "| zorder |" in curves.markdown(payload)
    for name in ("src_port", "src_ip"):  # main() raised had the counts differed
        assert payload["search"][name]["guided_keys_per_s"] > 0
    assert "| src_ip |" in curves.markdown(payload)


def test_the_command_line_names_the_module_whatever_ran_it(monkeypatch: pytest.MonkeyPatch) -> None:
    # A virtualenv outside the repository runs pytest from elsewhere: sys.argv[0] says nothing.
    monkeypatch.setattr("sys.argv", ["/opt/venvs/zorder/bin/pytest", "-q"])
    assert report.command_line("benchmarks.reads", ["--rows", "5"]) == (
        ".venv/bin/python -m benchmarks.reads --rows 5"
    )
    assert report.command_line("benchmarks.reads") == ".venv/bin/python -m benchmarks.reads -q"


def test_replace_section_keeps_other_sections(tmp_path: Path) -> None:
    md = tmp_path / "B.md"
    report.replace_section("a", "first", md)
    report.replace_section("b", "second", md)
    report.replace_section("a", "third", md)
    text = md.read_text()
    assert "third" in text
    assert "second" in text
    assert "first" not in text
    assert text.index("third") < text.index("second")


@pytest.mark.spark
def test_layout_benchmark_smoke(spark: object) -> None:
    from benchmarks import layout

    payload = layout.main(["--rows", "3000", "--files", "8", "--filters", "10"])
    network = {row["layout"]: row for row in payload["results"]["network"]}
    assert set(network) >= {
        "as written",
        "linear",
        "zorder",
        "hilbert",
        "delta-rs optimize.z_order",
    }
    for row in network.values():
        assert 0.0 <= row["mean"] <= 1.0
        assert row["files"] >= 1
    # Even at this size clustering beats the unclustered table by far.
    assert network["hilbert"]["mean"] > network["as written"]["mean"] + 0.2
    assert "### prefixes" in layout.markdown(payload)


@pytest.mark.spark
def test_reads_benchmark_smoke(spark: object) -> None:
    from benchmarks import reads

    payload = reads.main(
        ["--log-files", "300", "--rows", "5000", "--files", "6", "--queries", "2", "--repeat", "1"]
    )
    assert payload["planning"]["files"] == 300
    assert payload["planning"]["files_kept"] < 300
    for query in payload["lookups"]["queries"]:
        assert query["files_scanned"] >= 1
        assert 0.0 < query["rows_fraction"] <= 1.0
    assert "Point lookups" in reads.markdown(payload)


@pytest.mark.spark
def test_product_benchmark_smoke(spark: object) -> None:
    from benchmarks import product
    from benchmarks.product import bench_markdown

    from zorder.bench import BenchConfig

    tiny = BenchConfig(
        files=6, layout_rows_per_file=(300,), cost_rows=(1_800,), filters=4, lookups=1, repeat=2
    )
    payload = product.main([], config=tiny)
    layouts = {row["layout"]: row for row in payload["layout"]["1800"]}
    assert set(layouts) == {
        "as written",
        "linear",
        "zorder",
        "zorder (src_ip, dst_ip)",
        "hilbert",
        "delta-rs optimize.z_order",
    }
    for row in layouts.values():
        for kind in ("sampled", "random"):
            assert 0.0 <= row[kind]["mean"] <= 1.0
    assert layouts["zorder"]["sampled"]["mean"] > layouts["as written"]["sampled"]["mean"]
    costs = {row["contender"]: row for row in payload["cost"]["1800"]}
    assert set(costs) == {"zorder", "hilbert", "plain sort by src_ip", "delta-rs optimize.z_order"}
    assert all(row["seconds"] > 0 and row["runs"] == 2 for row in costs.values())
    assert costs["delta-rs optimize.z_order"]["peak_mib"]["delta-rs process"] > 0
    assert payload["reads"]["queries"][0]["files_total"] == 6
    text = bench_markdown(payload)
    assert "### Cost of clustering" in text
    assert "| 1,800 | zorder |" in text
    assert "- 1,800 rows: zorder / plain sort" in text
    # The targets hold from 1M rows on (delta-rs's at 10M); below, ratios without a verdict.
    assert "(no target below 1,000,000 rows)" in text
    assert "target <=" not in text
    at_scale = {
        **payload,
        "cost": {"1000000": payload["cost"]["1800"], "10000000": payload["cost"]["1800"]},
    }
    verdicts = [line for line in bench_markdown(at_scale).splitlines() if " rows: zorder" in line]
    assert len(verdicts) == 2
    assert all("zorder / plain sort" in v and "(target <= 1.15): " in v for v in verdicts)
    assert "zorder / delta-rs" in verdicts[0]
    assert "(target <= 1.00)" not in verdicts[0]
    assert "(target <= 1.00): " in verdicts[1]


@pytest.mark.spark
def test_partitions_benchmark_smoke(spark: object) -> None:
    import inspect

    from benchmarks import partitions

    import zorder

    # The engine keyword (issue 50) where the API has it, else optimize as it is.
    engine = "auto" if "engine" in inspect.signature(zorder.optimize).parameters else "none"
    name = partitions.zorder_name(engine)
    arguments = "--days 4 --rows-per-day 3000 4000 --appends 2 --files-per-day 3 --filters 4"
    payload = partitions.main([*arguments.split(), "--repeat", "1", "--engine", engine])
    assert [(scale["data"], scale["rows_per_day"]) for scale in payload["scales"]] == [
        ("random", 3000),
        ("network", 3000),
        ("random", 4000),
        ("network", 4000),
    ]
    for scale in payload["scales"]:
        assert scale["bytes_rewritten"] == {name: scale["bytes_of_chosen_days"]}
        assert set(scale["seconds"]) == {name, "delta-rs", partitions.WHOLE}
        assert [row["day"] for row in scale["quality"][name]] == scale["chosen"]
        assert all(row["files"] == 3 for row in scale["quality"][name])
    text = partitions.markdown(payload)
    assert text.count("nothing else touched") == 4
    assert text.count(f"| 4,000 | {name} |") == 6
    assert "| i64 | f64 | hex16 | i32 |" in text


def test_random_rows_are_uniform_and_the_same_on_every_call() -> None:
    from benchmarks import partitions

    rows = partitions.random_rows(5000, seed=3)
    assert rows.column_names == list(partitions.RANDOM_COLUMNS)
    assert rows.equals(partitions.random_rows(5000, seed=3))
    assert {len(v) for v in rows.column("hex16").to_pylist()} == {16}
    assert all(set(v) <= set("0123456789abcdef") for v in rows.column("hex16").to_pylist())
    assert str(rows.schema.field("i32").type) == "int32"
    assert 0.4 < sum(rows.column("f64").to_pylist()) / 5000 < 0.6


def test_a_cold_run_counts_the_memory_of_the_processes_it_starts() -> None:
    import sys

    from benchmarks.processes import ColdRunError, gnu_time, run_cold

    # The child holds 200 MiB for a second while its parent holds 100 MiB.
    held = "import time; held = b'x' * (200 * 2**20); time.sleep(1.0)"
    script = (
        "import subprocess, sys\n"
        f"child = subprocess.Popen([sys.executable, '-c', {held!r}])\n"
        "held = b'x' * (100 * 2**20)\n"
        "child.wait()\n"
        "print('done')\n"
    )
    run = run_cold([sys.executable, "-c", script])
    assert run.stdout == "done\n"
    assert run.seconds >= 1.0
    assert run.processes == (3 if gnu_time() else 2)  # GNU time, the script, its child
    assert run.tree_peak_mib > 290  # both at once
    assert 200 < run.largest_process_mib < 290  # the larger of the two
    assert run.peaks_sum_mib > 290
    assert run.peak_mib == max(run.tree_peak_mib, run.largest_process_mib)
    if gnu_time():  # the script's own peak, exactly; its child's, waited for, is the larger
        assert run.command_peak_mib == pytest.approx(run.largest_process_mib, abs=5)
    with pytest.raises(ColdRunError, match="exited with 3"):
        run_cold([sys.executable, "-c", "raise SystemExit(3)"])


@pytest.mark.spark
def test_cold_benchmark_smoke() -> None:
    from benchmarks import cold

    # The default engine where the command takes --engine (issue 50), else the command as it is.
    engine = "auto" if cold.cli_has_engine() else cold.NO_FLAG
    name = cold.contender_name(engine)
    payload = cold.main(["--sizes", "2000", "--engines", engine, "--lookups", "2", "--no-warm-up"])
    (size,) = payload["sizes"]
    for operation in cold.OPERATIONS:
        assert set(size[operation]) == {name, "delta-rs"}
        for found in size[operation].values():
            assert found["rows_ok"]
            assert found["seconds"] > 0
            assert found["tree_peak_mib"] > 0
        assert size[operation][name]["check"]["files"] == cold.NUM_FILES
    text = cold.markdown(payload)
    figures = [line for line in text.splitlines() if line.startswith("| 2,000 | ")]
    assert len(figures) == len(cold.OPERATIONS)  # a table each, a row a size
    for operation in cold.OPERATIONS:
        assert text.count(f"| {operation} | 2,000 | {name} | 20 |") == 1
    assert "goal at most 4 s" not in text  # judged at 200,000 rows only


@pytest.mark.spark
def test_growth_benchmark_smoke(spark: object) -> None:
    from benchmarks import growth

    arguments = "--base-rows 3200 --base-files 8 --appends 4 --filters 3 --rounds 1"
    payload = growth.main(arguments.split())
    steps = payload["contenders"]["zorder incremental"]
    assert [s["append"] for s in steps] == ["zorder", "delta-rs", "zorder", "delta-rs"]
    assert all(s["bytes_appended"] > 0 for s in steps)
    full = payload["contenders"]["zorder full"]
    assert growth.amplification(full) > growth.amplification(steps)
    text = growth.markdown(payload)
    assert text.count("| zorder |") == 2
    assert "write amplification" in text


@pytest.mark.spark
def test_phases_benchmark_smoke(spark: object) -> None:
    from benchmarks import phases

    payload = phases.main(["--rows", "3000", "--files", "3", "--repeat", "1"])
    best = payload["scales"][0]["best"]
    assert set(best) == {"zorder", "hilbert", "plain sort"}
    for name in ("zorder", "hilbert"):
        seen = best[name]["phases"]
        assert {"sampling", "clustering and writing", "commit"} <= set(seen)
        assert sum(seen.values()) == pytest.approx(best[name]["seconds"], rel=0.2)
    assert set(payload["scales"][0]["first"]) == set(best)
    text = phases.markdown(payload)
    assert text.count("| 3,000 | 3 |") == 3


def test_tpch_draws_follow_the_spec_and_both_spellings_select_the_same_rows(
    tmp_path: Path,
) -> None:
    import duckdb
    from benchmarks import tpch_filters

    drawn = tpch_filters.draws(seed=7, count=40)
    assert drawn == tpch_filters.draws(seed=7, count=40)  # seeded
    by_query: dict[str, list[tpch_filters.Draw]] = {}
    for draw in drawn:
        by_query.setdefault(draw.query, []).append(draw)
    assert list(by_query) == list(tpch_filters.QUERIES)
    assert len(by_query["Q7"]) == len(by_query["Q10"]) == 1  # no parameter on lineitem
    assert {int(d.parameters) for d in by_query["Q1"]} <= set(range(60, 121))
    assert {d.parameters[:7] for d in by_query["Q3"]} == {"1995-03"}
    for draw in by_query["Q6"]:
        year, discount, quantity = draw.parameters.split(", ")
        assert 1993 <= int(year) <= 1997
        assert "0.02" <= discount <= "0.09"
        assert quantity in {"24", "25"}
    assert all("1993-01" <= d.parameters <= "1997-12" for d in by_query["Q14"])
    assert all("1993-01" <= d.parameters <= "1997-10" for d in by_query["Q15"])
    q12 = by_query["Q12"][0]
    assert "interval '1' year" in q12.spec
    assert "interval" not in q12.computed
    assert "- 0.01" in by_query["Q6"][0].spec
    # The spellings differ where the spec has arithmetic, and mean the same rows: DuckDB's count.
    parquet = tmp_path / "lineitem.parquet"
    rows = tpch_filters.generate_lineitem(0.01, parquet)
    assert rows > 50_000
    con = duckdb.connect()
    for draw in drawn[::3]:
        spec = tpch_filters.duckdb_count(con, parquet, draw.spec)
        assert spec == tpch_filters.duckdb_count(con, parquet, draw.computed), draw


@pytest.mark.spark
def test_tpch_filters_benchmark_smoke(spark: object) -> None:
    from benchmarks import tpch_filters

    payload = tpch_filters.main(["--scale", "0.01", "--files", "8", "--draws", "1"])
    assert payload["rows"] > 50_000
    assert [r["query"] for r in payload["results"]] == list(tpch_filters.QUERIES)
    for result in payload["results"]:  # main() raised had a plan lost a matching row
        zordered, plain = result["plans"]["zorder"], result["plans"]["plain"]
        assert zordered["computed"]["files_total"] == plain["computed"]["files_total"] == 8
        assert zordered["computed"]["files_scanned"] <= zordered["spec"]["files_scanned"]
        if result["spec"] == result["computed"]:
            assert zordered["spec"] == zordered["computed"]
    mean = payload["summary"]["mean"]
    assert mean["zorder computed rows"] < mean["plain computed rows"]
    assert "| **mean** |" in tpch_filters.markdown(payload)


def test_advise_workload_draws_the_templates_alike_from_the_spec_domains(tmp_path: Path) -> None:
    import duckdb
    from benchmarks import advise, tpch_filters

    parquet = tmp_path / "lineitem.parquet"
    tpch_filters.generate_lineitem(0.01, parquet)
    con = duckdb.connect()
    keys = advise.key_domain(con, parquet, 0.01)
    assert (keys.parts, keys.suppliers) == (2_000, 100)
    draw_a, draw_b = advise.draw_workload(33, 240, keys), advise.draw_workload(34, 240, keys)
    assert draw_a == advise.draw_workload(33, 240, keys)  # seeded
    assert Counter(f.template for f in draw_a) == dict.fromkeys(advise.TEMPLATES, 16)
    assert [f.template for f in draw_a] == [f.template for f in draw_b]  # round robin
    # Same templates, other parameters: only those without any repeat their text.
    differing = {a.template for a, b in zip(draw_a, draw_b, strict=True) if a.where != b.where}
    assert differing == set(advise.TEMPLATES) - {"Q4", "Q7", "Q10"}
    assert {f.where for f in draw_a if f.template == "Q4"} == {"l_commitdate < l_receiptdate"}
    lookups = [f for f in draw_a + draw_b if f.template in advise.LOOKUPS]
    orders = set(keys.order_keys)
    for lookup in lookups:
        found = re.fullmatch(r"(l_\w+) (?:= (\d+)|between (\d+) and (\d+))", lookup.where)
        assert found, lookup
        column, equal, low, high = found.groups()
        key = int(equal or low)
        if column == "l_orderkey":
            assert key in orders  # dbgen's keys are sparse: drawn from the data
            assert high is None or int(high) == key + advise.ORDER_RANGE
            assert tpch_filters.duckdb_count(con, parquet, lookup.where) >= 1
        else:
            assert 1 <= key <= (keys.parts if column == "l_partkey" else keys.suppliers)
    for where in {f.where for f in draw_a + draw_b}:  # every text parses as DuckDB SQL too
        tpch_filters.duckdb_count(con, parquet, where)


@pytest.mark.spark
def test_advise_benchmark_smoke(spark: object) -> None:
    from benchmarks import advise

    arguments = "--scale 0.01 --files 6 --filters 30 --layouts zorder9"
    payload = advise.main(arguments.split())  # raised had a kept file missed a matching row
    scanned = payload["summary"]["rows_scanned"]
    plain = (
        {advise.PLAIN}
        if payload["advice"]["blooms"] and "bloom" in payload["advice"]["spec"]
        else set()
    )
    assert set(scanned) == {"as_generated", "zorder9", "advised", *plain}
    assert all(0.0 < fraction <= 1.0 for fraction in scanned.values())
    assert scanned["advised"] < scanned["as_generated"]
    assert all(written["files"] == 6 for written in payload["written"].values())
    assert payload["advice"]["candidates"]
    assert payload["seconds"]["advise"] > 0
    text = advise.markdown(payload)
    assert "| **advised** | 6 |" in text
    assert "not judged, the target (under 60 s) is for SF 0.5" in text
    assert "not judged, the targets are for SF 0.3 with 40 files" in text


@pytest.mark.spark
def test_blooms_benchmark_smoke(spark: object) -> None:
    from benchmarks import blooms

    payload = blooms.main(["--rows", "20000", "--files", "6", "--per-kind", "2", "--repeat", "1"])
    for stage in payload["stages"].values():  # main() raised had a read lost or doubled a row
        assert stage["carrying"] == stage["files"] == 6
        for lookup in stage["lookups"]:
            assert lookup["files_holding"] <= lookup["files_kept"] <= lookup["files_after_stats"]
        absent = [r for r in stage["lookups"] if r["kind"] == "absent id"]
        assert all(r["files_kept"] <= 1 for r in absent)  # 1% false positives a file
    assert "| `session_id = X` |" in blooms.markdown(payload)


@pytest.mark.spark
def test_against_delta_benchmark_smoke(delta: object) -> None:
    from benchmarks import against_delta

    arguments = (
        "--cases network-1m partitioned --rows-1m 4000 --files-1m 4 --day-rows 1000 "
        "--files-day 2 --seeds 3 --rounds 1 --values 2 --growth-rows 4000 --growth-files 4 "
        "--growth-appends 2 --growth-fraction 0.05"
    )
    payload = against_delta.main(arguments.split())  # raised had the layouts' counts differed
    network, partitioned = payload["clustering"]
    for result in (network, partitioned):
        assert set(result["best"]) == {
            against_delta.DELTA,
            against_delta.ZORDER,
            against_delta.ZORDER_SPARK,
        }
        for best in result["best"].values():
            assert min(best[k] for k in ("bytes_removed", "bytes_added", "jvm_heap", "python_rss"))
    assert network["best"][against_delta.DELTA]["bytes_removed"] == network["bytes_optimized"]
    # One day of ten optimized: the bytes read are that day's, by both.
    day = partitioned["bytes_optimized"]
    assert all(b["bytes_removed"] == day for b in partitioned["best"].values())
    assert set(network["skipping"][against_delta.ZORDER]) == {
        f"{c} = v" for c in ("src_ip", "dst_ip", "src_port", "dst_port")
    }
    (growth,) = payload["growth"]
    steps = growth["steps"]
    assert all(s["bytes_appended"] > 0 for s in steps[against_delta.LIQUID])
    # Liquid reclusters the whole table after each append; zorder rewrites about the append.
    liquid = against_delta.amplification(steps[against_delta.LIQUID])
    assert liquid > 5 * against_delta.amplification(steps["zorder hilbert"])
    # The size the first optimize recorded holds: the table stays in files a filter can skip.
    assert all(s["skipped"] > 0 for s in steps["zorder zorder"])
    text = against_delta.markdown(payload)
    assert text.count("| network-1m | 3 | 4,000 | 4 |") == 3
    assert "Growth, seed 3, zorder zorder" in text
