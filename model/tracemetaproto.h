// SPDX-License-Identifier: MIT
#pragma once

// The edge between the model's own trace metadata (tracemeta.h) and the file format's protobuf
// messages (trace.proto): the readers, the writer, the live stream and the capture's client convert
// here, field by field, so a header, an annotation set, budget settings or a classifier table read
// from a file and written again keeps every field (message presence included).
//
// makeCounter() is format::makeCounter() for the model: the counter's name, severity and default
// detail come from the one stats table (format/stats.h).
//
// Threading: pure functions.

#include "model/format/stats.h"
#include "model/format/stepcolumns.h"
#include "model/format/trace.pb.h"
#include "model/trace.h"
#include "model/tracemeta.h"

namespace gapscope::model {

// A step of a StepBlock (format/stepcolumns.h) as the model's Step and back; its label travels as a
// string id that the caller resolves (`label`) or interns (`labelId`). A kind this build does not know
// reads as unknown.
Step fromRecord(const format::StepRecord& r, std::string label);
format::StepRecord toRecord(uint32_t rank, const Step& s, uint32_t labelId);

TraceHeader fromProto(const pb::FileHeader& h);
pb::FileHeader toProto(const TraceHeader& h);

CaptureSettings fromProto(const pb::CaptureSettings& c);
pb::CaptureSettings toProto(const CaptureSettings& c);

Counter fromProto(const pb::Counter& c);
pb::Counter toProto(const Counter& c);

GpuInfo fromProto(const pb::GpuInfo& g);
RankInfo fromProto(const pb::RankInfo& r);

Annotation fromProto(const pb::Annotation& a);
pb::Annotation toProto(const Annotation& a);
AnnotationSet fromProto(const pb::AnnotationSet& s);
pb::AnnotationSet toProto(const AnnotationSet& s);

BudgetSettings fromProto(const pb::BudgetSettings& b);
pb::BudgetSettings toProto(const BudgetSettings& b);

ClassifierTable fromProto(const pb::ClassifierTable& t);
pb::ClassifierTable toProto(const ClassifierTable& t);

} // namespace gapscope::model
