// SPDX-License-Identifier: MIT
#pragma once

// Stats: every counter of something lost or anomalous, declared once (Perfetto's stats table).
// kStats gives each Stat its wire name, its severity and what it counts; every place that records
// a loss or an anomaly (the injection library, the agent, the file reader, the importers, the
// viewer's live stream) makes its counter through makeCounter() (the model's Counter through
// model::statCounter, tracemeta.h), so a name, a severity or a
// description cannot drift between copies. A counter's detail is its description unless the place
// that counts it knows more (which error, which kind of event).
//
// Severity is an enum here; the wire keeps its string ("info", "warning", "error", "data_loss") so
// files stay readable by every version; parseSeverity() reads it back.
//
// Invariant (checked at compile time): kStats[i].id == Stat(i). Constant data; thread-safe.

#include "model/format/enumtable.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace gapscope::pb {
class Counter;
}

namespace gapscope::format {

enum class Severity : uint8_t { Info, Warning, Error, DataLoss };
const char* toString(Severity s); // "info", "warning", "error", "data_loss"
// The severity of a wire string; an unknown string reads as Info (a newer writer's severity).
Severity parseSeverity(std::string_view s);
Severity severityOf(const pb::Counter& c);

enum class Stat : uint16_t {
    // the injection library, per rank
    CuptiDroppedRecords,
    RefusedBuffers,
    NvtxDropped,
    StepMarkersDropped,
    NcclDropped,
    PendingDropped,
    StoppedForMemoryGrowth,
    RankRssGrowthMb,
    LateDropped,
    StepWorkAfterSettle,
    StepWorkAfterSettleMaxUs,
    RankChunksDropped,
    RecordsWithoutTimestamps,
    NvtxUnpaired,
    ActivityRecords,
    BuffersLeftWithCupti,
    NcclProfilerPluginVersion,
    CuptiEnableUs,
    CuptiDeviceBufferBytes,
    CuptiDeviceBufferPoolLimit,
    RankCacheEntries,
    RankDictionaryStrings,
    RankPendingRecords,
    RankLinkDroppedEvents,
    GraphNodesRecorded,
    GraphNodesUnknown,
    CuptiStaysAttached,
    // the agent
    AgentDroppedEvents,
    RankLost,
    RankArmFailed,
    OtherCuptiClient,
    AgentRejectedChunks,
    ReplayWaits,
    ReplayChunksSkipped,
    ReplayEventsLost,
    ReplayTruncatedEvents,
    ReplayDamagedBytes,
    ClientsHandshakeTimeout,
    ClientsUnauthenticatedEvicted,
    ClientsRefusedFull,
    RankConnectionsUnregisteredDropped,
    RankConnectionsBudgetDropped,
    ClientStreamCut,
    // reading a .gapscope file
    ReadTruncatedBytes,
    ReadTruncatedEvents,
    ReadDamagedBytes,
    ReadIndexDamaged,
    ReadIndexMissing,
    ReadHeaderDamaged,
    ReadFramesSkipped,
    ReadEventsLost,
    // importing foreign traces
    ImportTruncated,
    ImportTrailingData,
    ImportBadMetadata,
    ImportSkippedMetadata,
    ImportLoneSurrogates,
    ImportInvalidUtf8,
    ImportSglangRanks,
    ImportSkippedEvents,
    ImportUnknownEventKinds,
    ImportBadEvents,
    ImportFlowCorrelations,
    ImportUnmatchedFlows,
    ImportRankFromFileName,
    ImportRankFromDevice,
    ImportUnknownApiIds,
    ImportProcessOverflow,
    ImportMissingStrings,
    ImportUnterminatedRanges,
    ImportKernelShortNames,
    ImportNegativeTimes,
    ImportNegativeDurations,
    ImportOutOfRangeTimes,
    ImportLaneOverflow,
};
inline constexpr size_t kStatCount = 74;

struct StatInfo {
    Stat id;
    const char* name; // the counter's name on the wire and in `info`
    Severity severity;
    const char* description; // what it counts (the detail unless a counter gives its own)
};

inline constexpr StatInfo kStats[] = {
    { Stat::CuptiDroppedRecords, "cupti_dropped_records", Severity::DataLoss,
        "activity records CUPTI dropped for lack of buffer space" },
    { Stat::RefusedBuffers, "refused_buffers", Severity::DataLoss, "CUPTI asked for a buffer while all were in use" },
    { Stat::NvtxDropped, "nvtx_dropped", Severity::DataLoss, "NVTX calls lost (queue full)" },
    { Stat::StepMarkersDropped, "step_markers_dropped", Severity::Warning, "step boundaries lost (queue full)" },
    { Stat::NcclDropped, "nccl_dropped", Severity::DataLoss, "NCCL events lost (queue full)" },
    { Stat::PendingDropped, "pending_dropped", Severity::DataLoss, "records that could not be placed in a step" },
    { Stat::StoppedForMemoryGrowth, "stopped_for_memory_growth", Severity::DataLoss,
        "recording stopped early: the process grew past GAPSCOPE_RANK_RSS_GROWTH_LIMIT_MB while recording" },
    { Stat::RankRssGrowthMb, "rank_rss_growth_mb", Severity::Info,
        "the most this process's resident memory grew while recording (MB, read once a second)" },
    { Stat::LateDropped, "late_dropped", Severity::DataLoss,
        "records of a step over 16384 steps behind the newest work (its boundary was no longer kept)" },
    { Stat::StepWorkAfterSettle, "step_work_after_settle", Severity::Warning,
        "kernels/copies of a step that came over 1 s of GPU time late: kept, but its step span misses them" },
    { Stat::StepWorkAfterSettleMaxUs, "step_work_after_settle_max_us", Severity::Info,
        "the most GPU time such work trailed the newest work by" },
    { Stat::RankChunksDropped, "rank_chunks_dropped", Severity::DataLoss,
        "chunks dropped: the agent socket was not draining" },
    { Stat::RecordsWithoutTimestamps, "records_without_timestamps", Severity::Warning,
        "kernels/copies CUPTI could not time" },
    { Stat::NvtxUnpaired, "nvtx_unpaired", Severity::Warning, "NVTX pops/ends without a start" },
    { Stat::ActivityRecords, "activity_records", Severity::Info, "CUPTI activity records converted" },
    { Stat::BuffersLeftWithCupti, "buffers_left_with_cupti", Severity::Info,
        "buffers CUPTI kept after activity was switched off (replaced)" },
    { Stat::NcclProfilerPluginVersion, "nccl_profiler_plugin_version", Severity::Info,
        "NCCL profiler plugin ABI NCCL loaded (0: not loaded)" },
    { Stat::CuptiEnableUs, "cupti_enable_us", Severity::Info, "time to switch CUPTI activity on at StartRecording" },
    { Stat::CuptiDeviceBufferBytes, "cupti_device_buffer_bytes", Severity::Info,
        "CUPTI's device record buffer size (GAPSCOPE_CUPTI_DEVICE_BUFFER_BYTES)" },
    { Stat::CuptiDeviceBufferPoolLimit, "cupti_device_buffer_pool_limit", Severity::Info,
        "CUPTI's most device record buffers per context (GAPSCOPE_CUPTI_DEVICE_BUFFER_POOL_LIMIT, default 8)" },
    { Stat::RankCacheEntries, "rank_cache_entries", Severity::Info,
        "lanes, names, configs, open ranges and correlations the rank keeps for this capture" },
    { Stat::RankDictionaryStrings, "rank_dictionary_strings", Severity::Info, "strings in this capture's dictionary" },
    { Stat::RankPendingRecords, "rank_pending_records", Severity::Info, "records waiting for their step" },
    { Stat::RankLinkDroppedEvents, "rank_link_dropped_events", Severity::DataLoss,
        "events dropped because the agent socket was backed up" },
    { Stat::GraphNodesRecorded, "graph_nodes_recorded", Severity::Info,
        "CUDA-graph nodes replayed in the capture whose build context (NVTX ranges) the file carries" },
    { Stat::GraphNodesUnknown, "graph_nodes_unknown", Severity::Warning,
        "CUDA-graph nodes replayed in the capture built while the library did not watch (before it, "
        "after the watch's release, or with GAPSCOPE_GRAPH_NODES=0): their kernels have no capture-time ranges" },
    { Stat::CuptiStaysAttached, "cupti_stays_attached", Severity::Warning,
        "CUPTI stays attached to this process after the capture, and the process keeps its cost until it exits "
        "(capture/README.md)" },
    { Stat::AgentDroppedEvents, "agent_dropped_events", Severity::DataLoss,
        "the agent's merge queue was full: events dropped (their dictionaries kept)" },
    { Stat::RankLost, "rank_lost", Severity::DataLoss, "the rank went away during the capture (detail: how)" },
    { Stat::RankArmFailed, "rank_arm_failed", Severity::Error, "the rank could not start recording (detail: why)" },
    { Stat::OtherCuptiClient, "other_cupti_client", Severity::Warning,
        "another CUPTI client is active in this process" },
    { Stat::AgentRejectedChunks, "agent_rejected_chunks", Severity::DataLoss,
        "rank chunks that failed validation (their events are missing)" },
    { Stat::ReplayWaits, "replay_waits", Severity::Info,
        "times the replay waited for the merge thread (the replay never drops)" },
    { Stat::ReplayChunksSkipped, "replay_chunks_skipped", Severity::DataLoss,
        "chunks of the replayed file that did not read or decode" },
    { Stat::ReplayEventsLost, "replay_events_lost", Severity::DataLoss, "events in the skipped chunks" },
    { Stat::ReplayTruncatedEvents, "replay_truncated_events", Severity::DataLoss, "the replayed file is cut short" },
    { Stat::ReplayDamagedBytes, "replay_damaged_bytes", Severity::DataLoss,
        "damaged bytes of the replayed file, skipped between frames" },
    { Stat::ClientsHandshakeTimeout, "clients_handshake_timeout", Severity::Warning,
        "connections closed: no hello within the handshake timeout" },
    { Stat::ClientsUnauthenticatedEvicted, "clients_unauthenticated_evicted", Severity::Warning,
        "connections that had not authenticated, closed to make room" },
    { Stat::ClientsRefusedFull, "clients_refused_full", Severity::Warning,
        "connections refused: the agent served its most clients" },
    { Stat::RankConnectionsUnregisteredDropped, "rank_connections_unregistered_dropped", Severity::Warning,
        "rank connections closed before they registered" },
    { Stat::RankConnectionsBudgetDropped, "rank_connections_budget_dropped", Severity::Warning,
        "rank connections closed: their unfinished frames went over the agent's memory budget" },
    { Stat::ClientStreamCut, "client_stream_cut", Severity::Warning,
        "the live stream was cut (client too slow); its file on the agent is complete" },
    { Stat::ReadTruncatedBytes, "read_truncated_bytes", Severity::DataLoss, "the file is cut short" },
    { Stat::ReadTruncatedEvents, "read_truncated_events", Severity::DataLoss, "events of the cut chunk" },
    { Stat::ReadDamagedBytes, "read_damaged_bytes", Severity::DataLoss, "damaged bytes skipped between frames" },
    { Stat::ReadIndexDamaged, "read_index_damaged", Severity::DataLoss,
        "the index was unusable; frames read in order" },
    { Stat::ReadIndexMissing, "read_index_missing", Severity::DataLoss,
        "no index or footer: the writer did not finish" },
    { Stat::ReadHeaderDamaged, "read_header_damaged", Severity::DataLoss, "file header fields that must be 0 are not" },
    { Stat::ReadFramesSkipped, "read_frames_skipped", Severity::DataLoss,
        "frames that failed their checksum or did not decode" },
    { Stat::ReadEventsLost, "read_events_lost", Severity::DataLoss, "events in the skipped frames (when known)" },
    { Stat::ImportTruncated, "import_truncated", Severity::DataLoss,
        "the input ends inside the trace (detail: where)" },
    { Stat::ImportTrailingData, "import_trailing_data", Severity::Warning, "data after the end of the trace, ignored" },
    { Stat::ImportBadMetadata, "import_bad_metadata", Severity::Warning, "metadata of an unexpected shape, not read" },
    { Stat::ImportSkippedMetadata, "import_skipped_metadata", Severity::Info, "top-level member larger than 64 MiB" },
    { Stat::ImportLoneSurrogates, "import_lone_surrogates", Severity::Warning,
        "lone UTF-16 surrogate escapes in strings, replaced by U+FFFD" },
    { Stat::ImportInvalidUtf8, "import_invalid_utf8", Severity::Warning,
        "invalid UTF-8 bytes in strings, replaced by '?'" },
    { Stat::ImportSglangRanks, "import_sglang_ranks", Severity::Info,
        "ranks read from SGLang rank labels in the pids" },
    { Stat::ImportSkippedEvents, "import_skipped_events", Severity::Info, "events of a kind gapscope does not read" },
    { Stat::ImportUnknownEventKinds, "import_unknown_event_kinds", Severity::Warning,
        "events of a kind gapscope does not know" },
    { Stat::ImportBadEvents, "import_bad_events", Severity::Warning, "events whose fields are wrong (skipped)" },
    { Stat::ImportFlowCorrelations, "import_flow_correlations", Severity::Info,
        "GPU events whose correlation came from an ac2g flow" },
    { Stat::ImportUnmatchedFlows, "import_unmatched_flows", Severity::Info,
        "ac2g flow ends with no GPU event at their time" },
    { Stat::ImportRankFromFileName, "import_rank_from_file_name", Severity::Info,
        "rank taken from the SGLang file name" },
    { Stat::ImportRankFromDevice, "import_rank_from_device", Severity::Info, "rank taken from the CUDA device" },
    { Stat::ImportUnknownApiIds, "import_unknown_api_ids", Severity::Info,
        "nvprof API calls with a callback id of no known name" },
    { Stat::ImportProcessOverflow, "import_process_overflow", Severity::Warning,
        "rows of processes past the 65535th, given to the last one" },
    { Stat::ImportMissingStrings, "import_missing_strings", Severity::Warning,
        "rows naming a StringIds id that does not exist" },
    { Stat::ImportUnterminatedRanges, "import_unterminated_ranges", Severity::Info, "NVTX ranges without an end" },
    { Stat::ImportKernelShortNames, "import_kernel_short_names", Severity::Info,
        "kernels whose demangled name is missing, named by their short name" },
    { Stat::ImportNegativeTimes, "import_negative_times", Severity::Warning,
        "events that start before the clock's origin (kept)" },
    { Stat::ImportNegativeDurations, "import_negative_durations", Severity::Warning,
        "events whose end precedes their start (duration set to 0)" },
    { Stat::ImportOutOfRangeTimes, "import_out_of_range_times", Severity::Warning,
        "events more than 146 years from the clock's origin (clamped)" },
    { Stat::ImportLaneOverflow, "import_lane_overflow", Severity::DataLoss,
        "more than 65535 lanes in one source; events dropped" },
};

static_assert(rowsFollowEnum(kStats, kStatCount), "kStats: one row per Stat, in enum order");

inline const StatInfo& statInfo(Stat s)
{
    return kStats[size_t(s)];
}
// rank -1: not rank-specific. The detail is the stat's description.
pb::Counter makeCounter(Stat stat, int32_t rank, uint64_t value);
// ... with a detail of this one counter (which error, which kind of event).
pb::Counter makeCounter(Stat stat, int32_t rank, uint64_t value, std::string detail);

} // namespace gapscope::format
