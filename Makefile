# Two commands on a fresh machine with Python 3.11+ and Java 17+:
#   make demo   set up .venv and run the main job on built-in data
#   make test   set up .venv with dev extras; ruff, mypy --strict, the whole pytest suite
#   make check  the edit loop: ruff, mypy and the tests that need no JVM

VENV := .venv
BIN := $(VENV)/bin
# The first Python on PATH that is 3.11 or newer (override: make PYTHON=/path/to/python3.12).
PYTHON ?= $(shell for p in python3 python3.13 python3.12 python3.11 python; do \
	command -v $$p >/dev/null 2>&1 && $$p -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null \
	&& { echo $$p; break; }; done)

.PHONY: demo test check lint typecheck unit bench clean java jar

java:
	@sh scripts/check-java.sh

$(BIN)/python:
	@test -n "$(PYTHON)" || { echo "zorder needs Python 3.11+; none found on PATH (set PYTHON=...)." >&2; exit 1; }
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	@touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $(VENV)/.installed $@

demo: java $(VENV)/.installed
	$(BIN)/zorder demo --master "local[2]"

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

typecheck: $(VENV)/.installed-dev
	$(BIN)/mypy

unit: java $(VENV)/.installed-dev
	$(BIN)/pytest

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
	$(BIN)/python -m benchmarks.product --write-markdown
	$(BIN)/python -m benchmarks.phases --write-markdown
	$(BIN)/python -m benchmarks.partitions --write-markdown
	$(BIN)/python -m benchmarks.growth --write-markdown
	$(BIN)/python -m benchmarks.tpch_filters --write-markdown
	$(BIN)/python -m benchmarks.advise --write-markdown

clean:
	rm -rf $(VENV) build dist src/*.egg-info .pytest_cache .mypy_cache .ruff_cache .hypothesis
