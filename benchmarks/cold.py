"""Cold processes: `zorder optimize` and `zorder write` from launch to exit, beside delta-rs.

Each run is a new process (``benchmarks.processes.run_cold``), timed from its
launch to its exit, with its peak memory: the summed RSS of its process tree
(a Spark driver's JVM and workers included) sampled every 50 ms, or the peak
of its largest process if higher (exact for the command's own process under
GNU time; for a command that starts no process, its peak). At each size
(200k, 1M and 4M network connections by default):

- optimize: a table of four blind appends by ``deltalake.write_deltalake``,
  copied afresh for every run, then
  ``zorder optimize PATH --by src_ip,dst_port --num-files 20 --engine E``
  for each engine E (``--engines``, default auto and spark: Spark as the
  command starts it by default, ``local[*]``), and delta-rs in a cold Python
  process: ``DeltaTable(PATH).optimize.z_order(["src_ip", "dst_port"],
  target_size=...)``, the target calibrated to give about as many files;
- write: the same rows in one Parquet file, then
  ``zorder write SRC.parquet DEST --by src_ip,dst_port --num-files 20 --engine E``,
  and delta-rs in a cold Python process: ``pyarrow.parquet.read_table``,
  ``write_deltalake``, then ``optimize.z_order`` as above. The z_order is
  counted because zorder's write leaves the rows clustered and a bare
  ``write_deltalake`` does not: the comparison is of two ways to the same
  result. The child reports its write and z_order steps apart (in the JSON).

``--engines none`` runs the zorder commands without ``--engine`` (a CLI from
before the option). Every run's result is checked: the rows read back by
delta-rs and by DuckDB equal the input's, and equality lookups on values drawn
from the data (``zorder.explain``) keep at most half the files. Times: the
fastest of ``--repeat`` runs (the later ones in reverse order); memory: the
highest of them. An untimed run of each contender on a small table first puts
the programs' files in the operating system's cache, as after any earlier run.

Goals (issue 50): a cold `zorder optimize` and a cold `zorder write` of 200k
rows (the default engine) within 4 s each; lookups keep at most half the files.

    .venv/bin/python -m benchmarks.cold --write-markdown
"""

from __future__ import annotations

import argparse
import json
import pathlib
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pyarrow.parquet as pq
from deltalake import DeltaTable, write_deltalake

import zorder
from benchmarks.processes import ColdRun, gnu_time, run_cold
from benchmarks.report import command_line, machine_facts, measured_on, replace_section, write_json
from zorder.demo import network_connections
from zorder.skipping.sql import sql_literal

BY = ("src_ip", "dst_port")
NUM_FILES = 20
APPENDS = 4
SEED = 50
GOAL_ROWS = 200_000
GOAL_SECONDS = 4.0
LOOKUP_GOAL = 0.5  # the mean fraction of files an equality lookup keeps, at most
NO_FLAG = "none"  # the zorder commands without --engine
ENGINES = ("auto", "spark", "arrow", NO_FLAG)
OPERATIONS = ("optimize", "write")

DELTA_RS_OPTIMIZE = """\
import json, sys, time
from deltalake import DeltaTable
path, columns, target = sys.argv[1], sys.argv[2].split(","), int(sys.argv[3])
started = time.perf_counter()
DeltaTable(path).optimize.z_order(columns, target_size=target)
print(json.dumps({"z_order_s": time.perf_counter() - started}))
"""

DELTA_RS_WRITE = """\
import json, sys, time
import pyarrow.parquet as pq
from deltalake import DeltaTable, write_deltalake
source, path, columns, target = sys.argv[1], sys.argv[2], sys.argv[3].split(","), int(sys.argv[4])
started = time.perf_counter()
write_deltalake(path, pq.read_table(source))
written = time.perf_counter()
DeltaTable(path).optimize.z_order(columns, target_size=target)
print(json.dumps({"write_s": written - started, "z_order_s": time.perf_counter() - written}))
"""


def contender_name(engine: str) -> str:
    return "zorder" if engine == NO_FLAG else f"zorder {engine}"


def command(operation: str, contender: str, inputs: dict[str, Any], dest: str) -> list[str]:
    """The command line of one cold run: ``dest`` a copy of the table (optimize) or new."""
    columns = ",".join(BY)
    if contender == "delta-rs":
        target = str(inputs["target_bytes"])
        if operation == "optimize":
            return [sys.executable, "-c", DELTA_RS_OPTIMIZE, dest, columns, target]
        return [sys.executable, "-c", DELTA_RS_WRITE, inputs["source"], dest, columns, target]
    where = [dest] if operation == "optimize" else [inputs["source"], dest]
    line = [sys.executable, "-m", "zorder", operation, *where]
    line += ["--by", columns, "--num-files", str(NUM_FILES)]
    engine = contender.removeprefix("zorder").strip()
    return line + (["--engine", engine] if engine else [])


def build_inputs(tmp: str, rows: int) -> dict[str, Any]:
    """The optimize's table (blind appends), the write's Parquet file, and delta-rs's target."""
    data = network_connections(rows, seed=SEED)
    table = str(Path(tmp) / f"table-{rows}")
    step = -(-rows // APPENDS)
    for start in range(0, rows, step):
        write_deltalake(table, data.slice(start, step), mode="append")
    source = str(Path(tmp) / f"source-{rows}.parquet")
    pq.write_table(data, source)
    return {
        "rows": rows,
        "table": table,
        "source": source,
        "data": data,
        "target_bytes": delta_rs_target(table, str(Path(tmp) / f"calibration-{rows}")),
    }


def delta_rs_target(table: str, scratch: str) -> int:
    """A ``target_size`` for delta-rs's z_order that gives about NUM_FILES files of ``table``.

    The table's bytes over NUM_FILES gives more files (a z_order's files compress less
    than the appends' did): it is scaled by the files one untimed z_order of a copy makes.
    """
    table_bytes = sum(Path(uri).stat().st_size for uri in DeltaTable(table).file_uris())
    first = max(1, table_bytes // NUM_FILES)
    shutil.copytree(table, scratch)
    DeltaTable(scratch).optimize.z_order(list(BY), target_size=first)
    made = len(DeltaTable(scratch).file_uris())
    shutil.rmtree(scratch)
    return max(1, first * made // NUM_FILES)


def lookup_values(data: Any, count: int, seed: int) -> dict[str, list[Any]]:
    picks = np.random.default_rng(seed).integers(0, data.num_rows, count)
    return {c: [data.column(c)[int(i)].as_py() for i in picks] for c in BY}


_kernel: duckdb.DuckDBPyConnection | None = None


def duckdb_rows(path: str, files: list[str]) -> tuple[int, str]:
    """Rows DuckDB reads from the table: by ``delta_scan`` (the delta extension, offline),
    else, where that extension does not load, by ``read_parquet`` over delta-rs's file list."""
    global _kernel
    if _kernel is None:
        _kernel = duckdb.connect()
        try:
            import duckdb_extension_delta

            package = pathlib.Path(duckdb_extension_delta.__file__).parent
            _kernel.load_extension(str(next(package.glob("extensions/*/delta.duckdb_extension"))))
        except (ImportError, StopIteration, duckdb.Error):
            pass
    try:
        found = _kernel.sql(f"SELECT count(*) FROM delta_scan('{path}')").fetchone()
        reader = "delta_scan"
    except duckdb.Error:
        query = "SELECT count(*) FROM read_parquet($files)"
        found = _kernel.execute(query, {"files": files}).fetchone()
        reader = "read_parquet"
    assert found is not None
    return int(found[0]), reader


def check(path: str, rows: int, values: dict[str, list[Any]]) -> dict[str, Any]:
    """The result read back (rows by two readers) and the files equality lookups keep."""
    table = DeltaTable(path)
    files = table.file_uris()
    by_delta_rs = table.to_pyarrow_dataset().count_rows()
    by_duckdb, reader = duckdb_rows(path, files)
    kept = {}
    for column, wanted in values.items():
        fractions = []
        for value in wanted:
            report = zorder.explain(path, f"`{column}` = {sql_literal(value)}")
            fractions.append(report.files_scanned / report.files_total)
        kept[column] = float(np.mean(fractions))
    return {
        "files": len(files),
        "rows_delta_rs": by_delta_rs,
        "rows_duckdb": by_duckdb,
        "duckdb_reader": reader,
        "rows_ok": by_delta_rs == by_duckdb == rows,
        "kept": kept,
        "kept_mean": float(np.mean(list(kept.values()))),
    }


def one_run(
    operation: str, contender: str, inputs: dict[str, Any], dest: str, values: dict[str, Any]
) -> dict[str, Any]:
    """One cold run into ``dest`` (a fresh copy of the table for optimize), checked."""
    if operation == "optimize":
        shutil.copytree(inputs["table"], dest)
    run: ColdRun = run_cold(command(operation, contender, inputs, dest))
    result = run.to_json()
    if contender == "delta-rs":
        result["steps"] = json.loads(run.stdout.strip().splitlines()[-1])
    del result["stdout"]
    result["check"] = check(dest, inputs["rows"], values)
    shutil.rmtree(dest)
    return result


def measure(tmp: str, rows: int, contenders: list[str], args: argparse.Namespace) -> dict[str, Any]:
    """Every operation by every contender at one size, ``args.repeat`` times each."""
    inputs = build_inputs(tmp, rows)
    values = lookup_values(inputs["data"], args.lookups, seed=rows)
    found: dict[str, Any] = {"rows": rows, "delta_rs_target_bytes": inputs["target_bytes"]}
    for operation in args.operations:
        runs: dict[str, list[dict[str, Any]]] = {name: [] for name in contenders}
        for number in range(args.repeat):
            for name in contenders[:: -1 if number % 2 else 1]:
                dest = str(Path(tmp) / f"{operation}-{rows}-{name.replace(' ', '_')}-{number}")
                runs[name].append(one_run(operation, name, inputs, dest, values))
                done = runs[name][-1]
                print(
                    f"{operation} {rows:,} {name}: {done['seconds']:.2f} s, "
                    f"{done['peak_mib']:.0f} MiB, {done['check']['files']} files, "
                    f"lookups keep {done['check']['kept_mean']:.0%}",
                    file=sys.stderr,
                )
        found[operation] = {name: summary(runs[name]) for name in contenders}
    shutil.rmtree(inputs["table"])
    Path(inputs["source"]).unlink()
    return found


def summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The fastest time, the highest memory, and whether every run's result checked out."""
    return {
        "seconds": min(r["seconds"] for r in runs),
        "peak_mib": max(r["peak_mib"] for r in runs),
        "tree_peak_mib": max(r["tree_peak_mib"] for r in runs),
        "largest_process_mib": max(r["largest_process_mib"] for r in runs),
        "peaks_sum_mib": max(r["peaks_sum_mib"] for r in runs),
        "rows_ok": all(r["check"]["rows_ok"] for r in runs),
        "kept_mean": max(r["check"]["kept_mean"] for r in runs),
        "check": runs[-1]["check"],
        "runs": runs,
    }


def warm_up(tmp: str, contenders: list[str], operations: list[str]) -> None:
    """One untimed run of each contender on a small table: the programs' files into the cache."""
    inputs = build_inputs(tmp, 4_000)
    values = lookup_values(inputs["data"], 1, seed=0)
    for operation in operations:
        for name in contenders:
            dest = str(Path(tmp) / f"warm-{operation}-{name.replace(' ', '_')}")
            one_run(operation, name, inputs, dest, values)
    shutil.rmtree(inputs["table"])


def cli_has_engine() -> bool:
    """Whether ``zorder optimize`` and ``zorder write`` here take ``--engine``."""
    for operation in OPERATIONS:
        shown = subprocess.run(
            [sys.executable, "-m", "zorder", operation, "--help"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        if "--engine" not in shown:
            return False
    return True


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--sizes", type=int, nargs="+", default=[200_000, 1_000_000, 4_000_000], help="rows"
    )
    parser.add_argument(
        "--engines",
        type=lambda text: text.split(","),
        default=["auto", "spark"],
        help=f"zorder's engines, comma-separated, of {', '.join(ENGINES)} ({NO_FLAG}: no --engine)",
    )
    parser.add_argument("--operations", type=lambda text: text.split(","), default=list(OPERATIONS))
    parser.add_argument("--repeat", type=int, default=1, help="runs of each contender, best of")
    parser.add_argument("--lookups", type=int, default=10, help="lookup values per column")
    parser.add_argument("--no-warm-up", dest="warm_up", action="store_false")
    parser.add_argument("--write-markdown", action="store_true", help="update BENCHMARKS.md")
    args = parser.parse_args(argv)
    for given, known in ((args.operations, OPERATIONS), (args.engines, ENGINES)):
        unknown = set(given) - set(known)
        if unknown:
            parser.error(f"unknown {sorted(unknown)}: choose from {list(known)}")
    if any(engine != NO_FLAG for engine in args.engines) and not cli_has_engine():
        parser.error(
            f"the zorder command here has no --engine option: --engines {NO_FLAG} times the "
            "commands as they are"
        )
    contenders = [*(contender_name(e) for e in args.engines), "delta-rs"]
    with tempfile.TemporaryDirectory(prefix="zorder-cold-") as tmp:
        if args.warm_up:
            warm_up(tmp, contenders, args.operations)
        sizes = [measure(tmp, rows, contenders, args) for rows in args.sizes]
    machine = machine_facts()
    machine["session"] = "the zorder command's own session (local[*])"
    payload = {
        "command": command_line(__spec__.name, argv),
        "machine": machine,
        "by": list(BY),
        "num_files": NUM_FILES,
        "appends": APPENDS,
        "repeat": args.repeat,
        "gnu_time": gnu_time(),
        "contenders": contenders,
        "operations": args.operations,
        "sizes": sizes,
    }
    text = markdown(payload)
    print(text)
    if args.write_markdown:
        write_json("cold", payload)
        replace_section("cold", text)
    return payload


def _cell(figures: dict[str, Any]) -> str:
    return f"{figures['seconds']:.2f} s, {figures['peak_mib']:.0f} MiB"


def _ratio(top: dict[str, Any], bottom: dict[str, Any]) -> str:
    time = top["seconds"] / bottom["seconds"]
    memory = top["peak_mib"] / bottom["peak_mib"]
    return f"{time:.2f} (memory {memory:.2f})"


def ratio_pairs(contenders: list[str]) -> list[tuple[str, str]]:
    """Each zorder contender against delta-rs, then the zorder contenders against each other."""
    zorders = [c for c in contenders if c != "delta-rs"]
    pairs = [(c, "delta-rs") for c in zorders]
    return pairs + [(a, b) for i, a in enumerate(zorders) for b in zorders[i + 1 :]]


def operation_table(payload: dict[str, Any], operation: str) -> list[str]:
    """One operation's figures, every contender side by side, a row a size."""
    contenders = payload["contenders"]
    pairs = ratio_pairs(contenders)
    lines = [
        "| rows | "
        + " | ".join(f"{c} (s, MiB)" for c in contenders)
        + " | "
        + " | ".join(f"{a} / {b}" for a, b in pairs)
        + " |",
        "| ---: |" + " ---: |" * len(contenders) + " ---: |" * len(pairs),
    ]
    for size in payload["sizes"]:
        found = size[operation]
        lines.append(
            f"| {size['rows']:,} | "
            + " | ".join(_cell(found[c]) for c in contenders)
            + " | "
            + " | ".join(_ratio(found[a], found[b]) for a, b in pairs)
            + " |"
        )
    return lines


def checks_table(payload: dict[str, Any]) -> list[str]:
    """Every contender's result: files, rows read back, files equality lookups keep."""
    lines = [
        "| operation | rows | contender | files | rows read back (delta-rs, DuckDB) | "
        + " | ".join(f"`{c} = v` keeps" for c in BY)
        + " | mean |",
        "| --- | ---: | --- | ---: | --- |" + " ---: |" * (len(BY) + 1),
    ]
    for operation in payload["operations"]:
        for size in payload["sizes"]:
            for name in payload["contenders"]:
                found = size[operation][name]
                last = found["check"]
                read = f"{last['rows_delta_rs']:,}, {last['rows_duckdb']:,}"
                lines.append(
                    f"| {operation} | {size['rows']:,} | {name} | {last['files']} | "
                    f"{read} {'(equal to the input)' if found['rows_ok'] else '**DIFFERENT**'} | "
                    + " | ".join(f"{last['kept'][c]:.0%}" for c in BY)
                    + f" | {last['kept_mean']:.0%} |"
                )
    return lines


def verdicts(payload: dict[str, Any]) -> list[str]:
    """The goals: cold zorder of GOAL_ROWS within GOAL_SECONDS; lookups keep at most half."""
    zorders = [c for c in payload["contenders"] if c != "delta-rs"]
    judged = "zorder auto" if "zorder auto" in zorders else zorders[0]
    lines = []
    for size in payload["sizes"]:
        if size["rows"] != GOAL_ROWS:
            continue
        for operation in payload["operations"]:
            seconds = size[operation][judged]["seconds"]
            lines.append(
                f"Cold `{judged} {operation}` of {GOAL_ROWS:,} rows: {seconds:.2f} s; goal at "
                f"most {GOAL_SECONDS:.0f} s: **{'pass' if seconds <= GOAL_SECONDS else 'FAIL'}**."
            )
    worst = max(
        size[operation][name]["kept_mean"]
        for size in payload["sizes"]
        for operation in payload["operations"]
        for name in zorders
    )
    rows_ok = all(
        size[operation][name]["rows_ok"]
        for size in payload["sizes"]
        for operation in payload["operations"]
        for name in payload["contenders"]
    )
    lines += [
        f"Equality lookups in zorder's results keep at most {worst:.0%} of the files "
        f"(mean over the lookups, worst run); goal at most {LOOKUP_GOAL:.0%}: "
        f"**{'pass' if worst <= LOOKUP_GOAL else 'FAIL'}**.",
        f"Every result read back with the input's rows: **{'pass' if rows_ok else 'FAIL'}**.",
    ]
    return lines


def markdown(payload: dict[str, Any]) -> str:
    contenders = ", ".join(payload["contenders"])
    own = "the command's own by GNU time" if payload["gnu_time"] else "GNU time not installed"
    engines = [c.removeprefix("zorder ") for c in payload["contenders"] if c.startswith("zorder ")]
    flag = " --engine E" if engines else ""
    which = f" (E: {', '.join(engines)})" if engines else " (no --engine: the command as it is)"
    lines = [
        "## Cold processes: zorder optimize and zorder write, launch to exit, beside delta-rs",
        "",
        f"`{payload['command']}`",
        "",
        "Each figure is a new process, timed from launch to exit, and its peak memory: the "
        "summed RSS of it and the processes it starts (Spark's JVM and workers) sampled every "
        f"50 ms, or its largest process's own peak where higher ({own}). "
        f"Contenders: {contenders}. `zorder optimize PATH --by {','.join(BY)} "
        f"--num-files {payload['num_files']}{flag}`{which} on a copy of a table of "
        f"{payload['appends']} blind appends by `write_deltalake`; `zorder write SRC.parquet "
        f"DEST` with the same options from the same rows in one Parquet file. delta-rs: a "
        "Python process running `DeltaTable(PATH).optimize.z_order(...)` with a target size "
        f"that gives about {payload['num_files']} files (calibrated by an untimed z_order of the "
        "table); for write, `pyarrow.parquet.read_table`, "
        "`write_deltalake` then the same z_order (zorder's write leaves the rows clustered). "
        f"Times: the fastest of {payload['repeat']} run(s); memory: the highest. Ratios: time "
        "(and memory) of the first over the second.",
    ]
    for operation in payload["operations"]:
        lines += ["", f"**{operation}**", "", *operation_table(payload, operation)]
    readers = sorted(
        {
            size[operation][name]["check"]["duckdb_reader"]
            for size in payload["sizes"]
            for operation in payload["operations"]
            for name in payload["contenders"]
        }
    )
    lines += [
        "",
        f"Each result, checked (DuckDB by {' and '.join(f'`{r}`' for r in readers)}; lookups: "
        "the mean fraction of the files `zorder.explain` keeps for values drawn from the rows):",
        "",
        *checks_table(payload),
        "",
    ]
    for verdict in verdicts(payload):
        lines += [verdict, ""]
    lines.append(measured_on(payload["machine"]))
    return "\n".join(lines)


if __name__ == "__main__":
    main()
