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
# make fuzz explores each target for this long (a count of inputs); make test runs the seeds only.
FUZZTIME ?= 30000x

# The version stamp of every binary and the tag of the images (internal/version); the images' registry
# is also the binaries' default for the images the operator deploys.
VERSION  ?= $(or $(shell git describe --tags --always --dirty 2>/dev/null | sed 's/^v//'),0.0.0-dev)
REVISION ?= $(shell git rev-parse HEAD 2>/dev/null)
REGISTRY ?= ghcr.io/otelop
# Commit time: the images' creation time, so that a commit always gives the same digests.
SOURCE_DATE_EPOCH ?= $(or $(shell git log -1 --format=%ct 2>/dev/null),0)
VERSION_PKG := github.com/otelop/otelop/internal/version
LDFLAGS := -X $(VERSION_PKG).Version=$(VERSION) -X $(VERSION_PKG).Revision=$(REVISION) -X $(VERSION_PKG).ImageRegistry=$(REGISTRY)
# The binaries that get an image: every directory of cmd/ (override to build fewer).
IMAGES ?= $(notdir $(wildcard cmd/*))

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN{FS=":.*##"} /^[a-zA-Z_-]+:.*##/{printf "  %-18s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

##@ The two commands

.PHONY: run
run: run-tools build ## Start a local simulated cluster, install CRDs, run the operator, apply the samples. Ctrl-C tears it down.
	bin/simcluster run --operator bin/opentelemetry-operator --crds config/crd/bases --samples config/samples

.PHONY: test
test: ## Build what is missing, then run every test (unit, envtest, simulated cluster, real node, Flux) and check that every required suite ran (hack/test.sh).
	hack/test.sh

##@ Building

.PHONY: build
build: ## Build the binaries (and the simcluster CLI) into bin/, stamped with VERSION and REVISION (-trimpath: another clone reuses the build cache).
	go build -trimpath -ldflags "$(LDFLAGS)" -o bin/ ./cmd/... ./hack/simcluster

.PHONY: images
images: ## Build an OCI image of each binary (linux/amd64+arm64, reproducible, no Docker) into bin/images/<binary>/.
	go run ./hack/images build --version=$(VERSION) --revision=$(REVISION) --created=$(SOURCE_DATE_EPOCH) \
	  --registry=$(REGISTRY) --out=bin/images $(IMAGES)

.PHONY: push
push: images ## Push the images to REGISTRY/<binary>:VERSION, e.g. make push REGISTRY=localhost:5000/otelop; after make release, also the chart to oci://REGISTRY/charts; with SIGNING_KEY=<key>, sign them (make sign).
	go run ./hack/images push --version=$(VERSION) --registry=$(REGISTRY) --out=bin/images $(IMAGES)
	@if [ -f bin/release/opentelemetry-operator-$(VERSION).tgz ]; then \
	  cd test/chart && go run ./cmd/release push-chart -chart ../../bin/release/opentelemetry-operator-$(VERSION).tgz -to oci://$(REGISTRY)/charts; \
	else echo "no bin/release/opentelemetry-operator-$(VERSION).tgz: the chart is pushed after make release VERSION=$(VERSION)"; fi
	@if [ -n "$(SIGNING_KEY)" ]; then $(MAKE) --no-print-directory sign; fi

# Sign (make push SIGNING_KEY=cosign.key) and verify (make verify-signatures PUBLIC_KEY=cosign.pub) in
# cosign's format: after make release VERSION=<v>, the chart and the images' SBOMs too (docs/signing.md).
RELEASE_SIGN_ARGS = --registry=$(REGISTRY) --version=$(VERSION) $(if $(wildcard bin/release/opentelemetry-operator-$(VERSION).tgz),--sboms=bin/release/sbom --chart=oci://$(REGISTRY)/charts/opentelemetry-operator:$(VERSION)) $(IMAGES)

.PHONY: sign
sign: ## Sign the pushed images by digest (and chart, attesting the SBOMs, after make release) with SIGNING_KEY (PEM; encrypted: COSIGN_PASSWORD). Key: go run ./hack/images keygen.
	@test -n "$(SIGNING_KEY)" || { echo "make sign needs SIGNING_KEY=<PEM private key>; create one with go run ./hack/images keygen"; exit 1; }
	go run ./hack/images sign --key=$(SIGNING_KEY) $(RELEASE_SIGN_ARGS)

.PHONY: verify-signatures
verify-signatures: ## Verify the pushed images' (and chart's, SBOM attestations') signatures with PUBLIC_KEY (cosign.pub).
	@test -n "$(PUBLIC_KEY)" || { echo "make verify-signatures needs PUBLIC_KEY=<PEM public key>"; exit 1; }
	go run ./hack/images verify --key=$(PUBLIC_KEY) $(RELEASE_SIGN_ARGS)

CHART_DIR     := charts/opentelemetry-operator
# Chart version and appVersion (the operator image's tag); not SemVer (e.g. a bare commit) becomes 0.0.0-dev+<it>.
CHART_VERSION ?= $(VERSION)

.PHONY: chart
chart: ## Package the Helm chart into bin/charts/ (CHART_VERSION=<version> sets its version and image tag).
	cd test/chart && go run ./cmd/chart-package -chart ../../$(CHART_DIR) -out ../../bin/charts -version "$(CHART_VERSION)"

RELEASE_DIR := bin/release

.PHONY: release
release: ## Build the images and write the release into bin/release/: opentelemetry-operator.yaml (kubectl apply --server-side -f), the chart .tgz, an SPDX SBOM per image binary (needs a SemVer VERSION).
	cd test/chart && go run ./cmd/release -repo ../.. -out ../../$(RELEASE_DIR) -images ../../bin/images -build \
	  -version "$(VERSION)" -registry "$(REGISTRY)" -revision "$(REVISION)" -created "$(SOURCE_DATE_EPOCH)" $(IMAGES)

.PHONY: cluster-tools
cluster-tools: ## Build kube-apiserver, controller-manager, scheduler, kubectl, kubelet, etcd, kwok and a collector with the opamp extension from Go modules (only what is missing; see the tool cache in hack/build-tools.sh).
	hack/build-tools.sh k8s kubelet etcd kwok otelcol

.PHONY: run-tools
run-tools: ## Build only what make run starts: kube-apiserver, controller-manager, scheduler, kubectl, etcd and kwok.
	hack/build-tools.sh k8s etcd kwok

.PHONY: test-realnode
test-realnode: cluster-tools ## Run only the real-node tests (kubelet + containerd, pods that really run; needs root, installs containerd/runc/CNI from Debian). RUN=<regexp> picks tests.
	go test -count=1 -v -timeout 10m $(if $(RUN),-run '$(RUN)') ./test/realnode/...

.PHONY: test-system
test-system: cluster-tools build ## The service provider's whole-system test (test/system): real Flux installs our chart, then upstream's kube-stack, into a control plane and a simulated workload cluster; the chart's operator (ours, upstream's) runs against it.
	hack/build-tools.sh flux upstream-operator
	@echo "==> whole system: provider + Flux + chart + operator (test/system)"
	cd test/system && go test $(GO_TEST_FLAGS) -count=1 -v ./...

.PHONY: sim-up
sim-up: run-tools ## Keep a simulated cluster running in the foreground and print its kubeconfig path.
	go build -o bin/ ./hack/simcluster
	bin/simcluster up

.PHONY: bench-ta
bench-ta: ## Target allocator vs upstream's (v0.140.0) on the same data in one run: cold load, 10% changed, unchanged, with and without relabel rules, 10 collectors, 1k-100k targets; prints the ratios (bench/README.md).
	go run ./bench/targetallocator/fair

.PHONY: bench
bench: cluster-tools build ## Every benchmark: the operator (memory, convergence, API writes), at scale, the pod webhook's latency, the target allocator vs upstream (~65 min; see bench/README.md).
	go run ./bench/operator --operator=bin/opentelemetry-operator
	$(MAKE) --no-print-directory bench-scale bench-podwebhook bench-ta

.PHONY: bench-scale
bench-scale: cluster-tools build ## The operator at scale: 1,000 mixed-mode collectors vs the floor, churn of 100, the --max-concurrent-reconciles study, RSS with 50,000 objects, two shards splitting 1,000 collectors (~25 min; see bench/README.md).
	go run ./bench/operator --operator=bin/opentelemetry-operator --scenarios=scale,churn,mcr,bignoise --floor-all --timeout=20m
	$(MAKE) --no-print-directory bench-shard

.PHONY: bench-shard
bench-shard: run-tools ## test/shard at 1,000 collectors (make test runs it at 100): two operator processes split them, audit log per identity (~5 min).
	OTELOP_SHARD_COLLECTORS=1000 go test -count=1 -v -timeout 30m ./test/shard

.PHONY: bench-podwebhook
bench-podwebhook: cluster-tools build ## Benchmark the pod webhook's admission latency against a do-nothing webhook's (the floor) on the simulated cluster (~3 min; see bench/README.md).
	go run ./bench/podwebhook --operator=bin/opentelemetry-operator

##@ Generated code

.PHONY: generate
generate: ## Regenerate deepcopy code and CRDs (operator CRDs into config/crd/bases, service-provider CRDs into config/service-provider/crd) and the chart's copies of config/default.
	@hack/build-tools.sh controller-gen >/dev/null
	@if [ -d api ]; then \
	  $(CONTROLLER_GEN) object:headerFile=hack/boilerplate.go.txt paths=./api/...; fi
	@if [ -d api/v1beta1 ]; then \
	  $(CONTROLLER_GEN) crd:generateEmbeddedObjectMeta=true paths=./api/v1alpha1/... paths=./api/v1beta1/... output:crd:artifacts:config=config/crd/bases; fi
	@$(CONTROLLER_GEN) rbac:roleName=manager-role paths=./internal/operator/... output:rbac:artifacts:config=config/rbac
	@if [ -d api/serviceprovider ]; then \
	  $(CONTROLLER_GEN) crd:generateEmbeddedObjectMeta=true paths=./api/serviceprovider/... output:crd:artifacts:config=config/service-provider/crd; fi
	@# The official collector distributions' components, for the collector webhook's image check.
	@if [ -d ../shared/fixtures/collector-distributions ]; then go run ./hack/gendistributions; \
	  else echo "!! ../shared/fixtures/collector-distributions is missing: internal/distributions/zz_generated.go was not regenerated" >&2; fi
	@# The chart's CRDs, RBAC and webhook configurations are copied from what config/default renders.
	@if [ -f test/chart/go.mod ]; then cd test/chart && go run ./cmd/chart-sync -repo ../.. -chart $(CHART_DIR) && \
	  go run ./cmd/chart-values -chart ../../$(CHART_DIR); fi

.PHONY: generate-check
generate-check: generate ## Fail when generated files differ from what is committed.
	@if [ -n "$$(git status --porcelain -- api config/crd config/rbac config/service-provider/crd internal/distributions $(CHART_DIR)/files $(CHART_DIR)/charts 2>/dev/null)" ]; then \
	  echo "generated files are stale; run 'make generate' and commit:"; git status --porcelain -- api config/crd config/rbac config/service-provider/crd internal/distributions $(CHART_DIR)/files $(CHART_DIR)/charts; exit 1; fi

##@ Checks

.PHONY: fuzz
fuzz: ## Explore each fuzz target for $(FUZZTIME) (a count of inputs, or a duration like 10s); make test runs their seeds.
	@hack/fuzz.sh $(FUZZTIME)

.PHONY: lint
lint: ## Run golangci-lint.
	hack/build-tools.sh golangci-lint
	$(GOLANGCI_LINT) run ./...

.PHONY: tools
tools: ## Build every tool (cluster binaries, controller-gen, golangci-lint).
	hack/build-tools.sh all
