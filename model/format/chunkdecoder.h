// SPDX-License-Identifier: MIT
#pragma once

// ChunkDecoder: the one decoder of pb::Chunk messages (the counterpart of ChunkEncoder).
//
// It keeps the dictionaries of one stream (strings, lanes, launch configs), either accumulated from
// the chunks in order (absorb) or loaded whole from a file index (load), checks that a chunk is
// well-formed against them (validate: every column absent or `count` long, every id defined), and
// walks its events with absolute times and ids (forEach). Consumers that need speed (the file reader)
// read the columns themselves after validate(); the rules are the ones written in trace.proto.
//
// Not thread-safe while absorbing; validate()/forEach() are const and may run concurrently once the
// dictionaries are complete (e.g. loaded from an index).

#include "model/base/status.h"
#include "model/format/stepcolumns.h"
#include "model/format/trace.pb.h"

#include <cstdint>
#include <string>
#include <vector>

namespace gapscope::format {

class ChunkDecoder {
public:
    // Takes the dictionary entries a chunk defines or repeats (reused_strings, lanes and configs it
    // uses: a chunk of format 1.1 decodes alone). New ids must continue the existing ones; a gap (an
    // earlier chunk was lost) is filled with placeholders ("<string N lost>") and reported. Ids the
    // chunk uses that no chunk read so far defines (a file of format 1.0 whose defining chunk was
    // lost) get placeholders too where recoverLostDefinitions(true) was asked for (file readers; a
    // live stream's chunk with such ids is malformed and fails validate()), so that its events are
    // kept: a lane marked "definition lost" of
    // the kind its block implies (kernels, copies: GPU stream; API calls, syncs: CPU API; ...) on the
    // chunk's source rank where it names one, else on kLostRank (so that they never mix into a real
    // rank's analysis), names "<string N lost>", empty launch configs; each counted in
    // lostDefinitions() and reported once in notes().
    Status absorb(const pb::Chunk& chunk);
    static constexpr uint32_t kLostRank = 4095;
    void recoverLostDefinitions(bool on) { m_recoverLost = on; }
    void load(const pb::Index& index);
    void reset();

    // Checks the shape of every block of `chunk` (column lengths, ids, time overflow).
    Status validate(const pb::Chunk& chunk) const;
    // True when the chunk or one of its blocks carries fields this build does not know.
    static bool hasUnknownFields(const pb::Chunk& chunk);

    const std::vector<std::string>& strings() const { return m_strings; } // strings()[i] has id i + 1
    const std::string& string(uint32_t id) const; // "" for 0 or unknown ids
    const std::vector<pb::LaneDef>& lanes() const { return m_lanes; }
    const pb::LaneDef* laneDef(uint32_t id) const;
    const pb::LaunchConfig* config(uint32_t id) const; // nullptr for 0 or unknown
    const std::vector<std::string>& notes() const { return m_notes; }
    struct LostDefinitions {
        uint64_t lanes = 0, strings = 0, configs = 0;
        uint64_t total() const { return lanes + strings + configs; }
    };
    const LostDefinitions& lostDefinitions() const { return m_lost; }

    // Events with absolute values, in block order. Call validate() first.
    struct Visitor {
        virtual ~Visitor() = default;
        virtual void kernel(uint32_t lane, int64_t start, uint64_t dur, uint32_t name, uint32_t corr, uint32_t config,
            uint64_t graphId, uint64_t graphNodeId)
        {
        }
        virtual void memop(uint32_t lane, int64_t start, uint64_t dur, pb::MemopKind kind, pb::CopyKind copyKind,
            uint64_t bytes, uint32_t flags, uint32_t corr)
        {
        }
        virtual void api(uint32_t lane, int64_t start, uint64_t dur, uint32_t name, uint32_t corr, pb::ApiKind kind) { }
        virtual void sync(uint32_t lane, int64_t start, uint64_t dur, pb::SyncKind kind, uint64_t stream, uint32_t corr)
        {
        }
        virtual void nvtx(uint32_t lane, int64_t start, uint64_t dur, uint32_t name, uint32_t depth, uint32_t domain) {
        }
        virtual void host(uint32_t lane, int64_t start, uint64_t dur, uint32_t name, uint32_t depth, pb::HostKind kind)
        {
        }
        virtual void collective(uint32_t lane, int64_t start, uint64_t dur, uint32_t op, uint64_t bytes,
            uint32_t datatype, uint32_t algorithm, uint32_t protocol, uint64_t sequence, uint64_t comm,
            uint32_t channels, uint32_t root)
        {
        }
        virtual void step(uint32_t rank, uint32_t index, int64_t start, uint64_t dur, pb::StepSource source) { }
        // A step with what the block says it did (kind, batch, tokens, label); by default step() above,
        // for visitors that need only its window.
        virtual void stepRecord(const StepRecord& s)
        {
            step(s.rank, s.index, s.start, s.duration, pb::StepSource(s.source));
        }
    };
    void forEach(const pb::Chunk& chunk, Visitor& visitor) const;

private:
    void padStrings(size_t count, bool note); // placeholders up to `count` strings
    void defineLost(const pb::Chunk& chunk); // placeholders for the ids `chunk` uses and nothing defines
    void noteLost();
    Status checkColumns(const pb::Columns& c, size_t n, const char* block, bool names) const;
    std::vector<std::string> m_strings;
    std::vector<pb::LaneDef> m_lanes;
    std::vector<pb::LaunchConfig> m_configs; // m_configs[i] has id i + 1
    std::vector<std::string> m_notes;
    std::vector<uint8_t> m_laneLost; // m_laneLost[id]: lane id is a placeholder
    LostDefinitions m_lost;
    bool m_recoverLost = false;
    size_t m_lostNote = SIZE_MAX; // index of the note that counts m_lost
};

// Number of events in a block (the length of its lane column).
inline size_t blockSize(const pb::Columns& c)
{
    return size_t(c.lane_size());
}

} // namespace gapscope::format
