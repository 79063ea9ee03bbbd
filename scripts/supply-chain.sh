#!/usr/bin/env bash
# cargo deny against Cargo.lock: licences, duplicate versions and sources (deny.toml), offline.
# Advisories need RustSec's database, which lives on GitHub: checked from a local copy when one
# exists (cargo-deny's ~/.cargo/advisory-dbs), otherwise reported as not checked — never fetched
# here, since this machine reaches no host but the package registries.
# Installs cargo-deny from crates.io when missing, unoptimised (--debug): it reads one lockfile,
# so its build time counts and its speed does not.
set -euo pipefail
cd "$(dirname "$0")/.."

if ! cargo deny --version >/dev/null 2>&1; then
  started=$SECONDS
  cargo install cargo-deny --locked --quiet --debug
  echo "supply-chain: installed $(cargo deny --version) in $((SECONDS - started)) s"
fi

# cargo-deny reads every crate of Cargo.lock, for every target, from the local registry: a build
# fetches only those this platform compiles, so on a new machine the others (valuable, combine,
# ...) are missing and --offline fails. Fetch them all first, from crates.io.
cargo fetch --locked --quiet
cargo deny --locked --offline check licenses bans sources

db="${CARGO_HOME:-$HOME/.cargo}/advisory-dbs"
if compgen -G "$db/advisory-db-*/crates" >/dev/null; then
  cargo deny --locked --offline check advisories
else
  echo "supply-chain: advisories NOT checked: no local copy of RustSec's advisory database in $db" \
    "(it is fetched from GitHub, which this machine cannot reach)"
fi
