# The two commands of the README:
#   make run   installs missing system packages, builds what it runs (the depthmask CLI and the
#              library, libdepthmask.so too; with CUDA, kernels for this machine's GPU, else one PTX), masks the sample
#   make test  builds the rest (tests, benchmarks, examples) and runs every test (GPU tests skip with
#              a reason when there is no GPU); nothing `make run` built is compiled again
# Both configure the same build folder the same way (cmake/cuda-architectures.cmake caches its answer).
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

run: configure
	cmake --build $(BUILD) -j $(JOBS) --target depthmask depthmask_shared
	$(BUILD)/depthmask run --config config/default.yaml

test: build
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

clean:
	rm -rf $(BUILD) out
