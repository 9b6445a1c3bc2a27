#!/usr/bin/env bash
# Regenerates the simulator's documents profile (sim/profiles/documents.json
# and sim/documents.go, DocumentsConfig) by fitting the PTU model — its
# drain, bucket, burst allowance and refill, and its cold forecast — to the
# burst-shaped row of the published events (analyze/testdata/upstream),
# under the main job's own plan (internal/charplan) played on the model,
# eight runs per candidate; the scheduled-shaped row is held out, reported
# and never fitted. The objective, the search and the parameters' ranges
# are in sim/documents_test.go (TestFitDocuments); the package doc of sim
# ("Profile documents") says what it found. Deterministic (seeded); about
# a minute on two cores. It also prints why the model needed its cold
# forecast: how many of 3,024 settings without it give the documents'
# short median and long tail, and the least middle among them.
set -euo pipefail
cd "$(dirname "$0")/.."
go test ./sim -run '^TestFitDocuments$' -fit-documents -count=1 -v | grep -v '^=== '
gofmt -l sim/documents.go
git --no-pager diff --stat -- sim/profiles/documents.json sim/documents.go
