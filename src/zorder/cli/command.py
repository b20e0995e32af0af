"""The ``zorder`` Typer application, its shared options, and how a command is registered.

:func:`command` gives each command its :class:`~zorder.cli.output.Output` (a
console, or JSON with ``--json``) and reports what it raises: a
:class:`~zorder.errors.ZorderError` (bad input, a table zorder cannot use) as
refused, exit code 2; anything else as a bug, exit code 1, with the file its
traceback went to (:mod:`zorder.cli.output` has the scheme). Options several
commands share are declared once, as an :class:`OptionGroup` (:class:`Reach`:
the store and Spark; :class:`Clustering`: what a write or an optimize clusters
by; :class:`AsOf`: the version read), which a command takes as one parameter.
The commands themselves live in :mod:`zorder.cli.tables` and :mod:`zorder.cli.tools`.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import os
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import (
    TYPE_CHECKING,
    Annotated,
    Any,
    Concatenate,
    Literal,
    ParamSpec,
    TypeVar,
    get_args,
    get_origin,
    get_type_hints,
)

import typer
from typer.core import TyperArgument, TyperCommand, TyperGroup
from typer.models import ParameterInfo

import zorder
from zorder.cli.output import Output, output_for
from zorder.cli.spark import session, spark_log
from zorder.curves.kinds import DEFAULT_BLOOM_FPP, Curve, KeyMethod
from zorder.errors import InvalidArgumentError
from zorder.plan.modes import Engine, SchemaMode
from zorder.sizes import MAX_FILES
from zorder.table import parse_storage_options

if TYPE_CHECKING:
    from pyspark.sql import SparkSession

P = ParamSpec("P")
T = TypeVar("T")


class _Words:
    """Help in the command line's words where Typer's own differ: no ``<bool>`` beside
    ``--help``, no ``<str>`` beside an argument, and a required argument named plainly in
    the usage line (Typer writes ``{SOURCE}``)."""

    def get_help_option(self, ctx: Any) -> Any:
        option = super().get_help_option(ctx)  # type: ignore[misc]
        if option is not None:
            option.metavar = ""  # a flag takes no value
        return option

    def get_params(self, ctx: Any) -> list[Any]:
        params: list[Any] = super().get_params(ctx)  # type: ignore[misc]
        for param in params:
            if isinstance(param, TyperArgument):
                # Its metavar says what it is; Typer would add the Python type.
                param.display_type_rich = _no_type  # type: ignore[method-assign]
        return params

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        options = getattr(self, "options_metavar", None)
        pieces = [options] if options else []
        for param in self.get_params(ctx):
            if isinstance(param, TyperArgument):
                name = param.metavar or str(param.name).upper()
                name = name if param.required else f"[{name}]"
                pieces.append(name if param.nargs == 1 else f"{name}...")
            else:
                pieces.extend(param.get_usage_pieces(ctx))
        return pieces


def _no_type(ctx: Any) -> None:
    return None


class _Command(_Words, TyperCommand):
    pass


class _Group(_Words, TyperGroup):
    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        return [*super().collect_usage_pieces(ctx), self.subcommand_metavar]


app = typer.Typer(
    cls=_Group,
    name="zorder",
    help="Z-order and Hilbert clustering with file-level data skipping for Delta Lake tables.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,  # errors are reported by _command, tracebacks go to a file
)

MasterOption = Annotated[
    str,
    typer.Option(help="Spark master: local[*], local-cluster[2,1,1024], spark://host:7077, yarn."),
]
RemoteOption = Annotated[
    str | None,
    typer.Option(help="Spark Connect instead of --master: sc://host:15002, or local[2]."),
]
ConfOption = Annotated[
    list[str] | None,
    typer.Option("--conf", help="Extra Spark setting KEY=VALUE (repeatable)."),
]
StorageOption = Annotated[
    list[str] | None,
    typer.Option(
        "--storage-option",
        help="Object-store setting KEY=VALUE as deltalake takes it (repeatable), e.g. "
        "AWS_ENDPOINT_URL=http://127.0.0.1:9000; unset ones come from the environment.",
    ),
]
CurveOption = Annotated[
    Curve | None, typer.Option(help="Curve to cluster along (default: the table's, else zorder).")
]
ByOption = Annotated[
    str | None,
    typer.Option(help="Clustering columns, comma-separated: a,b,c (default: the table's spec)."),
]
BloomOption = Annotated[
    str | None,
    typer.Option(
        "--bloom-filters",
        help="Columns whose files get Parquet bloom filters for lookups by = and IN, "
        "comma-separated, each with an optional false-positive rate: session_id,user_id:0.001 "
        "(default: the table's; '' for none).",
    ),
]
NumFilesOption = Annotated[
    int | None, typer.Option(min=1, max=MAX_FILES, help="Exact number of files.")
]
TargetSizeOption = Annotated[
    str | None,
    typer.Option(
        help="Target file size instead, e.g. 256MB (default: the table's "
        "delta.targetFileSize, else 128MB)."
    ),
]
SetTargetOption = Annotated[
    bool,
    typer.Option(
        "--set-target-size",
        help="Record this run's size (--target-file-size, or the mean size of the "
        "--num-files written) as the table's delta.targetFileSize, which later runs "
        "follow; without it the sizes given apply to this run only.",
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")]
VersionOption = Annotated[
    int | None, typer.Option("--version", min=0, help="Read this version of the table.")
]
AnsiOption = Annotated[
    bool,
    typer.Option(
        "--ansi/--no-ansi",
        help="The filter's meaning: Spark's with ANSI mode on (4.x's default) or off (3.5's).",
    ),
]
AsOfOption = Annotated[
    str | None,
    typer.Option(
        "--as-of",
        help="Read the newest version committed at or before this time (ISO-8601, e.g. "
        "'2026-11-24 13:00:00'; without a zone, in --time-zone).",
    ),
]
MethodOption = Annotated[
    KeyMethod | None,
    typer.Option(
        help="Keys from sampled ranks or raw encodings (default: the table's, else rank)."
    ),
]


def _traceback_file() -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return Path(tempfile.gettempdir()) / f"zorder-error-{stamp}-{os.getpid()}.log"


def command(function: Callable[Concatenate[Output, P], T]) -> Callable[P, T]:
    """Register ``function`` as a command: given its output, its errors reported, never dumped.

    The output is chosen once, before the command runs: JSON when the command
    has an ``as_json`` parameter (``--json``) and it is set, else the console.
    Typer sees the command's parameters after the output.
    """

    # Evaluated: typer reads a __signature__ as it is, string annotations and all.
    signature = inspect.signature(function, eval_str=True)
    groups = {
        p.name: p.annotation
        for p in signature.parameters.values()
        if isinstance(p.annotation, type) and issubclass(p.annotation, OptionGroup)
    }

    @functools.wraps(function)
    def reported(*args: P.args, **kwargs: P.kwargs) -> T:
        out = output_for(bool(kwargs.get("as_json", False)))
        for name, group in groups.items():  # Typer gives each option of a group alone
            kwargs[name] = group(**{f.name: kwargs.pop(f.name) for f in group.options()})
        try:
            done = function(out, *args, **kwargs)
        except (typer.Exit, typer.Abort, typer.TyperException):
            raise
        except zorder.ZorderError as error:
            out.refused(error, spark_log=spark_log.file)
        except Exception as error:
            out.bug(error, _traceback_file(), spark_log=spark_log.file)
        if spark_log.file is not None:  # kept only to explain a failure
            spark_log.file.unlink(missing_ok=True)
        return done

    parameters = [
        option
        for parameter in list(signature.parameters.values())[1:]
        for option in (
            groups[parameter.name].options() if parameter.name in groups else [parameter]
        )
    ]
    for parameter in parameters:
        _name_the_value(parameter)
    reported.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    app.command(cls=_Command)(reported)
    return reported


# What a value is called in the help, in the words of the command line (Typer would show
# the Python type: <str>, <list[str]>, <int range>, and <bool> beside a flag).
_METAVARS = {
    "by": "COLUMNS",
    "partition_by": "COLUMNS",
    "columns": "COLUMNS",
    "x": "COLUMN",
    "y": "COLUMN",
    "where": "SQL",
    "target_file_size": "SIZE",
    "time_zone": "ZONE",
    "as_of": "TIME",
    "master": "MASTER",
    "remote": "URL",
    "conf": "KEY=VALUE",
    "storage_option": "KEY=VALUE",
    "workload": "FILE.sql",
    "by_advice": "FILE.sql",
    "picture": "FILE.png",
    "json_path": "FILE.json",
    "directory": "DIR",
    "workdir": "DIR",
    "retain_hours": "HOURS",
}


def _name_the_value(parameter: inspect.Parameter) -> None:
    """Give the option or argument of ``parameter`` a metavar unless it has one or lists its
    choices: its value's name, none for a flag, N for a count, else the name in capitals."""
    annotation = parameter.annotation
    if get_origin(annotation) is not Annotated:
        return
    kind, *extras = get_args(annotation)
    info = next((e for e in extras if isinstance(e, ParameterInfo)), None)
    if info is None or info.metavar is not None:
        return
    bare = {a for a in get_args(kind) if a is not type(None)} or {kind}
    if any(get_origin(a) is Literal for a in bare):
        return  # typer shows the choices: <zorder|hilbert|linear>
    if bare == {bool}:
        info.metavar = ""
    elif parameter.name in _METAVARS:
        info.metavar = _METAVARS[parameter.name]
    elif bare == {int}:
        info.metavar = "N"
    else:
        info.metavar = parameter.name.upper()


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"zorder {zorder.__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_version_callback,
            is_eager=True,
            metavar="",  # a flag: no value to name
            help="Print the version.",
        ),
    ] = False,
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose",
            metavar="",
            help="Show Spark's and the JVM's log output live, not in a log file.",
        ),
    ] = False,
) -> None:
    """Z-order and Hilbert clustering with file-level data skipping for Delta Lake tables."""
    spark_log.verbose = verbose
    spark_log.file = None


EngineOption = Annotated[
    Engine,
    typer.Option(
        help="Who writes the files: auto (this process, no JVM, for work within the "
        "in-process bounds; else Spark), spark, or arrow (this process only).",
    ),
]
SchemaModeOption = Annotated[
    SchemaMode | None,
    typer.Option(
        help="merge: add the columns SOURCE has and DEST lacks (nullable; rows written "
        "before read NULL), and write a nullable column SOURCE lacks as NULL. Default: "
        "refuse any difference.",
    ),
]


class OptionGroup:
    """Options several commands share, declared once: a frozen dataclass whose fields are
    options. A command takes the group as one parameter; :func:`command` shows Typer each
    field as an option of its own, in the group's place, and hands the command the group."""

    @classmethod
    def options(cls) -> list[inspect.Parameter]:
        """The group's fields as the parameters Typer reads."""
        hints = get_type_hints(cls, include_extras=True)
        return [
            inspect.Parameter(
                f.name,
                inspect.Parameter.POSITIONAL_OR_KEYWORD,
                default=f.default,
                annotation=hints[f.name],
            )
            for f in dataclasses.fields(cls)  # type: ignore[arg-type]
        ]


@dataclass(frozen=True)
class Reach(OptionGroup):
    """How a command reaches the table and, when it needs one, Spark."""

    storage_option: StorageOption = None
    master: MasterOption = "local[*]"
    remote: RemoteOption = None
    conf: ConfOption = None

    @property
    def storage_options(self) -> dict[str, str]:
        return parse_storage_options(self.storage_option or [])

    def session(self, out: Output, *settings: str) -> SparkSession:
        """A session started on ``--master`` (or ``--remote``) with ``settings``, then
        ``--conf`` (which wins)."""
        return session(out, self.master, [*settings, *(self.conf or [])], self.remote)


@dataclass(frozen=True)
class AsOf(OptionGroup):
    """Which version a command reads: ``--version N`` or ``--as-of TIME`` (None: the newest)."""

    version: VersionOption = None
    as_of: AsOfOption = None

    @property
    def timestamp(self) -> str | None:
        """``--as-of``, refused beside ``--version`` in the command line's own words."""
        if self.version is not None and self.as_of is not None:
            raise InvalidArgumentError(
                f"give --version or --as-of, not both (got --version {self.version} "
                f"--as-of {self.as_of!r})"
            )
        return self.as_of


AS_OF = AsOf()
REACH = Reach()


@dataclass(frozen=True)
class Clustering(OptionGroup):
    """What a write or an optimize clusters by, and who writes the files."""

    by: ByOption = None
    curve: CurveOption = None
    num_files: NumFilesOption = None
    target_file_size: TargetSizeOption = None
    set_target_size: SetTargetOption = False
    method: MethodOption = None
    bloom_filters: BloomOption = None
    engine: EngineOption = "auto"

    def keywords(self) -> dict[str, Any]:
        """The options as ``Table.write`` and ``Table.optimize`` take them."""
        return {
            "by": column_list(self.by) if self.by else None,
            "curve": self.curve,
            "num_files": self.num_files,
            "target_file_size": self.target_file_size,
            "set_target_size": self.set_target_size,
            "method": self.method,
            "bloom_filters": bloom_list(self.bloom_filters),
            "engine": self.engine,
        }


def bloom_list(text: str | None) -> dict[str, float] | None:
    """``--bloom-filters`` as ``bloom_filters=`` takes it: names mapped to their rates (1%
    unless given as ``name:rate``); None when the option was not given."""
    if text is None:
        return None
    wanted: dict[str, float] = {}
    for part in column_list(text):
        name, colon, rate = part.rpartition(":") if ":" in part else (part, "", "")
        if name.strip() in wanted:
            raise InvalidArgumentError(
                f"--bloom-filters names {name.strip()!r} twice; name each column once"
            )
        try:
            wanted[name.strip()] = float(rate) if colon else DEFAULT_BLOOM_FPP
        except ValueError:
            raise InvalidArgumentError(
                f"--bloom-filters: {rate!r} in {part!r} is not a false-positive rate; give "
                f"column or column:rate, such as session_id:{DEFAULT_BLOOM_FPP}"
            ) from None
    return wanted


def column_list(text: str) -> list[str]:
    """The names in a comma-separated option (a,b,c), blanks dropped."""
    return [part.strip() for part in text.split(",") if part.strip()]
