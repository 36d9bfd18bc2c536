// SPDX-License-Identifier: MIT
#pragma once

// What a trace says about itself, as the model's own types: the header (producer, clock, capture
// settings, hosts, GPUs, ranks, loss counters), the annotations, the budget settings and the kernel
// classifier stored with it, and the small enums of event payloads. Trace, its readers and writers,
// the CLI and the viewer use these; the protobuf messages of the file format (trace.proto) stay
// inside model/format and the capture protocol, and tracemetaproto.h converts between the two at
// that edge (field by field, nothing lost: a file read and written again keeps every field).
//
// Threading: plain values.

#include "model/format/stats.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace gapscope::model {

// Payload enums; values equal to the file format's (trace.proto), so they convert by value.
enum class MemopKind : uint8_t { Unknown = 0, Memcpy = 1, Memset = 2 };
enum class CopyKind : uint8_t { Unknown = 0, HtoD = 1, DtoH = 2, DtoD = 3, HtoH = 4, PtoP = 5 };
enum class SyncKind : uint8_t { Unknown = 0, Event = 1, StreamWaitEvent = 2, Stream = 3, Context = 4 };
// Where a trace's decode steps came from. Auto: the kernel-period rule of files written before the
// forward rule (kept so they still read); Forward: one step per model forward, found from the kernels;
// Engine: a serving engine's own step annotation (SGLang, vLLM, torch.profiler ProfilerStep#N).
enum class StepSource : uint8_t {
    Unknown = 0,
    File = 1,
    Nvtx = 2,
    Graph = 3,
    Anchor = 4,
    Auto = 5,
    Forward = 6,
    Engine = 7
};
// What a step does: from the engine's annotation where there is one, else from evidence (stepkinds.h).
enum class StepKind : uint8_t { Unknown = 0, Decode = 1, Prefill = 2, Mixed = 3, Draft = 4, Verify = 5 };
constexpr size_t kStepKinds = 6;

const char* toString(CopyKind kind); // "HtoD", "DtoH", "DtoD", "HtoH", "PtoP", "copy"
const char* toString(StepSource source); // "file", "nvtx", "graph", "anchor", "auto", "forward", "engine", "none"
const char* toString(StepKind kind); // "unknown", "decode", "prefill", "mixed", "draft", "verify"
bool parseStepKind(const std::string& text, StepKind& out); // the names of toString

// How the steps of a trace were found (StepFinder, model/steps): kept with the trace for info and the viewer.
struct StepReport {
    std::string rule; // the rule used ("auto", "nvtx:decode", ...)
    StepSource source = StepSource::Unknown; // of the steps found (the most used over ranks)
    bool kept = false; // the stored steps were kept (rule "file", or no rule named on a file that has steps)
    std::vector<std::string> tried; // per rule: what it found, or why it made no steps
    std::vector<std::string> anchorCandidates; // kernel names that occur once per forward
    std::vector<std::string> notes; // anomalies in the step ranges, kept as the trace's warnings
};

// One host of the trace and how its clock was brought onto the reference clock.
struct HostClock {
    std::string name;
    int64_t clockOffsetNs = 0; // added to this host's timestamps to reach the reference clock
    std::string clockOffsetMethod; // "none", "ntp-ping", "collective-refined"
    double clockOffsetErrorNs = 0;
};

struct GpuInfo {
    std::string uuid;
    std::string name;
    std::string host;
    uint32_t deviceIndex = 0;
    uint32_t smCount = 0;
    uint64_t memoryBytes = 0;
    uint32_t smClockMhz = 0; // max SM clock
    uint32_t memoryClockMhz = 0; // max memory clock
    uint32_t ccMajor = 0;
    uint32_t ccMinor = 0;
    uint32_t memoryBusWidthBits = 0;
    double peakMemoryBandwidthGbs = 0;
    std::string pciBusId;
};

struct VersionInfo {
    uint32_t cuptiApiVersion = 0;
    int32_t cudaDriverVersion = 0;
    int32_t cudaRuntimeVersion = 0;
    std::string ncclVersion;
    uint32_t ncclProfilerPluginVersion = 0;
    std::string driverVersion;
};

// Evidence of a capture's own perturbation: median host step times before this capture, while
// capturing, and the process's baseline from before its first capture (refreshed only while no
// capture had left CUPTI attached; capture/inject/stepbaseline.h). Each figure comes with the
// number of steps it rests on (0: no figure).
struct OverheadEvidence {
    // CUPTI after the process's last capture, when this capture's arm began.
    enum class CuptiAfterLast : uint8_t { None, Detached, StillAttached, DetachPending };

    uint32_t stepsBefore = 0; // this arm's steps before recording ("after the last capture" when capturesBefore > 0)
    double stepMsMedianBefore = 0;
    uint32_t stepsDuring = 0;
    double stepMsMedianDuring = 0;
    double armLatencyMs = 0; // from the arm request to the first recorded activity
    double disarmLatencyMs = 0;
    uint32_t baselineSteps = 0; // 0: no baseline (older files, no steps seen)
    double stepMsMedianBaseline = 0;
    uint32_t baselineCapturesBefore = 0; // captures before the baseline's newest step
    uint32_t capturesBefore = 0; // captures in this process before this one
    CuptiAfterLast cuptiAfterLast = CuptiAfterLast::None;
};

struct RankInfo {
    uint32_t rank = 0;
    uint32_t worldSize = 0;
    uint32_t pid = 0;
    std::string host;
    std::string gpuUuid;
    uint32_t deviceIndex = 0;
    std::string processName;
    VersionInfo versions;
    bool hasVersions = false;
    OverheadEvidence overhead;
    bool hasOverhead = false;
    std::string otherCuptiClient; // non-empty when another CUPTI client (torch.profiler, ...) was seen
};

// What a capture was asked to record.
struct CaptureSettings {
    uint32_t steps = 0; // 0 = duration-based
    double durationS = 0;
    std::string stepRule; // "nvtx", "graph", "anchor", "auto", "file"
    std::string stepPattern; // regex for the nvtx/anchor rules
    bool kernels = false;
    bool memoryOps = false;
    bool runtimeApi = false;
    bool synchronization = false;
    bool nvtx = false;
    bool nccl = false;
    uint32_t bufferBytes = 0;
    uint32_t bufferCount = 0;
    int32_t zstdLevel = 0;
    uint32_t startStepIndex = 0; // the step index at which every rank started recording
};

// A named count of something lost or anomalous (format/stats.h declares every name). The severity
// keeps the file's text, so a newer writer's severity survives a round trip; level() reads it.
struct Counter {
    std::string name;
    int32_t rank = -1; // -1: not rank-specific
    uint64_t value = 0;
    std::string severity; // "info", "warning", "error", "data_loss"
    std::string detail;
    format::Severity level() const { return format::parseSeverity(severity); }
};
// A counter of the stats table: its name, severity and (unless given) description as detail.
Counter statCounter(format::Stat stat, int32_t rank, uint64_t value);
Counter statCounter(format::Stat stat, int32_t rank, uint64_t value, std::string detail);

struct TraceHeader {
    std::string toolVersion;
    int64_t createdUnixNs = 0;
    std::string clockDomain; // "CLOCK_REALTIME", "import:<source>"
    std::string source; // "gapscope-agent", "synth", "kineto", "nsys", ...
    CaptureSettings capture;
    bool hasCapture = false;
    std::vector<HostClock> hosts;
    std::vector<GpuInfo> gpus;
    std::vector<RankInfo> ranks;
    std::vector<Counter> counters;
    std::map<std::string, std::string> metadata;
    int64_t startNs = 0; // first event (filled by the writer when known)
    int64_t endNs = 0; // last event end
    // What the trace's producer warned about (an importer's renumbered ranks, clocks that disagree, a
    // file cut short), kept so that a converted file still says it.
    std::vector<std::string> warnings;

    const RankInfo* rank(uint32_t r) const;
    bool empty() const; // nothing set (what a file would store as an empty header)
};

// A note pinned to a time range (and a lane, or the whole trace).
struct Annotation {
    uint64_t id = 0;
    int64_t startNs = 0;
    int64_t endNs = 0; // == startNs for a point
    std::string laneKey; // LaneInfo::key(); empty = whole trace
    std::string text;
    uint32_t colorRgba = 0;
    std::string author;
    int64_t createdUnixNs = 0;
    bool operator==(const Annotation& o) const;
};
// What the user added to a trace, kept in its annotation section (or the viewer's sidecar): the notes,
// and the step rule chosen for it (the viewer's Steps menu), with which the trace opens again (openTrace:
// unless a rule is asked for).
struct AnnotationSet {
    std::vector<Annotation> notes;
    std::string stepRule; // StepRule text (model/steps/steprule.h); empty: none chosen
    bool empty() const { return notes.empty() && stepRule.empty(); }
    bool operator==(const AnnotationSet& o) const { return notes == o.notes && stepRule == o.stepRule; }
};

// The budget inputs stored with a trace, as given (budget/budgetsettings.h reads them).
struct BudgetSettings {
    std::string model; // preset name or file path as given
    std::string modelConfigJson; // the config.json text used, so the file is self-contained
    std::string hardware;
    std::string hardwareJson;
    std::map<std::string, std::string> precision; // component -> format
    uint32_t tp = 0;
    uint32_t ep = 0;
    uint32_t batch = 0;
    uint64_t context = 0;
    std::string engine;
    double allreduceUs = 0; // < 0: use the hardware table
    bool cudaGraphs = false;
    uint32_t draftTokens = 0;
    double acceptanceLength = 0;
    uint32_t promptTokens = 0; // prefill budget: prompt tokens of a step whose annotation does not say (0: none)
    std::map<std::string, std::string> extra;
    bool operator==(const BudgetSettings& o) const;
};

struct ClassifierRule {
    std::string pattern; // ECMAScript regex, case-insensitive, matched against the kernel name
    std::string component; // class, "NAME" or "NAME=comp+comp"
};

struct ClassifierTable {
    std::vector<ClassifierRule> rules;
    std::string origin; // "default", a file path
};

} // namespace gapscope::model
