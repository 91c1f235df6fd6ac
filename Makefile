# sandbox-mcp: build, run and test. `make help` lists the targets.
SHELL := /bin/bash
.DEFAULT_GOAL := help

# Java 25 is required: infra/host/find-jdk.sh finds it (JAVA_HOME, /usr/lib/jvm, or javac on PATH).
JAVA_HOME := $(shell JAVA_HOME="$(JAVA_HOME)" infra/host/find-jdk.sh)
export JAVA_HOME
JAVA := $(if $(JAVA_HOME),$(JAVA_HOME)/bin/java,java)
MVN := mvn -B --no-transfer-progress

JAR := app/target/sandbox-mcp.jar
ENV_FILE := .env
RUN_ADDR ?= 127.0.0.1:18080
RUN_WORKSPACE ?= $(CURDIR)/workspace
BASE_PATH ?= /mcp-sandbox
INTEROP_DIRS := tests/interop/sdk-1.17.3 tests/interop/sdk-latest

# Container settings (make up / deploy). Two containers: the server, as a user of its own, and
# the runner (commands and files), as your UID:GID; never root.
SERVER_IMAGE ?= sandbox-mcp-server:local
RUNNER_IMAGE ?= sandbox-mcp-runner:local
SERVER_BASE_IMAGE ?= sandbox-mcp-server-base:local
RUNNER_BASE_IMAGE ?= sandbox-mcp-runner-base:local
# The runner's toolchains: SANDBOX_TOOLCHAINS, from your environment or the command line
# (`make image SANDBOX_TOOLCHAINS=go,java`), reaches infra/image/build-base.sh, which holds the
# default and what each brings; changing the list rebuilds the runner's base on the next `make image`.
PROXY_IMAGE ?= sandbox-mcp-proxy:local
HOST_UID := $(shell id -u)
HOST_GID := $(shell id -g)
SANDBOX_UID ?= $(if $(filter 0,$(HOST_UID)),1000,$(HOST_UID))
SANDBOX_GID ?= $(if $(filter 0,$(HOST_UID)),1000,$(HOST_GID))
SANDBOX_SERVER_UID ?= 65532
SANDBOX_SERVER_GID ?= 65532
SANDBOX_WORKSPACE ?= $(HOME)/Development
SANDBOX_PORT ?= 18080
# The runner's HOME (caches, ~/go, ~/.npm...): a named volume kept by `make down`, stored in this
# directory of yours; `make clean-home` removes both.
SANDBOX_HOME_VOLUME ?= sandbox-mcp-home
SANDBOX_HOME_DIR ?= $(or $(XDG_DATA_HOME),$(HOME)/.local/share)/sandbox-mcp/home
COMPOSE_FILE := infra/compose/compose.yaml
# Written by `make up` (infra/compose/protect-git.sh): the workspace's git config and hooks, read-only.
GIT_OVERRIDE := infra/compose/protect-git.generated.yaml
SANDBOX_PROTECT_GIT ?= on
SANDBOX_PROTECT_GIT_DEPTH ?= 4
# Egress by allow-list (docs/egress.md): empty, the runner has no network; set, the proxy and
# its two networks are laid over the pair. down and logs always name both files.
SANDBOX_EGRESS_ALLOW ?=
SANDBOX_EGRESS_ALLOW_PRIVATE ?=
export SANDBOX_EGRESS_ALLOW SANDBOX_EGRESS_ALLOW_PRIVATE
EGRESS_COMPOSE_FILE := infra/compose/compose.egress.yaml
# The proxy's record of allowed requests (docs/egress.md): a Docker volume kept by `make down`.
SANDBOX_EGRESS_LOG_VOLUME ?= sandbox-mcp-egress-log
COMPOSE_BIN := $(shell docker compose version >/dev/null 2>&1 && echo "docker compose" || echo docker-compose) -p sandbox-mcp
COMPOSE := $(COMPOSE_BIN) -f $(COMPOSE_FILE)$(if $(strip $(SANDBOX_EGRESS_ALLOW)), -f $(EGRESS_COMPOSE_FILE))
COMPOSE_ALL := $(COMPOSE_BIN) -f $(COMPOSE_FILE) -f $(EGRESS_COMPOSE_FILE)
# What compose needs, derived here so that only the token's digest enters the container.
COMPOSE_ENV = SANDBOX_SERVER_IMAGE=$(SERVER_IMAGE) SANDBOX_RUNNER_IMAGE=$(RUNNER_IMAGE) \
  SANDBOX_UID=$(SANDBOX_UID) SANDBOX_GID=$(SANDBOX_GID) SANDBOX_SERVER_UID=$(SANDBOX_SERVER_UID) SANDBOX_SERVER_GID=$(SANDBOX_SERVER_GID) \
  SANDBOX_WORKSPACE="$(SANDBOX_WORKSPACE)" SANDBOX_PORT=$(SANDBOX_PORT) SANDBOX_HOME_VOLUME=$(SANDBOX_HOME_VOLUME) \
  SANDBOX_EGRESS_LOG_VOLUME=$(SANDBOX_EGRESS_LOG_VOLUME) \
  SANDBOX_PROXY_IMAGE=$(PROXY_IMAGE) SANDBOX_EGRESS_HOST_ADDRESSES="$$(hostname -I 2>/dev/null)" \
  MCP_AUTH_TOKEN_SHA256=$$(sed -n 's/^MCP_AUTH_TOKEN=//p' $(ENV_FILE) 2>/dev/null | tr -d '\r\n' | sha256sum | cut -d' ' -f1)
# Once make up has written it, the audit reports each repository the override does not protect.
AUDIT_PROTECTED = $(if $(wildcard $(GIT_OVERRIDE)),--protected $(GIT_OVERRIDE))
# What the workspace must not hold (this checkout, your home, the runner's home, the audit's state).
CHECK_WORKSPACE = SANDBOX_HOME_DIR="$(SANDBOX_HOME_DIR)" infra/compose/check-workspace.sh "$(SANDBOX_WORKSPACE)"
TRAEFIK_DYNAMIC_DIR ?=
VERIFY_FLAGS ?=
TAILNET_HOST ?=
URL ?= http://127.0.0.1:$(SANDBOX_PORT)$(BASE_PATH)

.PHONY: help deps deps-test build run test token interop-deps clean base-image image up down clean-home logs egress-log deploy verify lint bench bench-prepare bench-scaling bench-costs audit audit-report watch-install watch-uninstall

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-14s %s\n", $$1, $$2}'

deps: ## install what the bundle needs (Debian 12/13, Ubuntu 22.04/24.04) and check the JDK and Docker; safe to rerun
	@infra/host/deps.sh

deps-test: ## deps, plus what make test needs (Node.js, shellcheck)
	@infra/host/deps.sh --tests

build: ## build the runnable jar (app/target/sandbox-mcp.jar)
	$(MVN) -pl app -am package -DskipTests

token: $(ENV_FILE) ## create .env (mode 0600) with a random 48-character token, unless it exists

$(ENV_FILE):
	@umask 077; token=$$(tr -dc 'A-Za-z0-9' < /dev/urandom | head -c 48); \
	  printf '# sandbox-mcp secrets: never commit this file\nMCP_AUTH_TOKEN=%s\n' "$$token" > $(ENV_FILE)
	@chmod 600 $(ENV_FILE)
	@echo "created $(ENV_FILE) with a new random token (mode 0600)"

run: build token ## build, then serve ./workspace on 127.0.0.1:18080 (the runner as a child process)
	@mkdir -p "$(RUN_WORKSPACE)"
	@echo "Streamable HTTP: http://$(RUN_ADDR)$(BASE_PATH)/mcp"
	@echo "SSE (legacy):    http://$(RUN_ADDR)$(BASE_PATH)/sse"
	@echo "Token:           MCP_AUTH_TOKEN in $(CURDIR)/$(ENV_FILE)"
	@set -a; . ./$(ENV_FILE); set +a; \
	  MCP_ADDR=$(RUN_ADDR) MCP_BASE_PATH=$(BASE_PATH) MCP_WORKSPACE="$(RUN_WORKSPACE)" \
	  exec $(JAVA) --enable-native-access=ALL-UNNAMED -XX:+DisableAttachMechanism -XX:-EnableDynamicAgentLoading -jar $(JAR)

interop-deps: ## install the TypeScript SDK clients from their lockfiles
	@for dir in $(INTEROP_DIRS); do (cd $$dir && npm ci --no-audit --no-fund --loglevel=error) || exit 1; done

test: interop-deps ## run every test: unit, integration, interop, and e2e when a Docker daemon answers
	@if docker info >/dev/null 2>&1; then \
	  $(MAKE) --no-print-directory image; \
	else \
	  echo "*** make test: no Docker daemon answers: the container e2e tests will be SKIPPED (start Docker to run them)"; \
	fi
	$(MVN) verify

base-image: ## build the two base images from Debian packages (no registry needed)
	infra/image/build-base.sh runner $(RUNNER_BASE_IMAGE)
	infra/image/build-base.sh server $(SERVER_BASE_IMAGE)

image: ## build the server and runner images into the local Docker daemon with Jib, each with its AOT cache
	@if [ "$(HOST_UID)" = 0 ] && [ "$(origin SANDBOX_UID)" = file ]; then \
	  echo "make image: you are root; the runner's user will be $(SANDBOX_UID):$(SANDBOX_GID) (set SANDBOX_UID/SANDBOX_GID to change)"; fi
	SERVER_IMAGE=$(SERVER_IMAGE) RUNNER_IMAGE=$(RUNNER_IMAGE) SERVER_BASE_IMAGE=$(SERVER_BASE_IMAGE) \
	  RUNNER_BASE_IMAGE=$(RUNNER_BASE_IMAGE) PROXY_IMAGE=$(PROXY_IMAGE) SANDBOX_UID=$(SANDBOX_UID) SANDBOX_GID=$(SANDBOX_GID) \
	  SANDBOX_SERVER_UID=$(SANDBOX_SERVER_UID) SANDBOX_SERVER_GID=$(SANDBOX_SERVER_GID) MVN="$(MVN)" infra/image/build-images.sh

up: image token ## start the locked-down container on 127.0.0.1:18080 (workspace: ~/Development)
	@if [ ! -d "$(SANDBOX_WORKSPACE)" ]; then \
	  mkdir -p "$(SANDBOX_WORKSPACE)" && chown $(SANDBOX_UID):$(SANDBOX_GID) "$(SANDBOX_WORKSPACE)" && \
	  echo "created $(SANDBOX_WORKSPACE) for $(SANDBOX_UID):$(SANDBOX_GID)"; fi
	@$(CHECK_WORKSPACE)
	@infra/compose/home-volume.sh create $(SANDBOX_HOME_VOLUME) "$(SANDBOX_HOME_DIR)" $(SANDBOX_UID):$(SANDBOX_GID)
	@# A runner still up could swap a checked path for a link or a FIFO before compose mounts it: it
	@# is stopped first (with every process a command left), and compose starts it again below.
	$(COMPOSE_ENV) $(COMPOSE) stop runner
	SANDBOX_PROTECT_GIT=$(SANDBOX_PROTECT_GIT) SANDBOX_PROTECT_GIT_DEPTH=$(SANDBOX_PROTECT_GIT_DEPTH) \
	  infra/compose/protect-git.sh "$(SANDBOX_WORKSPACE)" $(GIT_OVERRIDE)
	@$(if $(strip $(SANDBOX_EGRESS_ALLOW)),set -o pipefail; infra/proxy/egress-proxy.sh --check | sed 's/^/egress /',echo "egress: off (the runner has no network; set SANDBOX_EGRESS_ALLOW to allow names)")
	@# With egress, networks first: their gateways are host addresses the proxy must refuse, and
	@# SANDBOX_EGRESS_HOST_ADDRESSES (hostname -I) is read when the next command starts.
	@$(if $(strip $(SANDBOX_EGRESS_ALLOW)),docker volume inspect $(SANDBOX_EGRESS_LOG_VOLUME) >/dev/null 2>&1 || \
	  { docker volume create $(SANDBOX_EGRESS_LOG_VOLUME) >/dev/null && echo "created the egress log volume $(SANDBOX_EGRESS_LOG_VOLUME)"; })
	$(if $(strip $(SANDBOX_EGRESS_ALLOW)),$(COMPOSE_ENV) $(COMPOSE) -f $(GIT_OVERRIDE) up --no-start --remove-orphans)
	$(COMPOSE_ENV) $(COMPOSE) -f $(GIT_OVERRIDE) up -d --remove-orphans
	@$(MAKE) --no-print-directory audit-report
	@echo "sandbox-mcp is up: $(URL)/mcp (Streamable HTTP), $(URL)/sse (SSE); token: MCP_AUTH_TOKEN in $(CURDIR)/$(ENV_FILE)"
	@echo "check it with: make verify"

down: ## stop and remove the containers (and the egress proxy), their networks and their socket volume (the home and egress log volumes stay)
	$(COMPOSE_ENV) $(COMPOSE_ALL) down --volumes
	@$(MAKE) --no-print-directory audit-report

clean-home: ## remove the runner's home volume and its directory (caches, ~/go...), after asking
	@infra/compose/home-volume.sh remove $(SANDBOX_HOME_VOLUME) "$(SANDBOX_HOME_DIR)"

logs: ## follow the containers' logs (audit lines on stdout; the egress proxy's too)
	$(COMPOSE_ENV) $(COMPOSE_ALL) logs -f

egress-log: ## print the egress proxy's record of allowed requests, oldest first (kept by make down; docs/egress.md)
	@docker volume inspect $(SANDBOX_EGRESS_LOG_VOLUME) >/dev/null 2>&1 || \
	  { echo "make egress-log: no volume $(SANDBOX_EGRESS_LOG_VOLUME) (make up makes it when SANDBOX_EGRESS_ALLOW is set)"; exit 1; }
	@docker run --rm --network none --read-only --user 13:13 -v $(SANDBOX_EGRESS_LOG_VOLUME):/log:ro --entrypoint bash \
	  $(PROXY_IMAGE) -c 'cd /log && for f in $$(ls allowed.log.* 2>/dev/null | sort -t. -k3,3nr) allowed.log; do [[ ! -f $$f ]] || cat $$f; done'

deploy: up ## up + Traefik route into TRAEFIK_DYNAMIC_DIR for TAILNET_HOST + Tailscale Funnel
	@[ -n "$(TRAEFIK_DYNAMIC_DIR)" ] || { echo "make deploy: set TRAEFIK_DYNAMIC_DIR (your Traefik file-provider directory)"; exit 2; }
	@[ -d "$(TRAEFIK_DYNAMIC_DIR)" ] || { echo "make deploy: TRAEFIK_DYNAMIC_DIR=$(TRAEFIK_DYNAMIC_DIR) is not a directory"; exit 2; }
	@[ -n "$(TAILNET_HOST)" ] || { echo "make deploy: set TAILNET_HOST (e.g. node.tailnet.ts.net)"; exit 2; }
	@# Written beside, then renamed: Traefik's watcher never loads half a file (it ignores *.tmp).
	SANDBOX_PORT=$(SANDBOX_PORT) infra/traefik/render.sh "$(TAILNET_HOST)" > "$(TRAEFIK_DYNAMIC_DIR)/sandbox-mcp.yml.tmp"
	mv -f "$(TRAEFIK_DYNAMIC_DIR)/sandbox-mcp.yml.tmp" "$(TRAEFIK_DYNAMIC_DIR)/sandbox-mcp.yml"
	@echo "Traefik route written to $(TRAEFIK_DYNAMIC_DIR)/sandbox-mcp.yml"
	infra/tailscale/funnel.sh on
	@echo "public URL: https://$(TAILNET_HOST)$(BASE_PATH)/mcp  (check it with: make verify URL=https://$(TAILNET_HOST)$(BASE_PATH))"

verify: build token ## check a deployment, its egress mode too: make verify [URL=https://node.tailnet.ts.net/mcp-sandbox]
	@set -a; . ./$(ENV_FILE); set +a; $(JAVA) --enable-native-access=ALL-UNNAMED -jar $(JAR) verify --egress $(VERIFY_FLAGS) "$(URL)"; \
	  status=$$?; $(MAKE) --no-print-directory audit-report; exit $$status

ACCEPT ?=
audit: build ## on the host: list what in the workspace would run commands on the host; ACCEPT=1 records it as known
	@$(CHECK_WORKSPACE)
	@$(JAVA) --enable-native-access=ALL-UNNAMED -jar $(JAR) audit $(if $(filter 1 yes true,$(ACCEPT)),--accept) $(AUDIT_PROTECTED) "$(SANDBOX_WORKSPACE)"

watch-install: build ## on the host: a systemd user unit that reports within seconds what is planted in the workspace (journalctl --user -u sandbox-mcp-audit-watch)
	@$(CHECK_WORKSPACE)
	@infra/host/watch-unit.sh install "$(JAVA)" $(JAR) "$(SANDBOX_WORKSPACE)" $(wildcard $(CURDIR)/$(GIT_OVERRIDE))

watch-uninstall: ## stop and remove that unit
	@infra/host/watch-unit.sh uninstall

# up, down and verify show what is new without failing.
audit-report:
	@if [ -f $(JAR) ]; then $(JAVA) --enable-native-access=ALL-UNNAMED -jar $(JAR) audit $(AUDIT_PROTECTED) "$(SANDBOX_WORKSPACE)"; status=$$?; \
	  [ $$status != 1 ] || echo "make audit: review what is new above; accept what you trust with: make audit ACCEPT=1"; \
	  [ $$status != 2 ] || echo "*** make audit: the audit did not run (above): nothing in the workspace was checked"; fi

# The benchmark's three entry points share one preparation: the reference server's npm install
# and the app and bench jars. $(call bench_main,<class>,<arguments>)
bench_main = $(JAVA) -cp "bench/target/sandbox-mcp-bench.jar:$$(cat bench/target/classpath.txt)" dev.sandboxmcp.bench.$(1) . $(2)
bench-prepare:
	@cd bench/node && npm ci --no-audit --no-fund --loglevel=error
	$(MVN) -pl app,bench -am package -DskipTests

BENCH_SECONDS ?= 5
bench: ## benchmark ours against the reference Node server; writes BENCHMARKS.md (not part of make test)
	@if docker info >/dev/null 2>&1; then $(MAKE) --no-print-directory image; fi
	@$(MAKE) --no-print-directory bench-prepare
	$(call bench_main,Benchmark,$(BENCH_SECONDS))

SCALING_MB ?= 1,100,1000
bench-scaling: bench-prepare ## only the read_file scaling table of make bench (sizes in MB: SCALING_MB=1,100,1000); prints it
	$(call bench_main,Scaling,$(SCALING_MB))

bench-costs: bench-prepare ## only the listing, edit and command-start table of make bench; prints it
	$(call bench_main,Costs,)

# Every shell script of the tree (and .ci/run), found rather than listed; InfraFilesTest runs this.
SHELL_SCRIPTS = $(shell find infra tests -name '*.sh' -type f -not -path '*/node_modules/*' -not -path '*/target/*' | LC_ALL=C sort) .ci/run infra/image/runner-init
lint: ## shellcheck every shell script
	shellcheck $(SHELL_SCRIPTS)

clean: ## remove build output
	$(MVN) clean
