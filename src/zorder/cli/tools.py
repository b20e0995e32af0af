"""The commands beside the tables: curve, demo, bench and plot."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Annotated

import typer

from zorder.cli import render
from zorder.cli.command import JsonOption, MasterOption, RemoteOption, StorageOption, command
from zorder.cli.output import Output
from zorder.cli.spark import session
from zorder.curves.kinds import SpaceFillingCurve
from zorder.errors import InvalidArgumentError
from zorder.table import parse_storage_options


@command
def curve(
    out: Output,
    curve: Annotated[SpaceFillingCurve, typer.Option(help="Which curve to print.")] = "zorder",
    bits: Annotated[int, typer.Option(min=1, max=5, help="Bits per dimension.")] = 3,
) -> None:
    """Print each cell's position along a curve over a 2-d grid."""
    from zorder.curves import curve_grid

    out.result(curve_grid(curve, bits), lambda grid: render.curve_grid(curve, grid))


@command
def demo(
    out: Output,
    rows: Annotated[int, typer.Option(min=100, help="Connections to generate.")] = 1_000_000,
    files: Annotated[int, typer.Option(min=1, help="Files per table.")] = 100,
    filters: Annotated[int, typer.Option(min=1, help="Equality filters per column.")] = 200,
    directory: Annotated[str, typer.Option("--output", help="Where the tables go.")] = (
        "demo-output"
    ),
    master: MasterOption = "local[*]",
    remote: RemoteOption = None,
    as_json: JsonOption = False,
) -> None:
    """The network-connections experiment: linear vs Z-order vs Hilbert layouts."""
    from zorder.demo import run_demo
    from zorder.plan.progress import phase

    spark = session(out, master, None, remote)
    with out.working("Demo:", spark):
        result = run_demo(
            spark, rows=rows, files=files, filters=filters, output=directory, progress=phase
        )
    out.result(result, render.demo, as_json=lambda measured: measured.to_json())


@command
def bench(
    out: Output,
    quick: Annotated[
        bool, typer.Option(help="100 files x 1,000 rows and 100,000-row costs: about 2 minutes.")
    ] = False,
    workdir: Annotated[
        Path | None,
        typer.Option(
            exists=True,
            file_okay=False,
            writable=True,
            help="An existing directory the tables go in (default: a temporary directory).",
        ),
    ] = None,
    json_path: Annotated[
        str | None, typer.Option("--json", help="Also write the results as JSON here.")
    ] = None,
    no_delta_rs: Annotated[bool, typer.Option(help="Leave delta-rs's z_order out.")] = False,
    master: MasterOption = "local[*]",
    remote: RemoteOption = None,
) -> None:
    """Databricks' experiment, the cost against a plain sort and delta-rs, and point lookups."""
    import dataclasses
    import json

    from zorder.bench import DEFAULT, QUICK, run_bench
    from zorder.plan.progress import phase

    if json_path and not Path(json_path).absolute().parent.is_dir():
        raise InvalidArgumentError(
            f"--json {json_path}: its directory does not exist; give a file in an existing one"
        )
    config = dataclasses.replace(QUICK if quick else DEFAULT, delta_rs=not no_delta_rs)
    spark = session(out, master, None, remote)
    with (
        tempfile.TemporaryDirectory(prefix="zorder-bench-", dir=workdir) as tmp,
        out.working("Benchmark:", spark),
    ):
        result = run_bench(spark, tmp, config, progress=phase)
    out.result(result, render.bench)
    if json_path:
        Path(json_path).write_text(json.dumps(result.to_json(), indent=2, sort_keys=True) + "\n")


@command
def plot(
    out: Output,
    path: Annotated[str | None, typer.Argument(help="Delta table (omit with --curve).")] = None,
    x: Annotated[str | None, typer.Option(help="Column across.")] = None,
    y: Annotated[str | None, typer.Option(help="Column up.")] = None,
    curve: Annotated[
        SpaceFillingCurve | None, typer.Option(help="Draw this curve itself instead of a table.")
    ] = None,
    bits: Annotated[int, typer.Option(min=1, max=6, help="Bits per dimension (--curve).")] = 3,
    sample: Annotated[int, typer.Option(min=1, help="Rows sampled for the points.")] = 5000,
    where: Annotated[
        str | None,
        typer.Option(help="Partitions to draw (one panel each), SQL over partition columns."),
    ] = None,
    picture: Annotated[str, typer.Option("-o", "--output", help="PNG to write.")] = "layout.png",
    storage_option: StorageOption = None,
) -> None:
    """Picture of each file's box in two columns (--x, --y), one panel per partition (at most
    12; --where picks them), or of a curve (--curve)."""
    from zorder.plot import plot_curve, plot_layout

    if curve is not None:
        written = plot_curve(picture, curve=curve, bits=bits)
    elif path is None or x is None or y is None:
        raise InvalidArgumentError("give PATH with --x and --y, or --curve zorder|hilbert")
    else:
        written = plot_layout(
            path,
            picture,
            x=x,
            y=y,
            sample=sample,
            where=where,
            storage_options=parse_storage_options(storage_option or []),
        )
    out.result(written, render.wrote)
