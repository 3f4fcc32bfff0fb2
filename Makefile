# The two commands a newcomer needs:
#   make run    install what is missing, build, and record the demo camera into ./Storage
#   make test   install what is missing, build, and run every test
SWIFT ?= $(shell command -v swift || echo /opt/swift/usr/bin/swift)

.PHONY: run test build deps-run deps-test fuzz deb

run: deps-run build
	.build/debug/nvr serve

test: deps-test build
	$(SWIFT) test --no-parallel

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
