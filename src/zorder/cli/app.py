"""Typer application behind the ``zorder`` command."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

import zorder
from zorder.curves import hilbert_index, interleave_bits

app = typer.Typer(
    name="zorder",
    help="Z-order and Hilbert clustering with file-level data skipping for Delta Lake tables.",
    no_args_is_help=True,
    add_completion=False,
)
console = Console()


class Curve(StrEnum):
    zorder = "zorder"
    hilbert = "hilbert"


def _version_callback(value: bool) -> None:
    if value:
        console.print(f"zorder {zorder.__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version_callback, is_eager=True, help="Print the version."
        ),
    ] = False,
) -> None:
    """Z-order and Hilbert clustering with file-level data skipping for Delta Lake tables."""


def curve_table(curve: Curve, bits: int) -> Table:
    """The curve's index of every cell of a 2**bits x 2**bits grid (x across, y down)."""
    side = 1 << bits
    index = interleave_bits if curve is Curve.zorder else hilbert_index
    title = f"{curve.value} index, {side}x{side} grid (x = first column, y = second)"
    table = Table(title=title, show_lines=False)
    table.add_column("y \\ x", justify="right", style="bold")
    for x in range(side):
        table.add_column(str(x), justify="right")
    for y in range(side):
        table.add_row(str(y), *(str(index([x, y], bits)) for x in range(side)))
    return table


@app.command()
def curve(
    curve: Annotated[Curve, typer.Option(help="Which curve to print.")] = Curve.zorder,
    bits: Annotated[int, typer.Option(min=1, max=5, help="Bits per dimension.")] = 3,
) -> None:
    """Print each cell's position along a curve over a 2-d grid."""
    console.print(curve_table(curve, bits))


@app.command()
def demo() -> None:
    """Show the 8x8 Z-order and Hilbert grids (the clustering demo arrives with `write`)."""
    for which in Curve:
        console.print(curve_table(which, 3))


def main() -> None:
    app()
