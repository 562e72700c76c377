# BlipScope: the two commands the README promises, each with its set-up.
#   make test   installs missing system packages, builds, runs every test
#   make demo   installs missing system packages, builds in release mode, runs the main job
SWIFT ?= swift
SYSTEM_PACKAGES := libpcap-dev zlib1g-dev libssl-dev tshark openssl prometheus
# `make bench` also compares the relay with nginx as a blind WebSocket proxy.
BENCH_PACKAGES := nginx-light
BIN := .build/release/blipscope

.PHONY: setup build release test demo bench clean

setup:
	@missing=""; for p in $(SYSTEM_PACKAGES) $(EXTRA_PACKAGES); do \
	  dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q "install ok installed" || missing="$$missing $$p"; \
	done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  echo "wireshark-common wireshark-common/install-setuid boolean false" | $$SUDO debconf-set-selections 2>/dev/null || true; \
	  $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	  $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing >/dev/null; \
	fi

build: setup
	$(SWIFT) build

release: setup
	$(SWIFT) build -c release --product blipscope

test: setup
	$(SWIFT) build --build-tests
	$(SWIFT) test --skip-build

demo: release
	$(BIN) demo

bench:
	$(MAKE) release EXTRA_PACKAGES="$(BENCH_PACKAGES)"
	$(BIN) bench codec
	$(BIN) bench relay --nginx
	$(BIN) bench pull
	$(BIN) bench analyzer

clean:
	rm -rf .build
