# videorl-kit: two commands do all the set-up on a fresh machine.
#   make run   - create .venv, install, generate the synthetic demo data, build the frame cache
#   make test  - create .venv, install everything the tests need, run the whole test suite
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
KIT    := $(VENV)/bin/videorl-kit
EXTRAS := torch,video,torchcodec,data,train,eval,ray,dev
STORE  ?= store
SYNTH  ?= data/synth

.PHONY: run test install lint format bench clean

$(VENV)/.installed: pyproject.toml setup.py
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e ".[$(EXTRAS)]"
	touch $@

install: $(VENV)/.installed

run: install
	$(KIT) synth $(SYNTH)
	$(KIT) validate task_specs/*.yaml
	$(KIT) build-cache task_specs/*.yaml --store $(STORE)

test: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	CI=$${CI:-true} $(PY) -m pytest -q

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: install
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

bench: install
	$(PY) benchmarks/bench_rewards.py
	$(PY) benchmarks/bench_sandbox.py
	$(PY) benchmarks/bench_cache.py
	$(PY) benchmarks/bench_spec.py
	$(PY) benchmarks/bench_eval.py

clean:
	rm -rf $(VENV) $(STORE) $(SYNTH) .pytest_cache .ruff_cache
