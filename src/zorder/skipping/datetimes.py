"""Spark's arithmetic on constant dates, timestamps and ANSI intervals (ANSI mode on).

Measured on Spark 4.1: ``date '2024-06-01' - interval '7' day`` is a DATE
(2024-05-25), as is a date plus a year-month interval (``date '2024-01-31' +
interval '1' month`` is 2024-02-29, Java's ``plusMonths``) or an integer
(``date + 1``; a bigint there is an error); a date plus an interval with hours,
minutes or seconds (``interval 2 hours``, ``interval 24 hours``) is a TIMESTAMP,
the date taken as midnight in the session's zone. Adding to a TIMESTAMP is done
as Java's ``ZonedDateTime`` does in the session's zone: months, then whole days
(of a day-time interval too: ``timestamp '2024-03-09 12:00' + interval 24
hours`` is 12:00 the next day across a DST change), on the wall clock, keeping
the offset where the result is ambiguous; the rest of the interval on the
instant. A zone-less timestamp (``SESSION_ZONE``) is resolved as Spark resolves
it: a wall-clock time in a gap moves forward by the gap, one in an overlap
takes the earlier offset. Whatever needs the zone raises
:class:`~zorder.skipping.coercion.InexactError` without one, as does a
result outside the years 1 to 9999 (Python's range; Spark's is wider) and
every overflow Spark reports as an error.

Intervals are :class:`~zorder.skipping.numbers.Operand` values: a year-month
interval's is its months, a day-time interval's its microseconds, and the type
is Spark's name (``interval day``, ``interval day to hour``, ``interval year
to month``). Intervals that mix the two families are errors in Spark 4.1
(``interval 1 month 2 days``, ``interval '1' month + interval '2' day``).
"""

from __future__ import annotations

import calendar
import datetime as dt
import re

from zorder.skipping.coercion import (
    INTEGER_TYPES,
    InexactError,
    cast_literal,
    integer_range,
    timestamp_text,
)
from zorder.skipping.numbers import Operand
from zorder.skipping.zones import SESSION_ZONE, need_zone

__all__ = [
    "MICROS_PER_DAY",
    "add_months",
    "date_add",
    "interval_literal",
    "is_interval",
    "is_year_month",
    "last_day",
    "local_date",
    "make_date",
    "negate_interval",
    "next_day",
    "start_of_day",
    "temporal_arithmetic",
    "to_date",
    "to_timestamp",
    "trunc_date",
    "trunc_timestamp",
    "truncate_instant",
    "zoned",
]

MICROS_PER_DAY = 86_400_000_000
_MICROS = {"day": MICROS_PER_DAY, "hour": 3_600_000_000, "minute": 60_000_000, "second": 1_000_000}
_DAY_TIME = ("day", "hour", "minute", "second")
_YEAR_MONTH = ("year", "month")
_INTEGER_TEXT = re.compile(r"\s*([+-]?)(\d+)\s*")
_YEAR_TO_MONTH = re.compile(r"\s*([+-]?)(\d+)-(\d+)\s*")
_UNITS = {
    "YEAR": "year",
    "YEARS": "year",
    "MONTH": "month",
    "MONTHS": "month",
    "WEEK": "week",
    "WEEKS": "week",
    "DAY": "day",
    "DAYS": "day",
    "HOUR": "hour",
    "HOURS": "hour",
    "MINUTE": "minute",
    "MINUTES": "minute",
    "SECOND": "second",
    "SECONDS": "second",
}


def _interval_type(start: str, end: str) -> str:
    return f"interval {start}" if start == end else f"interval {start} to {end}"


def _fields(type_name: str) -> tuple[str, str]:
    words = type_name.split()
    return words[1], words[-1]


def _family(type_name: str | None) -> tuple[str, ...] | None:
    if type_name is None or not type_name.startswith("interval "):
        return None
    return _YEAR_MONTH if _fields(type_name)[0] in _YEAR_MONTH else _DAY_TIME


def is_interval(type_name: str | None) -> bool:
    return _family(type_name) is not None


def is_year_month(type_name: str | None) -> bool:
    """Whether ``type_name`` is a year-month interval (counted in months)."""
    return _family(type_name) == _YEAR_MONTH


def _within(value: int, type_name: str, what: str) -> int:
    low, high = integer_range(type_name)
    if not low <= value <= high:
        raise InexactError(f"{what} overflows: an error in Spark")
    return value


def interval_literal(text: str, unit: str, end_unit: str | None = None) -> Operand:
    """``INTERVAL 'text' unit`` (or ``unit TO end_unit``) as Spark types it."""
    start = _UNITS.get(unit.upper())
    end = _UNITS.get(end_unit.upper()) if end_unit is not None else start
    if start is None or end is None:
        raise InexactError(f"the interval unit {unit} {end_unit or ''}")
    if (start, end) == ("year", "month"):
        match = _YEAR_TO_MONTH.fullmatch(text)
        if match is None or int(match[3]) > 11:
            raise InexactError(f"the interval {text!r} YEAR TO MONTH")
        months = int(match[2]) * 12 + int(match[3])
        months = _within(-months if match[1] == "-" else months, "int", "the interval")
        return Operand(months, "interval year to month")
    match = _INTEGER_TEXT.fullmatch(text)
    if start != end or match is None:
        raise InexactError(f"the interval {text!r} {unit} (write an integer of one unit)")
    number = -int(match[2]) if match[1] == "-" else int(match[2])
    if start in _YEAR_MONTH:
        months = number * 12 if start == "year" else number
        return Operand(_within(months, "int", "the interval"), f"interval {start}")
    if start == "week":
        return Operand(
            _within(number * 7 * MICROS_PER_DAY, "bigint", "the interval"), "interval day"
        )
    micros = _within(number * _MICROS[start], "bigint", "the interval")
    return Operand(micros, f"interval {start}")


def negate_interval(operand: Operand) -> Operand:
    assert operand.type is not None
    if operand.value is None:
        return operand
    bits = "int" if _family(operand.type) == _YEAR_MONTH else "bigint"
    return Operand(_within(-operand.value, bits, "the interval"), operand.type)


def _interval_sum(left: Operand, right: Operand, sign: int) -> Operand:
    assert left.type is not None
    assert right.type is not None
    family = _family(left.type)
    if family != _family(right.type):
        raise InexactError("year-month and day-time intervals together: an error in Spark")
    assert family is not None
    starts = [family.index(_fields(t)[0]) for t in (left.type, right.type)]
    ends = [family.index(_fields(t)[1]) for t in (left.type, right.type)]
    type_name = _interval_type(family[min(starts)], family[max(ends)])
    if left.value is None or right.value is None:
        return Operand(None, type_name)
    bits = "int" if family == _YEAR_MONTH else "bigint"
    return Operand(_within(left.value + sign * right.value, bits, "the interval"), type_name)


# --------------------------------------------------------------------------------------
# Zones


def _resolve(wall: dt.datetime, zone: dt.tzinfo, keep: dt.timedelta | None) -> dt.datetime:
    """Java's ``ZonedDateTime.ofLocal``: a wall-clock time in ``zone`` as a UTC instant;
    in an overlap the offset ``keep`` if it is one of the two, else the earlier; in a gap,
    moved forward by the gap (Python's fold=0 reads such a time with the offset before
    the gap: the same instant)."""
    first = wall.replace(tzinfo=zone, fold=0)
    second = wall.replace(tzinfo=zone, fold=1)
    chosen = first
    if first.utcoffset() != second.utcoffset() and keep == second.utcoffset():
        in_overlap = first.astimezone(dt.UTC).astimezone(zone).replace(tzinfo=None) == wall
        if in_overlap:
            chosen = second
    return chosen.astimezone(dt.UTC)


def _in_gap(wall: dt.datetime, zone: dt.tzinfo) -> bool:
    first = wall.replace(tzinfo=zone, fold=0)
    return first.astimezone(dt.UTC).astimezone(zone).replace(tzinfo=None) != wall


def _instant(value: dt.datetime, zone: dt.tzinfo | None) -> dt.datetime:
    """A TIMESTAMP's instant, in UTC."""
    if value.tzinfo is SESSION_ZONE or value.tzinfo is None:
        return _resolve(value.replace(tzinfo=None), need_zone(zone, "a zone-less timestamp"), None)
    return value.astimezone(dt.UTC)


def zoned(instant: dt.datetime, zone: dt.tzinfo | None) -> dt.datetime:
    """An instant as a TIMESTAMP's value: in the session's zone when it is known."""
    return instant.astimezone(zone) if zone is not None else instant


def local_date(value: dt.datetime, zone: dt.tzinfo | None) -> dt.date:
    """The date of a TIMESTAMP in the session's zone (``CAST(ts AS DATE)``)."""
    zone = need_zone(zone, "the date of a timestamp")
    return _instant(value, zone).astimezone(zone).date()


def start_of_day(day: dt.date, zone: dt.tzinfo | None) -> dt.datetime:
    """``CAST(date AS TIMESTAMP)``: midnight in the session's zone, as an instant."""
    zone = need_zone(zone, "a date as a timestamp")
    midnight = dt.datetime(day.year, day.month, day.day)
    if _in_gap(midnight, zone):  # Java takes the end of the gap, not midnight moved by it
        raise InexactError(f"midnight of {day} does not exist in the session's zone")
    return _resolve(midnight, zone, None)


def _guard(action: str) -> InexactError:
    return InexactError(f"{action} leaves the years 1 to 9999 (not computed here)")


def _plus_months(day: dt.date, months: int) -> dt.date:
    """Java's ``LocalDate.plusMonths``: the day kept, or the month's last one."""
    year, month = divmod(day.month - 1 + months, 12)
    year += day.year
    if not 1 <= year <= 9999:
        raise _guard("adding months")
    month += 1
    return day.replace(
        year=year, month=month, day=min(day.day, calendar.monthrange(year, month)[1])
    )


def _plus_days(day: dt.date, days: int) -> dt.date:
    try:
        return day + dt.timedelta(days=days)
    except OverflowError:
        raise _guard("adding days") from None


def _plus_wall(wall: dt.datetime, months: int, days: int, micros: int) -> dt.datetime:
    moved = _plus_months(wall.date(), months) if months else wall.date()
    result = dt.datetime.combine(moved, wall.time())
    try:
        return result + dt.timedelta(days=days, microseconds=micros)
    except OverflowError:
        raise _guard("adding an interval") from None


def _split(micros: int) -> tuple[int, int]:
    """A day-time interval as (days, microseconds), truncated toward zero as Java divides."""
    days = abs(micros) // MICROS_PER_DAY
    days = days if micros >= 0 else -days
    return days, micros - days * MICROS_PER_DAY


def _timestamp_plus(
    instant: dt.datetime, zone: dt.tzinfo | None, months: int, micros: int
) -> dt.datetime:
    """Spark's timestampAddInterval, on an instant (UTC)."""
    days, rest = _split(micros)
    try:
        if months == 0 and days == 0:
            return instant + dt.timedelta(microseconds=rest)
        zone = need_zone(zone, "adding days or months to a timestamp")
        local = instant.astimezone(zone)
        if months:
            wall = _plus_wall(local.replace(tzinfo=None), months, 0, 0)
            local = _resolve(wall, zone, local.utcoffset()).astimezone(zone)
        if days:
            wall = _plus_wall(local.replace(tzinfo=None), 0, days, 0)
            local = _resolve(wall, zone, local.utcoffset()).astimezone(zone)
        return local.astimezone(dt.UTC) + dt.timedelta(microseconds=rest)
    except OverflowError:
        raise _guard("adding an interval") from None


def _check_range(value: dt.datetime) -> dt.datetime:
    if not 1 <= value.year <= 9999 or not 1 <= value.astimezone(dt.UTC).year <= 9999:
        raise _guard("the timestamp")
    return value


# --------------------------------------------------------------------------------------
# + and -


def _int_days(operand: Operand) -> int | None:
    """The days of ``date + n``: Spark accepts tinyint, smallint and int only."""
    if operand.type not in ("tinyint", "smallint", "int", "void"):
        raise InexactError(f"a date plus a {operand.type}: an error in Spark")
    return operand.value if operand.value is None else int(operand.value)


def temporal_arithmetic(op: str, left: Operand, right: Operand, zone: dt.tzinfo | None) -> Operand:
    """``left + right`` or ``left - right`` where one side is a date, a timestamp or an
    interval."""
    sign = 1 if op == "+" else -1
    lt, rt = left.type, right.type
    if is_interval(lt) and is_interval(rt):
        return _interval_sum(left, right, sign)
    if op == "+" and (is_interval(lt) or lt in INTEGER_TYPES):
        left, right, lt, rt = right, left, rt, lt  # interval + date is date + interval
    if lt == "date" and rt == "date" and op == "-":
        if left.value is None or right.value is None:
            return Operand(None, "interval day")
        return Operand((left.value - right.value).days * MICROS_PER_DAY, "interval day")
    if lt == "date" and rt in INTEGER_TYPES:
        days = _int_days(right)
        if left.value is None or days is None:
            return Operand(None, "date")
        return Operand(_plus_days(left.value, sign * days), "date")
    if not is_interval(rt) or lt not in ("date", "timestamp", "timestamp_ntz"):
        raise InexactError(f"{lt} {op} {rt}")
    assert rt is not None
    year_month = _family(rt) == _YEAR_MONTH
    whole_days = not year_month and _fields(rt)[1] == "day"
    result_type = "timestamp" if lt == "date" and not (year_month or whole_days) else lt
    if left.value is None or right.value is None:
        return Operand(None, result_type)
    amount = sign * right.value
    months, micros = (amount, 0) if year_month else (0, amount)
    if lt == "date" and result_type == "date":
        if year_month:
            return Operand(_plus_months(left.value, months), "date")
        return Operand(_plus_days(left.value, micros // MICROS_PER_DAY), "date")
    if lt == "timestamp_ntz":
        return Operand(_check_range(_plus_wall(left.value, months, 0, micros)), lt)
    start = start_of_day(left.value, zone) if lt == "date" else _instant(left.value, zone)
    result = _timestamp_plus(start, zone, months, micros)
    return Operand(_check_range(zoned(result, zone)), "timestamp")


# --------------------------------------------------------------------------------------
# Functions


def to_date(operand: Operand, zone: dt.tzinfo | None) -> dt.date | None:
    """The DATE Spark makes of a date, timestamp or string argument (``to_date``, and the
    first argument of ``date_add``, ``add_months``, ``last_day``...)."""
    value = operand.value
    if operand.type not in ("date", "string", "timestamp", "timestamp_ntz", "void"):
        raise InexactError(f"a {operand.type} as a date")
    if value is None:
        return None
    if operand.type == "date":
        return value  # type: ignore[no-any-return]
    if operand.type == "string":
        return cast_literal(value, "string", "date")  # type: ignore[no-any-return]
    if operand.type == "timestamp":
        return local_date(value, zone)
    if operand.type == "timestamp_ntz":
        return value.date()  # type: ignore[no-any-return]
    raise InexactError(f"a {operand.type} as a date")


def to_timestamp(operand: Operand, zone: dt.tzinfo | None) -> dt.datetime | None:
    """The TIMESTAMP's instant (UTC) Spark makes of a date, timestamp or string."""
    value = operand.value
    if operand.type not in ("date", "string", "timestamp", "timestamp_ntz", "void"):
        raise InexactError(f"a {operand.type} as a timestamp")
    if value is None:
        return None
    if operand.type == "date":
        return start_of_day(value, zone)
    if operand.type == "timestamp":
        return _instant(value, zone)
    if operand.type == "timestamp_ntz":
        return _resolve(value, need_zone(zone, "a timestamp_ntz as a timestamp"), None)
    if operand.type == "string":
        parsed = timestamp_text(value)
        return _instant(parsed, zone)
    raise InexactError(f"a {operand.type} as a timestamp")


def date_add(start: Operand, days: Operand, sign: int, zone: dt.tzinfo | None) -> Operand:
    count = _int_days(days)
    day = to_date(start, zone)
    if day is None or count is None:
        return Operand(None, "date")
    return Operand(_plus_days(day, sign * count), "date")


def add_months(start: Operand, months: Operand, zone: dt.tzinfo | None) -> Operand:
    if months.type not in INTEGER_TYPES and months.type != "void":
        raise InexactError(f"add_months by a {months.type}")
    day = to_date(start, zone)
    if day is None or months.value is None:
        return Operand(None, "date")
    count = _within(int(months.value), "int", "the months of add_months")
    return Operand(_plus_months(day, count), "date")


def make_date(year: Operand, month: Operand, day: Operand) -> Operand:
    parts = (year, month, day)
    if any(p.type not in INTEGER_TYPES and p.type != "void" for p in parts):
        raise InexactError("make_date of other than integers")
    if any(p.value is None for p in parts):
        return Operand(None, "date")
    try:
        return Operand(dt.date(int(year.value), int(month.value), int(day.value)), "date")
    except ValueError:
        raise InexactError("make_date of an invalid or unsupported date") from None


def last_day(start: Operand, zone: dt.tzinfo | None) -> Operand:
    day = to_date(start, zone)
    if day is None:
        return Operand(None, "date")
    return Operand(day.replace(day=calendar.monthrange(day.year, day.month)[1]), "date")


_WEEKDAYS = {
    **dict.fromkeys(("MO", "MON", "MONDAY"), 0),
    **dict.fromkeys(("TU", "TUE", "TUESDAY"), 1),
    **dict.fromkeys(("WE", "WED", "WEDNESDAY"), 2),
    **dict.fromkeys(("TH", "THU", "THURSDAY"), 3),
    **dict.fromkeys(("FR", "FRI", "FRIDAY"), 4),
    **dict.fromkeys(("SA", "SAT", "SATURDAY"), 5),
    **dict.fromkeys(("SU", "SUN", "SUNDAY"), 6),
}


def next_day(start: Operand, weekday: Operand, zone: dt.tzinfo | None) -> Operand:
    if weekday.type not in ("string", "void"):
        raise InexactError(f"next_day of a {weekday.type}")
    day = to_date(start, zone)
    if day is None or weekday.value is None:
        return Operand(None, "date")
    target = _WEEKDAYS.get(str(weekday.value).strip().upper())
    if target is None:
        raise InexactError(f"next_day's day of week {weekday.value!r}: an error in ANSI Spark")
    ahead = (target - day.weekday() - 1) % 7 + 1
    return Operand(_plus_days(day, ahead), "date")


# sqlglot rewrites single letters to whole units ('Q' to QUARTER, 'D' to DAY, 'M' to
# MINUTE), which Spark does not accept (trunc and date_trunc answer NULL): only spellings
# no letter is rewritten to are read here.
_UNAMBIGUOUS_DATE_UNITS = {
    "YYYY": "year",
    "YY": "year",
    "MM": "month",
    "MON": "month",
    "MONTH": "month",
}


def _truncate(day: dt.date, unit: str) -> dt.date | None:
    level = _UNAMBIGUOUS_DATE_UNITS.get(unit)
    if level == "year":
        return day.replace(month=1, day=1)
    if level == "month":
        return day.replace(day=1)
    return None


def trunc_date(start: Operand, unit: str, zone: dt.tzinfo | None) -> Operand:
    """``trunc(date, 'MM')``: the DATE; an unknown unit is NULL in Spark, refused here."""
    day = to_date(start, zone)
    truncated = None if day is None else _truncate(day, unit.upper())
    if day is not None and truncated is None:
        raise InexactError(f"trunc to {unit!r}")
    return Operand(truncated, "date")


def trunc_timestamp(start: Operand, unit: str, zone: dt.tzinfo | None) -> Operand:
    """``date_trunc('MONTH', ts)``: a TIMESTAMP, truncated on the session zone's wall clock."""
    instant = to_timestamp(start, zone)
    if instant is None:
        return Operand(None, "timestamp")
    zone = need_zone(zone, "date_trunc")
    local = instant.astimezone(zone)
    wall = local.replace(tzinfo=None)
    key = unit.upper()
    day = _truncate(wall.date(), key)
    if day is not None:
        wall = dt.datetime(day.year, day.month, day.day)
    elif key == "DD":
        wall = wall.replace(hour=0, minute=0, second=0, microsecond=0)
    else:
        raise InexactError(f"date_trunc to {unit!r}")
    if _in_gap(wall, zone):
        raise InexactError(f"the truncated time {wall} does not exist in the session's zone")
    return Operand(zoned(_resolve(wall, zone, local.utcoffset()), zone), "timestamp")


_SUB_SECOND = {"microsecond": 1, "millisecond": 1000, "second": 1_000_000}
_WALL_UNITS = {
    "minute": {"second": 0, "microsecond": 0},
    "hour": {"minute": 0, "second": 0, "microsecond": 0},
}


def truncate_instant(instant: dt.datetime, level: str, zone: dt.tzinfo) -> dt.datetime:
    """Spark's ``date_trunc`` below a day (``DateTimeUtils.truncTimestamp``), on an instant
    (UTC): ``second`` and finer floor the instant itself; ``minute`` and ``hour`` truncate
    the wall clock of ``zone`` and resolve it as Java's ``ZonedDateTime.truncatedTo`` does
    (the offset kept where the result is ambiguous, moved forward by a gap)."""
    if level in _SUB_SECOND:
        step = _SUB_SECOND[level]
        micros = (instant - _EPOCH_UTC) // dt.timedelta(microseconds=1)
        return _EPOCH_UTC + dt.timedelta(microseconds=micros - micros % step)
    local = instant.astimezone(zone)
    wall = local.replace(tzinfo=None, **_WALL_UNITS[level])
    return _resolve(wall, zone, local.utcoffset())


_EPOCH_UTC = dt.datetime(1970, 1, 1, tzinfo=dt.UTC)
