#!/usr/bin/env bash
# Debian packages the test suite's real components need (Prometheus, a Slurm cluster with accounting,
# Chromium for the app's browser tests: Playwright drives /usr/bin/chromium, as it cannot download browsers;
# Java 17 for `gpu-ledger build --engine spark`, whose PySpark runs on it).
# Installs only what is missing; run as root (CI and the project's machines are), else via sudo.
set -euo pipefail
packages=(prometheus slurm-wlm slurmdbd slurm-client munge mariadb-server chromium openjdk-17-jre-headless)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# the packages' own services are not used: tests start their own instances on free loopback ports
for s in slurmctld slurmd slurmdbd munge mariadb prometheus; do
    $sudo service "$s" stop >/dev/null 2>&1 || true
done
