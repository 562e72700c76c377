# BlipScope: the commands the README promises, each with its set-up.
#   make test   installs missing system packages, builds, runs every test
#   make demo   installs missing system packages, builds in release mode, runs the main job
#   make test-loaded  runs every test with LOAD_JOBS busy processes beside it (timing flakes)
#   make fuzz   builds the libFuzzer targets in Fuzz/ (ASan) and runs each for FUZZ_SECONDS
#   make soak   builds in release mode and runs `blipscope-bench soak` for SOAK_MESSAGES numbered messages
#               (`make test` runs a short soak too: Tests/SoakTests)
SWIFT ?= swift
# chromium, python3 and a font: the web view's browser test (headless Chromium over the DevTools protocol).
# redis-server: the Redis client's tests and the fleet's (they start their own server); haproxy: the fleet's tests.
SYSTEM_PACKAGES := libpcap-dev zlib1g-dev libisal-dev libssl-dev tshark openssl prometheus chromium python3 fonts-dejavu-core \
	redis-server haproxy
# `make bench` also compares the relay with nginx as a blind WebSocket proxy and with a bare
# SwiftNIO TCP forwarder (the CPU floor of its library).
BENCH_PACKAGES := nginx-light
BIN := .build/release/blipscope
# The benchmarks are a tool of their own: it runs the blipscope beside it as its relay.
BENCH_BIN := .build/release/blipscope-bench

# make soak: 200 churning sessions through a relay child; exits non-zero when the run fails its target.
SOAK_MESSAGES ?= 10000000
SOAK_SESSIONS ?= 200

# Fuzzing: Fuzz/ is a package of its own (the main package never sees the sanitizer flags).
# --sanitize fuzzer: SwiftPM then links libFuzzer's main() (without it, it points main at the
#   target's own entry point, which a fuzz target does not have) and instruments C code;
# -Xswiftc -sanitize=fuzzer,address: coverage and ASan for Swift, in one flag (swiftc keeps only
#   the last -sanitize=, so `--sanitize fuzzer --sanitize address` leaves Swift uninstrumented);
# -Xcc -fsanitize=address: ASan for C (Yams' libyaml); -enable-testing: two targets read the
#   relay's internals. SWIFT_BACKTRACE=enable=no: the runtime's backtracer would hold a crash.
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= $(sort $(notdir $(wildcard Fuzz/Corpus/fuzz-*)))
FUZZ_SCRATCH := Fuzz/.build-fuzz
FUZZ_BUILD_FLAGS := -c release --package-path Fuzz --scratch-path $(FUZZ_SCRATCH) --sanitize fuzzer \
	-Xswiftc -sanitize=fuzzer,address -Xcc -fsanitize=address -Xswiftc -enable-testing
# New inputs go to Fuzz/.corpus/<target> (kept between runs), findings to Fuzz/Crashes/<target>/
# with the run's log beside them; the seeds in Fuzz/Corpus/<target> are only read.
FUZZ_OPTIONS := -timeout=25 -rss_limit_mb=2048 -print_final_stats=1 $(FUZZ_EXTRA)

.PHONY: setup build release release-bench test test-loaded demo bench soak clean fuzz fuzz-build

setup:
	@missing=""; for p in $(SYSTEM_PACKAGES) $(EXTRA_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  echo "wireshark-common wireshark-common/install-setuid boolean false" | $$SUDO debconf-set-selections 2>/dev/null || true; \
	  $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	  $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi

build: setup
	$(SWIFT) build

# Release builds leave out Swift's dynamic exclusivity checks, in every module (SwiftNIO's
# included): on the relay's busiest path they were 6 % of its user-space instructions per round
# trip (go-blip's peers, workload A: 31,175 with them, 29,298 without). The compiler's static
# checks still apply, and debug builds (`make test`) keep the dynamic ones.
RELEASE_FLAGS := -Xswiftc -enforce-exclusivity=unchecked

release: setup
	$(SWIFT) build -c release --product blipscope $(RELEASE_FLAGS)

release-bench: release
	$(SWIFT) build -c release --product blipscope-bench $(RELEASE_FLAGS)

test: setup
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

# The tests beside LOAD_JOBS processes that only spin: CI's machine has two cores and runs every
# suite at once, so a test that leans on wall-clock time shows up here before it flakes there.
LOAD_JOBS ?= 4
test-loaded: setup
	$(SWIFT) build --build-tests
	@pids=""; trap 'kill $$pids 2>/dev/null' EXIT INT TERM; \
	  for i in $$(seq $(LOAD_JOBS)); do sh -c 'while :; do :; done' & pids="$$pids $$!"; done; \
	  $(SWIFT) test --skip-build

demo: release
	$(BIN) demo

bench:
	$(MAKE) release-bench EXTRA_PACKAGES="$(BENCH_PACKAGES)"
	$(BENCH_BIN) codec
	$(BENCH_BIN) relay --nginx --floor --placement spread,free
	@if [ -n "$$BLIPSCOPE_GOBLIP_PEER" ]; then $(BENCH_BIN) relay --nginx --floor --placement free --goblip "$$BLIPSCOPE_GOBLIP_PEER"; fi
	@if [ -n "$$BLIPSCOPE_VALGRIND" ]; then $(BENCH_BIN) instructions; fi
	$(BENCH_BIN) pull
	$(BENCH_BIN) analyzer

soak: release-bench
	$(BENCH_BIN) soak --messages $(SOAK_MESSAGES) --sessions $(SOAK_SESSIONS)

fuzz-build: setup
	$(SWIFT) build $(FUZZ_BUILD_FLAGS)

fuzz: fuzz-build
	@bin=$(FUZZ_SCRATCH)/release; failed=""; \
	for target in $(FUZZ_TARGETS); do \
	  mkdir -p Fuzz/.corpus/$$target Fuzz/Crashes/$$target; \
	  log=Fuzz/Crashes/$$target.log; \
	  SWIFT_BACKTRACE=enable=no $$bin/$$target $(FUZZ_OPTIONS) -max_total_time=$(FUZZ_SECONDS) \
	    -artifact_prefix=Fuzz/Crashes/$$target/ Fuzz/.corpus/$$target Fuzz/Corpus/$$target >$$log 2>&1; \
	  status=$$?; \
	  runs=$$(sed -n 's/^stat::number_of_executed_units: *//p' $$log | tail -1); \
	  if [ $$status -eq 0 ]; then \
	    printf '%-26s %12s executions\n' $$target "$${runs:-?}"; \
	  else \
	    printf '%-26s %12s executions, FAILED (exit %s): %s\n' $$target "$${runs:-?}" $$status \
	      "$$(ls -t Fuzz/Crashes/$$target | head -1)"; \
	    grep -m1 -E 'Fatal error|ERROR: (AddressSanitizer|libFuzzer)' $$log || tail -5 $$log; \
	    failed="$$failed $$target"; \
	  fi; \
	done; \
	if [ -n "$$failed" ]; then echo "fuzz findings in:$$failed (inputs under Fuzz/Crashes/, logs beside them)"; exit 1; fi

clean:
	rm -rf .build
