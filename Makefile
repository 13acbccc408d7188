# The two commands of the README:
#   make run   installs missing system packages, builds, and masks the committed sample
#   make test  builds and runs every test (GPU tests skip with a reason when there is no GPU)
BUILD ?= build
JOBS ?= $(shell nproc)
CMAKE_ARGS ?=

.PHONY: all deps configure build run test clean

all: build

deps:
	bash scripts/install-deps.sh

configure: deps
	cmake -S . -B $(BUILD) -G Ninja -C cmake/release-options.cmake $(CMAKE_ARGS)

build: configure
	cmake --build $(BUILD) -j $(JOBS)

run: build
	$(BUILD)/depthmask run --config config/default.yaml

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

clean:
	rm -rf $(BUILD) out
