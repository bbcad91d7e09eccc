# buzz-operator — every target installs or starts what it needs (idempotently); caches live in
# ~/.cache/buzz-operator, runtime state in /var/tmp/buzz-operator.
SHELL := /bin/bash
VENV := .venv
PY := $(VENV)/bin/python
PYTEST := $(VENV)/bin/pytest
export KUBECONFIG ?= /var/tmp/buzz-operator/pki/kubeconfig

.PHONY: help install deps lint format test test-unit test-harbor test-integration test-e2e test-realstack faults \
        cluster-up cluster-down cluster-status registry gvisor kueue-up kueue-down services images stack-image crds bench soak demo clean chart kind-up kind-down test-kind

help:  ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | column -t -s $$'\t'

install: ## create .venv and install buzz-operator with its dev extras
	@bash hack/venv.sh

deps: ## install the Debian packages the local stack needs
	@bash hack/deps.sh

lint: install ## ruff over the package, tests, tasks and benchmarks
	@$(VENV)/bin/ruff check operator tests tasks bench

format: install
	@$(VENV)/bin/ruff check --fix operator tests tasks bench

cluster-up: ## the local single-node Kubernetes (built from Debian's source on first use)
	@bash hack/cluster-up.sh

cluster-down: ## stop the cluster and its services; leaves no process, mount, bridge, chain or cgroup
	@bash hack/cluster-down.sh

cluster-status: ## what of the local stack runs
	@bash hack/cluster-status.sh

gvisor: cluster-up ## gVisor on the local cluster: runsc's handler in containerd and the RuntimeClass gvisor (docs/isolation.md#gvisor)
	@bash hack/gvisor.sh runtimeclass
	@bash hack/gvisor.sh status

kueue-up: cluster-up ## Kueue v0.17 on the local cluster, built from its Go module (docs/queueing.md#the-local-kueue)
	@bash hack/kueue.sh up

kueue-down: ## remove the local Kueue (webhooks first)
	@bash hack/kueue.sh down

services: ## Postgres and the S3 test server on private ports
	@bash hack/postgres.sh up
	@bash hack/s3.sh up

registry: images ## the local image registry (TLS, htpasswd login; docs/registry.md) with every built image pushed
	@bash hack/registry.sh up
	@bash hack/registry.sh push

images: install ## build every image (base, pause, operator, stack, dev relay, task images) and import them
	@bash hack/images.sh build pause base operator dev-relay stack tasks

stack-image: install ## a folder-layout stack image of BUZZ_BIN_DIR's Linux binaries (sprig, or buzz-acp, …), imported; prints its reference
	@bash hack/images.sh stack-image "$(BUZZ_BIN_DIR)"

crds: install ## regenerate crds/ from the pydantic API models
	@$(PY) -m buzz_operator.api.crdgen

test-unit: install
	@$(PYTEST) -q -rs -n 2 tests/unit

test-harbor: install ## Harbor's own code (each release in its own venv, hack/harbor.sh) reads what the project writes
	@$(PYTEST) -q tests/harbor

test-integration: install cluster-up services images
	@$(PYTEST) -q tests/integration

test-e2e: install cluster-up services images
	@$(PYTEST) -q tests/e2e

test-realstack: install cluster-up services images ## Block's real agents (BUZZ_STACK_DIR) and relay (BUZZ_RELAY_BIN) through the operator; skipped, saying which is unset (docs/real-stack.md)
	@$(PYTEST) -q -rs tests/realstack

faults: install cluster-up services images ## fault-injection tests that print figures
	@$(PYTEST) -q -s tests/faults

# every tier; the unit tier first because it needs nothing and fails fastest
test: install lint ## every test tier (unit, integration, e2e), starting whatever they need
	@$(PYTEST) -q -rs -n 2 tests/unit
	@for r in $$(bash hack/harbor.sh releases); do bash hack/harbor.sh venv $$r >/dev/null || exit 1; done
	@$(PYTEST) -q tests/harbor
	@bash hack/cluster-up.sh
	@bash hack/postgres.sh up
	@bash hack/s3.sh up
	@bash hack/images.sh build pause base operator dev-relay stack tasks
	@bash hack/registry.sh up
	@bash hack/registry.sh push
	@$(PYTEST) -q -p no:cacheprovider tests/integration $(wildcard tests/e2e/test_*.py) $(wildcard tests/faults/test_*.py)
	@$(PYTEST) -q -rs -p no:cacheprovider tests/realstack

bench: install cluster-up services ## performance benchmarks, 3 runs each, then one table: figure, target, median and spread, pass/miss
	@$(PY) bench/run.py

# not in `test`: 1,000 real trials take hours here; BUZZ_SOAK_TRIALS=100 for a shorter run
soak: install cluster-up services images registry ## 1,000 trials, two replicas, the leader SIGKILLed every 20-60 s; prints what was committed and left (tests/faults/soak_random_kills.py)
	@$(PYTEST) -q -s -p no:cacheprovider tests/faults/soak_random_kills.py

chart: install ## helm lint and template of charts/buzz-operator (default and ci/ values); helm from hack/helm.sh
	@H=$$(bash hack/helm.sh)/helm; $$H lint --strict charts/buzz-operator \
	  && for f in charts/buzz-operator/ci/*.yaml; do $$H lint --strict charts/buzz-operator -f $$f || exit 1; \
	     $$H template buzz charts/buzz-operator -f $$f >/dev/null || exit 1; done \
	  && $$H template buzz charts/buzz-operator >/dev/null && echo "chart: lint and template ok"

kind-up: install ## kind cluster (Docker, else podman) from the project's node image, NetworkPolicy enforced, chart with self-contained values, sample sweep and its results (docs/local-cluster.md#kind)
	@bash hack/kind-up.sh

kind-down: ## remove the kind cluster kind-up made, and what kind leaves behind
	@bash hack/kind-down.sh

# not in `test` (docs/local-cluster.md#kind says what it costs): kind-up, the chart and
# NetworkPolicy tests against the kind cluster, kind-down, and a check that nothing is left
test-kind: install ## the kind tier: make kind-up, the chart and NetworkPolicy tests on it, kind-down leaving nothing behind
	@bash hack/kind-up.sh
	@PATH=$$(. hack/lib.sh; echo $$BIN):$$PATH KUBECONFIG=/var/tmp/buzz-operator/kind/kubeconfig BUZZ_SKIP_CLUSTER_UP=1 BUZZ_KIND=1 \
	  $(PYTEST) -q -rs tests/kind/test_kind_cluster.py \
	  tests/integration/chart/test_network_policy.py tests/integration/chart/test_network_policy_phases.py \
	  tests/integration/chart/test_pod_security.py; rc=$$?; bash hack/kind-down.sh || rc=1; \
	  BUZZ_KIND=1 $(PYTEST) -q -rs tests/kind/test_nothing_left.py || rc=1; exit $$rc

demo: ## the local stack, the operator and the sample sweeps of the buzz-native tasks; prints the results
	@bash hack/demo.sh

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
