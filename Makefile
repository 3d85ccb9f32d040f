# The two commands a newcomer needs are `make run` and `make test`; `make help` lists the rest.
SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec

K8S_VERSION ?= v1.37.2
K8S_BIN     := $(CURDIR)/bin/k8s/$(K8S_VERSION)
TOOLS_BIN   := $(CURDIR)/bin/tools
CONTROLLER_GEN := $(TOOLS_BIN)/controller-gen
GOLANGCI_LINT  := $(TOOLS_BIN)/golangci-lint
export KUBEBUILDER_ASSETS := $(K8S_BIN)
# Test packages that start API servers share 2 cores; one package at a time keeps them inside their timeouts.
GO_TEST_FLAGS ?= -p 1 -timeout 30m
FUZZTIME ?= 10s

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN{FS=":.*##"} /^[a-zA-Z_-]+:.*##/{printf "  %-18s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

##@ The two commands

.PHONY: run
run: cluster-tools build ## Start a local simulated cluster, install CRDs, run the operator, apply the samples. Ctrl-C tears it down.
	bin/simcluster run --operator bin/opentelemetry-operator --crds config/crd/bases --samples config/samples

.PHONY: test
test: cluster-tools generate-check ## Build what is missing, then run every test: unit, envtest, simulated cluster, short fuzz runs.
	go test $(GO_TEST_FLAGS) ./...
	@if [ -f test/compat/go.mod ]; then echo "==> upstream API compatibility (test/compat)"; cd test/compat && go test $(GO_TEST_FLAGS) ./...; fi
	$(MAKE) --no-print-directory fuzz

##@ Building

.PHONY: build
build: ## Build the binaries (and the simcluster CLI) into bin/.
	go build -o bin/ ./cmd/... ./hack/simcluster

.PHONY: cluster-tools
cluster-tools: ## Build kube-apiserver, controller-manager, scheduler, kubectl, etcd, kwok and a collector with the opamp extension from Go modules (only what is missing).
	hack/build-tools.sh k8s etcd kwok otelcol

.PHONY: sim-up
sim-up: cluster-tools ## Keep a simulated cluster running in the foreground and print its kubeconfig path.
	go build -o bin/ ./hack/simcluster
	bin/simcluster up

.PHONY: bench-ta
bench-ta: ## Target allocator: our BenchmarkProcessTargets vs upstream's (v0.140.0, throwaway module bench/targetallocator/upstream); see bench/README.md.
	go test -run '^$$' -bench 'BenchmarkProcessTargets' -benchtime=3x -benchmem ./internal/targetallocator/pipeline/
	cd bench/targetallocator/upstream && go test -run '^$$' -bench 'BenchmarkProcessTargets' -benchtime=3x -benchmem github.com/open-telemetry/opentelemetry-operator/cmd/otel-allocator

.PHONY: bench
bench: cluster-tools build ## Benchmark the operator on the simulated cluster: memory, convergence, API writes (~20 min; see bench/README.md).
	go run ./bench/operator --operator=bin/opentelemetry-operator

##@ Generated code

.PHONY: generate
generate: ## Regenerate deepcopy code and CRDs (operator CRDs into config/crd/bases, service-provider CRDs into config/service-provider/crd).
	@hack/build-tools.sh controller-gen >/dev/null
	@if [ -d api ]; then \
	  $(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths=./api/...; fi
	@if [ -d api/v1beta1 ]; then \
	  $(CONTROLLER_GEN) crd:generateEmbeddedObjectMeta=true paths=./api/v1alpha1/... paths=./api/v1beta1/... output:crd:artifacts:config=config/crd/bases; fi
	@$(CONTROLLER_GEN) rbac:roleName=manager-role paths=./internal/operator/... output:rbac:artifacts:config=config/rbac
	@if [ -d api/serviceprovider ]; then \
	  $(CONTROLLER_GEN) crd:generateEmbeddedObjectMeta=true paths=./api/serviceprovider/... output:crd:artifacts:config=config/service-provider/crd; fi

.PHONY: generate-check
generate-check: generate ## Fail when generated files differ from what is committed.
	@if [ -n "$$(git status --porcelain -- api config/crd config/rbac config/service-provider/crd 2>/dev/null)" ]; then \
	  echo "generated files are stale; run 'make generate' and commit:"; git status --porcelain -- api config/crd config/rbac config/service-provider/crd; exit 1; fi

##@ Checks

.PHONY: fuzz
fuzz: ## Run each fuzz target for $(FUZZTIME).
	@hack/fuzz.sh $(FUZZTIME)

.PHONY: lint
lint: ## Run golangci-lint.
	hack/build-tools.sh golangci-lint
	$(GOLANGCI_LINT) run ./...

.PHONY: tools
tools: ## Build every tool (cluster binaries, controller-gen, golangci-lint).
	hack/build-tools.sh all
