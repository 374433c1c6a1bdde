# One task runner, the same checks locally and in CI (.ci/run calls `make test`).
# `run` and `test` create .venv and install the project on a fresh machine.

VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
# First Python 3.11+ found; override with `make PYTHON=/path/to/python3.12 venv`.
PYTHON ?= $(shell command -v python3.11 || command -v python3)

.PHONY: venv run test test-s3 test-slow lint bench screenshots bundle clean distclean

venv: $(STAMP)

# Re-installs only when pyproject.toml is newer than the stamp (or .venv is missing).
$(STAMP): pyproject.toml
	@if [ ! -x $(BIN)/python ]; then \
		if [ -z "$(PYTHON)" ]; then echo "Python 3.11+ not found: install python3.11 (or python3 >= 3.11)" >&2; exit 1; fi; \
		$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
			|| { echo "$(PYTHON) is older than 3.11; run make PYTHON=/path/to/python3.11" >&2; exit 1; }; \
		echo "Creating $(VENV) with $(PYTHON)"; \
		$(PYTHON) -m venv $(VENV); \
	fi
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test]'
	@touch $(STAMP)

run: venv
	$(BIN)/inspector gui

test: venv
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest

# The HQ and sync suites again with HQ's files in an S3 bucket (a moto server on loopback).
test-s3: venv
	HQ_TEST_BLOBS=s3 QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest tests/hq tests/sync

test-slow: venv
	QT_QPA_PLATFORM=offscreen $(BIN)/python -m pytest -m slow

lint: venv
	$(BIN)/python -m ruff check .
	$(BIN)/python -m mypy
	$(BIN)/lint-imports

bench: venv
	$(BIN)/python -m benchmarks

# The user guide's screenshots (docs/screenshots/), from the real windows on a temporary demo store.
screenshots: venv
	QT_QPA_PLATFORM=offscreen $(BIN)/python tools/screenshots.py docs/screenshots

# One-folder desktop bundle in dist/inspector/ (PyInstaller), then its smoke test.
bundle: venv
	@$(BIN)/python -c 'import PyInstaller' 2>/dev/null || $(BIN)/python -m pip install --quiet --disable-pip-version-check pyinstaller
	$(BIN)/python -m PyInstaller --noconfirm --clean --log-level WARN \
		--distpath dist --workpath build/pyinstaller build_spec/inspector.spec
	bash build_spec/smoke.sh dist/inspector/inspector

clean:
	rm -rf build dist *.egg-info .mypy_cache .ruff_cache .pytest_cache .hypothesis .import_linter_cache
	find . -path ./$(VENV) -prune -o -name __pycache__ -type d -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV)
