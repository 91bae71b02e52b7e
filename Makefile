# Chime: the two commands are `make run` and `make test`; both install what is missing first.
SHELL := /bin/bash
export PATH := $(PATH):/opt/swift/usr/bin
SWIFT_FLAGS ?= -Xswiftc -warnings-as-errors
DATA ?= $(HOME)/.local/share/chime
# At most 12 tests at a time (Swift Testing's own setting). Test bodies run on threads of their own
# (the .testThreads trait, docs/architecture.md "Tests on two cores"), so they never hold the two
# threads of Swift's pool that the ~90 in-process services answer on.
export SWT_EXPERIMENTAL_MAXIMUM_PARALLELIZATION_WIDTH ?= 12

.PHONY: run test build deps test-deps bench fuzz fuzz-differential schemathesis screenshots clean examples abuse external-package soak format format-check

deps:
	@scripts/install-deps.sh build

test-deps:
	@scripts/install-deps.sh test

build: deps
	swift build $(SWIFT_FLAGS)

## make run: build and start the main job in the foreground.
run: deps
	swift build $(SWIFT_FLAGS) --product chime
	.build/debug/chime serve --data "$(DATA)"

## make test: build everything with warnings as errors and pass every test (and every fuzz target's
## smoke: it builds, runs its committed corpus and 10,000 inputs from -seed=1 without a finding).
test: test-deps format-check
	swift build --build-tests $(SWIFT_FLAGS)
	scripts/desktop-test-env.sh >/dev/null
	scripts/with-test-postgres.sh swift test --skip-build
	@scripts/install-deps.sh fuzz
	scripts/fuzz.sh --smoke
	SWIFT_FLAGS="$(SWIFT_FLAGS)" scripts/external-package.sh
	scripts/check-examples.sh
	scripts/readme-walkthrough.sh
	scripts/schemathesis.sh
	CHIME_BIN=.build/debug/chime scripts/web-tests.sh

## make format: format every Swift file with swift-format (.swift-format); make format-check (part of
## make test) changes nothing and fails on a file that is not formatted.
format:
	scripts/format.sh

format-check:
	scripts/format.sh --check

## make bench: release build, then the benchmarks (prints a table; see docs/benchmarks.md).
bench:
	@scripts/install-deps.sh bench
	scripts/bench.sh

## make fuzz: every libFuzzer target (Fuzz/), FUZZ_SECONDS (default 60) each; findings in Fuzz/findings/.
fuzz:
	@scripts/install-deps.sh fuzz
	scripts/fuzz.sh

## make fuzz-differential: recurrence rules against python-dateutil and JWTs against PyJWT on generated
## inputs (DIFFERENTIAL_CASES, default 2000; DIFFERENTIAL_SEED, default from the clock).
fuzz-differential: test-deps
	swift build --build-tests $(SWIFT_FLAGS)
	scripts/fuzz-differential.sh $(or $(DIFFERENTIAL_CASES),2000) $(DIFFERENTIAL_SEED)

## make abuse: bounded attacks on loopback (slowloris, floods, subscribers that never read, revoked
## credentials, malformed and smuggling requests, damaged stores) against a fresh release `chime serve`;
## prints a table of attack → outcome (docs/security.md). ABUSE_ARGS: e.g. "--only slowloris --quick".
abuse: deps
	swift build -c release $(SWIFT_FLAGS) --product chime
	python3 scripts/abuse/run.py --chime .build/release/chime $(ABUSE_ARGS)

## make soak: 30 minutes of steady load (1,000 adds/s with deliveries, answers, acknowledgements and
## event streams) on a fresh release `chime serve`, sampling its memory and open descriptors every 10 s;
## fails if either grows. SOAK_SECONDS, SOAK_RATE; CHIME_BIN to soak another build.
soak: deps
	@if [ -z "$(CHIME_BIN)" ]; then swift build -c release $(SWIFT_FLAGS) --product chime; fi
	python3 scripts/soak.py --chime "$${CHIME_BIN:-.build/release/chime}" --seconds "$${SOAK_SECONDS:-1800}" \
	  --rate "$${SOAK_RATE:-1000}" --out "$${SOAK_OUT:-.build/soak.csv}"

## make external-package: the app-code package in Tests/ExternalPackage, built once, `swift test` 20 times.
external-package: test-deps
	SWIFT_FLAGS="$(SWIFT_FLAGS)" scripts/external-package.sh

## make schemathesis: the live server against its own /openapi.json (no 5xx, responses as documented).
schemathesis: test-deps
	scripts/schemathesis.sh

## make screenshots: pictures of the web center (light/dark, wide/phone), of a desktop pop-up and of a pushed
## notification (the web center's service worker, in Chromium on Xvfb) in docs/images/.
screenshots: deps
	@scripts/install-deps.sh screenshots
	swift build $(SWIFT_FLAGS) --product chime
	CHIME_BIN=.build/debug/chime PYTHONDONTWRITEBYTECODE=1 "$$(scripts/web-tests.sh --venv-only)" scripts/screenshots.py
	CHIME_BIN=.build/debug/chime scripts/desktop-screenshot.sh
	CHIME_BIN=.build/debug/chime scripts/push-screenshot.sh

examples: deps
	swift build $(SWIFT_FLAGS) --product alarm --product drinking-reminder --product show-me --product organizer

clean:
	rm -rf .build Tests/ExternalPackage/.build
