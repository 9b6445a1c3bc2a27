#!/usr/bin/env bash
# Regenerates the simulator's documents profile, sim/profiles/documents.json
# (the default of `ptuprobe characterize`), with `ptuprobe fit`: the PTU,
# gateway and window models — the PTU model's cold forecast among its
# parameters — fitted under the main job's own plan (internal/charplan) to
# the burst-shaped row of the published events (analyze/testdata/upstream);
# the scheduled-shaped row is held out, reported and never fitted. The
# method is docs/fit.md's. Deterministic; a few seconds on two cores.
# internal/fit's TestDocumentsProfileIsTheFit fails when the file is not
# what this writes.
set -euo pipefail
cd "$(dirname "$0")/.."
go run . fit --plan characterize --events analyze/testdata/upstream/retry_after_ms_events.csv \
  --group-column source --label task013=burst-shaped --label task019=scheduled-shaped \
  --fit-group burst-shaped --name documents -o sim/profiles/documents.json
git --no-pager diff --stat -- sim/profiles/documents.json
