# sandbox-mcp: build, run and test. `make help` lists the targets.
SHELL := /bin/bash
.DEFAULT_GOAL := help

# Java 25 is required; the Temurin JDK is picked up where it is installed under /usr/lib/jvm.
JAVA_HOME ?= $(firstword $(wildcard /usr/lib/jvm/temurin-25-jdk*) $(wildcard /usr/lib/jvm/java-25-*))
export JAVA_HOME
JAVA := $(if $(JAVA_HOME),$(JAVA_HOME)/bin/java,java)
MVN := mvn -B --no-transfer-progress

JAR := app/target/sandbox-mcp.jar
ENV_FILE := .env
RUN_ADDR ?= 127.0.0.1:18080
RUN_WORKSPACE ?= $(CURDIR)/workspace
BASE_PATH ?= /mcp-sandbox
INTEROP_DIRS := tests/interop/sdk-1.17.3 tests/interop/sdk-latest

.PHONY: help build run test token interop-deps clean

help: ## list the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-14s %s\n", $$1, $$2}'

build: ## build the runnable jar (app/target/sandbox-mcp.jar)
	$(MVN) -pl app -am package -DskipTests

token: $(ENV_FILE) ## create .env (mode 0600) with a random 48-character token, unless it exists

$(ENV_FILE):
	@umask 077; token=$$(tr -dc 'A-Za-z0-9' < /dev/urandom | head -c 48); \
	  printf '# sandbox-mcp secrets: never commit this file\nMCP_AUTH_TOKEN=%s\n' "$$token" > $(ENV_FILE)
	@chmod 600 $(ENV_FILE)
	@echo "created $(ENV_FILE) with a new random token (mode 0600)"

run: build token ## build, then serve ./workspace on 127.0.0.1:18080
	@mkdir -p "$(RUN_WORKSPACE)"
	@echo "Streamable HTTP: http://$(RUN_ADDR)$(BASE_PATH)/mcp"
	@echo "SSE (legacy):    http://$(RUN_ADDR)$(BASE_PATH)/sse"
	@echo "Token:           MCP_AUTH_TOKEN in $(CURDIR)/$(ENV_FILE)"
	@set -a; . ./$(ENV_FILE); set +a; \
	  MCP_ADDR=$(RUN_ADDR) MCP_BASE_PATH=$(BASE_PATH) MCP_WORKSPACE="$(RUN_WORKSPACE)" \
	  exec $(JAVA) --enable-native-access=ALL-UNNAMED -jar $(JAR)

interop-deps: ## install the TypeScript SDK clients from their lockfiles
	@for dir in $(INTEROP_DIRS); do (cd $$dir && npm ci --no-audit --no-fund --loglevel=error) || exit 1; done

test: interop-deps ## run every test (unit, integration, TypeScript interop)
	$(MVN) verify

clean: ## remove build output
	$(MVN) clean
