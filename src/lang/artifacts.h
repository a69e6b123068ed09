// Artifacts: what a run produced besides its output — captured figures (kPlotDir) and files
// written to the output directory (kOutDir) — read back after the run, each capped.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "src/core/executor.h"

namespace corral::lang {

struct ArtifactOptions {
  uint64_t max_bytes_each = 16ull << 20;  // larger files come back as truncated, without bytes
  uint64_t max_bytes_total = 64ull << 20;
};

// The marker written just before a run; only files newer than it are that run's artifacts.
inline constexpr char kRunMarker[] = "/sandbox/.corral/run-start";

// Lists regular files (not links) in kOutDir and kPlotDir newer than kRunMarker, with one
// exec in the sandbox, and reads them beneath its root.
StatusOr<std::vector<Artifact>> collect_artifacts(Executor& ex, Sandbox& sb, const ArtifactOptions& options);

// The two halves, for runs that list as part of their own exec (StepRequest::after): the
// /bin/sh command printing one "SIZE PATH" line per artifact, and reading what it listed
// (a line that does not parse, or names a file that is gone or not regular, is skipped).
std::string artifact_listing_command();
std::vector<Artifact> read_listed_artifacts(Executor& ex, Sandbox& sb, const std::string& listing,
                                            const ArtifactOptions& options);

std::string mime_for(const std::string& name);
// Width and height of a PNG, GIF or JPEG held in `bytes`; false if not recognised.
bool image_size(const std::string& bytes, uint32_t* width, uint32_t* height);

}  // namespace corral::lang
