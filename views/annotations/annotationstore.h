// SPDX-License-Identifier: MIT
#pragma once

// AnnotationStore: where the notes of a trace live on disk. A writable .gapscope file keeps them in
// its annotation section (rewritten through saveTraceSections: temp file + rename); otherwise
// (read-only file or directory, or a trace opened through an importer) they go to a sidecar file
// next to it, FILE.gapscope.annotations, holding the annotation section as a .gapscope file stores it (model::encodeSection). On open, a
// sidecar (when present) wins over the file's own section, since it is what the user saved last.
//
// Errors are returned as text naming the file and what failed. Threading: any thread (file I/O).

#include "model/trace/tracemeta.h"

#include <QString>

#include <optional>

namespace annotationstore {

QString sidecarPath(const QString& tracePath);

// Loads the sidecar of `tracePath`; nullopt when there is none. A present but unreadable or corrupt
// sidecar sets `error` and returns nullopt.
std::optional<gapscope::model::AnnotationSet> loadSidecar(const QString& tracePath, QString* error);
bool saveSidecar(const QString& tracePath, const gapscope::model::AnnotationSet& set, QString* error);

enum class SavedTo { None, TraceFile, Sidecar };
// Saves into the trace file when it is a writable .gapscope file, else into the sidecar.
// Returns where it went (None on failure, with `error` set).
SavedTo save(const QString& tracePath, const gapscope::model::AnnotationSet& set, QString* error);

} // namespace annotationstore
