# The two set-up commands: `make run` (the main job) and `make test` (the whole suite).
# Both create .venv from the hash-locked requirements on first use; nothing after
# installation touches the network except `make run`'s data fetch when no mirror exists.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
TEST_STAMP := $(VENV)/.installed-test
DATA_MIRROR ?= $(wildcard ../shared/data)

.PHONY: run test lint venv clean-outputs bench local test-live

$(STAMP): requirements.lock requirements-build.lock pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --require-hashes --no-deps -r requirements-build.lock
	$(BIN)/pip install --quiet --require-hashes --no-deps -r requirements.lock
	$(BIN)/pip install --quiet --no-deps --no-build-isolation -e .
	touch $(STAMP)

venv: $(TEST_STAMP)

run: $(STAMP)
	MULTIVERSE_DATA_MIRROR="$(DATA_MIRROR)" $(BIN)/python experiments/make_all.py

# The test lock: the run lock's packages at the same versions, plus the test-only ones (pytest,
# the reference libraries the statistics are checked against, litellm, the browser driver).
$(TEST_STAMP): $(STAMP) requirements-test.lock
	$(BIN)/pip install --quiet --require-hashes --no-deps -r requirements-test.lock
	touch $(TEST_STAMP)

test: $(TEST_STAMP) lint
	$(BIN)/python -m pytest -n 2 tests

lint: $(TEST_STAMP)
	$(BIN)/lint-imports

bench: $(STAMP)
	$(BIN)/python -m benchmarks

# Debian's Chromium for the viewer's browser tests (tests/view), installed with apt when missing;
# the tests skip, saying why, where no Chromium can be had.
.PHONY: browser
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
browser:
	@command -v chromium >/dev/null 2>&1 || { $(SUDO) apt-get update && $(SUDO) apt-get install -y chromium; }
	@chromium --version

# The live local-model tests: the `local` extra (llama-cpp-python compiles from source once;
# pip's wheel cache makes later installs fast) on top of the main lock, then tests/live/.
LOCAL_STAMP := $(VENV)/.installed-local

$(LOCAL_STAMP): $(STAMP) requirements-local.lock
	$(BIN)/pip install --require-hashes --no-deps -r requirements-local.lock
	touch $(LOCAL_STAMP)

local: $(STAMP)
	@if $(BIN)/python -c "import llama_cpp" 2>/dev/null || { command -v cmake && command -v c++; } >/dev/null; then \
		$(MAKE) --no-print-directory $(LOCAL_STAMP); \
	else \
		echo "local: no C++ compiler or cmake: the local extra cannot be built, the live tests skip"; \
	fi

test-live: local
	MULTIVERSE_LIVE=1 MULTIVERSE_LIVE_OUT=$(CURDIR)/runs/live $(BIN)/python -m pytest -p no:xdist -rs tests/live
