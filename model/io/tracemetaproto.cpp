// SPDX-License-Identifier: MIT
#include "model/io/tracemetaproto.h"

#include <algorithm>

namespace gapscope::model {

namespace {

HostClock fromProto(const pb::HostInfo& h)
{
    return HostClock { h.name(), h.clock_offset_ns(), h.clock_offset_method(), h.clock_offset_error_ns() };
}

void toProto(const HostClock& h, pb::HostInfo* out)
{
    out->set_name(h.name);
    out->set_clock_offset_ns(h.clockOffsetNs);
    out->set_clock_offset_method(h.clockOffsetMethod);
    out->set_clock_offset_error_ns(h.clockOffsetErrorNs);
}

void toProto(const GpuInfo& g, pb::GpuInfo* out)
{
    out->set_uuid(g.uuid);
    out->set_name(g.name);
    out->set_host(g.host);
    out->set_device_index(g.deviceIndex);
    out->set_sm_count(g.smCount);
    out->set_memory_bytes(g.memoryBytes);
    out->set_sm_clock_mhz(g.smClockMhz);
    out->set_memory_clock_mhz(g.memoryClockMhz);
    out->set_cc_major(g.ccMajor);
    out->set_cc_minor(g.ccMinor);
    out->set_memory_bus_width_bits(g.memoryBusWidthBits);
    out->set_peak_memory_bandwidth_gbs(g.peakMemoryBandwidthGbs);
    out->set_pci_bus_id(g.pciBusId);
}

VersionInfo fromProto(const pb::VersionInfo& v)
{
    return VersionInfo { v.cupti_api_version(), v.cuda_driver_version(), v.cuda_runtime_version(), v.nccl_version(),
        v.nccl_profiler_plugin_version(), v.driver_version() };
}

void toProto(const VersionInfo& v, pb::VersionInfo* out)
{
    out->set_cupti_api_version(v.cuptiApiVersion);
    out->set_cuda_driver_version(v.cudaDriverVersion);
    out->set_cuda_runtime_version(v.cudaRuntimeVersion);
    out->set_nccl_version(v.ncclVersion);
    out->set_nccl_profiler_plugin_version(v.ncclProfilerPluginVersion);
    out->set_driver_version(v.driverVersion);
}

OverheadEvidence fromProto(const pb::OverheadEvidence& o)
{
    OverheadEvidence e;
    e.stepsBefore = o.steps_before();
    e.stepMsMedianBefore = o.step_ms_median_before();
    e.stepsDuring = o.steps_during();
    e.stepMsMedianDuring = o.step_ms_median_during();
    e.armLatencyMs = o.arm_latency_ms();
    e.disarmLatencyMs = o.disarm_latency_ms();
    e.baselineSteps = o.baseline_steps();
    e.stepMsMedianBaseline = o.step_ms_median_baseline();
    e.baselineCapturesBefore = o.baseline_captures_before();
    e.capturesBefore = o.captures_before();
    switch (o.cupti_after_last()) {
    case pb::OverheadEvidence::CUPTI_AFTER_LAST_DETACHED:
        e.cuptiAfterLast = OverheadEvidence::CuptiAfterLast::Detached;
        break;
    case pb::OverheadEvidence::CUPTI_AFTER_LAST_STILL_ATTACHED:
        e.cuptiAfterLast = OverheadEvidence::CuptiAfterLast::StillAttached;
        break;
    case pb::OverheadEvidence::CUPTI_AFTER_LAST_DETACH_PENDING:
        e.cuptiAfterLast = OverheadEvidence::CuptiAfterLast::DetachPending;
        break;
    default: // NONE, and values of newer writers
        e.cuptiAfterLast = OverheadEvidence::CuptiAfterLast::None;
        break;
    }
    return e;
}

void toProto(const OverheadEvidence& o, pb::OverheadEvidence* out)
{
    out->set_steps_before(o.stepsBefore);
    out->set_step_ms_median_before(o.stepMsMedianBefore);
    out->set_steps_during(o.stepsDuring);
    out->set_step_ms_median_during(o.stepMsMedianDuring);
    out->set_arm_latency_ms(o.armLatencyMs);
    out->set_disarm_latency_ms(o.disarmLatencyMs);
    out->set_baseline_steps(o.baselineSteps);
    out->set_step_ms_median_baseline(o.stepMsMedianBaseline);
    out->set_baseline_captures_before(o.baselineCapturesBefore);
    out->set_captures_before(o.capturesBefore);
    switch (o.cuptiAfterLast) {
    case OverheadEvidence::CuptiAfterLast::None:
        out->set_cupti_after_last(pb::OverheadEvidence::CUPTI_AFTER_LAST_NONE);
        break;
    case OverheadEvidence::CuptiAfterLast::Detached:
        out->set_cupti_after_last(pb::OverheadEvidence::CUPTI_AFTER_LAST_DETACHED);
        break;
    case OverheadEvidence::CuptiAfterLast::StillAttached:
        out->set_cupti_after_last(pb::OverheadEvidence::CUPTI_AFTER_LAST_STILL_ATTACHED);
        break;
    case OverheadEvidence::CuptiAfterLast::DetachPending:
        out->set_cupti_after_last(pb::OverheadEvidence::CUPTI_AFTER_LAST_DETACH_PENDING);
        break;
    }
}

void toProto(const RankInfo& r, pb::RankInfo* out)
{
    out->set_rank(r.rank);
    out->set_world_size(r.worldSize);
    out->set_pid(r.pid);
    out->set_host(r.host);
    out->set_gpu_uuid(r.gpuUuid);
    out->set_device_index(r.deviceIndex);
    out->set_process_name(r.processName);
    if (r.hasVersions)
        toProto(r.versions, out->mutable_versions());
    if (r.hasOverhead)
        toProto(r.overhead, out->mutable_overhead());
    out->set_other_cupti_client(r.otherCuptiClient);
}

} // namespace

GpuInfo fromProto(const pb::GpuInfo& g)
{
    return GpuInfo { g.uuid(), g.name(), g.host(), g.device_index(), g.sm_count(), g.memory_bytes(), g.sm_clock_mhz(),
        g.memory_clock_mhz(), g.cc_major(), g.cc_minor(), g.memory_bus_width_bits(), g.peak_memory_bandwidth_gbs(),
        g.pci_bus_id() };
}

RankInfo fromProto(const pb::RankInfo& r)
{
    RankInfo out;
    out.rank = r.rank();
    out.worldSize = r.world_size();
    out.pid = r.pid();
    out.host = r.host();
    out.gpuUuid = r.gpu_uuid();
    out.deviceIndex = r.device_index();
    out.processName = r.process_name();
    out.hasVersions = r.has_versions();
    out.versions = fromProto(r.versions());
    out.hasOverhead = r.has_overhead();
    out.overhead = fromProto(r.overhead());
    out.otherCuptiClient = r.other_cupti_client();
    return out;
}

CaptureSettings fromProto(const pb::CaptureSettings& c)
{
    CaptureSettings out;
    out.steps = c.steps();
    out.durationS = c.duration_s();
    out.stepRule = c.step_rule();
    out.stepPattern = c.step_pattern();
    out.kernels = c.kernels();
    out.memoryOps = c.memory_ops();
    out.runtimeApi = c.runtime_api();
    out.synchronization = c.synchronization();
    out.nvtx = c.nvtx();
    out.nccl = c.nccl();
    out.bufferBytes = c.buffer_bytes();
    out.bufferCount = c.buffer_count();
    out.zstdLevel = c.zstd_level();
    out.startStepIndex = c.start_step_index();
    return out;
}

pb::CaptureSettings toProto(const CaptureSettings& c)
{
    pb::CaptureSettings out;
    out.set_steps(c.steps);
    out.set_duration_s(c.durationS);
    out.set_step_rule(c.stepRule);
    out.set_step_pattern(c.stepPattern);
    out.set_kernels(c.kernels);
    out.set_memory_ops(c.memoryOps);
    out.set_runtime_api(c.runtimeApi);
    out.set_synchronization(c.synchronization);
    out.set_nvtx(c.nvtx);
    out.set_nccl(c.nccl);
    out.set_buffer_bytes(c.bufferBytes);
    out.set_buffer_count(c.bufferCount);
    out.set_zstd_level(c.zstdLevel);
    out.set_start_step_index(c.startStepIndex);
    return out;
}

Counter fromProto(const pb::Counter& c)
{
    return Counter { c.name(), c.rank(), c.value(), c.severity(), c.detail() };
}

pb::Counter toProto(const Counter& c)
{
    pb::Counter out;
    out.set_name(c.name);
    out.set_rank(c.rank);
    out.set_value(c.value);
    out.set_severity(c.severity);
    out.set_detail(c.detail);
    return out;
}

KernelConfig fromProto(const pb::LaunchConfig& c)
{
    KernelConfig k;
    k.grid[0] = c.grid_x();
    k.grid[1] = c.grid_y();
    k.grid[2] = c.grid_z();
    k.block[0] = c.block_x();
    k.block[1] = c.block_y();
    k.block[2] = c.block_z();
    k.registers = c.registers();
    k.sharedStatic = c.shared_static();
    k.sharedDynamic = c.shared_dynamic();
    return k;
}

pb::LaunchConfig toProto(const KernelConfig& k)
{
    pb::LaunchConfig c;
    c.set_grid_x(k.grid[0]);
    c.set_grid_y(k.grid[1]);
    c.set_grid_z(k.grid[2]);
    c.set_block_x(k.block[0]);
    c.set_block_y(k.block[1]);
    c.set_block_z(k.block[2]);
    c.set_registers(k.registers);
    c.set_shared_static(k.sharedStatic);
    c.set_shared_dynamic(k.sharedDynamic);
    return c;
}

LaneInfo fromProto(const pb::LaneDef& d)
{
    LaneInfo i;
    i.kind = d.kind() >= 0 && d.kind() <= int(LaneKind::CpuThread) ? LaneKind(d.kind()) : LaneKind::Unknown;
    i.rank = d.rank();
    i.host = d.host();
    i.device = d.device();
    i.stream = d.stream();
    i.name = d.name();
    i.pid = d.pid();
    return i;
}

pb::LaneDef toProto(const LaneInfo& i)
{
    pb::LaneDef d;
    d.set_kind(pb::LaneKind(i.kind));
    d.set_rank(i.rank);
    d.set_host(i.host);
    d.set_device(i.device);
    d.set_stream(i.stream);
    d.set_name(i.name);
    d.set_pid(i.pid);
    return d;
}

TraceHeader fromProto(const pb::FileHeader& h)
{
    TraceHeader out;
    out.toolVersion = h.tool_version();
    out.createdUnixNs = h.created_unix_ns();
    out.clockDomain = h.clock_domain();
    out.source = h.source();
    out.hasCapture = h.has_capture();
    out.capture = fromProto(h.capture());
    for (const pb::HostInfo& x : h.hosts())
        out.hosts.push_back(fromProto(x));
    for (const pb::GpuInfo& x : h.gpus())
        out.gpus.push_back(fromProto(x));
    for (const pb::RankInfo& x : h.ranks())
        out.ranks.push_back(fromProto(x));
    for (const pb::Counter& x : h.counters())
        out.counters.push_back(fromProto(x));
    out.metadata.insert(h.metadata().begin(), h.metadata().end());
    out.startNs = h.start_ns();
    out.endNs = h.end_ns();
    out.warnings.assign(h.warnings().begin(), h.warnings().end());
    return out;
}

pb::FileHeader toProto(const TraceHeader& h)
{
    pb::FileHeader out;
    out.set_tool_version(h.toolVersion);
    out.set_created_unix_ns(h.createdUnixNs);
    out.set_clock_domain(h.clockDomain);
    out.set_source(h.source);
    if (h.hasCapture)
        *out.mutable_capture() = toProto(h.capture);
    for (const HostClock& x : h.hosts)
        toProto(x, out.add_hosts());
    for (const GpuInfo& x : h.gpus)
        toProto(x, out.add_gpus());
    for (const RankInfo& x : h.ranks)
        toProto(x, out.add_ranks());
    for (const Counter& x : h.counters)
        *out.add_counters() = toProto(x);
    for (const auto& [k, v] : h.metadata)
        (*out.mutable_metadata())[k] = v;
    out.set_start_ns(h.startNs);
    out.set_end_ns(h.endNs);
    for (const std::string& w : h.warnings)
        out.add_warnings(w);
    return out;
}

Step fromRecord(const format::StepRecord& r, std::string label)
{
    Step s { r.index, r.start, r.start + TimeNs(r.duration), StepSource(r.source) };
    s.kind = r.kind < kStepKinds ? StepKind(r.kind) : StepKind::Unknown;
    s.batch = r.batch;
    s.tokens = r.tokens;
    s.label = std::move(label);
    return s;
}

format::StepRecord toRecord(uint32_t rank, const Step& s, uint32_t labelId)
{
    static_assert(uint32_t(StepKind::Verify) == pb::StepBlock::KIND_VERIFY && kStepKinds == 6,
        "StepKind converts to StepBlock.Kind by value");
    format::StepRecord r;
    r.rank = rank;
    r.index = s.index;
    r.start = s.start;
    r.duration = uint64_t(std::max<TimeNs>(0, s.end - s.start));
    r.source = uint32_t(s.source);
    r.kind = uint32_t(s.kind);
    r.batch = s.batch;
    r.tokens = s.tokens;
    r.label = labelId;
    return r;
}

Annotation fromProto(const pb::Annotation& a)
{
    return Annotation { a.id(), a.start_ns(), a.end_ns(), a.lane_key(), a.text(), a.color_rgba(), a.author(),
        a.created_unix_ns() };
}

pb::Annotation toProto(const Annotation& a)
{
    pb::Annotation out;
    out.set_id(a.id);
    out.set_start_ns(a.startNs);
    out.set_end_ns(a.endNs);
    out.set_lane_key(a.laneKey);
    out.set_text(a.text);
    out.set_color_rgba(a.colorRgba);
    out.set_author(a.author);
    out.set_created_unix_ns(a.createdUnixNs);
    return out;
}

AnnotationSet fromProto(const pb::AnnotationSet& s)
{
    AnnotationSet out;
    out.notes.reserve(size_t(s.annotations_size()));
    for (const pb::Annotation& a : s.annotations())
        out.notes.push_back(fromProto(a));
    out.stepRule = s.step_rule();
    return out;
}

pb::AnnotationSet toProto(const AnnotationSet& s)
{
    pb::AnnotationSet out;
    for (const Annotation& a : s.notes)
        *out.add_annotations() = toProto(a);
    out.set_step_rule(s.stepRule);
    return out;
}

BudgetSettings fromProto(const pb::BudgetSettings& b)
{
    BudgetSettings out;
    out.model = b.model();
    out.modelConfigJson = b.model_config_json();
    out.hardware = b.hardware();
    out.hardwareJson = b.hardware_json();
    out.precision.insert(b.precision().begin(), b.precision().end());
    out.tp = b.tp();
    out.ep = b.ep();
    out.batch = b.batch();
    out.promptTokens = b.prompt_tokens();
    out.context = b.context();
    out.engine = b.engine();
    out.allreduceUs = b.allreduce_us();
    out.cudaGraphs = b.cuda_graphs();
    out.draftTokens = b.draft_tokens();
    out.acceptanceLength = b.acceptance_length();
    out.extra.insert(b.extra().begin(), b.extra().end());
    return out;
}

pb::BudgetSettings toProto(const BudgetSettings& b)
{
    pb::BudgetSettings out;
    out.set_model(b.model);
    out.set_model_config_json(b.modelConfigJson);
    out.set_hardware(b.hardware);
    out.set_hardware_json(b.hardwareJson);
    for (const auto& [k, v] : b.precision)
        (*out.mutable_precision())[k] = v;
    out.set_tp(b.tp);
    out.set_ep(b.ep);
    out.set_batch(b.batch);
    out.set_prompt_tokens(b.promptTokens);
    out.set_context(b.context);
    out.set_engine(b.engine);
    out.set_allreduce_us(b.allreduceUs);
    out.set_cuda_graphs(b.cudaGraphs);
    out.set_draft_tokens(b.draftTokens);
    out.set_acceptance_length(b.acceptanceLength);
    for (const auto& [k, v] : b.extra)
        (*out.mutable_extra())[k] = v;
    return out;
}

ClassifierTable fromProto(const pb::ClassifierTable& t)
{
    ClassifierTable out;
    for (const pb::ClassifierRule& r : t.rules())
        out.rules.push_back(ClassifierRule { r.pattern(), r.component() });
    out.origin = t.origin();
    return out;
}

pb::ClassifierTable toProto(const ClassifierTable& t)
{
    pb::ClassifierTable out;
    for (const ClassifierRule& r : t.rules) {
        pb::ClassifierRule* x = out.add_rules();
        x->set_pattern(r.pattern);
        x->set_component(r.component);
    }
    out.set_origin(t.origin);
    return out;
}

GraphNodeInfo fromProto(const pb::GraphNode& g, TraceBuilder& builder)
{
    GraphNodeInfo n;
    n.rank = g.rank();
    n.nodeId = g.node_id();
    n.graphId = g.graph_id();
    n.originalNodeId = g.original_node_id();
    n.origin = g.original_node_id() ? GraphNodeOrigin::Cloned : GraphNodeOrigin::Created;
    n.order = g.order();
    n.threadId = g.thread_id();
    n.ranges.reserve(size_t(g.ranges_size()));
    for (const std::string& r : g.ranges())
        n.ranges.push_back(builder.intern(r));
    n.api = g.api().empty() ? 0 : builder.intern(g.api());
    n.nodeType = uint8_t(std::min<uint32_t>(g.node_type(), 255));
    return n;
}

pb::GraphNode toProto(const GraphNodeInfo& n, const Trace& trace)
{
    pb::GraphNode g;
    g.set_rank(n.rank);
    g.set_node_id(n.nodeId);
    g.set_graph_id(n.graphId);
    g.set_original_node_id(n.originalNodeId);
    g.set_order(n.order);
    g.set_thread_id(n.threadId);
    for (StringId id : n.ranges)
        g.add_ranges(std::string(trace.str(id)));
    if (n.api)
        g.set_api(std::string(trace.str(n.api)));
    g.set_node_type(n.nodeType);
    return g;
}

} // namespace gapscope::model
