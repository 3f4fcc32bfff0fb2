# The two commands a newcomer needs:
#   make run    install what is missing, build, and record the demo camera into ./Storage
#   make test   install what is missing, build, and run every test
SWIFT ?= $(shell command -v swift || echo /opt/swift/usr/bin/swift)

.PHONY: run test test-fast build build-tests deps-run deps-test fuzz deb format lint

run: deps-run build
	.build/debug/nvr serve

# The house rules first (seconds), then the fast tier (in-process, seconds), then the system
# tier (real cameras, browsers, the package) in parallel processes: scripts/test.sh says how.
test: deps-test lint build-tests
	scripts/test.sh

# Only the fast tier: what to run after every change.
test-fast: deps-test build-tests
	scripts/test.sh fast

# House rules, checked first by make test (so by CI), in seconds: every file as swift format
# writes it with .swift-format (`make format` rewrites them so), and every target declaring
# the modules its files import (scripts/check-imports.py).
format:
	scripts/format.sh

lint:
	scripts/format.sh --check
	scripts/check-imports.py

build-tests:
	$(SWIFT) build --build-tests

build:
	$(SWIFT) build

deps-run:
	scripts/install-deps.sh run

deps-test:
	scripts/install-deps.sh test

# Coverage-guided fuzzing of every parser (not part of make test): FUZZ_SECONDS per target.
FUZZ_SECONDS ?= 60
fuzz: deps-run
	bench/fuzz/run.sh $(FUZZ_SECONDS)

# The Debian package (.build-deb/nvr_VERSION_ARCH.deb): sudo apt install ./.build-deb/nvr_*.deb
deb: deps-run
	scripts/build-deb.sh
