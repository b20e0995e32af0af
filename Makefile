# Two commands on a fresh machine with Python 3.11+ and Java 17+:
#   make demo   set up .venv and run the main job on built-in data
#   make test   set up .venv with dev extras; ruff, mypy --strict, the whole pytest suite
#   make check  the edit loop: ruff, mypy and the tests that need no JVM
#   make compat PYSPARK=3.5.9   the compact Spark-facing suite against one pyspark, in a venv of
#               its own (.ci/run: the oldest and the newest supported, $(PYSPARK_OLDEST) and $(PYSPARK_NEWEST))

VENV := .venv
BIN := $(VENV)/bin
# The first Python on PATH that is 3.11 or newer (override: make PYTHON=/path/to/python3.12).
PYTHON ?= $(shell for p in python3 python3.13 python3.12 python3.11 python; do \
	command -v $$p >/dev/null 2>&1 && $$p -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null \
	&& { echo $$p; break; }; done)

# The Spark lines zorder supports run from pyspark 3.5 to the newest 4.x (pyproject.toml);
# the full suite runs on DEV_PYSPARK, the compact one (pytest -m compat) on the oldest and newest.
DEV_PYSPARK := 4.1.*
PYSPARK_OLDEST := 3.5.9
PYSPARK_NEWEST := 4.3.0
# The newest Spark line Delta Spark has a release for (Delta 4.4 is built for 4.0 to 4.2): the
# compat run there checks against Delta Spark; on $(PYSPARK_NEWEST) the Delta tests skip, saying
# why (tests/delta_spark.py).
PYSPARK_DELTA_NEWEST := 4.2.1
# What that run checks (the lines on either side run the whole compact suite): Delta Spark's
# reads of zorder's tables and zorder on Delta Spark's, there. COMPAT_TESTS: all when empty.
DELTA_TESTS := tests/spark/test_delta_spark_reads.py tests/spark/test_delta_spark_tables.py
COMPAT_TESTS :=
# DuckDB (to_arrow's reader) at both ends of its range, without Spark: `make compat-duckdb`.
DUCKDB_OLDEST := 1.5.0
DUCKDB_NEWEST := 2.0.1
IN_PROCESS_TESTS := -m "not spark" tests/arrow tests/api tests/skipping tests/table tests/test_table_handle.py tests/test_cli.py tests/test_cli_rows.py tests/test_cli_process.py
COMPAT_VENV = .venv-pyspark-$(PYSPARK)

.PHONY: demo test check lint typecheck unit bench races clean java jar compat compat-matrix compat-duckdb

java:
	@sh scripts/check-java.sh

$(BIN)/python:
	@test -n "$(PYTHON)" || { echo "zorder needs Python 3.11+; none found on PATH (set PYTHON=...)." >&2; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	@touch $@

$(VENV)/.installed-dev: pyproject.toml Makefile | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]' 'pyspark==$(DEV_PYSPARK)'
	@touch $(VENV)/.installed $@

demo: java $(VENV)/.installed
	$(BIN)/zorder demo --master "local[2]"

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

typecheck: $(VENV)/.installed-dev
	$(BIN)/mypy

# The tests that need no JVM run beside the Spark ones, in a process of their own: the
# Spark tests leave a core idle much of the time (a driver planning, a child JVM
# starting). Their report follows the Spark tests'; either failing fails the target.
unit: java $(VENV)/.installed-dev
	@rm -f .pytest-pure.log
	$(BIN)/pytest -m "not spark" -p no:cacheprovider > .pytest-pure.log 2>&1 & pure=$$!; \
	$(BIN)/pytest -m spark --durations=30; spark=$$?; \
	wait $$pure; pure=$$?; \
	echo "=== the tests that need no JVM (run beside the Spark tests) ==="; \
	cat .pytest-pure.log; rm -f .pytest-pure.log; \
	test $$spark -eq 0 && test $$pure -eq 0

test: lint typecheck unit

# Rebuild src/zorder/spark/zorder-spark.jar (committed) from jvm/src; needs javac 17+.
jar: $(VENV)/.installed
	$(BIN)/python scripts/build_jar.py

# The edit loop: lint, types and the pure tests, no JVM (well under a minute).
check: lint typecheck
	ZORDER_HYPOTHESIS_PROFILE=check $(BIN)/pytest -m "not spark" -q

bench: java $(VENV)/.installed-dev
	$(BIN)/python -m benchmarks.curves --write-markdown
	$(BIN)/python -m benchmarks.layout --write-markdown
	$(BIN)/python -m benchmarks.driver_memory --write-markdown
	$(BIN)/python -m benchmarks.reads --write-markdown
	$(BIN)/python -m benchmarks.lookups --write-markdown
	$(BIN)/python -m benchmarks.blooms --write-markdown
	$(BIN)/python -m benchmarks.product --write-markdown
	$(BIN)/python -m benchmarks.phases --write-markdown
	$(BIN)/python -m benchmarks.partitions --write-markdown
	$(BIN)/python -m benchmarks.cold --write-markdown
	$(BIN)/python -m benchmarks.growth --write-markdown
	$(BIN)/python -m benchmarks.tpch_filters --write-markdown
	$(BIN)/python -m benchmarks.analyst --write-markdown
	$(BIN)/python -m benchmarks.delta_reads --write-markdown
	$(BIN)/python -m benchmarks.advise --write-markdown
	$(BIN)/python -m benchmarks.against_delta --write-markdown

# Delta Spark writers racing zorder, 200 operations and the kills (tests/spark/races.py; a short
# run is in make test): the figures go into RELIABILITY.md.
races: java $(VENV)/.installed-dev
	$(BIN)/python -m tests.spark.races --operations 200 --write-markdown

# A venv with exactly pyspark $(PYSPARK) beside zorder and its dev extras; pip refuses rather
# than replace it, and the check below says so if anything did.
compat: java
	@test -n "$(PYSPARK)" || { echo "make compat needs PYSPARK=version, e.g. PYSPARK=$(PYSPARK_OLDEST)" >&2; exit 2; }
	@test -n "$(PYTHON)" || { echo "zorder needs Python 3.11+; none found on PATH (set PYTHON=...)." >&2; exit 1; }
	test -x $(COMPAT_VENV)/bin/python || $(PYTHON) -m venv $(COMPAT_VENV)
	$(COMPAT_VENV)/bin/python -m pip install --quiet --upgrade pip
	$(COMPAT_VENV)/bin/python -m pip install --quiet -e '.[dev]' 'pyspark==$(PYSPARK)'
	$(COMPAT_VENV)/bin/python -c "import pyspark, sys; sys.exit(pyspark.__version__ != '$(PYSPARK)' and 'pyspark ' + pyspark.__version__ + ' installed, not $(PYSPARK)')"
	$(COMPAT_VENV)/bin/pytest -m compat -p no:cacheprovider $(COMPAT_TESTS)

# The newest line first: its venv then holds compat-duckdb's in-process tests (no JVM), which
# run beside the oldest line's Spark tests, as make unit runs the pure tests beside the Spark
# ones; compat-duckdb's report follows, and either failing fails the target.
compat-matrix:
	$(MAKE) compat PYSPARK=$(PYSPARK_NEWEST)
	@rm -f .compat-duckdb.log
	$(MAKE) compat-duckdb > .compat-duckdb.log 2>&1 & duck=$$!; \
	$(MAKE) compat PYSPARK=$(PYSPARK_OLDEST); oldest=$$?; \
	wait $$duck; duck=$$?; \
	echo "=== make compat-duckdb (run beside pyspark $(PYSPARK_OLDEST)) ==="; \
	cat .compat-duckdb.log; rm -f .compat-duckdb.log; \
	test $$oldest -eq 0 && test $$duck -eq 0
	$(MAKE) compat PYSPARK=$(PYSPARK_DELTA_NEWEST) COMPAT_TESTS="$(DELTA_TESTS)"

# The in-process reads (to_arrow, DuckDB's prefilter) with the oldest and the newest DuckDB, in
# the newest pyspark's compat venv; its DuckDB goes back to dev's pin on the next make compat.
compat-duckdb: PYSPARK = $(PYSPARK_NEWEST)
compat-duckdb:
	test -x $(COMPAT_VENV)/bin/pytest || $(MAKE) compat PYSPARK=$(PYSPARK)
	for version in $(DUCKDB_OLDEST) $(DUCKDB_NEWEST); do \
	  $(COMPAT_VENV)/bin/python -m pip install --quiet "duckdb==$$version" 2>&1 | grep -v "requires duckdb==" ; \
	  $(COMPAT_VENV)/bin/python -c "import duckdb, sys; sys.exit(duckdb.__version__ != '$$version')" && \
	  ZORDER_HYPOTHESIS_PROFILE=check $(COMPAT_VENV)/bin/pytest -q -p no:cacheprovider $(IN_PROCESS_TESTS) || exit 1; \
	done

clean:
	rm -rf $(VENV) .venv-pyspark-* build dist src/*.egg-info .pytest_cache .mypy_cache .ruff_cache .hypothesis
