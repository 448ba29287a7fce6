# spark-kinesis — every entry point a developer or CI uses. `make test` installs what it needs by itself.
SHELL := /bin/bash
.DEFAULT_GOAL := help

CACHE        ?= $(HOME)/.cache/spark-kinesis
SBT_VERSION  := $(shell sed -n 's/^sbt.version=//p' project/build.properties)
SBT_LAUNCHER := $(CACHE)/sbt-launch-$(SBT_VERSION).jar
SBT_OPTS     ?= -Xmx3g -Xss4m -XX:+UseParallelGC
SBT          := java $(SBT_OPTS) -Dsbt.supershell=false -Dsbt.server.autostart=false -Dsbt.color=false \
                -Dsbt.log.noformat=true -jar $(SBT_LAUNCHER)
VERSION      := $(shell sed -n 's/.*version := "\(.*\)"/\1/p' version.sbt)
SCALA_BIN    := 2.13
ASSEMBLY     := connector/target/scala-$(SCALA_BIN)/spark-kinesis-assembly_$(SCALA_BIN)-$(VERSION).jar
# The second jar, spark-kinesis_2.12 for Spark 3.5 (sbt project connectorSpark35), built from the same sources.
ASSEMBLY_SPARK35 := connector/target/spark3.5/scala-2.12/spark-kinesis-assembly_2.12-$(VERSION).jar
VENV         := .venv
PY           := $(VENV)/bin/python
# PySpark 3.5 for the Spark 3.5 round trip (python/tests-spark35), in a venv of its own.
VENV_SPARK35 := .venv-spark35
PYTHON       ?= python3
EMULATOR     := localstack/kinesis-mock
# PySpark's own Spark distribution, for the tests that run spark-submit (evaluated when used, after the venv exists).
PYTHON_OPTIONS := python/pyspark_kinesis/_options.json
PYSPARK_HOME  = $(shell $(PY) -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))')

.PHONY: dist dist-python dist-sign dist-check help test unit-test integration-test flake-loop python-test python-test-spark35 python-jar python-options build publish-local \
        demo bench bench-smoke emulator-up emulator-down clean deps lint format

help:
	@echo "make test           install what is needed, run unit, integration and Python tests"
	@echo "make lint           ruff lint and format check of the Python code; make format applies ruff and scalafmt"
	@echo "make demo           start the local emulator and run the demo pipeline"
	@echo "make bench          benchmarks (BENCH_QUICK=1 short run); make bench-smoke: the harness's smoke test"
	@echo "make build          the two shaded jars: spark-kinesis_2.13 (Spark 4.x) and spark-kinesis_2.12 (Spark 3.5)"
	@echo "make dist           release artifacts in dist/ (VERSION=x.y.z for a release; GPG_KEY=id signs them); dist-check"
	@echo "make publish-local  publish io.github.sparkkinesis:spark-kinesis_{2.13,2.12}:$(VERSION) to ~/.m2"
	@echo "make emulator-up    start kinesis-mock on 127.0.0.1 and print its endpoint; emulator-down stops it"
	@echo "make clean          remove build output (keeps the downloaded launcher and the venv)"

# --- tools, installed on first use --------------------------------------------------------------------------
$(SBT_LAUNCHER):
	@mkdir -p $(CACHE)
	@echo "Fetching sbt launcher $(SBT_VERSION) with Maven"
	mvn -q -B org.apache.maven.plugins:maven-dependency-plugin:3.8.1:copy \
	  -Dartifact=org.scala-sbt:sbt-launch:$(SBT_VERSION):jar -DoutputDirectory=$(CACHE)

# A venv (the target's folder) from a requirements file (the first prerequisite), the package installed editable.
define MAKE_VENV
	$(PYTHON) -m venv $(@D)
	$(@D)/bin/pip install -q --upgrade pip
	$(@D)/bin/pip install -q -r $<
	$(@D)/bin/pip install -q --no-deps -e python
	touch $@
endef

$(VENV)/.installed: python/requirements-dev.txt python/pyproject.toml
	$(MAKE_VENV)

$(VENV_SPARK35)/.installed: python/requirements-spark35.txt python/pyproject.toml
	$(MAKE_VENV)

localstack/node_modules/.installed: localstack/package.json localstack/package-lock.json
	cd localstack && npm ci --no-audit --no-fund --loglevel=error
	touch $@

deps: $(SBT_LAUNCHER) $(VENV)/.installed $(VENV_SPARK35)/.installed localstack/node_modules/.installed

# --- build ----------------------------------------------------------------------------------------------------
build: $(SBT_LAUNCHER)
	$(SBT) connector/assembly connectorSpark35/assembly < /dev/null

publish-local: $(SBT_LAUNCHER)
	$(SBT) connector/publishM2 connectorSpark35/publishM2 < /dev/null

# The package carries both connector jars, each with the list of what it bundles; the editable installs in the
# venvs see the same folder. Expects the assemblies to be built already (by `build` or by the sbt run of `test`).
python-jar:
	@test -f $(ASSEMBLY) || { echo "$(ASSEMBLY) is missing: run 'make build'"; exit 1; }
	@test -f $(ASSEMBLY_SPARK35) || { echo "$(ASSEMBLY_SPARK35) is missing: run 'make build'"; exit 1; }
	$(PYTHON) -c 'import sys, pathlib; sys.path.insert(0, "."); from release.dist_python import put_jars; \
	  put_jars(pathlib.Path("python/pyspark_kinesis/jars"), [pathlib.Path(j) for j in sys.argv[1:]])' \
	  $(ASSEMBLY) $(ASSEMBLY_SPARK35)
	@# setuptools reuses python/build/lib: a jar left there from another version would ship in the next wheel.
	rm -rf python/build

# The option table the Python builders use on a Spark Connect session, written from KinesisOptions.all by the
# assembly (PySpark's jars give it the Scala library). Committed; PythonOptionsTableSuite fails when it drifts.
python-options: $(VENV)/.installed
	@test -f $(ASSEMBLY) || { echo "$(ASSEMBLY) is missing: run 'make build'"; exit 1; }
	java -cp "$(ASSEMBLY):$(PYSPARK_HOME)/jars/*" io.github.sparkkinesis.options.PythonOptionsTable $(PYTHON_OPTIONS)

# --- tests ----------------------------------------------------------------------------------------------------
# One sbt run: unit tests (both Spark lines), the published artifacts (the --packages tests need them), then the
# integration tests (Spark 4); then the Python tests on PySpark 4 and the Spark 3.5 round trip on PySpark 3.5.
test: deps $(VENV)/.bench-installed lint
	rm -rf $(DIST)
	SPARK_HOME=$(PYSPARK_HOME) $(SBT) scalafmtCheckAll connector/test connectorSpark35/test connector/publishM2 \
	  $(DIST_SBT) $(SIMULATOR_SBT) integrationTests/test < /dev/null
	$(MAKE) python-options python-jar dist-python
	$(VENV)/bin/mypy --strict python/pyspark_kinesis release/*.py release/jobs
	$(PY) -m pytest -q --durations=15
	$(MAKE) python-test-spark35 dist-check

# Python lint and formatting (ruff.toml): checked by `make test`, applied by `make format` (with Scala's scalafmt;
# `make test` checks Scala's formatting in its sbt run, scalafmtCheckAll).
lint: $(VENV)/.installed
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .

format: $(VENV)/.installed $(SBT_LAUNCHER)
	$(VENV)/bin/ruff check --fix .
	$(VENV)/bin/ruff format .
	$(SBT) scalafmtAll < /dev/null

unit-test: $(SBT_LAUNCHER)
	$(SBT) connector/test connectorSpark35/test < /dev/null

# PySpark 3.5 with the spark-kinesis_2.12 jar: sink and source, a restart, AvailableNow, the SQL functions.
# Expects `make python-jar` done (as `test` does it).
python-test-spark35: $(VENV_SPARK35)/.installed localstack/node_modules/.installed
	$(VENV_SPARK35)/bin/python -m pytest -q python/tests-spark35

# One integration suite (or one test of it, TEST="...") RUNS times in one JVM, for flaky tests: every failure with
# its run number, then the tally. E.g. make flake-loop SUITE=SourceReshardingSuite RUNS=100
SUITE ?= SourceReshardingSuite
RUNS  ?= 100
TEST  ?=
flake-loop: deps
	SPARK_HOME=$(PYSPARK_HOME) $(SBT) 'integrationTests/Test/runMain io.github.sparkkinesis.it.tools.FlakeLoop io.github.sparkkinesis.it.$(SUITE) $(RUNS) "$(TEST)"' < /dev/null

integration-test: deps
	SPARK_HOME=$(PYSPARK_HOME) $(SBT) connector/publishM2 integrationTests/test < /dev/null

python-test: deps build
	$(MAKE) python-jar
	$(PY) -m pytest -q
	$(MAKE) python-test-spark35

# --- emulator -------------------------------------------------------------------------------------------------
emulator-up: localstack/node_modules/.installed
	@$(EMULATOR) start

emulator-down:
	@$(EMULATOR) stop

# --- later issues fill these in -------------------------------------------------------------------------------
demo: deps build
	$(MAKE) python-jar
	$(PY) examples/clickstream.py $(DEMO_ARGS)

# Benchmarks (docs/benchmarks.md): the full run writes bench/results/<UTC date>.{json,md,png} and the docs page.
# BENCH_QUICK=1 for a short run, BENCH_REPS=N repetitions, BENCH_STRICT=1 to fail on a missed target.
$(VENV)/.bench-installed: bench/requirements.txt $(VENV)/.installed
	$(VENV)/bin/pip install -q -r bench/requirements.txt
	touch $@

bench: deps $(VENV)/.bench-installed
	$(SBT) connector/assembly simulator/assembly < /dev/null
	$(MAKE) python-jar
	BENCH_SBT="$(SBT)" $(PY) -m bench.run --docs docs/benchmarks.md

# The seconds-long smoke run of the harness (also part of `make test` through pytest's testpaths).
bench-smoke: deps $(VENV)/.bench-installed
	@test -f $(SIMULATOR_JAR) || { echo "$(SIMULATOR_JAR) is missing: run 'make simulator-jar'"; exit 1; }
	$(MAKE) python-jar
	$(PY) -m pytest -q bench/tests

clean:
	rm -rf dist target project/target project/project connector/target integration-tests/target \
	  python/pyspark_kinesis/jars/*.jar python/build python/dist python/*.egg-info localstack/.run localstack/.run-demo

# --- Kinesis simulator (localstack/simulator): quota-enforcing, fault-injecting test server --------------------
SIMULATOR     := localstack/kinesis-simulator
SIMULATOR_JAR := localstack/simulator/target/scala-$(SCALA_BIN)/kinesis-simulator.jar
# What `make test` adds to its sbt run: the simulator's own tests and its runnable jar (the Python tests need it).
SIMULATOR_SBT := simulator/test simulator/assembly
BENCH_ARGS    ?= 10 2 4

.PHONY: simulator-jar simulator-up simulator-down bench-simulator simulator-clean

simulator-jar: $(SBT_LAUNCHER)
	$(SBT) simulator/assembly < /dev/null

simulator-up:
	@test -f $(SIMULATOR_JAR) || $(MAKE) simulator-jar >&2
	@$(SIMULATOR) start

simulator-down:
	@$(SIMULATOR) stop

# Throughput through the raw AWS SDK v2: BENCH_ARGS = seconds, writer threads, shards[, endpoint].
bench-simulator: $(SBT_LAUNCHER)
	$(SBT) "simulator/Test/runMain io.github.sparkkinesis.simulator.SimulatorBench $(BENCH_ARGS)" < /dev/null

python-test: simulator-jar

simulator-clean:
	rm -rf localstack/simulator/target localstack/.run-simulator

clean: simulator-clean

# --- chaos soak (soak/; docs/dev/soak.md) --------------------------------------------------------------------------
# A seeded chaos run per reader mode (polling, efo): a boto3 producer, the source on local-cluster[2,1,1024] through
# spark-submit into an idempotent sink, faults from the seed's plan, then the checks. SEED replays a run (default: a
# new seed, printed); MINUTES of chaos per mode; SOAK_ARGS e.g. "--modes efo --keep" (or "--modes pipeline-kpl":
# the query writes to a second stream with the connector's sink, see soak-pipeline). Results in soak/results/.
SEED      ?=
MINUTES   ?= 10
SOAK_ARGS ?=

.PHONY: soak soak-pipeline

soak: $(SBT_LAUNCHER) $(VENV)/.installed
	$(SBT) connector/assembly connectorSpark35/assembly simulator/assembly < /dev/null
	$(MAKE) python-jar
	SPARK_HOME=$(PYSPARK_HOME) $(PY) -m soak.run $(if $(SEED),--seed $(SEED)) --minutes $(MINUTES) $(SOAK_ARGS)

# The pipeline modes: A -> source -> sink -> B, plain and aggregation=kpl (docs/dev/soak.md, "Pipeline mode").
soak-pipeline:
	$(MAKE) soak SOAK_ARGS="--modes pipeline,pipeline-kpl $(SOAK_ARGS)"

# --- release artifacts (docs/dev/releasing.md) -----------------------------------------------------------------
# dist/maven: a Maven repository with spark-kinesis_2.13 and _2.12 (the shaded jar as the main artifact, sources,
# Scaladoc as -javadoc.jar, POM, .md5/.sha1); dist/python: the wheel and sdist. The version is version.sbt's, or
# VERSION=0.1.0 on the command line; GPG_KEY=<key id> adds .asc signatures (gpg, the key in the caller's keyring).
DIST      := dist
SBT_VERSION_OVERRIDE = $(if $(filter command line,$(origin VERSION)),'set ThisBuild / version := "$(VERSION)"')
DIST_SBT   = $(SBT_VERSION_OVERRIDE) connector/thirdPartyCheck connectorSpark35/thirdPartyCheck connector/publish \
             connectorSpark35/publish
GPG_KEY   ?=

dist: $(SBT_LAUNCHER) $(VENV)/.installed
	rm -rf $(DIST)
	$(SBT) $(DIST_SBT) < /dev/null
	$(MAKE) dist-python $(if $(GPG_KEY),dist-sign)
	@find $(DIST) -type f ! -name '*.md5' ! -name '*.sha1' | sort

# An ASCII-armoured detached signature (.asc) beside every file of dist/ but the checksums, as Maven Central wants.
dist-sign:
	@test -n "$(GPG_KEY)" || { echo "GPG_KEY=<key id> names the signing key (in the caller's GnuPG keyring)"; exit 1; }
	find $(DIST) -type f ! -name '*.md5' ! -name '*.sha1' ! -name '*.asc' -print0 | \
	  xargs -0 -n1 gpg --batch --yes --local-user "$(GPG_KEY)" --armor --detach-sign

dist-python: $(VENV)/.installed
	$(PY) -m release.dist_python --version $(VERSION) --out $(DIST)/python $(ASSEMBLY) $(ASSEMBLY_SPARK35)

# The artifacts used as a user uses them (release/tests): the wheel in a new venv, --packages from dist/maven on a
# standalone cluster, each Spark line's newest PySpark. Expects `make dist` and the simulator jar (as `test` has them).
dist-check: $(VENV)/.installed localstack/node_modules/.installed
	@test -d $(DIST)/maven -a -d $(DIST)/python || { echo "$(DIST)/ is incomplete: run 'make dist'"; exit 1; }
	@test -f $(SIMULATOR_JAR) || { echo "$(SIMULATOR_JAR) is missing: run 'make simulator-jar'"; exit 1; }
	SPARK_KINESIS_CACHE=$(CACHE) $(PY) -m pytest -q --durations=10 release/tests
