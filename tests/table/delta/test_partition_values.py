"""Partition values as text in the log: decimals plain, timestamps as instants."""

from __future__ import annotations

import datetime as dt
import decimal


def test_decimal_text_in_the_log_is_plain() -> None:
    from zorder.table import delta_partition_value

    assert delta_partition_value(decimal.Decimal("-3.50")) == "-3.50"
    assert delta_partition_value(decimal.Decimal("1E+2")) == "100"
    utc = dt.UTC
    moment = dt.datetime(2026, 11, 1, 13, 30, 1, 500, tzinfo=dt.timezone(dt.timedelta(hours=1)))
    # A timestamp's instant, whatever zone a reader's session is in; timestamp_ntz as written.
    assert delta_partition_value(moment) == "2026-11-01T12:30:01.000500Z"
    assert (
        delta_partition_value(dt.datetime(2026, 1, 1, tzinfo=utc)) == "2026-01-01T00:00:00.000000Z"
    )
    assert delta_partition_value(dt.datetime(2026, 1, 1, 8)) == "2026-01-01 08:00:00.000000"
    assert delta_partition_value("") is None
    assert delta_partition_value(False) == "false"
