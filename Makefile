# gpuwise: `make demo` and `make test` are the two set-up commands; both install what is
# missing (scripts/bootstrap), build, and run.
BUILD ?= build
# One GCC build serves the tests, the demo, the Python module and the package check: Release, as a
# packager builds it (with the tests and -Werror on top), so CI compiles the project once with GCC.
BUILD_TYPE ?= Release
JOBS ?= $(shell nproc)
# UNITY=ON compiles the CLI and the tests in batches (GPUWISE_UNITY, below): a cold build of the
# two took 150 s instead of 401 on two cores (2026-12-06), so CI (.ci/run) builds that way. Off
# by default: an edit recompiles its own file, and every file is compiled alone as a packager
# compiles it, so one that leans on another's includes fails here first.
UNITY ?= OFF
# ccache hits across checkouts (CI builds a fresh clone in another folder): paths under the
# checkout are hashed relative to it, and the build folder is left out of the hash.
export CCACHE_BASEDIR ?= $(CURDIR)
export CCACHE_NOHASHDIR ?= true

.PHONY: all bootstrap configure build demo test package-check python release-clang sanitize-configure test-asan fuzz bench clean

all: build

bootstrap:
	@scripts/bootstrap

configure: bootstrap
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=$(BUILD_TYPE) -DGPUWISE_WERROR=ON -DGPUWISE_SHARED=ON -DGPUWISE_UNITY=$(UNITY) >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

demo: build
	./$(BUILD)/gpuwise plan examples/chat-azure.yaml

test: build
	@ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)
	@$(MAKE) --no-print-directory package-check

# The packager's configuration checked (Release, no -Werror, no tests), then the package made from
# the Release build's objects: installed into a scratch prefix, examples/embed built against the
# installed package, the .deb made, unpacked and run.
package-check: configure
	@scripts/package_check $(BUILD)

# The Python package in $(BUILD)/python (the module needs the shared library's
# position-independent objects, which the Release build makes).
python: configure
	@cmake --build $(BUILD) -j $(JOBS) --target gpuwise gpuwise_python
	@echo "PYTHONPATH=$(BUILD)/python python3 -c 'import gpuwise'"

# A Release build with clang (warnings as errors), the tool planning the demo. CI leaves it out:
# the sanitizer build compiles every source with clang and -Werror, and plans the demo.
release-clang: bootstrap
	@CC=clang CXX=clang++ cmake -S . -B $(BUILD)-release-clang -G Ninja -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF \
	  -DGPUWISE_BENCH=OFF -DGPUWISE_WERROR=ON >/dev/null
	@cmake --build $(BUILD)-release-clang -j $(JOBS) --target gpuwise gpuwise_shared
	@./$(BUILD)-release-clang/gpuwise plan examples/chat-azure.yaml --no-simulate | tail -1

# The sanitizer build: clang with AddressSanitizer, UndefinedBehaviorSanitizer and libFuzzer's
# coverage on every object, line tables only for the reports' file:line. One build serves the
# suite under the sanitizers (test-asan), the tool planning the demo (the project's clang build)
# and the fuzz targets (fuzz). The CLI and the tests are compiled in batches here (GPUWISE_UNITY):
# each CLI file would compile CLI11's inline code again (10 s a file under the sanitizers), each
# test file GoogleTest's; batched, they took 330 s of CPU instead of about 870 (2026-12-05). So
# helpers in a test file's anonymous namespace need names no other test file uses (and a CLI
# file's, no other CLI file): src/test_helper_names_test.cc checks it in every build.
SANITIZE_FLAGS = -O2 -gline-tables-only -DNDEBUG
sanitize-configure: bootstrap
	@CC=clang CXX=clang++ cmake -S . -B $(BUILD)-fuzz -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$(SANITIZE_FLAGS)" -DCMAKE_C_FLAGS_RELWITHDEBINFO="$(SANITIZE_FLAGS)" \
	  -DGPUWISE_BENCH=OFF -DGPUWISE_WERROR=ON -DGPUWISE_SHARED=OFF -DGPUWISE_FUZZ=ON -DGPUWISE_UNITY=ON >/dev/null

# The suite under ASan and UBSan (with leak checks), and the demo planned by that build. Left
# out here (the Release suite runs them): the tests that plan whole examples end to end
# again and again, 45-190 s each under the sanitizers (measured 2026-12-04 and 2026-12-05: the
# last three, 96, 52 and 45 s, were a fifth of the suite's time; 2026-12-06: the 405B plans with
# their manifests, 84 and 64 s, and the fleet with a model on nodes of its own, 47 s; the reserved
# floors' notes, two examples planned and their scaling simulated a day; the disaggregated pools'
# autoscalers written from a day simulated, 92 s, and the pools plan picks scaled unasked, 72 s; and
# the two schedule studies that simulate a day at each lead time, 131-182 s and 56-83 s in the
# last three cold runs, the longest test of the suite), whose parts
# (planner, simulator, renderers, schemas, scaling policies, cron schedules) each have their own
# tests in this run.
ASAN_SKIP = ^(Report\.PlanJsonValidatesAgainstItsSchema|CliPerf\.CalibrateWritesFactorsPlansCanUse|Report\.PlanSimulationAndFitHtmlRenderInChromium|VerifyPlan\.GrownPlanIsTheCheapestOfEveryLayoutGrown|CliPlan\.PlansTheExamplesAndReportsCosts|ScalingPlan\.AzureHoursQueueDepthAgainstStaticByReplicaLayout|TrainingPlanClusters\.MultiNodeJobsRunOnAFabricOrATpuSlice|Report\.ScaleJsonValidatesAgainstItsSchema|CliCounts\.UnitSuffixesMeanTheNumbers|Library\.QuestionsEqualTheCliByteForByte|Report\.EveryOtherCommandsJsonValidatesAgainstItsSchema|ScalingPlan\.WeekdayDevEndpointPaysNothingAtTheWeekendWhenScaledToZero|CliSimulate\.ExplainGivesTheStepErrorContributionOnTheAzureTrace|CliPlan\.SlowReplicasOnAProfileGetCronTriggersAhead|CliPlan\.ReplicasAcrossNodesArePlannedAndWrittenAsGroupsOfPods|SharedPools\.AModelTooBigForOneGpuGetsNodesOfItsOwn|CliPlan\.EmitK8sSaysToReserveTheFloorTheAutoscalerWasBilledAt|CliPlan\.EmitK8sScalesDisaggregatedPoolsWhereThatPays|ScalingPlan\.ThePoolsThePlanPicksAreScaledUnasked|ScalingPlan\.ScaleSuggestsTheScheduleWhereQueueDepthFellBehindTheRamp|ScalingPlan\.AScheduleStartsSlowReplicasAheadOfTheRamp)$$
test-asan: sanitize-configure
	@cmake --build $(BUILD)-fuzz -j $(JOBS) --target gpuwise gpuwise_tests gpuwise_vidur_side_by_side gpuwise_training_accuracy gpuwise_operator_accuracy
	@./$(BUILD)-fuzz/gpuwise plan examples/chat-azure.yaml --no-simulate | tail -1
	@ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 ctest --test-dir $(BUILD)-fuzz --output-on-failure -j $(JOBS) -E '$(ASAN_SKIP)'

# libFuzzer targets for every reader, each run FUZZ_SECONDS, from the same build.
FUZZ_SECONDS ?= 300
FUZZ_SEED ?= 0
fuzz: sanitize-configure
	@cmake --build $(BUILD)-fuzz -j $(JOBS) --target fuzz_targets
	@FUZZ_SEED=$(FUZZ_SEED) fuzz/run $(BUILD)-fuzz $(FUZZ_SECONDS)

bench: configure
	@cmake --build $(BUILD) -j $(JOBS) --target gpuwise_bench gpuwise gpuwise_perf_accuracy gpuwise_operator_accuracy gpuwise_sim_speed gpuwise_training_accuracy gpuwise_telemetry_speed gpuwise_vidur_side_by_side gpuwise_screen_vs_simulation
	./$(BUILD)/gpuwise_bench
	bench/cli_latency.sh $(BUILD)/gpuwise
	bench/plan_services.sh $(BUILD)
	./$(BUILD)/gpuwise_operator_accuracy
	./$(BUILD)/gpuwise_training_accuracy bench/training_measurements.csv .
	taskset -c 0 ./$(BUILD)/gpuwise_sim_speed 1000000
	./$(BUILD)/gpuwise_sim_speed 10000000
	./$(BUILD)/gpuwise_vidur_side_by_side bench/profiles/vidur-7d47513 examples/traces/azure-llm-2023-conv.csv bench/vidur_reference.csv
	bench/telemetry_vs_duckdb.sh $(BUILD) 10000000
	-./$(BUILD)/gpuwise_screen_vs_simulation examples  # exits 1 while the LLM screen is over 15% from the simulation
	$(MAKE) --no-print-directory python && PYTHONPATH=$(BUILD)/python /usr/bin/python3 bench/python_sweep.py
	./$(BUILD)/gpuwise_perf_accuracy bench/perf_measurements.csv  # last: exits 1 while (b) misses its budget

clean:
	rm -rf $(BUILD) $(BUILD)-fuzz $(BUILD)-release-clang
