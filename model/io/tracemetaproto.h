// SPDX-License-Identifier: MIT
#pragma once

// The edge between the model's own trace metadata (tracemeta.h) and the file format's protobuf
// messages (trace.proto): the readers, the writer, the live stream and the capture's client convert
// here, field by field, so a header, an annotation set, budget settings or a classifier table read
// from a file and written again keeps every field (message presence included). The dictionaries' lanes
// and launch configs convert here too, and nowhere else.
//
// makeCounter() is format::makeCounter() for the model: the counter's name, severity and default
// detail come from the one stats table (format/stats.h).
//
// Threading: pure functions.

#include "model/format/stats.h"
#include "model/format/stepcolumns.h"
#include "model/format/trace.pb.h"
#include "model/trace/trace.h"
#include "model/trace/tracemeta.h"

namespace gapscope::model {

// A step of a StepBlock (format/stepcolumns.h) as the model's Step and back; its label travels as a
// string id that the caller resolves (`label`) or interns (`labelId`). A kind this build does not know
// reads as unknown.
Step fromRecord(const format::StepRecord& r, std::string label);
format::StepRecord toRecord(uint32_t rank, const Step& s, uint32_t labelId);

// A kernel's launch configuration (a LaunchConfig of the file's dictionary) as the model's KernelConfig
// and back. The graph and graph node ids travel with each kernel, not in the dictionary: fromProto
// leaves them 0 for the caller to set, toProto drops them; the LaunchConfig's id is the encoder's.
KernelConfig fromProto(const pb::LaunchConfig& c);

// A graph node's capture-time context: its range names interned into `builder`, or looked up in `trace`.
GraphNodeInfo fromProto(const pb::GraphNode& g, TraceBuilder& builder);
pb::GraphNode toProto(const GraphNodeInfo& n, const Trace& trace);
pb::LaunchConfig toProto(const KernelConfig& c);

// A lane's identity and name (a LaneDef of the file's dictionary) as the model's LaneInfo and back. A
// lane kind this build does not know reads as unknown; the LaneDef's id is the encoder's.
LaneInfo fromProto(const pb::LaneDef& d);
pb::LaneDef toProto(const LaneInfo& i);

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
