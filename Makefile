# Every target installs what it needs into .venv first (pinned in requirements.txt).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed-stamp
export TF_CPP_MIN_LOG_LEVEL := 2

.PHONY: install demo test lint format bench clean

$(STAMP): requirements.txt setup.cfg setup.py
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	$(BIN)/python -m pip install --quiet --no-deps -e .
	touch $(STAMP)

install: $(STAMP)

# An unmodified TF1 program (it writes its own CSV files) run on TensorFlow 2 through
# compat_input, then the same program on TensorFlow's own queues, and the two compared.
demo: $(STAMP)
	@echo "== compat-input run examples/csv_batch.py (TF1 code, TensorFlow 2, tf.data)"
	@$(BIN)/compat-input run examples/csv_batch.py > $(VENV)/demo-compat.txt 2> $(VENV)/demo-compat.err \
		|| { cat $(VENV)/demo-compat.err; exit 1; }
	@cat $(VENV)/demo-compat.txt
	@grep "compat-input:" $(VENV)/demo-compat.err
	@echo "== the same program on TensorFlow's own tf.compat.v1 queues"
	@$(BIN)/compat-input run --legacy examples/csv_batch.py > $(VENV)/demo-legacy.txt 2> /dev/null
	@diff $(VENV)/demo-legacy.txt $(VENV)/demo-compat.txt && echo "identical output on legacy queues and on compat_input"

# Every differential test (legacy queues vs compat_input) runs in both worlds: TF1 behaviour,
# where users run (the whole suite), then TF2 behaviour with eager execution off and
# install() (code converted by tf_upgrade_v2). tests/conftest.py reads the world.
DIFFERENTIAL := tests/test_batching.py tests/test_producers.py tests/test_readers.py \
	tests/test_vectorize.py tests/test_reliability.py tests/test_faults.py \
	tests/test_many_pipelines.py tests/test_testing_api.py tests/test_seeds.py \
	tests/test_random_draws.py tests/test_queues.py \
	tests/test_queue_runner_tf.py tests/test_priority_queue.py \
	tests/test_contrib_training.py tests/test_state_saving.py \
	tests/test_run_time_sizes.py tests/test_legacy_fallback.py tests/test_fill_levels.py \
	tests/test_split_tokens.py tests/test_position_costs.py

test: $(STAMP)
	$(BIN)/ruff check compat_input tools tests
	COMPAT_INPUT_WORLD=tf1 $(BIN)/python -m pytest -n auto tests
	COMPAT_INPUT_WORLD=tf2 $(BIN)/python -m pytest -n auto $(DIFFERENTIAL)

lint: $(STAMP)
	$(BIN)/ruff check compat_input tools tests
	$(BIN)/ruff format --check compat_input tools tests

format: $(STAMP)
	$(BIN)/ruff format compat_input tools tests

bench: $(STAMP)
	$(BIN)/python -m pip install --quiet -r benchmarks/requirements.txt
	$(BIN)/python benchmarks/whole.py
	$(BIN)/python benchmarks/run.py
	$(BIN)/python benchmarks/faults.py | tee benchmarks/results/faults.md
	$(BIN)/python benchmarks/service.py | tee benchmarks/results/service.md
	$(BIN)/python benchmarks/close.py | tee benchmarks/results/close.md
	$(BIN)/python benchmarks/fetch_sets.py | tee benchmarks/results/fetch-sets-latest.md

clean:
	rm -rf $(VENV) *.egg-info .pytest_cache .ruff_cache
